//! [`Fog`]: one game world and its fog subsystem, driven the way a browser
//! must drive it. The caller spawns entities from [`Parts`] and keeps their
//! handles, loads maps as height captures, ticks, and reads masks, sight
//! sets, stealth states, hashes, snapshots and explored memory. Nothing in
//! a call waits for a device: on the GPU backend a tick runs only when
//! [`Fog::ready`] holds, each tick's lockstep hash lands two ticks later,
//! and a read (mask, snapshot, memory, hash) is prepared first
//! ([`Fog::prepare`]) and taken once [`Fog::ready`] holds again. The
//! JavaScript bindings (`web/`) wrap it; the native tests drive it alike.

use crate::handles::{HandleKind, Handles};
use crate::parts::Parts;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{EntityBuilder, World};
use murk_core::movingai::MovingAiMap;
use murk_core::scenario::ScenarioRunner;
use murk_core::snapshot::RUN_MAGIC;
use murk_core::FogBody;
use murk_core::{
    AntiVision, Area, Backend, Blocker, CaptureMode, Explored, FogSubsystem, InstanceDesc, MurkError, Position, Profile, QueryHandle, Result,
    ShaderParams, SightLine, StealthActor, TeamMask, TickReport, Tracked, TransientReveal, VisionSource,
};
use murk_cpu::CpuBackend;
use murk_gpu::GpuBackend;
use serde::Deserialize;

/// Numbers a sight line takes in [`Fog::submit_lines`].
const LINE_NUMBERS: usize = 7;

/// A fog instance as the caller describes it: the fields of a scenario
/// file's instance (`docs/scenario.md`), the profile inline.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceSpec {
    /// Unique name.
    pub name: String,
    /// Covered area.
    pub area: Area,
    /// Output texels along the area's X side.
    pub resolution: u32,
    /// Internal downscale: passes run at `resolution >> lod`.
    #[serde(default)]
    pub lod: u32,
    /// Teams (0..=63) whose sources reveal it; every team when absent.
    #[serde(default)]
    pub observed_teams: Option<Vec<u8>>,
    /// Settings; the defaults when absent.
    #[serde(default)]
    pub profile: Option<Profile>,
}

/// How a Moving AI map becomes a height capture, as a scenario's `map`
/// says it (without the file: the caller gives the text).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapSettings {
    /// World size of one map cell.
    #[serde(default = "one")]
    pub cell_size: f32,
    /// World XY of the corner of cell (0, 0).
    #[serde(default)]
    pub origin: Vec2,
    /// Ground Z.
    #[serde(default)]
    pub ground_z: f32,
    /// Height of `T` (tree) cells above the ground.
    #[serde(default = "four")]
    pub tree_height: f32,
}

fn one() -> f32 {
    1.0
}

fn four() -> f32 {
    4.0
}

/// A read that on the GPU must be prepared a round trip ahead
/// ([`Fog::prepare`]): the device answers only while a browser page yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// An instance's final mask ([`Fog::final_mask`]).
    Mask(String),
    /// The whole fog state ([`Fog::snapshot`]).
    Snapshot,
    /// An instance's explored memory ([`Fog::export_memory`]).
    Memory(String),
}

/// What one tick did: the core report and the tick's index.
#[derive(Clone, Debug)]
pub struct TickOutcome {
    /// The tick's index (0 for the first), as `murk run` numbers its
    /// `per_tick` records.
    pub tick: u64,
    /// Stealth and sight events, per-instance outcome, and the lockstep
    /// hash that landed in it (of the state two ticks earlier).
    pub report: TickReport,
}

impl TickOutcome {
    /// The lockstep hash that landed in this tick, with the index of the
    /// tick whose state it hashes.
    pub fn landed_hash(&self) -> Option<(u64, u64)> {
        self.report.lockstep.map(|l| (l.ticks.saturating_sub(1), l.hash))
    }
}

/// A stealth actor's state as a host shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StealthView {
    /// Whether it counted as visible at the last check.
    pub visible: bool,
    /// Its fade toward visible, `0..=1`.
    pub fade: f32,
    /// Where it was last seen, if ever.
    pub last_known: Option<Vec3>,
    /// Whether a ghost stands in for it.
    pub ghost: bool,
}

