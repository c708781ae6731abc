//! The fog subsystem: one per game world. It creates and destroys instances,
//! applies profiles at run time, and ticks: it gathers the world's sources,
//! blockers and captures, applies the recompute rules and the cadence, and
//! drives the backend.
//!
//! Recompute rules (what triggers what; `docs/architecture.md` walks one
//! tick):
//!
//! ```text
//! capture dirty ──> recapture ──> occlusion dirty ──> rebuild occlusion ─┐
//! blockers changed ───────────────────^                                  v
//! sources changed / occlusion rebuilt / not settled ──> recompute visibility..upscale
//! every tick ──> blend(start, upscaled, t)
//! ```
//!
//! A tick validates every input of every instance before it touches any
//! state: a rejected input leaves all masks as they were.

mod actors;
mod area;
mod capture;
mod lockstep;
mod memory;
mod occlusion;
mod payload;
mod project;
mod queries;
mod readout;
mod reveal;
mod rules;
mod sight;
mod snapshot;
mod timers;

pub use area::resample_mask;
pub use lockstep::{HashBody, LandedHash};
pub use memory::{MemoryBody, MEMORY_MAGIC};
pub use reveal::{ActiveReveal, FogTarget, Reveal, RevealArea, RevealId, RevealKind};
pub use sight::{SightEvent, SightSample, MAX_FOOTPRINT_TEXELS, MAX_OBSERVERS};
pub use snapshot::SaveState;
#[cfg(feature = "timers")]
pub use timers::SightTimes;

use self::project::{gather, project_source, Gathered};
use self::rules::{apply, PendingFlag};
use crate::backend::{Backend, InstanceDims, InstanceKey, Readback, TexelRect};
use crate::components::{Position, TeamMask, TransientReveal, VisionSource};
use crate::error::{MurkError, Result};
use crate::fixed::{HEIGHT_LIMIT, HEIGHT_UNITS_PER_SLAB};
use crate::frame::RecomputeInput;
use crate::profile::{Profile, ProfileQ};
use crate::query::PendingQuery;
use crate::stealth::{StealthBatch, StealthEvent, StealthState};
use crate::texture::OcclusionBuild;
use crate::transform::{grid_size, Area, AreaTransform};
use crate::zlayer::Slab;
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// The smallest internal texel an area may have, in world units; finer grids
/// (an area of 1e-30 units) are degenerate and rejected when created.
pub const MIN_TEXEL_SIZE: f64 = 1.0 / 65536.0;

/// The smallest height slab (`extents.z`), in world units (a height unit is
/// 1/256 of it).
pub const MIN_SLAB_HEIGHT: f64 = 1.0 / 256.0;

/// What a fog instance is made of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceDesc {
    /// Unique name.
    pub name: String,
    /// Covered area.
    pub area: Area,
    /// Output texels along the area's X side (rows follow from the aspect).
    pub resolution: u32,
    /// Internal downscale: passes run at `resolution >> lod`.
    #[serde(default)]
    pub lod: u32,
    /// Teams whose sources reveal this instance.
    #[serde(default)]
    pub observed_teams: TeamMask,
    /// Settings.
    #[serde(default)]
    pub profile: Profile,
}

/// Counters of an instance (what the recompute rules decided).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceStats {
    /// Ticks the instance was enabled.
    pub ticks: u64,
    /// Height captures resampled.
    pub recaptures: u64,
    /// Occlusion builds.
    pub occlusion_builds: u64,
    /// Occlusion rebuilds served by copying another instance's identical build.
    pub occlusion_shared: u64,
    /// Visibility recomputes.
    pub recomputes: u64,
    /// Recomputes the cadence asked for but the rules skipped (nothing changed, settled).
    pub skipped_recomputes: u64,
}

