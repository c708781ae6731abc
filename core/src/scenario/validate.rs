//! Checking a scenario before it runs: what the subsystem cannot judge (ids,
//! references, ticks), every scripted entity wherever it spawns, and every
//! place a source or anti-vision area will stand.

use super::format::*;
use super::ScenarioFiles;
use crate::components::{TeamMask, VisionSource};
use crate::error::{finite, MurkError, Result};
use crate::profile::Profile;
use crate::subsystem::{FogSubsystem, FogTarget, InstanceDesc, Reveal, RevealKind};
use crate::transform::Area;
use glam::Vec3;
use std::collections::{BTreeMap, BTreeSet};

fn check_vec3(field: &str, v: Vec3) -> Result<()> {
    finite(&format!("{field}.x"), v.x)?;
    finite(&format!("{field}.y"), v.y)?;
    finite(&format!("{field}.z"), v.z)?;
    Ok(())
}

fn check_motion(field: &str, m: &Motion) -> Result<()> {
    let speed = finite(&format!("{field}.motion.speed"), m.speed)?;
    if speed < 0.0 {
        return Err(MurkError::invalid(format!("{field}.motion.speed"), m.speed, "must not be negative"));
    }
    for (i, w) in m.waypoints.iter().enumerate() {
        check_vec3(&format!("{field}.motion.waypoints[{i}]"), *w)?;
    }
    Ok(())
}

/// Checks every source and anti-vision area against every instance at each
/// place the file puts it (its position, its waypoints, its `move` events),
/// as a tick would there: a radius too long for an instance's texels is
/// found before tick 0. (Places between waypoints are checked when reached.)
pub(super) fn check_placements(s: &Scenario, fog: &FogSubsystem) -> Result<()> {
    let moves = |id: &str| -> Vec<Vec3> {
        s.events
            .iter()
            .filter_map(|e| match &e.action {
                Action::Move { id: m, position } if m == id => Some(*position),
                _ => None,
            })
            .collect()
    };
    let places = |position: Vec3, motion: &Motion, id: &str| -> Vec<Vec3> {
        std::iter::once(position).chain(motion.waypoints.iter().copied()).chain(moves(id)).collect()
    };
    for (i, src) in s.sources.iter().enumerate() {
        let label = format!("sources[{i}] (id `{}`)", src.id);
        for p in places(src.position, &src.motion, &src.id) {
            fog.check_source(&label, p, &src.component, None)?;
        }
    }
    for (i, a) in s.anti_vision.iter().enumerate() {
        let label = format!("anti_vision[{i}] (id `{}`)", a.id);
        let as_source = VisionSource { falloff: Some(a.component.falloff), eye_height: 0.0, ..VisionSource::new(a.component.radius) };
        for p in places(a.position, &a.motion, &a.id) {
            fog.check_source(&label, p, &as_source, Some(a.component.targets))?;
        }
    }
    Ok(())
}

/// When a scripted entity exists: its spawn and despawn ticks.
struct Lifetime {
    spawn_tick: u32,
}

/// Checks what every scripted entity of `list` (the file's key) has: a
/// unique id, a finite position, a valid motion, and a lifetime inside the
/// run (spawned before the last tick, despawned after it spawned); then its
/// component with `check`, given the entity's field name.
fn check_scripted<'a, C>(
    s: &Scenario,
    list: &str,
    entities: &'a [Scripted<C>],
    ids: &mut BTreeMap<&'a str, Lifetime>,
    check: impl Fn(&str, &Scripted<C>) -> Result<()>,
) -> Result<()> {
    for (i, e) in entities.iter().enumerate() {
        let field = format!("{list}[{i}]");
        if ids.contains_key(e.id.as_str()) {
            return Err(MurkError::invalid(format!("{field}.id"), &e.id, "is used twice"));
        }
        check_vec3(&format!("{field}.position"), e.position)?;
        check_motion(&field, &e.motion)?;
        if let Some(t) = e.tracked {
            let r = finite(&format!("{field}.tracked.footprint"), t.footprint)?;
            if r < 0.0 {
                return Err(MurkError::invalid(format!("{field}.tracked.footprint"), r, "must not be negative"));
            }
        }
        if e.spawn_tick >= s.ticks {
            return Err(MurkError::invalid(
                format!("{field}.spawn_tick"),
                e.spawn_tick,
                format!("the run has ticks 0..{}: the entity would never spawn", s.ticks),
            ));
        }
        if let Some(d) = e.despawn_tick {
            if d <= e.spawn_tick {
                return Err(MurkError::invalid(
                    format!("{field}.despawn_tick"),
                    d,
                    format!("must come after spawn_tick = {} (despawn before spawn)", e.spawn_tick),
                ));
            }
        }
        ids.insert(&e.id, Lifetime { spawn_tick: e.spawn_tick });
        check(&field, e)?;
    }
    Ok(())
}