/// One world with its fog subsystem on one backend.
pub struct Fog {
    world: World,
    fog: FogSubsystem,
    handles: Handles,
    /// A handle on the GPU backend, when the fog runs on one.
    gpu: Option<GpuBackend>,
}

impl Fog {
    /// A fog on the CPU backend, on the calling thread (in a browser, the
    /// page's thread: wasm without atomics has no threads).
    pub fn on_cpu() -> Result<Self> {
        Ok(Self::with(Box::new(CpuBackend::new(1)?), None))
    }

    /// A fog on the GPU backend `gpu` (in a browser, on its WebGPU device).
    pub fn on_gpu(gpu: GpuBackend) -> Self {
        Self::with(Box::new(gpu.clone()), Some(gpu))
    }

    fn with(backend: Box<dyn Backend>, gpu: Option<GpuBackend>) -> Self {
        let mut fog = FogSubsystem::new(backend);
        // Every tick's hash, delivered two ticks later: the only way to
        // hash on a device without waiting for it.
        fog.set_hash_every_tick(true);
        Self { world: World::new(), fog, handles: Handles::default(), gpu }
    }

    /// The backend's name.
    pub fn backend_name(&self) -> String {
        self.fog.backend_name()
    }

    /// The GPU backend the fog runs on, if it does.
    pub fn gpu(&self) -> Option<&GpuBackend> {
        self.gpu.as_ref()
    }

    /// Ticks run so far (restored with a snapshot).
    pub fn ticks(&self) -> u64 {
        self.fog.tick_count()
    }

    /// The subsystem, for what this API does not wrap.
    pub fn subsystem(&mut self) -> &mut FogSubsystem {
        &mut self.fog
    }

    /// Creates an instance from its description (JSON text of an
    /// [`InstanceSpec`]); errors name the field and value.
    pub fn create_instance(&mut self, json: &str) -> Result<()> {
        let spec: InstanceSpec = serde_json::from_str(json).map_err(|e| MurkError::Parse { what: "instance".into(), message: e.to_string() })?;
        let observed_teams = match &spec.observed_teams {
            None => TeamMask::ALL,
            Some(teams) => TeamMask::of(teams).map_err(|e| match e {
                MurkError::InvalidValue { field, value, reason } => {
                    MurkError::InvalidValue { field: format!("instance.observed_{field}"), value, reason }
                }
                other => other,
            })?,
        };
        self.fog.create_instance(InstanceDesc {
            name: spec.name,
            area: spec.area,
            resolution: spec.resolution,
            lod: spec.lod,
            observed_teams,
            profile: spec.profile.unwrap_or_default(),
        })
    }

    /// Destroys instance `name`.
    pub fn destroy_instance(&mut self, name: &str) -> Result<()> {
        self.fog.destroy_instance(name)
    }

    /// The instances, in name order.
    pub fn instance_names(&self) -> Vec<String> {
        self.fog.instance_names()
    }

    /// Applies a profile (JSON text) to instance `name` from the next tick.
    pub fn apply_profile(&mut self, name: &str, json: &str) -> Result<()> {
        let profile = Profile::parse(json, "json", "profile")?;
        self.fog.apply_profile(name, profile)
    }

