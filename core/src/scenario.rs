//! Scenario files: a scripted world for `murk run`, the conformance corpus
//! and the benches. JSON or RON; `docs/scenario.md` is the reference.
//!
//! A [`ScenarioRunner`] owns a `hecs::World` and a [`FogSubsystem`], moves
//! entities along their waypoints, spawns and despawns them, applies the
//! scripted events and ticks.

use crate::backend::Backend;
use crate::components::{AntiVision, Blocker, CaptureMode, Position, StealthActor, TeamMask, TransientReveal, VisionSource};
use crate::error::{finite, MurkError, Result};
use crate::movingai::MovingAiMap;
use crate::profile::{Profile, RayMethod};
use crate::query::MaskAnswer;
use crate::snapshot::{frame, unframe, Reader, Writer, RUN_MAGIC};
use crate::stealth::StealthEvent;
use crate::subsystem::{FogSubsystem, InstanceDesc};
use crate::transform::Area;
use glam::{Vec2, Vec3};
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest tick count a scenario may ask for.
pub const MAX_TICKS: u32 = 1_000_000;

/// A scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name (used in reports).
    pub name: String,
    /// Tick length in microseconds.
    #[serde(default = "default_tick_us")]
    pub tick_us: u32,
    /// Ticks to run.
    pub ticks: u32,
    /// Backend to run on when the command line does not say (`cpu`, `gpu`, `auto`).
    #[serde(default)]
    pub backend: Option<crate::backend::BackendChoice>,
    /// A Moving AI map loaded as a height capture.
    #[serde(default)]
    pub map: Option<MapSpec>,
    /// Fog instances.
    pub instances: Vec<ScenarioInstance>,
    /// Vision sources.
    #[serde(default)]
    pub sources: Vec<ScenarioSource>,
    /// Blockers.
    #[serde(default)]
    pub blockers: Vec<ScenarioBlocker>,
    /// Stealth actors.
    #[serde(default)]
    pub actors: Vec<ScenarioActor>,
    /// Anti-vision areas.
    #[serde(default)]
    pub anti_vision: Vec<ScenarioAntiVision>,
    /// Scripted changes.
    #[serde(default)]
    pub events: Vec<ScenarioEvent>,
    /// Scripted queries; their answers land in `summary.json`.
    #[serde(default)]
    pub queries: Vec<ScriptedQuery>,
    /// Ticks (0-based) after which every stage is recorded (conformance, `--stages`).
    #[serde(default)]
    pub stage_ticks: Vec<u32>,
}

fn default_tick_us() -> u32 {
    33_333
}

/// A Moving AI map used as the world's height capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapSpec {
    /// Path of the `.map` file, relative to the scenario file.
    pub file: String,
    /// World size of one map cell.
    #[serde(default = "one")]
    pub cell_size: f32,
    /// World XY of the corner of cell (0, 0).
    #[serde(default)]
    pub origin: Vec2,
    /// Ground Z.
    #[serde(default)]
    pub ground_z: f32,
    /// Height of `T` cells above the ground.
    #[serde(default = "default_tree_height")]
    pub tree_height: f32,
}

fn one() -> f32 {
    1.0
}
fn default_tree_height() -> f32 {
    4.0
}

/// A fog instance of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioInstance {
    /// Unique name (output files are `<name>.final.png`).
    pub name: String,
    /// Covered area.
    pub area: Area,
    /// Output texels along the area's X side.
    pub resolution: u32,
    /// Internal downscale.
    #[serde(default)]
    pub lod: u32,
    /// Observed teams (all when absent).
    #[serde(default)]
    pub observed_teams: Option<Vec<u8>>,
    /// Inline settings.
    #[serde(default)]
    pub profile: Option<Profile>,
    /// Settings file (JSON, RON or TOML), relative to the scenario file.
    #[serde(default)]
    pub profile_file: Option<String>,
}

