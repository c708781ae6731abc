//! Projecting vision sources and anti-vision areas into an instance's
//! texel space: each becomes a [`SourceTexel`] (position and radii in Q3
//! texels, eye in height units, cone, flags), in canonical order with the
//! hash that tells the rules whether any moved. A memo keeps each source's
//! projection with what it came from, so a tick projects (and checks) only
//! the sources that changed.

use super::naming::entity_label;
use super::terrain::Terrain;
use crate::backend::LineTexels;
use crate::components::{AntiVision, Position, TeamMask, VisionSource};
use crate::error::{finite, MurkError, Result};
use crate::fixed::{HEIGHT_LIMIT, HEIGHT_WALL, MAX_RADIUS_TEXELS, TEXEL_FRAC_BITS, TEXEL_ONE, UNIT_ONE};
use crate::frame::{SourceTexel, CAPTURE_EMPTY, SOURCE_ANTI, SOURCE_HAS_CONE, SOURCE_SEE_THROUGH};
use crate::hash::WordFold;
use crate::profile::Profile;
use crate::query::SightLine;
use crate::transform::{sin_cos_degrees, AreaTransform};
use crate::zlayer::Slab;
use hecs::{Entity, World};

/// What a projection reads of the instance it projects into: its
/// transform, profile and slab, the teams it observes, and the terrain
/// its eyes may stand on.
#[derive(Clone, Copy)]
pub(crate) struct Projecting<'a> {
    pub(crate) t: &'a AreaTransform,
    pub(crate) profile: &'a Profile,
    pub(crate) slab: &'a Slab,
    pub(crate) teams: TeamMask,
    pub(crate) terrain: Option<Terrain<'a>>,
}

/// This tick's sources and anti-vision areas, projected.
pub(crate) struct GatheredSources {
    /// The vision sources' projections to keep for the next tick.
    pub(crate) memo: SourceMemo,
    /// Every projection, anti-vision areas among them, in canonical order.
    pub(crate) sources: Vec<SourceTexel>,
    /// Their hash.
    pub(crate) hash: u64,
}

/// The world's vision sources and anti-vision areas with their positions,
/// each list in entity order: read once per tick and shared by every
/// instance that gathers.
pub(crate) struct WorldSources {
    vision: Vec<(Entity, Position, VisionSource)>,
    anti: Vec<(Entity, Position, AntiVision)>,
}

impl WorldSources {
    /// Lists the sources and areas of `world`.
    pub(crate) fn of(world: &World) -> Self {
        let mut vision: Vec<(Entity, Position, VisionSource)> =
            world.query::<(Entity, &Position, &VisionSource)>().iter().map(|(e, p, s)| (e, *p, *s)).collect();
        vision.sort_by_key(|(e, _, _)| e.to_bits());
        let mut anti: Vec<(Entity, Position, AntiVision)> =
            world.query::<(Entity, &Position, &AntiVision)>().iter().map(|(e, p, a)| (e, *p, *a)).collect();
        anti.sort_by_key(|(e, _, _)| e.to_bits());
        Self { vision, anti }
    }
}

/// The vision sources and anti-vision areas of the world (`listed`)
/// projected `into` an instance, keeping the projections of `memo` made
/// under the same rules.
pub(crate) fn gather_sources(memo: &SourceMemo, into: Projecting<'_>, listed: &WorldSources) -> Result<GatheredSources> {
    let source_memo = gather_vision(memo, into, &listed.vision)?;
    let mut concealing = Vec::with_capacity(listed.anti.len());
    for (e, pos, a) in &listed.anti {
        if a.targets.0 & into.teams.0 == 0 || a.layer != into.profile.layer {
            continue;
        }
        // Projected as a source (the same checks and bounds), then marked.
        let label = format!("{}.anti_vision", entity_label(*e));
        let as_source = VisionSource { falloff: Some(a.falloff), eye_height: 0.0, layer: a.layer, ..VisionSource::new(a.radius) };
        if let Some(mut src) = project_source(&label, pos, &as_source, Projecting { teams: TeamMask::ALL, terrain: None, ..into })? {
            src.flags |= SOURCE_ANTI;
            concealing.push(src);
        }
    }
    // Canonical order (by content, not by entity id), so the hashes and the
    // bins do not depend on how the game allocated its entities.
    concealing.sort_unstable();
    let sources = replaced(&source_memo.sorted, &[], &concealing).expect("nothing to take out");
    let mut sh = WordFold::default();
    for src in &sources {
        src.hash_into(&mut sh);
    }
    Ok(GatheredSources { memo: source_memo, sources, hash: sh.finish() })
}