/// An instance's state besides its description, its textures and the
/// readbacks in flight: what the rules decide from, saved in snapshots as it
/// is. `C` is how the captured heights are held: `i32`s while running,
/// their little-endian bytes ([`CaptureBytes`]) in a snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceState<C = CaptureBytes> {
    /// Hash of the blockers of the last occlusion build.
    pub blocker_hash: Option<u64>,
    /// Signature of the capture inputs of the last recapture.
    pub capture_signature: Option<u64>,
    /// The captured heights, one per internal texel.
    pub capture: Option<C>,
    /// Hash of the sources of the last recompute.
    pub source_hash: Option<u64>,
    /// The occlusion must be rebuilt.
    pub occlusion_dirty: bool,
    /// The capture must be redone.
    pub capture_dirty: bool,
    /// A recompute changed nothing under the present inputs.
    pub settled: bool,
    /// The instance has recomputed once.
    pub has_recomputed: bool,
    /// What the last occlusion build made (`None`: nothing built yet).
    pub built_for: Option<OcclusionBuild>,
    /// The profile of the last recompute.
    pub recomputed_profile: Option<ProfileQ>,
    /// Microseconds since the rates last stepped.
    pub rate_since_us: u64,
    /// Microseconds since the blend started.
    pub blend_since_us: u64,
    /// Counters.
    pub stats: InstanceStats,
    /// The input epoch: bumped by every recompute whose inputs differ from
    /// the last one's, so that a "changed" flag settles the instance only for
    /// the inputs it ran under.
    pub epoch: u64,
}

/// Captured heights as a snapshot stores them: little-endian `i32`s.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureBytes(#[serde(with = "serde_bytes")] pub Vec<u8>);

impl<C> InstanceState<C> {
    /// A new instance's state: nothing built, captured or recomputed yet.
    fn fresh() -> Self {
        Self {
            blocker_hash: None,
            capture_signature: None,
            capture: None,
            source_hash: None,
            occlusion_dirty: true,
            capture_dirty: true,
            settled: false,
            has_recomputed: false,
            built_for: None,
            recomputed_profile: None,
            rate_since_us: 0,
            blend_since_us: 0,
            stats: InstanceStats::default(),
            epoch: 0,
        }
    }

    /// The same state holding `capture` as its captured heights.
    pub(crate) fn with_capture<D>(&self, capture: Option<D>) -> InstanceState<D> {
        let Self {
            blocker_hash,
            capture_signature,
            capture: _,
            source_hash,
            occlusion_dirty,
            capture_dirty,
            settled,
            has_recomputed,
            built_for,
            recomputed_profile,
            rate_since_us,
            blend_since_us,
            stats,
            epoch,
        } = *self;
        InstanceState {
            blocker_hash,
            capture_signature,
            capture,
            source_hash,
            occlusion_dirty,
            capture_dirty,
            settled,
            has_recomputed,
            built_for,
            recomputed_profile,
            rate_since_us,
            blend_since_us,
            stats,
            epoch,
        }
    }
}

pub(crate) struct Slot {
    pub(crate) key: InstanceKey,
    pub(crate) desc: InstanceDesc,
    pub(crate) q: ProfileQ,
    pub(crate) transform: AreaTransform,
    pub(crate) dims: InstanceDims,
    pub(crate) state: InstanceState<Vec<i32>>,
    /// The inputs of the last recompute, while the occlusion it read is
    /// still the one built: a recompute with the same visibility inputs
    /// keeps visibility and blur. Not saved in snapshots (a restored
    /// instance recomputes them once, to the same bytes).
    pub(crate) last_input: Option<RecomputeInput>,
    /// The blockers the backend's occlusion was last built from (`None`:
    /// not known, the next change rebuilds it whole). Not saved in
    /// snapshots; kept in save states (shared), so that a blocker changed
    /// after a load updates the loaded occlusion where it changed.
    pub(crate) built_shapes: Option<Arc<occlusion::BuiltShapes>>,
    /// The blockers' projections of the last tick, so a tick projects only
    /// the blockers that changed. Not saved in snapshots.
    pub(crate) blocker_memo: project::BlockerMemo,
    /// The vision sources' projections of the last tick, by entity, so a
    /// tick projects only the sources that changed. Not saved in snapshots
    /// (each projection is a function of what it was made from).
    pub(crate) source_memo: project::SourceMemo,
    /// Rectangles of the capture a game marked dirty since the last
    /// recapture ([`FogSubsystem::mark_capture_dirty_in`]).
    pub(crate) capture_marks: Vec<TexelRect>,
    /// The capture as a save state holds it, while no tick changed the
    /// capture since (a save shares it; weak: the states are the caller's).
    pub(crate) saved_capture: Option<std::sync::Weak<Vec<i32>>>,
    /// "Changed" flags of recent recomputes, oldest first, each used
    /// [`READBACK_LATENCY_TICKS`] after its recompute.
    pub(crate) flags: VecDeque<PendingFlag>,
    /// Scripted reveals, oldest first.
    pub(crate) reveals: Vec<ActiveReveal>,
    /// The signature of the reveals the last recompute was set up for
    /// (`None`: none).
    pub(crate) reveal_uploaded: Option<u64>,
    /// The backend does not hold that layer (a restore, a new grid): it is
    /// handed over again on the next tick.
    pub(crate) reveal_stale: bool,
}