/// Scripted movement shared by sources and blockers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Motion {
    /// Points visited after the start position, in order.
    #[serde(default)]
    pub waypoints: Vec<Vec3>,
    /// World units per second along the path.
    #[serde(default)]
    pub speed: f32,
    /// Return to the start and go round again.
    #[serde(default)]
    pub looped: bool,
}

/// A vision source of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSource {
    /// Unique id among sources and blockers.
    pub id: String,
    /// Start position.
    pub position: Vec3,
    /// The source component.
    pub source: VisionSource,
    /// Movement.
    #[serde(default)]
    pub motion: Motion,
    /// First tick it exists.
    #[serde(default)]
    pub spawn_tick: u32,
    /// Tick at which it is removed.
    #[serde(default)]
    pub despawn_tick: Option<u32>,
    /// A transient reveal lasting this many ticks.
    #[serde(default)]
    pub transient_ticks: Option<u32>,
}

/// A blocker of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioBlocker {
    /// Unique id among sources and blockers.
    pub id: String,
    /// Start position.
    pub position: Vec3,
    /// The blocker component.
    pub blocker: Blocker,
    /// Movement.
    #[serde(default)]
    pub motion: Motion,
    /// First tick it exists.
    #[serde(default)]
    pub spawn_tick: u32,
    /// Tick at which it is removed.
    #[serde(default)]
    pub despawn_tick: Option<u32>,
}

/// A stealth actor of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioActor {
    /// Unique id among all scripted entities.
    pub id: String,
    /// Start position.
    pub position: Vec3,
    /// The stealth component.
    #[serde(default)]
    pub stealth: StealthActor,
    /// Movement.
    #[serde(default)]
    pub motion: Motion,
    /// First tick it exists.
    #[serde(default)]
    pub spawn_tick: u32,
    /// Tick at which it is removed.
    #[serde(default)]
    pub despawn_tick: Option<u32>,
}

/// An anti-vision area of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioAntiVision {
    /// Unique id among all scripted entities.
    pub id: String,
    /// Start position.
    pub position: Vec3,
    /// The anti-vision component.
    pub anti_vision: AntiVision,
    /// Movement.
    #[serde(default)]
    pub motion: Motion,
    /// First tick it exists.
    #[serde(default)]
    pub spawn_tick: u32,
    /// Tick at which it is removed.
    #[serde(default)]
    pub despawn_tick: Option<u32>,
}

/// A query asked after a tick ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedQuery {
    /// Tick (after it ran).
    pub tick: u32,
    /// Name in the results.
    pub id: String,
    /// World points.
    pub points: Vec<Vec3>,
    /// Cutoff override (`0..=1`) for the mask query.
    #[serde(default)]
    pub cutoff: Option<f32>,
    /// Also ask the immediate query for these teams.
    #[serde(default)]
    pub immediate_teams: Option<Vec<u8>>,
}

/// A scripted change at a tick (applied before that tick runs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioEvent {
    /// Tick (0-based).
    pub tick: u32,
    /// What happens.
    pub action: Action,
}

/// Boolean settings that [`Action::Toggle`] can set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    /// [`Profile::enabled`].
    Enabled,
    /// [`Profile::show_fog`].
    ShowFog,
    /// [`Profile::freeze_state`].
    FreezeState,
    /// [`Profile::show_memory`].
    ShowMemory,
    /// [`Profile::freeze_memory`].
    FreezeMemory,
    /// [`Profile::soft_shadows`].
    SoftShadows,
    /// [`Profile::z_layering`].
    ZLayering,
}