/// Checks what the subsystem cannot: ids, references, ticks.
pub(super) fn validate(s: &Scenario, files: &ScenarioFiles) -> Result<()> {
    if s.tick_us == 0 {
        return Err(MurkError::invalid("tick_us", 0, "must be positive"));
    }
    if s.ticks == 0 {
        return Err(MurkError::invalid("ticks", 0, "must be at least 1: a run of 0 ticks does nothing"));
    }
    if s.ticks > MAX_TICKS {
        return Err(MurkError::invalid("ticks", s.ticks, format!("must be at most {MAX_TICKS}")));
    }
    if s.instances.is_empty() {
        return Err(MurkError::invalid("instances", "[]", "a scenario needs at least one instance"));
    }
    if let Some(m) = &s.map {
        let cell = finite("map.cell_size", m.cell_size)?;
        if cell <= 0.0 {
            return Err(MurkError::invalid("map.cell_size", m.cell_size, "must be positive"));
        }
        finite("map.tree_height", m.tree_height)?;
        finite("map.ground_z", m.ground_z)?;
        finite("map.origin.x", m.origin.x)?;
        finite("map.origin.y", m.origin.y)?;
        if files.map.is_none() {
            return Err(MurkError::invalid("map.file", &m.file, "was not loaded"));
        }
    }
    let mut names = BTreeSet::new();
    for (i, inst) in s.instances.iter().enumerate() {
        if !names.insert(inst.name.as_str()) {
            return Err(MurkError::invalid(format!("instances[{i}].name"), &inst.name, "is used twice"));
        }
        if inst.profile.is_some() && inst.profile_file.is_some() {
            return Err(MurkError::invalid(
                format!("instances[{i}].profile_file"),
                inst.profile_file.as_deref().unwrap_or(""),
                "give profile or profile_file, not both",
            ));
        }
        if let Some(teams) = &inst.observed_teams {
            teams_of(teams, &format!("instances[{i}].observed_teams"))?;
        }
    }
    // Every scripted entity is checked now, whenever it spawns: a bad entity
    // late in a long run fails before tick 0, not after running to it.
    let mut ids = BTreeMap::new();
    check_scripted(s, "sources", &s.sources, &mut ids, |f, src| {
        src.component.check(f)?;
        if src.transient_ticks == Some(0) {
            return Err(MurkError::invalid(format!("{f}.transient_ticks"), 0, "must be at least 1"));
        }
        Ok(())
    })?;
    check_scripted(s, "blockers", &s.blockers, &mut ids, |f, b| b.component.check(f))?;
    check_scripted(s, "actors", &s.actors, &mut ids, |f, a| {
        crate::stealth::quantize(f, &a.component)?;
        if let Some(inst) = &a.component.instance {
            if !names.contains(inst.as_str()) {
                return Err(MurkError::invalid(format!("{f}.stealth.instance"), inst, "names no instance"));
            }
        }
        Ok(())
    })?;
    check_scripted(s, "anti_vision", &s.anti_vision, &mut ids, |f, a| {
        let r = finite(&format!("{f}.anti_vision.radius"), a.component.radius)?;
        if r < 0.0 {
            return Err(MurkError::invalid(format!("{f}.anti_vision.radius"), r, "must not be negative"));
        }
        crate::error::in_range(&format!("{f}.anti_vision.falloff"), a.component.falloff, 0.0, 1.0)?;
        Ok(())
    })?;
    for (i, q) in s.queries.iter().enumerate() {
        let f = format!("queries[{i}]");
        if q.tick >= s.ticks {
            return Err(MurkError::invalid(format!("{f}.tick"), q.tick, format!("comes after the last tick ({})", s.ticks - 1)));
        }
        for (j, p) in q.points.iter().enumerate() {
            check_vec3(&format!("{f}.points[{j}]"), *p)?;
        }
        if let Some(c) = q.cutoff {
            crate::error::in_range(&format!("{f}.cutoff"), c, 0.0, 1.0)?;
        }
        if let Some(teams) = &q.immediate_teams {
            teams_of(teams, &format!("{f}.immediate_teams"))?;
        }
        if let Some(looker) = &q.sight_from {
            if !names.contains(looker.instance.as_str()) {
                return Err(MurkError::invalid(format!("{f}.sight_from.instance"), &looker.instance, "names no instance"));
            }
            check_vec3(&format!("{f}.sight_from.at"), looker.at)?;
            finite(&format!("{f}.sight_from.eye_height"), looker.eye_height)?;
        }
    }
    for (i, e) in s.events.iter().enumerate() {
        if e.tick >= s.ticks {
            return Err(MurkError::invalid(format!("events[{i}].tick"), e.tick, format!("comes after the last tick ({})", s.ticks - 1)));
        }
        let f = format!("events[{i}].action");
        let scripted = |id: &String| -> Result<&Lifetime> {
            ids.get(id.as_str()).ok_or_else(|| MurkError::invalid(format!("{f}.id"), id, "names no scripted entity"))
        };
        match &e.action {
            Action::SetProfile { instance, .. }
            | Action::Toggle { instance, .. }
            | Action::SetRayMethod { instance, .. }
            | Action::SetArea { instance, .. }
            | Action::ExpandArea { instance, .. }
            | Action::SetObservedTeams { instance, .. } => {
                if !names.contains(instance.as_str()) {
                    return Err(MurkError::invalid(format!("{f}.instance"), instance, "names no instance"));
                }
                // The instance as the event leaves it (its file area and
                // profile otherwise), checked as create_instance would.
                let with = |area: Option<Area>, profile: Option<&Profile>| -> Result<()> {
                    let Some(inst) = s.instances.iter().find(|x| &x.name == instance) else { return Ok(()) };
                    let base = files.profiles.get(&inst.name).cloned().or_else(|| inst.profile.clone()).unwrap_or_default();
                    let desc = InstanceDesc {
                        name: inst.name.clone(),
                        area: area.unwrap_or(inst.area),
                        resolution: inst.resolution,
                        lod: inst.lod,
                        observed_teams: TeamMask::ALL,
                        profile: profile.cloned().unwrap_or(base),
                    };
                    FogSubsystem::check_desc(&desc, &f)
                };
                match &e.action {
                    Action::SetProfile { profile, .. } => {
                        profile.quantize(&format!("{f}.profile"))?;
                        with(None, Some(profile))?;
                    }
                    Action::SetArea { area, .. } => {
                        area.validate(&format!("{f}.area"))?;
                        with(Some(*area), None)?;
                    }
                    Action::ExpandArea { point, .. } => check_vec3(&format!("{f}.point"), *point)?,
                    Action::SetObservedTeams { teams, .. } => {
                        teams_of(teams, &format!("{f}.teams"))?;
                    }
                    _ => {}
                }
            }
            Action::Move { id, position } => {
                scripted(id)?;
                check_vec3(&format!("{f}.position"), *position)?;
            }
            Action::Despawn { id } => {
                let life = scripted(id)?;
                if e.tick < life.spawn_tick {
                    return Err(MurkError::invalid(
                        format!("events[{i}].tick"),
                        e.tick,
                        format!("despawns `{id}` before it spawns at tick {}", life.spawn_tick),
                    ));
                }
            }
            Action::MarkCaptureDirty => {}
            Action::EditTerrain { min, max, to } => {
                if s.map.is_none() {
                    return Err(MurkError::invalid(format!("{f}.edit_terrain"), "no map", "a terrain edit needs the scenario's `map`"));
                }
                for (name, v) in [("min.x", min.x), ("min.y", min.y), ("max.x", max.x), ("max.y", max.y)] {
                    finite(&format!("{f}.{name}"), v)?;
                }
                for (axis, lo, hi) in [("x", min.x, max.x), ("y", min.y, max.y)] {
                    if lo > hi {
                        return Err(MurkError::invalid(format!("{f}.max.{axis}"), hi, format!("must not be below min.{axis} = {lo}")));
                    }
                }
                if let Terrain::Height(h) = to {
                    finite(&format!("{f}.to.height"), *h)?;
                }
            }
            Action::Reveal { target, reveal } => {
                check_target(target, &names, &f)?;
                reveal.check(&format!("{f}.reveal"))?;
            }
            Action::Hide { target, area } => {
                check_target(target, &names, &f)?;
                let probe = Reveal { area: area.clone(), kind: RevealKind::Map, fade_ticks: 0, ticks: None };
                probe.check(&format!("{f}.hide"))?;
            }
        }
    }
    Ok(())
}

/// A reveal's or hide's target: an instance of the scenario, or a team id.
fn check_target(target: &FogTarget, names: &BTreeSet<&str>, f: &str) -> Result<()> {
    match target {
        FogTarget::Instance(name) if !names.contains(name.as_str()) => {
            Err(MurkError::invalid(format!("{f}.target.instance"), name, "names no instance"))
        }
        FogTarget::Team(team) => TeamMask::check(*team, || format!("{f}.target.team")).map(drop),
        _ => Ok(()),
    }
}

/// The team mask of a list of team ids from a file, an id out of range
/// named as `field[i]`.
pub(super) fn teams_of(teams: &[u8], field: &str) -> Result<TeamMask> {
    TeamMask::of(teams).map_err(|e| match e {
        MurkError::InvalidValue { field: at, value, reason } => {
            MurkError::InvalidValue { field: format!("{field}{}", &at["teams".len()..]), value, reason }
        }
        other => other,
    })
}