/// What a source's projection depends on besides the source: the
/// instance's transform and slab, and the profile's and the instance's
/// settings that [`project_source`] reads.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SourceRules {
    transform: AreaTransform,
    slab: Slab,
    z_layering: bool,
    smooth_falloff: f32,
    eye_offset: glam::Vec3,
    see_through: bool,
    teams: TeamMask,
    eyes_on_terrain: bool,
    layer: u8,
    snap_sources: bool,
}

/// One source entity's inputs and their projection (`None`: it reveals
/// nothing in this instance).
#[derive(Clone, Debug)]
struct KeptSource {
    entity: u64,
    position: Position,
    source: VisionSource,
    projected: Option<SourceTexel>,
}

/// The projections of an instance's vision sources, by entity, under the
/// rules they were made with, and all of them in canonical order.
#[derive(Clone, Debug, Default)]
pub(crate) struct SourceMemo {
    under: Option<SourceRules>,
    kept: Vec<KeptSource>,
    sorted: Vec<SourceTexel>,
}

/// This tick's vision sources projected, keeping the last tick's
/// projections made under the same rules ([`project_changed`]).
fn gather_vision(last: &SourceMemo, into: Projecting<'_>, sources_in: &[(Entity, Position, VisionSource)]) -> Result<SourceMemo> {
    let Projecting { t, profile, slab, teams, terrain } = into;
    let under = SourceRules {
        transform: *t,
        slab: *slab,
        z_layering: profile.z_layering,
        smooth_falloff: profile.smooth_falloff,
        eye_offset: profile.eye_offset,
        see_through: profile.see_through,
        teams,
        eyes_on_terrain: profile.eyes_on_terrain,
        layer: profile.layer,
        snap_sources: profile.snap_sources,
    };
    // Eyes on the terrain: a capture redone this tick may move any eye.
    let into = Projecting { terrain: terrain.filter(|_| profile.eyes_on_terrain), ..into };
    let terrain = into.terrain;
    let moved_ground = terrain.is_some_and(|g| g.redone.is_some());
    let last = Some(last).filter(|m| m.under == Some(under) && !moved_ground);
    let project = |e: Entity, pos: &Position, s: &VisionSource| project_source(&entity_label(e), pos, &profile.source_in_instance(s), into);
    Ok(SourceMemo { under: Some(under), ..project_changed(last, sources_in, project)? })
}

/// The projections of `sources` (in entity order): a source whose entity,
/// position and component equal those `last` kept keeps its projection,
/// the others go through `project`; the canonical order is the kept one
/// with the projections that left taken out and the new ones merged in
/// (all of them sorted when nothing was kept). The rules are left unset.
fn project_changed(
    last: Option<&SourceMemo>,
    sources: &[(Entity, Position, VisionSource)],
    mut project: impl FnMut(Entity, &Position, &VisionSource) -> Result<Option<SourceTexel>>,
) -> Result<SourceMemo> {
    let (before, before_sorted) = last.map_or((&[][..], &[][..]), |m| (&m.kept[..], &m.sorted[..]));
    let (mut kept, mut left, mut came) = (Vec::with_capacity(sources.len()), Vec::new(), Vec::new());
    let mut next = 0;
    for (e, pos, s) in sources {
        let bits = e.to_bits().get();
        while before.get(next).is_some_and(|k| k.entity < bits) {
            left.extend(before[next].projected);
            next += 1;
        }
        if let Some(k) = before.get(next).filter(|k| k.entity == bits) {
            next += 1;
            // Equal inputs project alike (a zero's sign cannot move a texel).
            if k.position == *pos && k.source == *s {
                kept.push(k.clone());
                continue;
            }
            left.extend(k.projected);
        }
        let projected = project(*e, pos, s)?;
        came.extend(projected);
        kept.push(KeptSource { entity: bits, position: *pos, source: *s, projected });
    }
    left.extend(before[next..].iter().filter_map(|k| k.projected));
    left.sort_unstable();
    came.sort_unstable();
    let sorted = match replaced(before_sorted, &left, &came) {
        Some(sorted) => sorted,
        None => {
            let mut all: Vec<SourceTexel> = kept.iter().filter_map(|k| k.projected).collect();
            all.sort_unstable();
            all
        }
    };
    Ok(SourceMemo { under: None, kept, sorted })
}