/// Scripted changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Replace an instance's profile.
    SetProfile {
        /// Instance name.
        instance: String,
        /// The new profile (absent fields take defaults).
        profile: Profile,
    },
    /// Set one boolean setting.
    Toggle {
        /// Instance name.
        instance: String,
        /// Which setting.
        setting: Setting,
        /// New value.
        value: bool,
    },
    /// Change the ray method.
    SetRayMethod {
        /// Instance name.
        instance: String,
        /// New method.
        method: RayMethod,
    },
    /// Move or resize an instance.
    SetArea {
        /// Instance name.
        instance: String,
        /// New area.
        area: Area,
    },
    /// Grow an instance's area to include a point.
    ExpandArea {
        /// Instance name.
        instance: String,
        /// World point.
        point: Vec3,
    },
    /// Change the teams an instance observes.
    SetObservedTeams {
        /// Instance name.
        instance: String,
        /// Teams.
        teams: Vec<u8>,
    },
    /// Teleport a source or blocker (its path restarts from there, stopped).
    Move {
        /// Source or blocker id.
        id: String,
        /// New position.
        position: Vec3,
    },
    /// Remove a source or blocker now.
    Despawn {
        /// Source or blocker id.
        id: String,
    },
    /// Force a recapture of the map capture.
    MarkCaptureDirty,
}

impl Scenario {
    /// Parses scenario text (`json` or `ron`); `what` names it in errors.
    pub fn parse(text: &str, format: &str, what: &str) -> Result<Scenario> {
        let parse_err = |message: String| MurkError::Parse { what: what.to_string(), message };
        match format {
            "json" => serde_json::from_str(text).map_err(|e| parse_err(e.to_string())),
            "ron" => ron::from_str(text).map_err(|e| parse_err(e.to_string())),
            other => Err(MurkError::invalid(format!("{what} format"), other, "scenarios are json or ron")),
        }
    }

    /// Loads a scenario file (format by extension).
    pub fn load(path: &Path) -> Result<Scenario> {
        let what = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| MurkError::Io { path: what.clone(), message: e.to_string() })?;
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        Self::parse(&text, &ext, &what)
    }
}

/// Reads a file relative to a base directory.
fn read_relative(base: &Path, file: &str) -> Result<(PathBuf, String)> {
    let path = base.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| MurkError::Io { path: path.display().to_string(), message: e.to_string() })?;
    Ok((path, text))
}

/// Files a scenario refers to, loaded: the map and profile files.
#[derive(Clone, Debug, Default)]
pub struct ScenarioFiles {
    /// The map, if the scenario has one.
    pub map: Option<MovingAiMap>,
    /// Profiles loaded from `profile_file`, by instance name.
    pub profiles: BTreeMap<String, Profile>,
}

