//! Running a scenario: the world it scripts, moved and spawned tick by tick,
//! the fog ticks, the records of each tick, and saving and resuming a run.
//!
//! (Just over 600 lines as one concept: the scripted world and the records
//! are written in the same loop over ticks that a resumed run re-enters.)

use super::format::*;
use super::validate::{check_placements, teams_of, validate};
use super::ScenarioFiles;
use crate::backend::Backend;
use crate::components::{AntiVision, Blocker, CaptureMode, HeightCapture, Position, StealthActor, TeamMask, TransientReveal, VisionSource};
use crate::error::{MurkError, Result};
use crate::query::{MaskAnswer, SightAnswer, SightLine};
use crate::snapshot::{decode, encode, RUN_MAGIC};
use crate::stealth::StealthEvent;
use crate::subsystem::{FogSubsystem, InstanceDesc, SightEvent, TickReport};
use glam::{Vec2, Vec3};
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// What a scripted entity is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Source(VisionSource, Option<u32>),
    Blocker(Blocker),
    Actor(StealthActor),
    AntiVision(AntiVision),
}

/// Where an id lives in the world.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Tracked {
    kind: Kind,
    /// Tracked for the sight sets, with this footprint.
    sight: Option<crate::components::Tracked>,
    entity: Option<u64>,
    start: Vec3,
    start_tick: u32,
    motion: Motion,
    spawn_tick: u32,
    despawn_tick: Option<u32>,
    removed: bool,
}

/// The body of a run snapshot.
#[derive(Serialize, Deserialize)]
struct RunBody {
    /// The scenario as it was loaded.
    scenario: Scenario,
    /// The folder its files are read from.
    base: String,
    /// Ticks run.
    tick: u32,
    /// Every scripted entity, by id.
    tracked: BTreeMap<String, Tracked>,
    /// Scripted entities in the world: entity bits and position (bit
    /// patterns of `f32`).
    alive: Vec<(u64, [u32; 3])>,
    /// The fog-state snapshot.
    #[serde(with = "serde_bytes")]
    fog: Vec<u8>,
}

/// Runs a scenario tick by tick.
pub struct ScenarioRunner {
    scenario: Scenario,
    world: World,
    fog: FogSubsystem,
    tracked: BTreeMap<String, Tracked>,
    tick: u32,
}

/// One tick's outcome: state hash per instance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TickRecord {
    /// Tick index (0-based).
    pub tick: u32,
    /// Lockstep hash of the whole fog state (masks and stealth), hex.
    pub lockstep: String,
    /// State hash per instance (hex).
    pub hashes: BTreeMap<String, String>,
    /// Instances that recomputed visibility this tick.
    pub recomputed: Vec<String>,
    /// Stealth transitions, by scenario id.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventRecord>,
    /// Answers to the queries scripted for this tick.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<QueryRecord>,
    /// Per-observer stealth transitions, by observer then scenario id.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub observer_events: Vec<ObserverEventRecord>,
    /// Each observer's sight set after the tick (scenario ids, sorted), for
    /// the observers that see anything, when entities are tracked.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub sight: BTreeMap<String, Vec<String>>,
    /// The tracked entities that entered or left an observer's set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sight_events: Vec<SightRecord>,
    /// The blips of each instance of a sensor layer other than sight, for
    /// those that have any: positions only, ordered by position.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub blips: BTreeMap<String, Vec<[f32; 3]>>,
}

/// A tick's multiplayer answers, by scenario id (see
/// [`ScenarioRunner::answers`]); serialized as the same fields of a
/// [`TickRecord`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TickAnswers {
    /// Stealth transitions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventRecord>,
    /// Per-observer stealth transitions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub observer_events: Vec<ObserverEventRecord>,
    /// Each observer's sight set after the tick, for the observers that see
    /// anything.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub sight: BTreeMap<String, Vec<String>>,
    /// The tracked entities that entered or left an observer's set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sight_events: Vec<SightRecord>,
    /// The blips of each instance of a sensor layer other than sight, for
    /// those that have any: positions only, ordered by position.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub blips: BTreeMap<String, Vec<[f32; 3]>>,
}