/// `sorted` less the items of `gone`, with the items of `came` merged in
/// (all three ascending; each item of `gone` takes out one equal item), in
/// one pass; `None` when an item of `gone` is not there.
fn replaced(sorted: &[SourceTexel], gone: &[SourceTexel], came: &[SourceTexel]) -> Option<Vec<SourceTexel>> {
    let mut out = Vec::with_capacity((sorted.len() + came.len()).saturating_sub(gone.len()));
    let (mut gone, mut came) = (gone.iter().peekable(), came.iter().peekable());
    for s in sorted {
        if gone.next_if_eq(&s).is_some() {
            continue;
        }
        while let Some(c) = came.next_if(|c| *c < s) {
            out.push(*c);
        }
        out.push(*s);
    }
    out.extend(came);
    gone.peek().is_none().then_some(out)
}

/// Projects one source into texel space; `None` when it does not take part
/// (other team, outside the slab, or too far to touch the grid).
pub(crate) fn project_source(
    label: &(impl std::fmt::Display + ?Sized),
    pos: &Position,
    s: &VisionSource,
    into: Projecting<'_>,
) -> Result<Option<SourceTexel>> {
    let Projecting { t, profile, slab, teams, terrain } = into;
    finite(|| format!("{label}.position.x"), pos.0.x)?;
    finite(|| format!("{label}.position.y"), pos.0.y)?;
    let z = finite(|| format!("{label}.position.z"), pos.0.z)?;
    // What is wrong for every instance (`VisionSource::check`); a radius
    // too long for this instance's texels is judged only if the source can
    // touch it.
    s.check(label)?;
    let (x, y) = s.eye_ground(pos.0);
    let radius_q = t.length_q(|| format!("{label}.source.radius"), s.radius);
    let falloff = s.falloff.map_or(f64::from(profile.smooth_falloff), f64::from);
    let eye_offset = f64::from(s.eye_height) + f64::from(s.eye_offset.z);
    let cone = s.cone.map(|c| (f64::from(c.yaw_degrees), f64::from(c.half_angle_degrees)));
    let mut strength = u32::from(u16::MAX);
    if let Some(layer) = s.height_layer {
        let extent = f64::from(layer.vertical_extent);
        if profile.z_layering {
            match slab.source_strength(z, extent) {
                None => return Ok(None),
                Some(f) => strength = u32::from(f),
            }
        }
    }
    if !teams.contains(s.team) || s.layer != profile.layer {
        return Ok(None);
    }
    let (tx, ty) = t.world_to_texel(x, y);
    let (tx, ty) = if profile.snap_sources { (tx.floor() + 0.5, ty.floor() + 0.5) } else { (tx, ty) };
    let rt = match &radius_q {
        Ok(r) => f64::from(*r) / f64::from(TEXEL_ONE),
        Err(_) => f64::from(s.radius) / t.texel_size(),
    };
    if tx + rt < 0.0 || ty + rt < 0.0 || tx - rt > f64::from(t.width()) || ty - rt > f64::from(t.height()) {
        return Ok(None);
    }
    let radius = radius_q?;
    if radius > MAX_RADIUS_TEXELS * TEXEL_ONE {
        let exact = f64::from(s.radius) / t.texel_size();
        return Err(MurkError::invalid(
            format!("{label}.source.radius"),
            s.radius,
            format!(
                "is {exact} texels at this instance's resolution, {} after rounding to 1/{TEXEL_ONE} texel; at most {MAX_RADIUS_TEXELS}",
                f64::from(radius) / f64::from(TEXEL_ONE)
            ),
        ));
    }
    let [qx, qy] = AreaTransform::texel_q(tx, ty);
    let eye = eye_at(|| format!("{label}.source.eye_height"), t, terrain, (tx, ty), z, eye_offset)?;
    let inner = radius - (f64::from(radius) * falloff).round() as i32;
    let mut src = SourceTexel { x: qx, y: qy, radius, inner_radius: inner, eye, strength, ..Default::default() };
    if let Some((yaw, half)) = cone {
        if half < 180.0 {
            let (s, c) = sin_cos_degrees(yaw);
            let (dx, dy) = t.direction_to_texel(c, s);
            let unit = f64::from(UNIT_ONE);
            src.cone_x = (dx * unit).round() as i32;
            src.cone_y = (dy * unit).round() as i32;
            src.cone_cos = (sin_cos_degrees(half).1 * unit).round() as i32;
            src.flags |= SOURCE_HAS_CONE;
        }
    }
    if s.see_through {
        src.flags |= SOURCE_SEE_THROUGH;
    }
    Ok(Some(src))
}