impl ScenarioFiles {
    /// Loads what `scenario` refers to, relative to `base`.
    pub fn load(scenario: &Scenario, base: &Path) -> Result<Self> {
        let mut files = ScenarioFiles::default();
        if let Some(spec) = &scenario.map {
            let (path, text) = read_relative(base, &spec.file)?;
            files.map = Some(MovingAiMap::parse(&text, &path.display().to_string())?);
        }
        for inst in &scenario.instances {
            if let Some(file) = &inst.profile_file {
                files.profiles.insert(inst.name.clone(), Profile::load(&base.join(file))?);
            }
        }
        Ok(files)
    }
}

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
    entity: Option<u64>,
    start: Vec3,
    start_tick: u32,
    motion: Motion,
    spawn_tick: u32,
    despawn_tick: Option<u32>,
    removed: bool,
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
                observed_teams: inst.observed_teams.as_deref().map_or(TeamMask::ALL, TeamMask::of),
                profile,
            };
            fog.create_instance(desc).map_err(|e| rename(e, &format!("instance `{}`", inst.name), &format!("instances[{i}]")))?;
        }
        check_placements(&scenario, &fog)?;
        let mut world = World::new();
        if let (Some(spec), Some(map)) = (&scenario.map, &files.map) {
            let capture = map.to_capture(
                spec.origin,
                spec.cell_size,
                spec.ground_z,
                spec.tree_height,
                CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true },
            );
            world.spawn((capture,));
        }
        let mut tracked = BTreeMap::new();
        for s in &scenario.sources {
            let kind = Kind::Source(s.source, s.transient_ticks);
            tracked.insert(s.id.clone(), Tracked::new(kind, s.position, &s.motion, s.spawn_tick, s.despawn_tick));
        }
        for b in &scenario.blockers {
            tracked.insert(b.id.clone(), Tracked::new(Kind::Blocker(b.blocker.clone()), b.position, &b.motion, b.spawn_tick, b.despawn_tick));
        }
        for a in &scenario.actors {
            tracked.insert(a.id.clone(), Tracked::new(Kind::Actor(a.stealth.clone()), a.position, &a.motion, a.spawn_tick, a.despawn_tick));
        }
        for a in &scenario.anti_vision {
            tracked.insert(a.id.clone(), Tracked::new(Kind::AntiVision(a.anti_vision), a.position, &a.motion, a.spawn_tick, a.despawn_tick));
        }
        Ok(Self { scenario, world, fog, tracked, tick: 0 })
    }

    /// The scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The subsystem (read masks and stages through it).
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
        let json = |e: serde_json::Error| MurkError::Parse { what: "run snapshot".into(), message: e.to_string() };
        let mut w = Writer::default();
        w.str(&serde_json::to_string(&self.scenario).map_err(json)?);
        w.str(&base.display().to_string());
        w.u32(self.tick);
        w.str(&serde_json::to_string(&self.tracked).map_err(json)?);
        let mut alive = Vec::new();
        for t in self.tracked.values() {
            if let Some(e) = t.entity.and_then(Entity::from_bits) {
                if let Ok(p) = self.world.get::<&Position>(e) {
                    alive.push((e.to_bits().get(), p.0));
                }
            }
        }
        w.u32(alive.len() as u32);
        for (bits, p) in alive {
            w.u64(bits);
            for v in [p.x, p.y, p.z] {
                w.u32(v.to_bits());
            }
        }
        let fog = self.fog.snapshot(&self.world)?;
        w.blob(&fog);
        Ok(frame(RUN_MAGIC, &w.bytes))
    }

    /// Continues a run saved by [`Self::snapshot`] on `backend`; the files the
    /// scenario names are read again from the saved base folder.
    pub fn resume(bytes: &[u8], backend: Box<dyn Backend>) -> Result<Self> {
        let json = |e: serde_json::Error| MurkError::Parse { what: "run snapshot".into(), message: e.to_string() };
        let payload = unframe(RUN_MAGIC, bytes)?;
        let mut r = Reader::new(payload);
        let scenario: Scenario = serde_json::from_str(&r.str()?).map_err(json)?;
        let base = PathBuf::from(r.str()?);
        let tick = r.u32()?;
        let tracked: BTreeMap<String, Tracked> = serde_json::from_str(&r.str()?).map_err(json)?;
        let mut alive = Vec::new();
        for _ in 0..r.u32()? {
            let bits = r.u64()?;
            let p = Vec3::new(f32::from_bits(r.u32()?), f32::from_bits(r.u32()?), f32::from_bits(r.u32()?));
            alive.push((bits, p));
        }
        let fog = r.blob()?.to_vec();
        r.finish()?;
        let files = ScenarioFiles::load(&scenario, &base)?;
        let mut runner = ScenarioRunner::new(scenario, &files, backend)?;
        let by_entity: BTreeMap<u64, &Tracked> = tracked.values().filter_map(|t| t.entity.map(|e| (e, t))).collect();
        for (bits, p) in alive {
            let (Some(e), Some(t)) = (Entity::from_bits(bits), by_entity.get(&bits)) else {
                return Err(MurkError::Parse { what: "run snapshot".into(), message: format!("entity {bits} is not a scripted entity") });
            };
            t.spawn(&mut runner.world, Position(p), Some(e));
        }
        runner.tracked = tracked;
        runner.tick = tick;
        runner.fog.restore(&mut runner.world, &fog)?;
        Ok(runner)
    }

    /// Runs one tick: events, spawns, movement, despawns, then the fog tick.
    pub fn step(&mut self) -> Result<TickRecord> {
        let tick = self.tick;
        let events: Vec<Action> = self.scenario.events.iter().filter(|e| e.tick == tick).map(|e| e.action.clone()).collect();
        for action in events {
            self.apply(action)?;
        }
        self.place_entities(tick)?;
        let report = self.fog.tick(&mut self.world, self.scenario.tick_us).map_err(|e| self.name_entities(e))?;
        let (lockstep, per_instance) = self.fog.state_hashes()?;
        let hashes: BTreeMap<String, String> = per_instance.into_iter().map(|(n, h)| (n, format!("{h:016x}"))).collect();
        let ids: BTreeMap<u64, &str> = self.tracked.iter().filter_map(|(id, t)| t.entity.map(|e| (e, id.as_str()))).collect();
        let events = report
            .events
            .iter()
            .map(|e| {
                let name = match e {
                    StealthEvent::Revealed { .. } => "revealed",
                    StealthEvent::Hidden { .. } => "hidden",
                    StealthEvent::GhostSpawned { .. } => "ghost_spawned",
                    StealthEvent::GhostRemoved { .. } => "ghost_removed",
                };
                let actor = ids.get(&e.actor().to_bits().get()).map_or_else(|| format!("entity {}", e.actor().id()), |s| s.to_string());
                EventRecord { event: name.to_string(), actor }
            })
            .collect();
        let mut queries = Vec::new();
        for q in self.scenario.queries.iter().filter(|q| q.tick == tick) {
            let mask = self.fog.mask_query_now(&q.points, q.cutoff)?;
            let immediate = match &q.immediate_teams {
                Some(teams) => {
                    Some(q.points.iter().map(|p| self.fog.query_immediate(&self.world, *p, TeamMask::of(teams))).collect::<Result<Vec<bool>>>()?)
                }
                None => None,
            };
            queries.push(QueryRecord { id: q.id.clone(), mask, immediate });
        }
        let lockstep = format!("{lockstep:016x}");
        self.tick += 1;
        let recomputed = report.instances.into_iter().filter(|(_, t)| t.recomputed).map(|(n, _)| n).collect();
        Ok(TickRecord { tick, lockstep, hashes, recomputed, events, queries })
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
            Action::SetObservedTeams { instance, teams } => self.fog.set_observed_teams(&instance, TeamMask::of(&teams)),
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
        }
    }
}