impl Slot {
    /// Something the recompute reads changed: the instance is not settled,
    /// and the flags of earlier recomputes no longer speak for it.
    fn unsettle(&mut self) {
        self.state.settled = false;
        self.state.epoch = self.state.epoch.wrapping_add(1);
    }
}

/// Per-tick outcome of one instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstanceTick {
    /// Occlusion rebuilt this tick (whole, or only where it changed).
    pub occlusion_built: bool,
    /// The rebuild was local: only the texels the tick's blocker and
    /// capture changes reach were rebuilt.
    pub occlusion_local: bool,
    /// Visibility recomputed this tick.
    pub recomputed: bool,
    /// The recompute kept visibility and blur from the last one (nothing
    /// they read changed) and ran memory, compose and upscale only.
    pub visibility_reused: bool,
}

/// What one tick did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TickReport {
    /// Per instance, by name.
    pub instances: BTreeMap<String, InstanceTick>,
    /// Stealth transitions, in actor order.
    pub events: Vec<StealthEvent>,
    /// Transitions of per-observer stealth actors, each with its observer,
    /// in actor order, then observer order.
    pub observer_events: Vec<(String, StealthEvent)>,
    /// Tracked entities entering and leaving each observer's sight, in
    /// observer order, then entity order (see [`FogSubsystem::visible_to`]).
    pub sight: Vec<SightEvent>,
    /// With [`FogSubsystem::set_hash_every_tick`]: the lockstep hash of the
    /// state [`crate::frame::READBACK_LATENCY_TICKS`] ticks ago, landed this tick.
    pub lockstep: Option<LandedHash>,
}

/// The fog-of-war subsystem of one world.
pub struct FogSubsystem {
    pub(crate) backend: Box<dyn Backend>,
    pub(crate) instances: BTreeMap<String, Slot>,
    pub(crate) next_key: InstanceKey,
    pub(crate) tick: u64,
    pub(crate) stealth: BTreeMap<u64, StealthState>,
    /// The states of per-observer actors, by actor bits and observer.
    pub(crate) observer_stealth: BTreeMap<(u64, String), StealthState>,
    /// The components ghosts carry, in registration order.
    pub(crate) payloads: Vec<payload::PayloadKind>,
    /// Stealth samples in flight, oldest first (one batch per tick with actors).
    pub(crate) stealth_batches: VecDeque<StealthBatch>,
    pub(crate) queries: BTreeMap<u64, PendingQuery>,
    pub(crate) next_query: u64,
    /// Whether every tick hashes its state (see [`FogSubsystem::set_hash_every_tick`]).
    hash_every_tick: bool,
    pending_hashes: lockstep::PendingHashes,
    /// The id the next reveal gets.
    pub(crate) next_reveal: u64,
    /// Each observer's tracked entities in sight (entity bits, ascending),
    /// observers with none left out.
    pub(crate) sight: BTreeMap<String, Vec<u64>>,
    /// The entities tracked at the last tick (bits, ascending).
    pub(crate) tracked: Vec<u64>,
    /// Footprint samples in flight, oldest first.
    pub(crate) sight_batches: VecDeque<sight::SightBatch>,
    /// The last tick's footprints (a cache for entities that stand still).
    pub(crate) footprint_memo: sight::FootprintMemo,
    /// Time in the sight steps (measured with the `timers` feature only).
    sight_timers: timers::SightTimers,
    /// The texture last saved or loaded in place by a save state, by
    /// instance and texture: the next save shares its tiles whose version
    /// the backend still holds, while a state still holds it (weak: the
    /// states are the caller's).
    pub(crate) saved_images: BTreeMap<(InstanceKey, crate::texture::Texture), std::sync::Weak<crate::texture::TiledImage>>,
}