/// The eye, in height units, of a source at texel position `(tx, ty)`
/// standing at height `z` with its eye `eye_offset` above: on the terrain
/// (where a capture has a height under it, and not a wall's), the eye
/// stands its eye offset above the ground; else above `z`. `field` names
/// the eye offset in errors.
fn eye_at(
    field: impl Fn() -> String + Copy,
    t: &AreaTransform,
    terrain: Option<Terrain<'_>>,
    (tx, ty): (f64, f64),
    z: f64,
    eye_offset: f64,
) -> Result<i32> {
    let ground = terrain.and_then(|g| g.at(tx.floor() as i64, ty.floor() as i64)).filter(|&h| h != CAPTURE_EMPTY && h < HEIGHT_WALL);
    match ground {
        Some(ground) => {
            let up = t.length_units(field, eye_offset)?;
            let eye = i64::from(ground) + i64::from(up);
            if eye.abs() > i64::from(HEIGHT_LIMIT) {
                return Err(MurkError::invalid(field(), eye_offset, "lifts the eye on the terrain beyond the height range"));
            }
            Ok(eye as i32)
        }
        None => t.height_q(field, z + eye_offset),
    }
}

/// Projects sight lines into texel space, `first` the index of the first
/// in its batch (errors name `lines[i]`): each looker as a vision source
/// with the line's eye height would be projected (the profile's eye offset
/// and terrain apply), each target at the texel under `to`. Either end
/// outside the grid is an error. A looker asked again right after itself
/// (several targets from one place) is projected once.
pub(crate) fn project_lines(lines: &[SightLine], first: usize, into: Projecting<'_>) -> Result<Vec<LineTexels>> {
    let mut out = Vec::with_capacity(lines.len());
    let mut last: Option<(&SightLine, [u32; 2], i32)> = None;
    for (i, line) in lines.iter().enumerate() {
        let label = || format!("lines[{}]", first + i);
        let (from, eye) = match last {
            Some((before, from, eye)) if before.from == line.from && before.eye_height.to_bits() == line.eye_height.to_bits() => (from, eye),
            _ => project_looker(label, line, into)?,
        };
        last = Some((line, from, eye));
        let to = project_target(label, line.to, into)?;
        out.push(LineTexels { from, eye, to });
    }
    Ok(out)
}

/// The error for an end of a line outside the grid.
fn outside(label: impl Fn() -> String, end: &str, shown: glam::Vec3, t: &AreaTransform) -> MurkError {
    MurkError::invalid(
        format!("{}.{end}", label()),
        format!("({}, {}, {})", shown.x, shown.y, shown.z),
        format!("lies outside the instance's {}x{} grid", t.width(), t.height()),
    )
}

/// A line's looker: its texel and its eye, in height units.
fn project_looker(label: impl Fn() -> String + Copy, line: &SightLine, into: Projecting<'_>) -> Result<([u32; 2], i32)> {
    for (axis, v) in [("x", line.from.x), ("y", line.from.y), ("z", line.from.z)] {
        finite(|| format!("{}.from.{axis}", label()), v)?;
    }
    finite(|| format!("{}.eye_height", label()), line.eye_height)?;
    let looker = VisionSource { eye_height: line.eye_height, ..VisionSource::new(1.0) };
    project_eye(label, line.from, &looker, into)?.ok_or_else(|| outside(label, "from", line.from, into.t))
}

/// The texel and eye (height units) of source `s` at `position` (checked
/// finite) in an instance, as its projection would put them (the
/// profile's eye offset and terrain apply); `None` when the eye stands
/// outside the grid. `label` names the line or source in errors.
pub(crate) fn project_eye(
    label: impl Fn() -> String + Copy,
    position: glam::Vec3,
    s: &VisionSource,
    into: Projecting<'_>,
) -> Result<Option<([u32; 2], i32)>> {
    let Projecting { t, profile, terrain, .. } = into;
    let s = profile.source_in_instance(s);
    let (x, y) = s.eye_ground(position);
    let (tx, ty) = t.world_to_texel(x, y);
    let inside = |q: i32, size: u32| q >= 0 && (q >> TEXEL_FRAC_BITS) < size as i32;
    let [qx, qy] = AreaTransform::texel_q(tx, ty);
    if !inside(qx, t.width()) || !inside(qy, t.height()) {
        return Ok(None);
    }
    let eye_offset = f64::from(s.eye_height) + f64::from(s.eye_offset.z);
    let eye = eye_at(|| format!("{}.eye_height", label()), t, terrain, (tx, ty), f64::from(position.z), eye_offset)?;
    Ok(Some(([(qx >> TEXEL_FRAC_BITS) as u32, (qy >> TEXEL_FRAC_BITS) as u32], eye)))
}