impl Tracked {
    fn new(kind: Kind, start: Vec3, motion: &Motion, spawn_tick: u32, despawn_tick: Option<u32>) -> Self {
        Self { kind, entity: None, start, start_tick: spawn_tick, motion: motion.clone(), spawn_tick, despawn_tick, removed: false }
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
fn check_placements(s: &Scenario, fog: &FogSubsystem) -> Result<()> {
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
            fog.check_source(&label, p, &src.source, None)?;
        }
    }
    for (i, a) in s.anti_vision.iter().enumerate() {
        let label = format!("anti_vision[{i}] (id `{}`)", a.id);
        let as_source = VisionSource {
            radius: a.anti_vision.radius,
            falloff: Some(a.anti_vision.falloff),
            eye_height: 0.0,
            cone: None,
            team: 0,
            height_layer: None,
        };
        for p in places(a.position, &a.motion, &a.id) {
            fog.check_source(&label, p, &as_source, Some(a.anti_vision.targets))?;
        }
    }
    Ok(())
}

/// When a scripted entity exists: its spawn and despawn ticks.
struct Lifetime {
    spawn_tick: u32,
    despawn_tick: Option<u32>,
}

/// Checks what every scripted entity has: a unique id, a finite position, a
/// valid motion, and a lifetime inside the run (spawned before the last
/// tick, despawned after it spawned).
fn check_scripted<'a>(
    s: &Scenario,
    field: &str,
    ids: &mut BTreeMap<&'a str, Lifetime>,
    id: &'a str,
    position: Vec3,
    motion: &Motion,
    life: Lifetime,
) -> Result<()> {
    if ids.contains_key(id) {
        return Err(MurkError::invalid(format!("{field}.id"), id, "is used twice"));
    }
    check_vec3(&format!("{field}.position"), position)?;
    check_motion(field, motion)?;
    if life.spawn_tick >= s.ticks {
        return Err(MurkError::invalid(
            format!("{field}.spawn_tick"),
            life.spawn_tick,
            format!("the run has ticks 0..{}: the entity would never spawn", s.ticks),
        ));
    }
    if let Some(d) = life.despawn_tick {
        if d <= life.spawn_tick {
            return Err(MurkError::invalid(
                format!("{field}.despawn_tick"),
                d,
                format!("must come after spawn_tick = {} (despawn before spawn)", life.spawn_tick),
            ));
        }
    }
    ids.insert(id, life);
    Ok(())
}