/// A per-observer stealth event, naming the actor by its scenario id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObserverEventRecord {
    /// The observing instance.
    pub observer: String,
    /// `revealed`, `hidden`, `ghost_spawned`, `ghost_removed`.
    pub event: String,
    /// Scenario id of the actor.
    pub actor: String,
}

/// A tracked entity entering or leaving an observer's sight set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SightRecord {
    /// The observing instance.
    pub observer: String,
    /// `entered` or `left`.
    pub event: String,
    /// Scenario id of the entity.
    pub entity: String,
}

/// A stealth event, naming the actor by its scenario id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EventRecord {
    /// `revealed`, `hidden`, `ghost_spawned`, `ghost_removed`.
    pub event: String,
    /// Scenario id of the actor.
    pub actor: String,
}

/// Answers to one scripted query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QueryRecord {
    /// The query's id.
    pub id: String,
    /// Mask query answers, per point.
    pub mask: Vec<MaskAnswer>,
    /// Immediate query answers, per point, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immediate: Option<Vec<bool>>,
    /// Sight lines from the query's looker, per point, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<SightAnswer>>,
}

impl ScenarioRunner {
    /// Validates `scenario` and builds its world on `backend`.
    pub fn new(scenario: Scenario, files: &ScenarioFiles, backend: Box<dyn Backend>) -> Result<Self> {
        validate(&scenario, files)?;
        let mut fog = FogSubsystem::new(backend);
        for (i, inst) in scenario.instances.iter().enumerate() {
            let profile = files.profiles.get(&inst.name).cloned().or_else(|| inst.profile.clone()).unwrap_or_default();
            let desc = InstanceDesc {
                name: inst.name.clone(),
                area: inst.area,
                resolution: inst.resolution,
                lod: inst.lod,
                observed_teams: inst
                    .observed_teams
                    .as_deref()
                    .map_or(Ok(TeamMask::ALL), |t| teams_of(t, &format!("instances[{i}].observed_teams")))?,
                profile,
            };
            fog.create_instance(desc).map_err(|e| rename(e, &format!("instance `{}`", inst.name), &format!("instances[{i}]")))?;
        }
        check_placements(&scenario, &fog)?;
        let mut world = World::new();
        if let (Some(settings), Some(map)) = (&scenario.map, &files.map) {
            let capture = map.to_capture(
                settings.origin,
                settings.cell_size,
                settings.ground_z,
                settings.tree_height,
                CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true },
            );
            world.spawn((capture,));
        }
        let mut tracked = BTreeMap::new();
        track(&mut tracked, &scenario.sources, |s| Kind::Source(s.component, s.transient_ticks));
        track(&mut tracked, &scenario.blockers, |b| Kind::Blocker(b.component.clone()));
        track(&mut tracked, &scenario.actors, |a| Kind::Actor(a.component.clone()));
        track(&mut tracked, &scenario.anti_vision, |a| Kind::AntiVision(a.component));
        Ok(Self { scenario, world, fog, tracked, tick: 0 })
    }

    /// The scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The subsystem (read masks and textures through it).
    pub fn fog(&mut self) -> &mut FogSubsystem {
        &mut self.fog
    }

    /// The backend's name.
    pub fn backend_name(&self) -> String {
        self.fog.backend_name()
    }

    /// The world (for games and tests that add their own entities).
    pub fn world(&mut self) -> &mut World {
        &mut self.world
    }

    /// Ticks run so far.
    pub fn ticks_done(&self) -> u32 {
        self.tick
    }

    /// Whether every scripted tick has run.
    pub fn finished(&self) -> bool {
        self.tick >= self.scenario.ticks
    }

    /// Saves the run (the scenario, where it is, every scripted entity and
    /// the fog state) in the snapshot container; [`Self::resume`] continues it.
    pub fn snapshot(&mut self, base: &Path) -> Result<Vec<u8>> {
        let mut alive = Vec::new();
        for t in self.tracked.values() {
            if let Some(e) = t.entity.and_then(Entity::from_bits) {
                if let Ok(p) = self.world.get::<&Position>(e) {
                    alive.push((e.to_bits().get(), [p.0.x.to_bits(), p.0.y.to_bits(), p.0.z.to_bits()]));
                }
            }
        }
        let fog = self.fog.snapshot(&self.world)?;
        let body =
            RunBody { scenario: self.scenario.clone(), base: base.display().to_string(), tick: self.tick, tracked: self.tracked.clone(), alive, fog };
        encode(RUN_MAGIC, &body)
    }

    /// Continues a run saved by [`Self::snapshot`] on `backend`; the files the
    /// scenario names are read again from the saved base folder.
    pub fn resume(bytes: &[u8], backend: Box<dyn Backend>) -> Result<Self> {
        let RunBody { scenario, base, tick, tracked, alive, fog } = decode(RUN_MAGIC, bytes)?;
        let files = ScenarioFiles::load(&scenario, Path::new(&base))?;
        let mut runner = ScenarioRunner::new(scenario, &files, backend)?;
        let by_entity: BTreeMap<u64, &Tracked> = tracked.values().filter_map(|t| t.entity.map(|e| (e, t))).collect();
        for (bits, p) in alive {
            let (Some(e), Some(t)) = (Entity::from_bits(bits), by_entity.get(&bits)) else {
                return Err(MurkError::Parse { what: "run snapshot".into(), message: format!("entity {bits} is not a scripted entity") });
            };
            t.spawn(&mut runner.world, Position(Vec3::from(p.map(f32::from_bits))), Some(e));
        }
        runner.tracked = tracked;
        runner.tick = tick;
        runner.fog.restore(&mut runner.world, &fog)?;
        Ok(runner)
    }

    /// The fog state inside a run snapshot of [`Self::snapshot`], as a
    /// fog-state snapshot ([`FogSubsystem::snapshot`]): for a host that
    /// places the scenario's entities itself (a library user replaying the
    /// script) and restores only the fog with [`FogSubsystem::restore`].
    /// A damaged run snapshot is an error naming what is wrong.
    pub fn fog_state_of(bytes: &[u8]) -> Result<Vec<u8>> {
        let RunBody { fog, .. } = decode(RUN_MAGIC, bytes)?;
        Ok(fog)
    }

    /// Runs one tick: events, spawns, movement, despawns, then the fog tick;
    /// the record has the state hashes after it and the answers to the
    /// queries scripted for it (both read the masks now).
    pub fn step(&mut self) -> Result<TickRecord> {
        let tick = self.tick;
        let report = self.advance()?;
        let (lockstep, per_instance) = self.fog.state_hashes()?;
        let hashes: BTreeMap<String, String> = per_instance.into_iter().map(|(n, h)| (n, format!("{h:016x}"))).collect();
        let TickAnswers { events, observer_events, sight, sight_events, blips } = self.answers(&report)?;
        let mut queries = Vec::new();
        for q in self.scenario.queries.iter().filter(|q| q.tick == tick) {
            let mask = self.fog.mask_query_now(&q.points, q.cutoff)?;
            let immediate = match &q.immediate_teams {
                Some(teams) => {
                    let teams = teams_of(teams, "queries.immediate_teams")?;
                    Some(q.points.iter().map(|p| self.fog.query_immediate(&self.world, *p, teams)).collect::<Result<Vec<bool>>>()?)
                }
                None => None,
            };
            let lines = match &q.sight_from {
                Some(looker) => {
                    let lines: Vec<SightLine> = q.points.iter().map(|&to| SightLine { from: looker.at, to, eye_height: looker.eye_height }).collect();
                    Some(self.fog.sight_lines_now(&looker.instance, &lines)?)
                }
                None => None,
            };
            queries.push(QueryRecord { id: q.id.clone(), mask, immediate, lines });
        }
        let lockstep = format!("{lockstep:016x}");
        let recomputed = report.instances.into_iter().filter(|(_, t)| t.recomputed).map(|(n, _)| n).collect();
        Ok(TickRecord { tick, lockstep, hashes, recomputed, events, queries, observer_events, sight, sight_events, blips })
    }

    /// The multiplayer answers of a tick [`Self::advance`] ran, named by
    /// scenario id: its stealth events, per-observer stealth events, sight
    /// events, each observer's sight set after it and each sensor layer's
    /// blips. [`Self::step`] puts them in its record; a host that only
    /// advances (a page) asks here.
    pub fn answers(&self, report: &TickReport) -> Result<TickAnswers> {
        let ids: BTreeMap<u64, &str> = self.tracked.iter().filter_map(|(id, t)| t.entity.map(|e| (e, id.as_str()))).collect();
        let id = |e: Entity| ids.get(&e.to_bits().get()).map_or_else(|| format!("entity {}", e.id()), |s| s.to_string());
        let kind = |e: &StealthEvent| match e {
            StealthEvent::Revealed { .. } => "revealed",
            StealthEvent::Hidden { .. } => "hidden",
            StealthEvent::GhostSpawned { .. } => "ghost_spawned",
            StealthEvent::GhostRemoved { .. } => "ghost_removed",
        };
        let events = report.events.iter().map(|e| EventRecord { event: kind(e).to_string(), actor: id(e.actor()) }).collect();
        let observer_events = report
            .observer_events
            .iter()
            .map(|(observer, e)| ObserverEventRecord { observer: observer.clone(), event: kind(e).to_string(), actor: id(e.actor()) })
            .collect();
        let sight_events = report
            .sight
            .iter()
            .map(|e| match e {
                SightEvent::Entered { observer, entity } => SightRecord { observer: observer.clone(), event: "entered".into(), entity: id(*entity) },
                SightEvent::Left { observer, entity } => SightRecord { observer: observer.clone(), event: "left".into(), entity: id(*entity) },
            })
            .collect();
        let mut sight = BTreeMap::new();
        for name in self.fog.instance_names() {
            let mut set: Vec<String> = self.fog.visible_to(&name)?.into_iter().map(id).collect();
            set.sort();
            if !set.is_empty() {
                sight.insert(name, set);
            }
        }
        let mut blips = BTreeMap::new();
        for name in self.fog.instance_names() {
            if self.fog.instance(&name)?.profile.layer != 0 {
                let found = self.fog.blips(&self.world, &name)?;
                if !found.is_empty() {
                    blips.insert(name, found.iter().map(|b| b.position.to_array()).collect());
                }
            }
        }
        Ok(TickAnswers { events, observer_events, sight, sight_events, blips })
    }

    /// Moves the run onto `backend` while it runs: the fog state is taken
    /// over through a snapshot ([`FogSubsystem::take_over`]), and whether
    /// every tick is hashed carries over. On an error the run stays where
    /// it was.
    pub fn switch_backend(&mut self, backend: Box<dyn Backend>) -> Result<()> {
        let mut next = FogSubsystem::new(backend);
        next.set_hash_every_tick(self.fog.hashes_every_tick());
        next.take_over(&mut self.world, &mut self.fog)?;
        self.fog = next;
        Ok(())
    }

    /// Runs one tick as [`Self::step`] does but reads nothing back now: no
    /// state hashes, no scripted queries. A host that must not block (a
    /// browser on the GPU backend) turns on
    /// [`FogSubsystem::set_hash_every_tick`] and takes each tick's lockstep
    /// hash from the report's `lockstep`, two ticks later.
    pub fn advance(&mut self) -> Result<TickReport> {
        let tick = self.tick;
        let events: Vec<Action> = self.scenario.events.iter().filter(|e| e.tick == tick).map(|e| e.action.clone()).collect();
        for action in events {
            self.apply(action)?;
        }
        self.place_entities(tick)?;
        let report = self.fog.tick(&mut self.world, self.scenario.tick_us).map_err(|e| self.name_entities(e))?;
        self.tick += 1;
        Ok(report)
    }

    /// Rewrites `entity N` in an error from the subsystem as the file's
    /// name for it: `blockers[0] (id `wall`)`.
    fn name_entities(&self, e: MurkError) -> MurkError {
        let mut names: BTreeMap<u32, String> = BTreeMap::new();
        let lists = [
            ("sources", self.scenario.sources.iter().map(|x| x.id.as_str()).collect::<Vec<_>>()),
            ("blockers", self.scenario.blockers.iter().map(|x| x.id.as_str()).collect()),
            ("actors", self.scenario.actors.iter().map(|x| x.id.as_str()).collect()),
            ("anti_vision", self.scenario.anti_vision.iter().map(|x| x.id.as_str()).collect()),
        ];
        for (list, ids) in &lists {
            for (i, id) in ids.iter().enumerate() {
                if let Some(entity) = self.tracked.get(*id).and_then(|t| t.entity).and_then(Entity::from_bits) {
                    names.insert(entity.id(), format!("{list}[{i}] (id `{id}`)"));
                }
            }
        }
        // The field starts with `entity N`, or `instance `x`: entity N`.
        let rewrite = |text: &str| -> String {
            let at = match text.find(": entity ") {
                Some(i) if text.starts_with("instance `") => i + 2,
                _ => 0,
            };
            let Some(rest) = text[at..].strip_prefix("entity ") else { return text.to_string() };
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            match digits.parse::<u32>().ok().and_then(|n| names.get(&n)) {
                Some(name) => format!("{}{name}{}", &text[..at], &rest[digits.len()..]),
                None => text.to_string(),
            }
        };
        match e {
            MurkError::InvalidValue { field, value, reason } => MurkError::InvalidValue { field: rewrite(&field), value, reason },
            MurkError::UnknownEntity(what) => MurkError::UnknownEntity(rewrite(&what)),
            other => other,
        }
    }

    fn place_entities(&mut self, tick: u32) -> Result<()> {
        let tick_us = u64::from(self.scenario.tick_us);
        for t in self.tracked.values_mut() {
            if t.removed {
                continue;
            }
            if t.despawn_tick.is_some_and(|d| tick >= d) {
                if let Some(e) = t.entity.take().and_then(Entity::from_bits) {
                    // A transient reveal may already have removed itself.
                    let _ = self.world.despawn(e);
                }
                t.removed = true;
                continue;
            }
            if tick < t.spawn_tick {
                continue;
            }
            let pos = Position(t.position_at(tick, tick_us));
            match t.entity.and_then(Entity::from_bits) {
                Some(e) => {
                    if let Ok(mut p) = self.world.get::<&mut Position>(e) {
                        *p = pos;
                    } else {
                        // Gone: a transient reveal that expired.
                        t.entity = None;
                        t.removed = true;
                    }
                }
                None => {
                    let e = t.spawn(&mut self.world, pos, None);
                    t.entity = Some(e.to_bits().get());
                }
            }
        }
        Ok(())
    }

    fn apply(&mut self, action: Action) -> Result<()> {
        match action {
            Action::SetProfile { instance, profile } => self.fog.apply_profile(&instance, profile),
            Action::Toggle { instance, setting, value } => {
                let mut p = self.fog.instance(&instance)?.profile.clone();
                match setting {
                    Setting::Enabled => p.enabled = value,
                    Setting::ShowFog => p.show_fog = value,
                    Setting::FreezeState => p.freeze_state = value,
                    Setting::ShowMemory => p.show_memory = value,
                    Setting::FreezeMemory => p.freeze_memory = value,
                    Setting::SoftShadows => p.soft_shadows = value,
                    Setting::ZLayering => p.z_layering = value,
                }
                self.fog.apply_profile(&instance, p)
            }
            Action::SetRayMethod { instance, method } => {
                let mut p = self.fog.instance(&instance)?.profile.clone();
                p.ray_method = method;
                self.fog.apply_profile(&instance, p)
            }
            Action::SetArea { instance, area } => self.fog.set_area(&instance, area),
            Action::ExpandArea { instance, point } => self.fog.expand_area_to_include(&instance, point),
            Action::SetObservedTeams { instance, teams } => self.fog.set_observed_teams(&instance, teams_of(&teams, "teams")?),
            Action::Move { id, position } => {
                let t = self.tracked.get_mut(&id).ok_or_else(|| MurkError::UnknownEntity(id.clone()))?;
                t.start = position;
                t.start_tick = self.tick;
                t.motion = Motion::default();
                Ok(())
            }
            Action::Despawn { id } => {
                let t = self.tracked.get_mut(&id).ok_or_else(|| MurkError::UnknownEntity(id.clone()))?;
                t.despawn_tick = Some(self.tick);
                Ok(())
            }
            Action::MarkCaptureDirty => {
                self.fog.mark_capture_dirty();
                Ok(())
            }
            Action::EditTerrain { min, max, to } => {
                // The rectangle is checked (it must meet a grid) before a cell changes.
                self.fog.mark_capture_dirty_in(min, max)?;
                for capture in self.world.query_mut::<&mut HeightCapture>() {
                    let (origin, size, width) = (capture.origin, capture.cell_size, capture.width as usize);
                    for (i, cell) in capture.cells.iter_mut().enumerate() {
                        let centre = origin + (Vec2::new((i % width) as f32, (i / width) as f32) + 0.5) * size;
                        if centre.cmpge(min).all() && centre.cmple(max).all() {
                            *cell = to.cell();
                        }
                    }
                }
                Ok(())
            }
            Action::Reveal { target, reveal } => self.fog.reveal(&target, reveal).map(drop),
            Action::Hide { target, area } => self.fog.hide(&target, &area),
        }
    }
}