impl FogSubsystem {
    /// A subsystem running its passes on `backend`.
    pub fn new(backend: Box<dyn Backend>) -> Self {
        Self {
            backend,
            instances: BTreeMap::new(),
            next_key: 0,
            tick: 0,
            stealth: BTreeMap::new(),
            observer_stealth: BTreeMap::new(),
            payloads: Vec::new(),
            stealth_batches: VecDeque::new(),
            queries: BTreeMap::new(),
            next_query: 0,
            hash_every_tick: false,
            pending_hashes: lockstep::PendingHashes::new(),
            next_reveal: 0,
            sight: BTreeMap::new(),
            tracked: Vec::new(),
            sight_batches: VecDeque::new(),
            footprint_memo: sight::FootprintMemo::default(),
            sight_timers: timers::SightTimers::default(),
            saved_images: BTreeMap::new(),
        }
    }

    /// The backend's name.
    pub fn backend_name(&self) -> String {
        self.backend.name()
    }

    /// Ticks run so far.
    pub fn tick_count(&self) -> u64 {
        self.tick
    }

    /// Instance names, sorted.
    pub fn instance_names(&self) -> Vec<String> {
        self.instances.keys().cloned().collect()
    }

    /// Creates an instance. Errors name the bad field; nothing is created then.
    pub fn create_instance(&mut self, desc: InstanceDesc) -> Result<()> {
        if self.instances.contains_key(&desc.name) {
            return Err(MurkError::DuplicateInstance(desc.name));
        }
        let prefix = format!("instance `{}`", desc.name);
        let (q, transform, dims) = Self::validate_desc(&desc, &prefix)?;
        let key = self.next_key;
        let next_key =
            key.checked_add(1).ok_or_else(|| MurkError::invalid("instance keys", key, "are used up: every key up to u32::MAX was given out"))?;
        self.backend.create_instance(key, dims)?;
        self.next_key = next_key;
        let slot = Slot {
            key,
            desc,
            q,
            transform,
            dims,
            state: InstanceState::fresh(),
            last_input: None,
            built_shapes: None,
            blocker_memo: project::BlockerMemo::default(),
            source_memo: project::SourceMemo::default(),
            capture_marks: Vec::new(),
            saved_capture: None,
            flags: VecDeque::new(),
            reveals: Vec::new(),
            reveal_uploaded: None,
            reveal_stale: false,
        };
        self.instances.insert(slot.desc.name.clone(), slot);
        Ok(())
    }

    /// Checks an instance description as [`FogSubsystem::create_instance`]
    /// would (area, resolution, profile, the texel and slab sizes, the target
    /// height against the slab), with errors naming fields under `prefix`.
    pub fn check_desc(desc: &InstanceDesc, prefix: &str) -> Result<()> {
        Self::validate_desc(desc, prefix).map(|_| ())
    }

    pub(crate) fn validate_desc(desc: &InstanceDesc, prefix: &str) -> Result<(ProfileQ, AreaTransform, InstanceDims)> {
        desc.area.validate(&format!("{prefix}.area"))?;
        let q = desc.profile.quantize(&format!("{prefix}.profile"))?;
        let (out_w, out_h) = grid_size(&desc.area, desc.resolution, desc.lod).map_err(|e| prefix_error(e, prefix))?;
        let (w, h) = (out_w >> desc.lod, out_h >> desc.lod);
        let transform = AreaTransform::new(&desc.area, w, h);
        if transform.texel_size() < MIN_TEXEL_SIZE {
            return Err(MurkError::invalid(
                format!("{prefix}.area.extents.x"),
                desc.area.extents.x,
                format!(
                    "gives texels of {:e} world units at {w} internal texels; they must be at least 2^-16 = {MIN_TEXEL_SIZE:e} (a larger area or a lower resolution)",
                    transform.texel_size()
                ),
            ));
        }
        if f64::from(desc.area.extents.z) < MIN_SLAB_HEIGHT {
            return Err(MurkError::invalid(
                format!("{prefix}.area.extents.z"),
                desc.area.extents.z,
                format!("the height slab must be at least 2^-8 = {MIN_SLAB_HEIGHT} world units"),
            ));
        }
        target_height_units(desc).map_err(|e| prefix_error(e, prefix))?;
        Ok((q, transform, InstanceDims { width: w, height: h, out_width: out_w, out_height: out_h }))
    }