/// Checks what the subsystem cannot: ids, references, ticks.
fn validate(s: &Scenario, files: &ScenarioFiles) -> Result<()> {
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
    let mut names = std::collections::BTreeSet::new();
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
            if let Some(t) = teams.iter().find(|&&t| t >= 32) {
                return Err(MurkError::invalid(format!("instances[{i}].observed_teams"), t, "teams are 0..=31"));
            }
        }
    }
    // Every scripted entity is checked now, whenever it spawns: a bad entity
    // late in a long run fails before tick 0, not after running to it.
    let mut ids = BTreeMap::new();
    for (i, src) in s.sources.iter().enumerate() {
        let f = format!("sources[{i}]");
        let life = Lifetime { spawn_tick: src.spawn_tick, despawn_tick: src.despawn_tick };
        check_scripted(s, &f, &mut ids, &src.id, src.position, &src.motion, life)?;
        src.source.check(&f)?;
        if src.transient_ticks == Some(0) {
            return Err(MurkError::invalid(format!("{f}.transient_ticks"), 0, "must be at least 1"));
        }
    }
    for (i, b) in s.blockers.iter().enumerate() {
        let f = format!("blockers[{i}]");
        let life = Lifetime { spawn_tick: b.spawn_tick, despawn_tick: b.despawn_tick };
        check_scripted(s, &f, &mut ids, &b.id, b.position, &b.motion, life)?;
        b.blocker.check(&f)?;
    }
    for (i, a) in s.actors.iter().enumerate() {
        let f = format!("actors[{i}]");
        let life = Lifetime { spawn_tick: a.spawn_tick, despawn_tick: a.despawn_tick };
        check_scripted(s, &f, &mut ids, &a.id, a.position, &a.motion, life)?;
        crate::stealth::quantize(&f, &a.stealth)?;
        if let Some(inst) = &a.stealth.instance {
            if !names.contains(inst.as_str()) {
                return Err(MurkError::invalid(format!("{f}.stealth.instance"), inst, "names no instance"));
            }
        }
    }
    for (i, a) in s.anti_vision.iter().enumerate() {
        let f = format!("anti_vision[{i}]");
        let life = Lifetime { spawn_tick: a.spawn_tick, despawn_tick: a.despawn_tick };
        check_scripted(s, &f, &mut ids, &a.id, a.position, &a.motion, life)?;
        let r = finite(&format!("{f}.anti_vision.radius"), a.anti_vision.radius)?;
        if r < 0.0 {
            return Err(MurkError::invalid(format!("{f}.anti_vision.radius"), r, "must not be negative"));
        }
        crate::error::in_range(&format!("{f}.anti_vision.falloff"), a.anti_vision.falloff, 0.0, 1.0)?;
    }
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
        }
    }
    Ok(())
}