impl Tracked {
    fn new<C>(kind: Kind, e: &Scripted<C>) -> Self {
        Self {
            kind,
            sight: e.tracked,
            entity: None,
            start: e.position,
            start_tick: e.spawn_tick,
            motion: e.motion.clone(),
            spawn_tick: e.spawn_tick,
            despawn_tick: e.despawn_tick,
            removed: false,
        }
    }

    /// Spawns the entity's components at `pos`, at the handle `at` if given.
    fn spawn(&self, world: &mut World, pos: Position, at: Option<Entity>) -> Entity {
        let mut b = hecs::EntityBuilder::new();
        b.add(pos);
        match &self.kind {
            Kind::Source(s, transient) => {
                b.add(*s);
                if let Some(n) = transient {
                    b.add(TransientReveal { remaining_ticks: *n });
                }
            }
            Kind::Blocker(x) => {
                b.add(x.clone());
            }
            Kind::Actor(a) => {
                b.add(a.clone());
            }
            Kind::AntiVision(a) => {
                b.add(*a);
            }
        }
        if let Some(t) = self.sight {
            b.add(t);
        }
        match at {
            Some(e) => {
                world.spawn_at(e, b.build());
                e
            }
            None => world.spawn(b.build()),
        }
    }

    /// Position along the path at `tick` (f64 arithmetic, the same everywhere).
    fn position_at(&self, tick: u32, tick_us: u64) -> Vec3 {
        let m = &self.motion;
        if m.waypoints.is_empty() || m.speed <= 0.0 {
            return self.start;
        }
        let mut points: Vec<[f64; 3]> =
            std::iter::once(self.start).chain(m.waypoints.iter().copied()).map(|p| [f64::from(p.x), f64::from(p.y), f64::from(p.z)]).collect();
        if m.looped {
            points.push(points[0]);
        }
        let seg_len = |a: [f64; 3], b: [f64; 3]| ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2) + (b[2] - a[2]).powi(2)).sqrt();
        let total: f64 = points.windows(2).map(|w| seg_len(w[0], w[1])).sum();
        let elapsed = f64::from(tick.saturating_sub(self.start_tick)) * tick_us as f64 / 1.0e6;
        let mut dist = f64::from(m.speed) * elapsed;
        if total <= 0.0 {
            return self.start;
        }
        if m.looped {
            dist %= total;
        } else if dist >= total {
            let last = points[points.len() - 1];
            return Vec3::new(last[0] as f32, last[1] as f32, last[2] as f32);
        }
        for w in points.windows(2) {
            let l = seg_len(w[0], w[1]);
            if dist <= l && l > 0.0 {
                let f = dist / l;
                let p = [0, 1, 2].map(|i| w[0][i] + (w[1][i] - w[0][i]) * f);
                return Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32);
            }
            dist -= l;
        }
        let last = points[points.len() - 1];
        Vec3::new(last[0] as f32, last[1] as f32, last[2] as f32)
    }
}

fn rename(e: MurkError, from: &str, to: &str) -> MurkError {
    match e {
        MurkError::InvalidValue { field, value, reason } => MurkError::InvalidValue { field: field.replacen(from, to, 1), value, reason },
        other => other,
    }
}

/// Tracks every entity of `list`, as `kind` makes it.
fn track<C>(tracked: &mut BTreeMap<String, Tracked>, list: &[Scripted<C>], kind: impl Fn(&Scripted<C>) -> Kind) {
    for e in list {
        tracked.insert(e.id.clone(), Tracked::new(kind(e), e));
    }
}