    /// Loads a Moving AI map (`.map` text) as a height capture, as a
    /// scenario's `map` does: walls stop everything, trees are
    /// `tree_height` tall. `settings` is JSON text of [`MapSettings`]. The
    /// capture's handle.
    pub fn load_map(&mut self, text: &str, settings: &str) -> Result<u64> {
        let s: MapSettings = serde_json::from_str(settings).map_err(|e| MurkError::Parse { what: "map settings".into(), message: e.to_string() })?;
        for (field, v) in
            [("cell_size", s.cell_size), ("origin.x", s.origin.x), ("origin.y", s.origin.y), ("ground_z", s.ground_z), ("tree_height", s.tree_height)]
        {
            if !v.is_finite() {
                return Err(MurkError::invalid(format!("map.{field}"), v, "must be finite"));
            }
        }
        if s.cell_size <= 0.0 {
            return Err(MurkError::invalid("map.cell_size", s.cell_size, "must be positive"));
        }
        let map = MovingAiMap::parse(text, "map")?;
        let mode = CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true };
        let capture = map.to_capture(s.origin, s.cell_size, s.ground_z, s.tree_height, mode);
        let entity = self.world.spawn((capture,));
        Ok(self.handles.add(entity, HandleKind::Capture))
    }

    /// Spawns an entity at `position` made of `parts`; its handle. A
    /// source is also checked against every instance (its radius in texels).
    pub fn spawn(&mut self, position: Vec3, parts: &Parts) -> Result<u64> {
        check_position(position)?;
        parts.check()?;
        if let Some(source) = &parts.source {
            self.fog.check_source("parts", position, source, None)?;
        }
        let mut builder = EntityBuilder::new();
        builder.add(Position(position));
        parts.build(&mut builder);
        let entity = self.world.spawn(builder.build());
        Ok(self.handles.add(entity, HandleKind::Entity))
    }

    /// Moves the entity of `handle` to `position`.
    pub fn move_to(&mut self, handle: u64, position: Vec3) -> Result<()> {
        check_position(position)?;
        let entity = self.handles.get(&self.world, handle, HandleKind::Entity)?;
        let mut at = self.world.get::<&mut Position>(entity).map_err(|_| MurkError::invalid("handle", handle, "has no position"))?;
        *at = Position(position);
        Ok(())
    }

    /// Replaces the components of the entity of `handle` with `parts` (a
    /// sentry turns its cone, a unit starts hiding); its position stays.
    pub fn set_parts(&mut self, handle: u64, parts: &Parts) -> Result<()> {
        parts.check()?;
        let entity = self.handles.get(&self.world, handle, HandleKind::Entity)?;
        if let Some(source) = &parts.source {
            let position = self.world.get::<&Position>(entity).map(|p| p.0).map_err(|_| MurkError::invalid("handle", handle, "has no position"))?;
            self.fog.check_source("parts", position, source, None)?;
        }
        // Absent components are simply not there: nothing to undo.
        let _ = self.world.remove::<(VisionSource,)>(entity);
        let _ = self.world.remove::<(TransientReveal,)>(entity);
        let _ = self.world.remove::<(Blocker,)>(entity);
        let _ = self.world.remove::<(StealthActor,)>(entity);
        let _ = self.world.remove::<(AntiVision,)>(entity);
        let _ = self.world.remove::<(Tracked,)>(entity);
        let mut builder = EntityBuilder::new();
        parts.build(&mut builder);
        self.world.insert(entity, builder.build()).map_err(|_| MurkError::invalid("handle", handle, "vanished while its parts were replaced"))
    }

    /// Removes the entity or capture of `handle`; the handle is stale from
    /// now on.
    pub fn remove(&mut self, handle: u64) -> Result<()> {
        let entity = self.handles.take(&self.world, handle)?;
        self.world.despawn(entity).map_err(|_| MurkError::invalid("handle", handle, "was already gone"))
    }

    /// Whether a tick (or a prepared read) would find every readback
    /// landed: always on the CPU; on the GPU once the device answered,
    /// which in a browser happens only while the page yields.
    pub fn ready(&self) -> Result<bool> {
        self.gpu.as_ref().map_or(Ok(true), GpuBackend::readbacks_landed)
    }

    /// Refuses a call that would wait for the device.
    fn require_ready(&self, what: &str) -> Result<()> {
        if self.ready()? {
            Ok(())
        } else {
            Err(MurkError::invalid(what, "called with readbacks in flight", "wait until ready() holds (yield to the browser in between)"))
        }
    }

    /// Runs one tick of `dt_us` microseconds. On the GPU call it only when
    /// [`Fog::ready`] holds: an error otherwise, which changes nothing.
    pub fn tick(&mut self, dt_us: u32) -> Result<TickOutcome> {
        self.require_ready("tick")?;
        let tick = self.fog.tick_count();
        let report = self.fog.tick(&mut self.world, dt_us)?;
        self.handles.prune(&self.world);
        Ok(TickOutcome { tick, report })
    }

    /// Prepares `read` on the GPU: the reads it makes are recorded into
    /// staging copies, and once [`Fog::ready`] holds again the read itself
    /// waits for nothing. Call it when ready, and read before the next
    /// tick. Nothing to do on the CPU.
    pub fn prepare(&mut self, read: &Read) -> Result<()> {
        let Some(gpu) = self.gpu.clone() else { return Ok(()) };
        self.require_ready("prepare")?;
        gpu.rehearse_reads(|| self.read(read))?
    }

    /// Makes `read`, discarding the result (the rehearsal of [`Fog::prepare`]).
    fn read(&mut self, read: &Read) -> Result<()> {
        match read {
            Read::Mask(name) => self.fog.final_mask(name).map(drop),
            Read::Snapshot => self.fog.snapshot(&self.world).map(drop),
            Read::Memory(name) => self.fog.export_memory(name).map(drop),
        }
    }

    /// The final mask of instance `name` (`0..=65535` per output texel,
    /// row 0 at the area's local -Y edge) with its width and height. On the
    /// GPU, [`Fog::prepare`] it first.
    pub fn final_mask(&mut self, name: &str) -> Result<(u32, u32, Vec<u16>)> {
        let dims = self.fog.dims(name)?;
        Ok((dims.out_width, dims.out_height, self.fog.final_mask(name)?))
    }

    /// What a material samples instance `name`'s mask with: the 48-byte
    /// block of `murk_fog.wgsl`.
    pub fn shader_params(&self, name: &str) -> Result<ShaderParams> {
        self.fog.shader_params(name)
    }

    /// The handles of the tracked entities observer `name` sees, ascending.
    pub fn visible_to(&self, name: &str) -> Result<Vec<u64>> {
        Ok(self.fog.visible_to(name)?.into_iter().map(|e| e.to_bits().get()).collect())
    }

    /// Where instance `name`, of a sensor layer (a radar), senses tracked
    /// entities that no sight instance of its teams sees: positions only
    /// (`[x, y, z]`), ordered by position, each strayed by up to the
    /// profile's `blip_error`. An instance of sight (layer 0) is a named
    /// error.
    pub fn blips(&self, name: &str) -> Result<Vec<[f32; 3]>> {
        Ok(self.fog.blips(&self.world, name)?.into_iter().map(|b| b.position.to_array()).collect())
    }

    /// Submits sight lines in instance `name`, seven numbers a line (the
    /// looker's `x, y, z`, the target's `x, y, z`, the looker's eye height
    /// above its position), judged over the occlusion the instance's last
    /// tick built: a handle for [`Fog::poll_lines`]. Every line is checked
    /// first: a count that is not a multiple of seven, or a bad line (a
    /// number not finite, an end outside the grid), is an error naming it,
    /// and nothing is submitted.
    pub fn submit_lines(&mut self, name: &str, numbers: &[f32]) -> Result<u64> {
        if !numbers.len().is_multiple_of(LINE_NUMBERS) {
            return Err(MurkError::invalid(
                "lines",
                format!("{} numbers", numbers.len()),
                "must be seven a line: from x, y, z, to x, y, z, eye height",
            ));
        }
        let lines: Vec<SightLine> = numbers
            .chunks_exact(LINE_NUMBERS)
            .map(|n| SightLine { from: Vec3::new(n[0], n[1], n[2]), to: Vec3::new(n[3], n[4], n[5]), eye_height: n[6] })
            .collect();
        Ok(self.fog.submit_sight_lines(name, &lines)?.0)
    }

    /// The answers of a sight-line batch, two numbers a line in line order:
    /// the light the ray lets through (`0..=65535`) and whether that
    /// reaches the instance's visibility cutoff (1) or not (0). `None`
    /// while in flight (on the CPU, never); each batch is answered once,
    /// and an unknown or answered handle is an error.
    pub fn poll_lines(&mut self, handle: u64) -> Result<Option<Vec<u16>>> {
        let answers = self.fog.poll_sight_lines(QueryHandle(handle))?;
        Ok(answers.map(|a| a.iter().flat_map(|a| [a.light, u16::from(a.visible)]).collect()))
    }

    /// How much of instance `name`'s grid its explored memory covers, as
    /// the last tick left it: on the CPU at once; on the GPU, asked on the
    /// first call and given by a later one once it has landed (`None`
    /// until then), without waiting for the device.
    pub fn explored(&mut self, name: &str) -> Result<Option<Explored>> {
        self.fog.poll_explored(name)
    }

    /// Whether observer `name` sees the tracked entity of `handle`.
    pub fn sees(&self, name: &str, handle: u64) -> Result<bool> {
        let entity = self.handles.get(&self.world, handle, HandleKind::Entity)?;
        self.fog.sees(name, entity)
    }

    /// The stealth state of the actor of `handle` (for `observer`, when it
    /// is a per-observer actor); `None` before its first check.
    pub fn stealth(&self, handle: u64, observer: Option<&str>) -> Result<Option<StealthView>> {
        let entity = self.handles.get(&self.world, handle, HandleKind::Entity)?;
        if self.world.get::<&StealthActor>(entity).is_err() {
            return Err(MurkError::invalid("handle", handle, "is not a stealth actor"));
        }
        let state = match observer {
            None => self.fog.stealth_state(entity),
            Some(o) => {
                self.fog.instance(o)?;
                self.fog.stealth_state_for(entity, o)
            }
        };
        Ok(state.map(|s| StealthView {
            visible: s.last_visible,
            fade: f32::from(s.fade) / 65535.0,
            last_known: s.last_known_position(),
            ghost: s.ghost.is_some(),
        }))
    }

    /// The lockstep hash of the state now, on the CPU. On the GPU the
    /// device hashes and the hash comes back later: each tick's lands in
    /// the report two ticks after it ([`TickOutcome::landed_hash`]), and
    /// this is an error naming the backend.
    pub fn hash_now(&mut self) -> Result<u64> {
        if self.gpu.is_some() {
            return Err(MurkError::invalid(
                "backend",
                self.backend_name(),
                "hashes on the device: each tick's hash lands in the tick report two ticks later (hashNow would wait)",
            ));
        }
        self.fog.lockstep_hash()
    }

    /// The whole fog state as a snapshot (`MURKSNAP`, the format native
    /// `FogSubsystem::snapshot` writes). On the GPU, [`Fog::prepare`] it
    /// first. The entities are the caller's: a restore leaves them as they
    /// are.
    pub fn snapshot(&mut self) -> Result<Vec<u8>> {
        self.fog.snapshot(&self.world)
    }

    /// Restores a fog-state snapshot of [`Fog::snapshot`] (or of native
    /// `FogSubsystem::snapshot`), or the fog state inside a run snapshot
    /// of `murk run --snapshot-at` (`MURKRUN`: its scripted entities are
    /// not made; place them yourself). A damaged snapshot, one of another
    /// format version or one whose instances differ is an error naming
    /// the field, and changes nothing.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.starts_with(RUN_MAGIC) {
            let fog = ScenarioRunner::fog_state_of(bytes)?;
            self.fog.restore(&mut self.world, &fog)
        } else {
            self.fog.restore(&mut self.world, bytes)
        }
    }

    /// The ticks the fog state of a snapshot (fog or run snapshot, as
    /// [`Fog::restore`] takes) had run: where a restored run goes on from.
    pub fn snapshot_ticks(bytes: &[u8]) -> Result<u64> {
        let body = if bytes.starts_with(RUN_MAGIC) { FogBody::decode(&ScenarioRunner::fog_state_of(bytes)?)? } else { FogBody::decode(bytes)? };
        Ok(body.tick)
    }

    /// Instance `name`'s explored memory as save data. On the GPU,
    /// [`Fog::prepare`] it first.
    pub fn export_memory(&mut self, name: &str) -> Result<Vec<u8>> {
        self.fog.export_memory(name)
    }

    /// Imports a blob of [`Fog::export_memory`] into instance `name`: as
    /// its own memory, or (`as_map`) as mapped ground, an ally's map.
    pub fn import_memory(&mut self, name: &str, blob: &[u8], as_map: bool) -> Result<()> {
        if as_map {
            self.fog.import_memory_as_map(name, blob)
        } else {
            self.fog.import_memory(name, blob)
        }
    }
}

/// A position must be finite; the error names the axis.
fn check_position(p: Vec3) -> Result<()> {
    for (axis, v) in ["x", "y", "z"].into_iter().zip(p.to_array()) {
        if !v.is_finite() {
            return Err(MurkError::invalid(format!("position.{axis}"), v, "must be finite"));
        }
    }
    Ok(())
}