/// A line's target: the texel under `to`.
pub(crate) fn project_target(label: impl Fn() -> String + Copy, to: glam::Vec3, into: Projecting<'_>) -> Result<[u32; 2]> {
    let t = into.t;
    for (axis, v) in [("x", to.x), ("y", to.y), ("z", to.z)] {
        finite(|| format!("{}.to.{axis}", label()), v)?;
    }
    let (ux, uy) = t.world_to_texel(f64::from(to.x), f64::from(to.y));
    if !(0.0..f64::from(t.width())).contains(&ux) || !(0.0..f64::from(t.height())).contains(&uy) {
        return Err(outside(label, "to", to, t));
    }
    Ok([ux.floor() as u32, uy.floor() as u32])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Tick after tick of sources that stand, move, change, leave and
        /// come (their projections often equal, some projecting to
        /// nothing), the kept projections give the canonical order of
        /// projecting every source anew, and only the sources whose inputs
        /// changed (or are new) are projected; a projection that fails
        /// fails the tick.
        #[test]
        fn kept_source_projections_equal_projecting_every_source(
            first in prop::collection::vec((any::<bool>(), 0u8..6, 0u8..3), 0..24),
            ticks in prop::collection::vec(prop::collection::vec((0u8..30, 0u8..5, 0u8..6, 0u8..3), 0..10), 1..6),
        ) {
            // A source's projection depends on its position and radius only:
            // x of 0..6 and a radius of 0..3 make repeats; x = 5 projects
            // to nothing, radius 0 fails.
            fn project(calls: &mut usize) -> impl FnMut(Entity, &Position, &VisionSource) -> Result<Option<SourceTexel>> + '_ {
                move |_, pos, s| {
                    *calls += 1;
                    if s.radius == 0.0 {
                        return Err(MurkError::invalid("radius", 0.0, "must be positive"));
                    }
                    Ok((pos.0.x != 5.0).then_some(SourceTexel { x: pos.0.x as i32, y: 3, radius: s.radius as i32, ..Default::default() }))
                }
            }
            let source = |x: u8, r: u8| (Position(glam::Vec3::new(f32::from(x), 0.0, 0.0)), VisionSource::new(f32::from(r + 1)));
            // Entity bits 1, 3, 5, ... (generation 1 and an odd index).
            let entity = |i: u64| Entity::from_bits(1 << 32 | i).expect("a valid entity");
            let mut world: BTreeMap<u64, (Position, VisionSource)> = BTreeMap::new();
            for (i, &(on, x, r)) in first.iter().enumerate() {
                if on {
                    world.insert(2 * i as u64 + 1, source(x, r));
                }
            }
            let mut memo: Option<SourceMemo> = None;
            for changes in ticks {
                let before = world.clone();
                // Op 0: leave; 1: move; 2: change the radius (to 0 fails
                // now and then); 3-4: come (or move back).
                for (e, op, x, r) in changes {
                    let id = 2 * u64::from(e) + 1;
                    match op {
                        0 => drop(world.remove(&id)),
                        1 => drop(world.get_mut(&id).map(|v| v.0 = source(x, 0).0)),
                        2 => drop(world.get_mut(&id).map(|v| v.1.radius = f32::from(r % 3))),
                        _ => drop(world.insert(id, source(x, r))),
                    }
                }
                let sources: Vec<(Entity, Position, VisionSource)> = world.iter().map(|(&i, &(p, s))| (entity(i), p, s)).collect();
                let (mut with_memo, mut anew) = (0, 0);
                let got = project_changed(memo.as_ref(), &sources, project(&mut with_memo));
                let want = project_changed(None, &sources, project(&mut anew));
                match (got, want) {
                    (Ok(got), Ok(want)) => {
                        let mut all: Vec<SourceTexel> = sources.iter().filter(|(_, p, _)| p.0.x != 5.0).map(|(_, p, s)| SourceTexel { x: p.0.x as i32, y: 3, radius: s.radius as i32, ..Default::default() }).collect();
                        all.sort_unstable();
                        prop_assert_eq!(&got.sorted, &all);
                        prop_assert_eq!(&want.sorted, &all);
                        // Projected: the sources not kept with equal inputs.
                        let kept = memo.as_ref().map_or(&[][..], |m| &m.kept[..]);
                        let changed = sources.iter().filter(|(e, p, s)| !kept.iter().any(|k| k.entity == e.to_bits().get() && k.position == *p && k.source == *s)).count();
                        prop_assert_eq!(with_memo, changed);
                        memo = Some(got);
                    }
                    (Err(_), Err(_)) => {
                        // The failing tick changes nothing: the world goes
                        // back and the memo stays.
                        world = before;
                    }
                    (got, want) => prop_assert!(false, "with the memo {:?}, anew {:?}", got.is_ok(), want.is_ok()),
                }
            }
        }
    }
}