    /// Destroys an instance and frees its textures.
    pub fn destroy_instance(&mut self, name: &str) -> Result<()> {
        let slot = self.instances.remove(name).ok_or_else(|| MurkError::UnknownInstance(name.to_string()))?;
        self.forget_flags(&slot);
        self.backend.destroy_instance(slot.key);
        Ok(())
    }

    /// Tells the backend that the flags still in flight for a slot going
    /// away will never be asked for.
    pub(crate) fn forget_flags(&mut self, slot: &Slot) {
        for flag in &slot.flags {
            if let Readback::Ticket(t) = flag.changed {
                self.backend.forget_readback(t);
            }
        }
    }

    pub(crate) fn slot(&self, name: &str) -> Result<&Slot> {
        self.instances.get(name).ok_or_else(|| MurkError::UnknownInstance(name.to_string()))
    }

    pub(crate) fn slot_mut(&mut self, name: &str) -> Result<&mut Slot> {
        self.instances.get_mut(name).ok_or_else(|| MurkError::UnknownInstance(name.to_string()))
    }

    /// The instance's description (area, resolution, profile, teams).
    pub fn instance(&self, name: &str) -> Result<&InstanceDesc> {
        Ok(&self.slot(name)?.desc)
    }

    /// The backend's key for an instance: what a backend's own API takes
    /// (the GPU backend's mask textures). Keys stay the same for an
    /// instance's life; a restored snapshot gives its instances new ones.
    pub fn instance_key(&self, name: &str) -> Result<InstanceKey> {
        Ok(self.slot(name)?.key)
    }

    /// How many times the backend has blocked this thread on its device so
    /// far. Ticks never do while the device keeps up with the readback
    /// latency; reading masks, hashes and snapshots does.
    pub fn blocking_waits(&self) -> u64 {
        self.backend.blocking_waits()
    }

    /// Readbacks the backend holds for a later poll
    /// ([`Backend::readbacks_held`]): bounded by what is in flight, however
    /// many states were loaded.
    pub fn readbacks_held(&self) -> usize {
        self.backend.readbacks_held()
    }

    /// Starts timing the backend's passes (the GPU backend with timestamp
    /// queries); an error says why the backend cannot.
    pub fn enable_timings(&mut self) -> Result<()> {
        self.backend.enable_timings()
    }

    /// Time per pass since [`Self::enable_timings`] or the last call; waits
    /// for the work in flight.
    pub fn take_timings(&mut self) -> Result<Vec<crate::backend::PassTiming>> {
        self.backend.take_timings()
    }

    /// The instance's counters.
    pub fn stats(&self, name: &str) -> Result<InstanceStats> {
        Ok(self.slot(name)?.state.stats)
    }

    /// The instance's internal and output texture sizes.
    pub fn dims(&self, name: &str) -> Result<InstanceDims> {
        Ok(self.slot(name)?.dims)
    }

    /// The instance's world-to-texel mapping at its internal resolution.
    pub fn transform(&self, name: &str) -> Result<AreaTransform> {
        Ok(self.slot(name)?.transform)
    }

    /// Applies a profile at run time. The masks are kept; occlusion is rebuilt
    /// if the ray method needs other textures.
    pub fn apply_profile(&mut self, name: &str, profile: Profile) -> Result<()> {
        let mut desc = self.slot(name)?.desc.clone();
        desc.profile = profile;
        let (q, _, _) = Self::validate_desc(&desc, &format!("instance `{name}`"))?;
        let slot = self.slot_mut(name)?;
        slot.q = q;
        slot.desc = desc;
        slot.unsettle();
        Ok(())
    }

    /// Changes the teams an instance observes.
    pub fn set_observed_teams(&mut self, name: &str, teams: TeamMask) -> Result<()> {
        let slot = self.slot_mut(name)?;
        slot.desc.observed_teams = teams;
        Ok(())
    }

    /// Checks a vision source standing at `position` against every instance,
    /// as a tick would now, without changing anything: its own fields, and in
    /// each instance that observes its team and that it can touch, its radius
    /// in that instance's texels and its eye height within the slab. With
    /// `anti_targets`, `source` stands for an anti-vision area (its radius and
    /// falloff) hiding those teams, judged by the instances observing one of
    /// them. Errors name the instance and `label`.
    pub fn check_source(&self, label: &str, position: glam::Vec3, source: &VisionSource, anti_targets: Option<TeamMask>) -> Result<()> {
        let pos = Position(position);
        for (name, slot) in &self.instances {
            let (teams, source) = match anti_targets {
                None => (slot.desc.observed_teams, slot.desc.profile.source_in_instance(source)),
                Some(t) if t.0 & slot.desc.observed_teams.0 != 0 => (TeamMask::ALL, *source),
                Some(_) => continue,
            };
            let slab = Slab::logical(&slot.desc.area, slot.desc.profile.z_layering_area_scale);
            project_source(label, &pos, &source, slot, &slab, teams).map_err(|e| in_instance(e, name))?;
        }
        Ok(())
    }

    /// Forces a recapture of the height captures on the next recompute (for
    /// games that change captured geometry without moving its members).
    pub fn mark_capture_dirty(&mut self) {
        for slot in self.instances.values_mut() {
            slot.state.capture_dirty = true;
        }
    }

    /// Marks the world rectangle from `min` to `max` (X and Y) of every
    /// height capture dirty, for a game that edited captured cells there
    /// (a terrain change): the next tick resamples the rows of each
    /// instance the rectangle crosses and rebuilds the occlusion only where
    /// a captured height changed. Edits outside the marked rectangles are
    /// not seen until a whole recapture ([`Self::mark_capture_dirty`]).
    ///
    /// A bound that is not finite, `min` above `max` on an axis, or a
    /// rectangle that meets no instance's grid is an error naming it, and
    /// marks nothing.
    pub fn mark_capture_dirty_in(&mut self, min: glam::Vec2, max: glam::Vec2) -> Result<()> {
        for (name, v) in [("min.x", min.x), ("min.y", min.y), ("max.x", max.x), ("max.y", max.y)] {
            crate::error::finite(|| format!("capture rectangle {name}"), v)?;
        }
        for (axis, lo, hi) in [("x", min.x, max.x), ("y", min.y, max.y)] {
            if lo > hi {
                return Err(MurkError::invalid(format!("capture rectangle max.{axis}"), hi, format!("must not be below min.{axis} = {lo}")));
            }
        }
        let mut marks = Vec::new();
        for slot in self.instances.values() {
            let (w, h) = (slot.dims.width, slot.dims.height);
            // The texels whose centres the rectangle may hold (the area may
            // be turned: the box of its corners, one texel wider).
            let corners = [(min.x, min.y), (max.x, min.y), (min.x, max.y), (max.x, max.y)]
                .map(|(x, y)| slot.transform.world_to_texel(f64::from(x), f64::from(y)));
            let (lo_x, hi_x) = corners.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), c| (a.min(c.0), b.max(c.0)));
            let (lo_y, hi_y) = corners.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), c| (a.min(c.1), b.max(c.1)));
            let clip = |v: f64, n: u32| v.clamp(0.0, f64::from(n)) as u32;
            let rect = TexelRect {
                x0: clip(lo_x.floor() - 1.0, w),
                y0: clip(lo_y.floor() - 1.0, h),
                x1: clip(hi_x.ceil() + 1.0, w),
                y1: clip(hi_y.ceil() + 1.0, h),
            };
            if !rect.is_empty() {
                marks.push((slot.desc.name.clone(), rect));
            }
        }
        if marks.is_empty() {
            return Err(MurkError::invalid(
                "capture rectangle",
                format!("({}, {})..({}, {})", min.x, min.y, max.x, max.y),
                "meets no instance's grid",
            ));
        }
        for (name, rect) in marks {
            if let Some(slot) = self.instances.get_mut(&name) {
                slot.capture_marks.push(rect);
            }
        }
        Ok(())
    }

    /// Forces a full rebuild of an instance on its next recompute: recapture,
    /// occlusion and visibility, as if nothing were cached. (Incremental
    /// recompute must give the same bytes; the property tests compare them.)
    pub fn invalidate(&mut self, name: &str) -> Result<()> {
        let slot = self.slot_mut(name)?;
        slot.state.capture_dirty = true;
        slot.state.occlusion_dirty = true;
        slot.unsettle();
        Ok(())
    }

    /// Advances every instance by `dt_us` microseconds.
    ///
    /// Validates all inputs first: on error nothing changed (masks, memory,
    /// cadence and transient reveals are as before the call).
    pub fn tick(&mut self, world: &mut World, dt_us: u32) -> Result<TickReport> {
        match self.backend.tick_runner() {
            Some(runner) => {
                let mut report = None;
                runner.run(&mut || report = Some(self.tick_here(world, dt_us)));
                report.expect("the runner runs its work")
            }
            None => self.tick_here(world, dt_us),
        }
    }

    /// What a tick's first phase gathers on the tick's own thread, checked.
    fn gather_phase(&self, world: &World) -> Result<Gathering> {
        let mut gathered: BTreeMap<String, Gathered> = BTreeMap::new();
        for (name, slot) in &self.instances {
            if !slot.desc.profile.enabled || slot.desc.profile.freeze_state {
                continue;
            }
            let due = !slot.state.has_recomputed || slot.state.rate_since_us >= slot.q.update_interval_us;
            if due {
                let mut result = None;
                self.backend.run_parallel(&mut || result = Some(gather(slot, world)));
                let g = result.expect("run_parallel runs its work");
                gathered.insert(name.clone(), g.map_err(|e| in_instance(e, name))?);
            }
        }
        // Scripted reveals whose layer changed (checked here: a reveal too
        // long for an instance fails before anything changes).
        let mut layers = BTreeMap::new();
        for (name, slot) in &self.instances {
            if slot.desc.profile.enabled {
                if let Some(update) = slot.reveal_update().map_err(|e| in_instance(e, name))? {
                    layers.insert(name.clone(), update);
                }
            }
        }
        let actors = self.gather_actors(world)?;
        Ok(Gathering { gathered, layers, actors })
    }

    /// [`FogSubsystem::tick`] on the calling thread.
    fn tick_here(&mut self, world: &mut World, dt_us: u32) -> Result<TickReport> {
        let dt = u64::from(dt_us);
        // Phase 1: gather and validate everything. The tracked entities
        // are gathered on another worker while this thread gathers each
        // instance's sources, blockers, reveals and actors.
        let world_now: &World = world;
        let (instances, memo) = (&self.instances, &self.footprint_memo);
        let mut tracked = None;
        let mut gather_own = timers::Elapsed::default();
        let (gathered_all, gather_wait) = rayon::in_place_scope(|s| {
            s.spawn(|_| {
                let started = timers::Started::now();
                tracked = Some(sight::gather_tracked(instances, memo, world_now));
                gather_own = started.elapsed();
            });
            let gathered = self.gather_phase(world_now);
            // What follows until the scope ends is the wait for the tracked
            // entities, the sight steps' share of this phase.
            (gathered, timers::Started::now())
        });
        self.sight_timers.gather.add(gather_own);
        self.sight_timers.gather_wait.add(gather_wait.elapsed());
        let Gathering { mut gathered, mut layers, actors } = gathered_all?;
        let tracked = tracked.expect("the scope ran the gathering of the tracked entities")?;
        // Phase 2: apply.
        let mut report = TickReport::default();
        let mut built: BTreeMap<u64, InstanceKey> = BTreeMap::new();
        let share = self.instances.len() > 1;
        for (name, slot) in &mut self.instances {
            if !slot.desc.profile.enabled {
                continue;
            }
            slot.state.stats.ticks = slot.state.stats.ticks.saturating_add(1);
            if let Some((signature, layer)) = layers.remove(name) {
                self.backend.set_reveals(slot.key, layer.as_ref())?;
                if slot.reveal_uploaded != signature {
                    slot.unsettle();
                }
                slot.reveal_uploaded = signature;
                slot.reveal_stale = false;
            }
            let mut outcome = InstanceTick::default();
            if let Some(g) = gathered.remove(name) {
                outcome = apply(self.backend.as_mut(), slot, g, dt, self.tick, &mut built, share)?;
            }
            if outcome.recomputed {
                for r in slot.reveals.iter_mut().filter(|r| r.reveal.kind == RevealKind::Map && r.strength() == crate::fixed::MASK_MAX) {
                    r.applied = true;
                }
            }
            // Counters and timers saturate: a snapshot may bring them near
            // u64::MAX, and a saturated timer means "due" and "blend done".
            slot.state.rate_since_us = slot.state.rate_since_us.saturating_add(dt);
            slot.state.blend_since_us = slot.state.blend_since_us.saturating_add(dt);
            // An interval of 0 recomputes every tick: the blend lands at once.
            let t = slot.state.blend_since_us.saturating_mul(65536).checked_div(slot.q.update_interval_us).map_or(65536, |t| t.min(65536) as u32);
            if slot.state.has_recomputed {
                self.backend.blend(slot.key, t)?;
            }
            report.instances.insert(name.clone(), outcome);
        }
        for slot in self.instances.values_mut() {
            slot.age_reveals();
        }
        let stealth = self.update_stealth(world, &actors, dt)?;
        (report.events, report.observer_events) = (stealth.single, stealth.per_observer);
        self.submit_stealth(world, &actors)?;
        let sight::TrackedTick { entities, footprints, memo } = tracked;
        self.footprint_memo = memo;
        let started = self.sight_timers.update.start();
        let landed = self.landed_sight()?;
        let hidden = sight::Hidden::new(&self.stealth, &self.observer_stealth);
        // The sets follow the judgments that landed while the backend
        // judges this tick's footprints: neither reads what the other makes.
        let ((sets, events), submitted) = rayon::join(
            || sight::next_sets(&self.sight, &self.instances, &hidden, landed, &entities),
            || sight::submit_sight(self.backend.as_mut(), &self.instances, footprints, self.tick),
        );
        (self.sight, self.tracked, report.sight) = (sets, entities, events);
        self.sight_batches.extend(submitted?);
        self.sight_timers.update.stop(started);
        // Transient reveals count down after they revealed this tick.
        let mut expired = Vec::new();
        for (e, reveal) in world.query_mut::<(Entity, &mut TransientReveal)>() {
            reveal.remaining_ticks = reveal.remaining_ticks.saturating_sub(1);
            if reveal.remaining_ticks == 0 {
                expired.push(e);
            }
        }
        for e in expired {
            // The entity was just listed by the query, so it exists.
            let _ = world.despawn(e);
        }
        report.lockstep = self.step_lockstep_hashes()?;
        self.tick = self.tick.saturating_add(1);
        Ok(report)
    }
}

/// What a tick's first phase gathers on the tick's own thread.
struct Gathering {
    /// The inputs of the instances due a recompute.
    gathered: BTreeMap<String, Gathered>,
    /// The instances whose reveal layer changed: its signature and the
    /// layer (`None`: no reveal).
    layers: BTreeMap<String, (Option<u64>, Option<crate::frame::RevealLayer>)>,
    /// The stealth actors.
    actors: Vec<(Entity, glam::Vec3, crate::stealth::StealthQ)>,
}

/// Names the instance that judged a world input.
pub(crate) fn in_instance(e: MurkError, name: &str) -> MurkError {
    match e {
        MurkError::InvalidValue { field, value, reason } => MurkError::InvalidValue { field: format!("instance `{name}`: {field}"), value, reason },
        MurkError::UnknownEntity(what) => MurkError::UnknownEntity(format!("instance `{name}`: {what}")),
        other => other,
    }
}

pub(crate) fn prefix_error(e: MurkError, prefix: &str) -> MurkError {
    match e {
        MurkError::InvalidValue { field, value, reason } => MurkError::InvalidValue { field: format!("{prefix}.{field}"), value, reason },
        other => other,
    }
}

/// The profile's target height in height units, checked against the height range.
pub(crate) fn target_height_units(desc: &InstanceDesc) -> Result<i32> {
    let units = f64::from(desc.profile.target_height) / (f64::from(desc.area.extents.z) / HEIGHT_UNITS_PER_SLAB);
    if units.abs() > f64::from(HEIGHT_LIMIT) {
        return Err(MurkError::invalid("profile.target_height", desc.profile.target_height, "must stay within 256 slab heights (extents.z)"));
    }
    Ok(units.round() as i32)
}

pub(crate) fn entity_label(e: Entity) -> EntityLabel {
    EntityLabel(e)
}

/// How errors name an entity (`entity 7`), formatted only when shown: a
/// tick labels every entity it reads.
pub(crate) struct EntityLabel(pub(crate) Entity);

impl std::fmt::Display for EntityLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "entity {}", self.0.id())
    }
}
