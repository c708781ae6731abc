//! The fog subsystem: one per game world. It creates and destroys instances,
//! applies profiles at run time, and ticks: it gathers the world's sources,
//! blockers and captures, applies the recompute rules and the cadence, and
//! drives the backend.
//!
//! Recompute rules (spec, "Recompute Rules"):
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

use crate::backend::{Backend, InstanceDims, InstanceKey, Readback, SampleRequest, Stage, StageData, StageImage};
use crate::binning::bin_sources;
use crate::components::{
    AntiVision, Blocker, BlockerShape, CaptureMode, Ghost, HeightCapture, HideMode, Position, StealthActor, TeamMask, TransientReveal,
    VisibilityPolicy, VisionSource,
};
use crate::error::{finite, in_range, MurkError, Result};
use crate::fixed::{Fnv64, HEIGHT_LIMIT, HEIGHT_UNITS_PER_SLAB, HEIGHT_WALL, MAX_RADIUS_TEXELS, TEXEL_ONE, UNIT_ONE};
use crate::frame::{
    BlurKernel, CircleTexel, OcclusionInput, PolygonTexel, RecomputeInput, SourceTexel, CAPTURE_EMPTY, READBACK_LATENCY_TICKS, SOURCE_ANTI,
    SOURCE_HAS_CONE,
};
use crate::profile::{Profile, ProfileQ};
use crate::query::{texel_of, MaskAnswer, QueryHandle};
use crate::snapshot::{frame, unframe, Reader, Writer, FOG_MAGIC};
use crate::stealth::{StealthEvent, StealthQ, StealthState};
use crate::transform::{grid_size, sin_cos_degrees, Area, AreaTransform};
use crate::zlayer::Slab;
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The smallest internal texel an area may have, in world units; finer grids
/// (an area of 1e-30 units) are degenerate and rejected when created.
pub const MIN_TEXEL_SIZE: f64 = 1.0 / 65536.0;
/// The smallest height slab (`extents.z`), in world units (a height unit is
/// 1/256 of it).
pub const MIN_SLAB_HEIGHT: f64 = 1.0 / 256.0;

/// How far beyond the largest live entity index a restored ghost may keep
/// its saved id (farther ones are spawned as new entities).
const GHOST_ID_SLACK: u32 = 1 << 16;

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
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

struct Slot {
    key: InstanceKey,
    desc: InstanceDesc,
    q: ProfileQ,
    transform: AreaTransform,
    dims: InstanceDims,
    blocker_hash: Option<u64>,
    capture_signature: Option<u64>,
    capture: Option<Vec<i32>>,
    source_hash: Option<u64>,
    occlusion_dirty: bool,
    capture_dirty: bool,
    settled: bool,
    built_for: Option<(bool, u32)>,
    recomputed_profile: Option<ProfileQ>,
    rate_since_us: u64,
    blend_since_us: u64,
    has_recomputed: bool,
    /// The inputs of the last recompute, while the occlusion it read is
    /// still the one built: a recompute with the same visibility inputs
    /// keeps visibility and blur. Not saved in snapshots (a restored
    /// instance recomputes them once, to the same bytes).
    last_input: Option<RecomputeInput>,
    /// Bumped by every recompute whose inputs differ from the last one's: a
    /// "changed" flag settles the instance only for the inputs it ran under.
    epoch: u64,
    /// "Changed" flags of recent recomputes, oldest first, each used
    /// [`READBACK_LATENCY_TICKS`] after its recompute.
    flags: VecDeque<PendingFlag>,
    stats: InstanceStats,
}

impl Slot {
    /// Something the recompute reads changed: the instance is not settled,
    /// and the flags of earlier recomputes no longer speak for it.
    fn unsettle(&mut self) {
        self.settled = false;
        self.epoch = self.epoch.wrapping_add(1);
    }
}

/// A recompute's "changed" flag on its way back from the backend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct PendingFlag {
    /// The first tick whose recompute rules use it.
    due: u64,
    /// Memory or composed changed in that recompute.
    changed: Readback<bool>,
    /// A configured rate could not step in that recompute.
    starved: bool,
    /// The input epoch the recompute ran under.
    epoch: u64,
}

/// The stealth samples of one tick on their way back from the backend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct StealthBatch {
    /// The tick whose stealth update uses them.
    due: u64,
    /// One per actor, in actor order.
    samples: Vec<StealthSample>,
    /// The sampled final-mask values, in the order of the requests.
    values: Readback<Vec<u16>>,
}

/// What one actor's stealth update needs, taken when its sample was asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct StealthSample {
    /// The actor's entity bits.
    actor: u64,
    /// Where it stood (bit patterns of `f32`).
    position: [u32; 3],
    /// The instance answering for it and its value's index in the batch.
    located: Option<(String, usize)>,
    /// Visible at or above this value.
    cutoff: u16,
    policy: VisibilityPolicy,
    hide_mode: HideMode,
    fade_us: u64,
}

/// What one instance needs from the world this tick, gathered before any state changes.
struct Gathered {
    occlusion: OcclusionInput,
    blocker_hash: u64,
    capture: Option<(Option<u64>, Option<Vec<i32>>)>,
    sources: Vec<SourceTexel>,
    source_hash: u64,
}

/// Per-tick outcome of one instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstanceTick {
    /// Occlusion rebuilt this tick.
    pub occlusion_built: bool,
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
}

/// The fog-of-war subsystem of one world.
pub struct FogSubsystem {
    backend: Box<dyn Backend>,
    instances: BTreeMap<String, Slot>,
    next_key: InstanceKey,
    tick: u64,
    stealth: BTreeMap<u64, StealthState>,
    /// Stealth samples in flight, oldest first (one batch per tick with actors).
    stealth_batches: VecDeque<StealthBatch>,
    queries: BTreeMap<u64, PendingQuery>,
    next_query: u64,
}

/// A submitted batch of mask queries: its answers, complete once the
/// backend's samples (one readback for every instance) have landed.
struct PendingQuery {
    answers: Vec<MaskAnswer>,
    in_flight: Option<(u64, Vec<QueryPart>)>,
}

/// The points of a mask query that one instance answers.
struct QueryPart {
    instance: String,
    indices: Vec<usize>,
    cutoff: u16,
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
            stealth_batches: VecDeque::new(),
            queries: BTreeMap::new(),
            next_query: 0,
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
            blocker_hash: None,
            capture_signature: None,
            capture: None,
            source_hash: None,
            occlusion_dirty: true,
            capture_dirty: true,
            settled: false,
            built_for: None,
            recomputed_profile: None,
            rate_since_us: 0,
            blend_since_us: 0,
            has_recomputed: false,
            last_input: None,
            epoch: 0,
            flags: VecDeque::new(),
            stats: InstanceStats::default(),
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

    fn validate_desc(desc: &InstanceDesc, prefix: &str) -> Result<(ProfileQ, AreaTransform, InstanceDims)> {
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
    fn forget_flags(&mut self, slot: &Slot) {
        for flag in &slot.flags {
            if let Readback::Ticket(t) = flag.changed {
                self.backend.forget_readback(t);
            }
        }
    }

    fn slot(&self, name: &str) -> Result<&Slot> {
        self.instances.get(name).ok_or_else(|| MurkError::UnknownInstance(name.to_string()))
    }

    fn slot_mut(&mut self, name: &str) -> Result<&mut Slot> {
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
        Ok(self.slot(name)?.stats)
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

    /// Moves or resizes an instance's area.
    ///
    /// With the profile's `resample_on_area_change`, every mask texture
    /// (visibility, blur, explored memory, composed fade state; upscaled,
    /// blend start and final at the output resolution) is resampled into the
    /// new area in world space: each new texel takes the old texel under its
    /// centre, through an integer mapping (see [`resample_mask`]); texels of
    /// the new area that the old one did not cover start unexplored (0), and
    /// old texels that the new area does not cover are dropped. Without it,
    /// the masks are kept in texel space when the texture size is unchanged
    /// and start over when it changes. Occlusion is rebuilt on the next tick
    /// either way. An error changes nothing.
    pub fn set_area(&mut self, name: &str, area: Area) -> Result<()> {
        let slot = self.slot(name)?;
        let mut desc = slot.desc.clone();
        desc.area = area;
        let (_, transform, dims) = Self::validate_desc(&desc, &format!("instance `{name}`"))?;
        let (key, old_area, old_dims) = (slot.key, slot.desc.area, slot.dims);
        let resample = slot.desc.profile.resample_on_area_change && old_area != area;
        if resample {
            let old = self.backend.export_textures(key)?;
            let textures = resample_textures(&old, &old_area, old_dims, &area, dims)?;
            let new_key = self.next_key;
            let next_key = new_key
                .checked_add(1)
                .ok_or_else(|| MurkError::invalid("instance keys", new_key, "are used up: every key up to u32::MAX was given out"))?;
            self.backend.create_instance(new_key, dims)?;
            if let Err(e) = self.backend.import_textures(new_key, &textures) {
                self.backend.destroy_instance(new_key);
                return Err(e);
            }
            self.backend.destroy_instance(key);
            self.next_key = next_key;
            let slot = self.slot_mut(name)?;
            slot.key = new_key;
            // Fresh occlusion textures: nothing is built for them yet.
            slot.built_for = None;
            slot.capture = None;
        } else if dims != old_dims {
            self.backend.destroy_instance(key);
            self.backend.create_instance(key, dims)?;
            let slot = self.slot_mut(name)?;
            slot.has_recomputed = false;
            slot.built_for = None;
            slot.capture = None;
        }
        let slot = self.slot_mut(name)?;
        slot.desc = desc;
        slot.transform = transform;
        slot.dims = dims;
        slot.capture_dirty = true;
        slot.occlusion_dirty = true;
        slot.unsettle();
        Ok(())
    }

    /// Grows an instance's area to include a world point (yaw and slab kept).
    pub fn expand_area_to_include(&mut self, name: &str, point: glam::Vec3) -> Result<()> {
        for (axis, v) in [("x", point.x), ("y", point.y), ("z", point.z)] {
            finite(|| format!("point.{axis}"), v)?;
        }
        let area = self.slot(name)?.desc.area.expanded_to_include(point);
        self.set_area(name, area)
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
            let teams = match anti_targets {
                None => slot.desc.observed_teams,
                Some(t) if t.0 & slot.desc.observed_teams.0 != 0 => TeamMask::ALL,
                Some(_) => continue,
            };
            let slab = Slab::logical(&slot.desc.area, slot.desc.profile.z_layering_area_scale);
            project_source(label, &pos, source, slot, &slab, teams).map_err(|e| in_instance(e, name))?;
        }
        Ok(())
    }

    /// Forces a recapture of the height captures on the next recompute (for
    /// games that change captured geometry without moving its members).
    pub fn mark_capture_dirty(&mut self) {
        for slot in self.instances.values_mut() {
            slot.capture_dirty = true;
        }
    }

    /// Forces a full rebuild of an instance on its next recompute: recapture,
    /// occlusion and visibility, as if nothing were cached. (Incremental
    /// recompute must give the same bytes; the property tests compare them.)
    pub fn invalidate(&mut self, name: &str) -> Result<()> {
        let slot = self.slot_mut(name)?;
        slot.capture_dirty = true;
        slot.occlusion_dirty = true;
        slot.unsettle();
        Ok(())
    }

    /// Advances every instance by `dt_us` microseconds.
    ///
    /// Validates all inputs first: on error nothing changed (masks, memory,
    /// cadence and transient reveals are as before the call).
    pub fn tick(&mut self, world: &mut World, dt_us: u32) -> Result<TickReport> {
        let dt = u64::from(dt_us);
        // Phase 1: gather and validate everything.
        let mut gathered: BTreeMap<String, Gathered> = BTreeMap::new();
        for (name, slot) in &self.instances {
            if !slot.desc.profile.enabled || slot.desc.profile.freeze_state {
                continue;
            }
            let due = !slot.has_recomputed || slot.rate_since_us >= slot.q.update_interval_us;
            if due {
                gathered.insert(name.clone(), gather(slot, world).map_err(|e| in_instance(e, name))?);
            }
        }
        let actors = self.gather_actors(world)?;
        // Phase 2: apply.
        let mut report = TickReport::default();
        let mut built: BTreeMap<u64, InstanceKey> = BTreeMap::new();
        let share = self.instances.len() > 1;
        for (name, slot) in &mut self.instances {
            if !slot.desc.profile.enabled {
                continue;
            }
            slot.stats.ticks = slot.stats.ticks.saturating_add(1);
            let mut outcome = InstanceTick::default();
            if let Some(g) = gathered.remove(name) {
                outcome = apply(self.backend.as_mut(), slot, g, dt, self.tick, &mut built, share)?;
            }
            // Counters and timers saturate: a snapshot may bring them near
            // u64::MAX, and a saturated timer means "due" and "blend done".
            slot.rate_since_us = slot.rate_since_us.saturating_add(dt);
            slot.blend_since_us = slot.blend_since_us.saturating_add(dt);
            // An interval of 0 recomputes every tick: the blend lands at once.
            let t = slot.blend_since_us.saturating_mul(65536).checked_div(slot.q.update_interval_us).map_or(65536, |t| t.min(65536) as u32);
            if slot.has_recomputed {
                self.backend.blend(slot.key, t)?;
            }
            report.instances.insert(name.clone(), outcome);
        }
        report.events = self.update_stealth(world, &actors, dt)?;
        self.submit_stealth(&actors)?;
        // Transient reveals count down after they revealed this tick.
        let mut expired = Vec::new();
        for (e, reveal) in world.query_mut::<&mut TransientReveal>() {
            reveal.remaining_ticks = reveal.remaining_ticks.saturating_sub(1);
            if reveal.remaining_ticks == 0 {
                expired.push(e);
            }
        }
        for e in expired {
            // The entity was just listed by the query, so it exists.
            let _ = world.despawn(e);
        }
        self.tick = self.tick.saturating_add(1);
        Ok(report)
    }

    /// Stealth actors with their settings checked, sorted by entity.
    fn gather_actors(&self, world: &World) -> Result<Vec<(Entity, glam::Vec3, StealthQ)>> {
        let mut actors = Vec::new();
        for (e, (pos, actor)) in world.query::<(&Position, &StealthActor)>().iter() {
            let label = entity_label(e);
            for (axis, v) in [("x", pos.0.x), ("y", pos.0.y), ("z", pos.0.z)] {
                finite(|| format!("{label}.position.{axis}"), v)?;
            }
            let q = crate::stealth::quantize(&label, actor)?;
            if let Some(name) = &q.instance {
                if !self.instances.contains_key(name) {
                    return Err(MurkError::UnknownInstance(format!("{name} (named by {label}.stealth.instance)")));
                }
            }
            actors.push((e, pos.0, q));
        }
        actors.sort_by_key(|(e, _, _)| e.to_bits());
        Ok(actors)
    }

    /// The instance answering for a world point: overlapping it in X/Y, the
    /// closest in Z (ties: the first by name); with its output texel.
    pub fn locate(&self, point: glam::Vec3) -> Option<(String, [u32; 2])> {
        let mut best: Option<(f64, &String, [u32; 2])> = None;
        for (name, slot) in &self.instances {
            let out = AreaTransform::new(&slot.desc.area, slot.dims.out_width, slot.dims.out_height);
            if let Some((texel, dz)) = texel_of(&out, slot.desc.area.center.z, point) {
                if best.as_ref().is_none_or(|(bz, _, _)| dz < *bz) {
                    best = Some((dz, name, texel));
                }
            }
        }
        best.map(|(_, n, t)| (n.clone(), t))
    }

    /// Answers mask queries now, waiting for the backend (what
    /// [`Self::submit_mask_query`] delivers later without waiting).
    pub fn mask_query_now(&mut self, points: &[glam::Vec3], cutoff_override: Option<f32>) -> Result<Vec<MaskAnswer>> {
        let handle = self.submit_mask_query(points, cutoff_override)?;
        self.poll_query(handle, true)?
            .ok_or_else(|| MurkError::Backend { backend: self.backend.name(), message: "a waited-for query did not land".into() })
    }

    /// Submits a batch of mask queries. Poll the handle each tick; it
    /// resolves when the backend's readback lands (the CPU backend: by the
    /// first poll) and never blocks the caller.
    pub fn submit_mask_query(&mut self, points: &[glam::Vec3], cutoff_override: Option<f32>) -> Result<QueryHandle> {
        let cutoff = match cutoff_override {
            Some(c) => Some(crate::fixed::unit_to_mask(in_range("cutoff_override", c, 0.0, 1.0)?)),
            None => None,
        };
        for (i, p) in points.iter().enumerate() {
            for (axis, v) in [("x", p.x), ("y", p.y), ("z", p.z)] {
                finite(|| format!("points[{i}].{axis}"), v)?;
            }
        }
        // Handles are never reused: after u64::MAX handles, queries are refused.
        let next_query = self
            .next_query
            .checked_add(1)
            .ok_or_else(|| MurkError::invalid("query handle", self.next_query, "is the last one: every handle below u64::MAX was given out"))?;
        let mut by_instance: BTreeMap<String, (Vec<usize>, Vec<[u32; 2]>)> = BTreeMap::new();
        for (i, p) in points.iter().enumerate() {
            if let Some((name, texel)) = self.locate(*p) {
                let entry = by_instance.entry(name).or_default();
                entry.0.push(i);
                entry.1.push(texel);
            }
        }
        let mut requests = Vec::new();
        let mut parts = Vec::new();
        for (instance, (indices, texels)) in by_instance {
            let slot = self.slot(&instance)?;
            requests.push(SampleRequest { key: slot.key, texels });
            parts.push(QueryPart { instance, indices, cutoff: cutoff.unwrap_or(slot.q.visibility_cutoff) });
        }
        let in_flight = if requests.is_empty() { None } else { Some((self.backend.submit_samples(&requests)?, parts)) };
        let id = self.next_query;
        self.next_query = next_query;
        self.queries.insert(id, PendingQuery { answers: vec![MaskAnswer::NoInstance; points.len()], in_flight });
        Ok(QueryHandle(id))
    }

    /// Polls a submitted batch: `None` while its readback is in flight, then
    /// the answers once; polling a delivered or unknown handle is an error.
    pub fn poll_mask_query(&mut self, handle: QueryHandle) -> Result<Option<Vec<MaskAnswer>>> {
        self.poll_query(handle, false)
    }

    fn poll_query(&mut self, handle: QueryHandle, wait: bool) -> Result<Option<Vec<MaskAnswer>>> {
        let mut pending =
            self.queries.remove(&handle.0).ok_or_else(|| MurkError::invalid("query handle", handle.0, "is unknown or was already delivered"))?;
        if let Some((ticket, parts)) = pending.in_flight.take() {
            let Some(values) = self.backend.poll_samples(ticket, wait)? else {
                pending.in_flight = Some((ticket, parts));
                self.queries.insert(handle.0, pending);
                return Ok(None);
            };
            let mut values = values.into_iter();
            for part in parts {
                for (i, value) in part.indices.iter().zip(values.by_ref()) {
                    pending.answers[*i] = MaskAnswer::Sampled { instance: part.instance.clone(), value, visible: value >= part.cutoff };
                }
            }
        }
        Ok(Some(pending.answers))
    }

    /// The immediate query: is `point` inside the radius or cone of a source
    /// of `teams`? No occlusion, no fade, no latency.
    pub fn query_immediate(&self, world: &World, point: glam::Vec3, teams: TeamMask) -> Result<bool> {
        crate::query::immediate(world, point, teams)
    }

    /// The stealth state of an actor.
    pub fn stealth_state(&self, actor: Entity) -> Option<&StealthState> {
        self.stealth.get(&actor.to_bits().get())
    }

    /// Applies the stealth samples that are due this tick (asked for
    /// [`READBACK_LATENCY_TICKS`] ticks ago) and removes the states of
    /// actors that are gone.
    fn update_stealth(&mut self, world: &mut World, actors: &[(Entity, glam::Vec3, StealthQ)], dt: u64) -> Result<Vec<StealthEvent>> {
        let mut events = Vec::new();
        // Actors that are gone take their ghosts with them.
        let present: BTreeSet<u64> = actors.iter().map(|(e, _, _)| e.to_bits().get()).collect();
        let gone: Vec<u64> = self.stealth.keys().filter(|k| !present.contains(k)).copied().collect();
        for bits in gone {
            if let Some(state) = self.stealth.remove(&bits) {
                if let (Some(ghost), Some(actor)) = (state.ghost, Entity::from_bits(bits)) {
                    // The game may have removed the ghost itself.
                    let _ = world.despawn(ghost);
                    events.push(StealthEvent::GhostRemoved { actor, ghost });
                }
            }
        }
        while self.stealth_batches.front().is_some_and(|b| b.due <= self.tick) {
            let batch = self.stealth_batches.pop_front().expect("checked above");
            let values = match batch.values {
                Readback::Ready(v) => v,
                Readback::Ticket(t) => self.backend.poll_samples(t, true)?.ok_or_else(|| MurkError::Backend {
                    backend: self.backend.name(),
                    message: "a waited-for stealth readback did not land".into(),
                })?,
            };
            for sample in batch.samples {
                // An actor removed since its sample was taken has no state any more.
                let Some(actor) = Entity::from_bits(sample.actor).filter(|_| present.contains(&sample.actor)) else { continue };
                let value = match &sample.located {
                    Some((_, i)) => values.get(*i).copied().ok_or_else(|| MurkError::Backend {
                        backend: self.backend.name(),
                        message: format!("the stealth readback holds {} values, sample {i} was asked for", values.len()),
                    })?,
                    None => 0,
                };
                let visible = match sample.policy {
                    VisibilityPolicy::FogDriven => sample.located.is_some() && value >= sample.cutoff,
                    VisibilityPolicy::AlwaysVisible => true,
                    VisibilityPolicy::AlwaysHidden => false,
                };
                let state = self.stealth.entry(sample.actor).or_default();
                if visible && !state.last_visible {
                    if let Some(ghost) = state.ghost.take() {
                        let _ = world.despawn(ghost);
                        events.push(StealthEvent::GhostRemoved { actor, ghost });
                    }
                    events.push(StealthEvent::Revealed { actor });
                } else if !visible && state.last_visible {
                    events.push(StealthEvent::Hidden { actor });
                    if sample.hide_mode == HideMode::FreezeWithGhost {
                        if let Some(at) = state.last_known_position() {
                            let ghost = world.spawn((Position(at), Ghost { actor }));
                            state.ghost = Some(ghost);
                            events.push(StealthEvent::GhostSpawned { actor, ghost });
                        }
                    }
                }
                if visible {
                    state.last_known = Some(sample.position);
                }
                state.last_visible = visible;
                state.last_value = value;
                state.instance = sample.located.map(|(n, _)| n);
                state.fade = crate::stealth::step_fade(state.fade, visible, sample.fade_us, dt);
            }
        }
        Ok(events)
    }

    /// Asks the backend for every actor's final-mask value after this
    /// tick's blend, in one batch over all instances; the answers are used
    /// [`READBACK_LATENCY_TICKS`] ticks later.
    fn submit_stealth(&mut self, actors: &[(Entity, glam::Vec3, StealthQ)]) -> Result<()> {
        if actors.is_empty() {
            return Ok(());
        }
        let mut per_instance: BTreeMap<String, Vec<(usize, [u32; 2])>> = BTreeMap::new();
        let mut samples = Vec::with_capacity(actors.len());
        for (i, (actor, pos, q)) in actors.iter().enumerate() {
            let located = match &q.instance {
                Some(name) => {
                    let slot = self.slot(name)?;
                    let out = AreaTransform::new(&slot.desc.area, slot.dims.out_width, slot.dims.out_height);
                    texel_of(&out, slot.desc.area.center.z, *pos).map(|(t, _)| (name.clone(), t))
                }
                None => self.locate(*pos),
            };
            let cutoff = match &located {
                Some((name, texel)) => {
                    per_instance.entry(name.clone()).or_default().push((i, *texel));
                    q.cutoff.unwrap_or(self.slot(name)?.q.visibility_cutoff)
                }
                None => u16::MAX,
            };
            samples.push(StealthSample {
                actor: actor.to_bits().get(),
                position: [pos.x.to_bits(), pos.y.to_bits(), pos.z.to_bits()],
                located: located.map(|(n, _)| (n, 0)),
                cutoff,
                policy: q.policy,
                hide_mode: q.hide_mode,
                fade_us: q.fade_us,
            });
        }
        let mut requests = Vec::with_capacity(per_instance.len());
        let mut next = 0;
        for (name, texels) in per_instance {
            for (index, (i, _)) in texels.iter().enumerate() {
                if let Some((_, at)) = &mut samples[*i].located {
                    *at = next + index;
                }
            }
            next += texels.len();
            requests.push(SampleRequest { key: self.slot(&name)?.key, texels: texels.into_iter().map(|(_, t)| t).collect() });
        }
        let values = if requests.is_empty() { Readback::Ready(Vec::new()) } else { Readback::Ticket(self.backend.submit_samples(&requests)?) };
        self.stealth_batches.push_back(StealthBatch { due: self.tick.saturating_add(READBACK_LATENCY_TICKS), samples, values });
        Ok(())
    }

    /// The material parameter block of an instance (the spec's `FOW_*`
    /// parameters), ready to upload as a uniform for
    /// `backend-gpu/include/murk_fog.wgsl`.
    pub fn shader_params(&self, name: &str) -> Result<crate::frame::ShaderParams> {
        let slot = self.slot(name)?;
        let (a, p) = (&slot.desc.area, &slot.desc.profile);
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        Ok(crate::frame::ShaderParams {
            center: a.center.into(),
            enabled: flag(p.enabled && p.show_fog),
            // The span the texture really covers: rows are whole texels.
            size: [a.extents.x, a.extents.x * slot.dims.out_height as f32 / slot.dims.out_width as f32, a.extents.z],
            yaw_degrees: a.yaw_degrees,
            visibility_cutoff: p.visibility_cutoff,
            use_z_layering: flag(p.z_layering),
            explored_value: p.explored_value,
            pad: 0.0,
        })
    }

    /// Waits for every value still in flight on the backend (changed flags,
    /// stealth samples), so that the state can be written down.
    fn land_readbacks(&mut self) -> Result<()> {
        for slot in self.instances.values_mut() {
            for flag in &mut slot.flags {
                if let Readback::Ticket(t) = flag.changed {
                    let changed = self.backend.poll_changed(t, true)?;
                    flag.changed = Readback::Ready(changed.ok_or_else(|| MurkError::Backend {
                        backend: self.backend.name(),
                        message: "a waited-for changed flag did not land".into(),
                    })?);
                }
            }
        }
        for batch in &mut self.stealth_batches {
            if let Readback::Ticket(t) = batch.values {
                let values = self.backend.poll_samples(t, true)?;
                batch.values = Readback::Ready(values.ok_or_else(|| MurkError::Backend {
                    backend: self.backend.name(),
                    message: "a waited-for stealth readback did not land".into(),
                })?);
            }
        }
        Ok(())
    }

    /// Lockstep hash of everything: every instance's final mask, memory and
    /// composed mask, and every stealth state. Equal on every peer that ran
    /// the same inputs, whatever its thread count.
    pub fn lockstep_hash(&mut self) -> Result<u64> {
        Ok(self.state_hashes()?.0)
    }

    /// The lockstep hash and, from the same pass over the textures, each
    /// instance's [`Self::state_hash`].
    pub fn state_hashes(&mut self) -> Result<(u64, BTreeMap<String, u64>)> {
        let mut per_instance = BTreeMap::new();
        let mut h = Fnv64::default();
        for name in self.instance_names() {
            let s = self.state_hash(&name)?;
            h.write(name.as_bytes());
            h.write(&s.to_le_bytes());
            per_instance.insert(name, s);
        }
        for (bits, state) in &self.stealth {
            if let Some(actor) = Entity::from_bits(*bits) {
                state.hash_into(actor, &mut h);
            }
        }
        Ok((h.finish(), per_instance))
    }

    /// Saves the whole fog state: every instance (settings, cadence timers,
    /// dirty flags, counters, every texture), stealth states with their
    /// ghosts, pending query answers and the transient reveals of `world`.
    pub fn snapshot(&mut self, world: &World) -> Result<Vec<u8>> {
        let mut w = Writer::default();
        // Pending queries are waited for: a snapshot holds their answers.
        let handles: Vec<u64> = self.queries.keys().copied().collect();
        let mut answers: BTreeMap<u64, Vec<MaskAnswer>> = BTreeMap::new();
        for h in handles {
            if let Some(a) = self.poll_query(QueryHandle(h), true)? {
                answers.insert(h, a);
            }
        }
        for (h, a) in &answers {
            self.queries.insert(*h, PendingQuery { answers: a.clone(), in_flight: None });
        }
        self.land_readbacks()?;
        w.u64(self.tick);
        w.u64(self.next_query);
        w.str(&serde_json::to_string(&answers).map_err(|e| MurkError::Parse { what: "query answers".into(), message: e.to_string() })?);
        w.u32(self.instances.len() as u32);
        let names = self.instance_names();
        for name in &names {
            let key = self.slot(name)?.key;
            let textures = self.backend.export_textures(key)?;
            let slot = self.slot(name)?;
            w.str(&serde_json::to_string(&slot.desc).map_err(|e| MurkError::Parse { what: format!("instance `{name}`"), message: e.to_string() })?);
            w.opt_u64(slot.blocker_hash);
            w.opt_u64(slot.capture_signature);
            w.bool(slot.capture.is_some());
            if let Some(c) = &slot.capture {
                w.blob(&c.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
            }
            w.opt_u64(slot.source_hash);
            for flag in [slot.occlusion_dirty, slot.capture_dirty, slot.settled, slot.has_recomputed] {
                w.bool(flag);
            }
            w.bool(slot.built_for.is_some());
            let (mips, dfs) = slot.built_for.unwrap_or((false, 0));
            w.bool(mips);
            w.u32(dfs);
            w.bool(slot.recomputed_profile.is_some());
            let q = slot.recomputed_profile.unwrap_or(slot.q);
            for v in [q.explored_value, q.visibility_cutoff, q.show_memory_alpha, q.smooth_falloff, q.df_jitter] {
                w.u16(v);
            }
            w.u64(q.update_interval_us);
            for v in [q.fade_in_per_s, q.relax_per_s, q.forget_per_s, q.soft_shadow_k_q8] {
                w.u32(v);
            }
            w.u64(slot.rate_since_us);
            w.u64(slot.blend_since_us);
            let s = slot.stats;
            for v in [s.ticks, s.recaptures, s.occlusion_builds, s.occlusion_shared, s.recomputes, s.skipped_recomputes] {
                w.u64(v);
            }
            w.u64(slot.epoch);
            w.str(
                &serde_json::to_string(&slot.flags)
                    .map_err(|e| MurkError::Parse { what: format!("instance `{name}` flags"), message: e.to_string() })?,
            );
            w.u32(textures.len() as u32);
            for (tname, img) in &textures {
                w.image(tname, img);
            }
        }
        w.u32(self.stealth.len() as u32);
        for (bits, st) in &self.stealth {
            w.u64(*bits);
            w.bool(st.last_visible);
            w.u16(st.last_value);
            w.bool(st.last_known.is_some());
            for v in st.last_known.unwrap_or([0; 3]) {
                w.u32(v);
            }
            w.u16(st.fade);
            w.opt_u64(st.ghost.map(|g| g.to_bits().get()));
            let ghost_at =
                st.ghost.and_then(|g| world.get::<&Position>(g).ok().map(|p| p.0)).or_else(|| st.last_known_position()).unwrap_or_default();
            for v in [ghost_at.x, ghost_at.y, ghost_at.z] {
                w.u32(v.to_bits());
            }
            w.bool(st.instance.is_some());
            w.str(st.instance.as_deref().unwrap_or(""));
        }
        w.str(
            &serde_json::to_string(&self.stealth_batches).map_err(|e| MurkError::Parse { what: "stealth samples".into(), message: e.to_string() })?,
        );
        let mut reveals: Vec<(u64, u32)> = world.query::<&TransientReveal>().iter().map(|(e, r)| (e.to_bits().get(), r.remaining_ticks)).collect();
        reveals.sort_unstable();
        w.u32(reveals.len() as u32);
        for (bits, remaining) in reveals {
            w.u64(bits);
            w.u32(remaining);
        }
        Ok(frame(FOG_MAGIC, &w.bytes))
    }

    /// Restores a snapshot written by [`Self::snapshot`], and its ghosts and
    /// transient-reveal counters into `world`.
    ///
    /// The whole body is read and checked against itself before anything is
    /// replaced: a truncated, corrupted or wrong-version snapshot, or one whose
    /// checksum is right but whose fields disagree (two instances with one
    /// name, textures missing or of the wrong size, type or range, a capture
    /// of the wrong length, query handles at or past the next handle, stealth
    /// states naming unknown instances or sharing a ghost) is an error naming
    /// the field, and changes nothing.
    ///
    /// Entities the game owns are never touched: a ghost keeps its saved id
    /// only when no live entity holds that index (and the index is not far
    /// beyond the world's largest); otherwise (the game reused the id after
    /// the ghost was removed) a new ghost entity is spawned and the stealth
    /// state names it. Transient-reveal countdowns are restored
    /// only on entities that hold a `TransientReveal` already.
    pub fn restore(&mut self, world: &mut World, bytes: &[u8]) -> Result<()> {
        let payload = unframe(FOG_MAGIC, bytes)?;
        let mut r = Reader::new(payload);
        let tick = r.u64()?;
        let next_query = r.u64()?;
        let queries: BTreeMap<u64, Vec<MaskAnswer>> =
            serde_json::from_str(&r.str()?).map_err(|e| MurkError::Parse { what: "snapshot query answers".into(), message: e.to_string() })?;
        if let Some((&h, _)) = queries.range(next_query..).next() {
            return Err(MurkError::invalid("snapshot.queries", h, format!("is a pending handle at or past the next handle {next_query}")));
        }
        let count = r.u32()?;
        let mut slots: Vec<(Slot, Vec<(String, StageImage)>)> = Vec::new();
        let mut names = BTreeSet::new();
        for _ in 0..count {
            let desc: InstanceDesc =
                serde_json::from_str(&r.str()?).map_err(|e| MurkError::Parse { what: "snapshot instance".into(), message: e.to_string() })?;
            let prefix = format!("snapshot instance `{}`", desc.name);
            if !names.insert(desc.name.clone()) {
                return Err(MurkError::invalid("snapshot.instances.name", &desc.name, "is used by two instances"));
            }
            let (q, transform, dims) = Self::validate_desc(&desc, &prefix)?;
            let blocker_hash = r.opt_u64()?;
            let capture_signature = r.opt_u64()?;
            let capture = if r.bool()? { Some(read_capture(r.blob()?, dims, &prefix)?) } else { None };
            let source_hash = r.opt_u64()?;
            let (occlusion_dirty, capture_dirty, settled, has_recomputed) = (r.bool()?, r.bool()?, r.bool()?, r.bool()?);
            let has_built = r.bool()?;
            let built = (r.bool()?, r.u32()?);
            if ![0, 1, 2, 4].contains(&built.1) {
                return Err(MurkError::invalid(format!("{prefix}.built_for.distance_field_scale"), built.1, "must be 0, 1, 2 or 4"));
            }
            let has_recomputed_profile = r.bool()?;
            let (explored_value, visibility_cutoff, show_memory_alpha, smooth_falloff, df_jitter) =
                (r.u16()?, r.u16()?, r.u16()?, r.u16()?, r.u16()?);
            let update_interval_us = r.u64()?;
            let (fade_in_per_s, relax_per_s, forget_per_s, soft_shadow_k_q8) = (r.u32()?, r.u32()?, r.u32()?, r.u32()?);
            let recomputed = ProfileQ {
                explored_value,
                visibility_cutoff,
                show_memory_alpha,
                smooth_falloff,
                update_interval_us,
                fade_in_per_s,
                relax_per_s,
                forget_per_s,
                soft_shadow_k_q8,
                df_jitter,
            };
            let (rate_since_us, blend_since_us) = (r.u64()?, r.u64()?);
            let stats = InstanceStats {
                ticks: r.u64()?,
                recaptures: r.u64()?,
                occlusion_builds: r.u64()?,
                occlusion_shared: r.u64()?,
                recomputes: r.u64()?,
                skipped_recomputes: r.u64()?,
            };
            let epoch = r.u64()?;
            let flags: VecDeque<PendingFlag> =
                serde_json::from_str(&r.str()?).map_err(|e| MurkError::Parse { what: format!("{prefix} flags"), message: e.to_string() })?;
            if let Some(f) = flags.iter().find(|f| matches!(f.changed, Readback::Ticket(_))) {
                return Err(MurkError::invalid(format!("{prefix}.flags.changed"), format!("{:?}", f.changed), "must be a landed value"));
            }
            let built_for = has_built.then_some(built);
            let n = r.u32()?;
            let mut textures = Vec::new();
            for _ in 0..n {
                textures.push(r.image()?);
            }
            check_textures(&textures, dims, built_for, &prefix)?;
            let slot = Slot {
                key: 0,
                desc,
                q,
                transform,
                dims,
                blocker_hash,
                capture_signature,
                capture,
                source_hash,
                occlusion_dirty,
                capture_dirty,
                settled,
                built_for,
                recomputed_profile: has_recomputed_profile.then_some(recomputed),
                rate_since_us,
                blend_since_us,
                has_recomputed,
                last_input: None,
                epoch,
                flags,
                stats,
            };
            slots.push((slot, textures));
        }
        for (h, answers) in &queries {
            for a in answers {
                if let MaskAnswer::Sampled { instance, .. } = a {
                    if !names.contains(instance) {
                        return Err(MurkError::invalid(format!("snapshot.queries[{h}].instance"), instance, "names no instance of the snapshot"));
                    }
                }
            }
        }
        let mut stealth = BTreeMap::new();
        let mut ghosts = Vec::new();
        let mut ghost_ids = BTreeSet::new();
        for _ in 0..r.u32()? {
            let bits = r.u64()?;
            let last_visible = r.bool()?;
            let last_value = r.u16()?;
            let has_known = r.bool()?;
            let known = [r.u32()?, r.u32()?, r.u32()?];
            let fade = r.u16()?;
            let ghost = r.opt_u64()?;
            let at = glam::Vec3::new(f32::from_bits(r.u32()?), f32::from_bits(r.u32()?), f32::from_bits(r.u32()?));
            let has_instance = r.bool()?;
            let instance = r.str()?;
            let actor = Entity::from_bits(bits)
                .ok_or_else(|| MurkError::Parse { what: "snapshot".into(), message: format!("actor id {bits} is invalid") })?;
            let field = format!("snapshot.stealth[{}]", actor.id());
            if stealth.contains_key(&bits) {
                return Err(MurkError::invalid(format!("{field}.actor"), bits, "has two stealth states"));
            }
            if has_known && known.iter().any(|v| !f32::from_bits(*v).is_finite()) {
                return Err(MurkError::invalid(format!("{field}.last_known"), format!("{known:?}"), "must be finite numbers"));
            }
            if has_instance && !names.contains(&instance) {
                return Err(MurkError::invalid(format!("{field}.instance"), &instance, "names no instance of the snapshot"));
            }
            let ghost = match ghost {
                Some(g) => Some(
                    Entity::from_bits(g).ok_or_else(|| MurkError::Parse { what: "snapshot".into(), message: format!("ghost id {g} is invalid") })?,
                ),
                None => None,
            };
            if let Some(g) = ghost {
                if !ghost_ids.insert(g.id()) || g.id() == actor.id() {
                    return Err(MurkError::invalid(format!("{field}.ghost"), g.id(), "is shared with another ghost or actor"));
                }
                for (axis, v) in [("x", at.x), ("y", at.y), ("z", at.z)] {
                    finite(|| format!("{field}.ghost_position.{axis}"), v)?;
                }
                ghosts.push((bits, g, at, actor));
            }
            let state = StealthState {
                last_visible,
                last_value,
                last_known: has_known.then_some(known),
                fade,
                ghost,
                instance: has_instance.then_some(instance),
            };
            stealth.insert(bits, state);
        }
        for bits in stealth.keys() {
            if let Some(id) = Entity::from_bits(*bits).map(|e| e.id()) {
                if ghost_ids.contains(&id) {
                    return Err(MurkError::invalid("snapshot.stealth.ghost", id, "is also an actor"));
                }
            }
        }
        let stealth_batches: VecDeque<StealthBatch> =
            serde_json::from_str(&r.str()?).map_err(|e| MurkError::Parse { what: "snapshot stealth samples".into(), message: e.to_string() })?;
        for (b, batch) in stealth_batches.iter().enumerate() {
            let Readback::Ready(values) = &batch.values else {
                return Err(MurkError::invalid(format!("snapshot.stealth_samples[{b}].values"), "a ticket", "must be landed values"));
            };
            for sample in &batch.samples {
                if let Some((name, i)) = &sample.located {
                    if !names.contains(name) || *i >= values.len() {
                        return Err(MurkError::invalid(
                            format!("snapshot.stealth_samples[{b}].located"),
                            format!("({name}, {i})"),
                            format!("must name an instance of the snapshot and one of its {} values", values.len()),
                        ));
                    }
                }
            }
        }
        let mut reveals = BTreeMap::new();
        for _ in 0..r.u32()? {
            let (bits, remaining) = (r.u64()?, r.u32()?);
            let e = Entity::from_bits(bits)
                .ok_or_else(|| MurkError::Parse { what: "snapshot".into(), message: format!("reveal id {bits} is invalid") })?;
            if reveals.insert(e, remaining).is_some() {
                return Err(MurkError::invalid("snapshot.reveals", e.id(), "is listed twice"));
            }
        }
        r.finish()?;
        let last_key = u64::from(self.next_key) + slots.len() as u64;
        if last_key > u64::from(u32::MAX) {
            return Err(MurkError::invalid("instance keys", self.next_key, "are used up: every key up to u32::MAX was given out"));
        }
        // Everything parsed and checked: load the textures into fresh backend
        // instances, and only when all succeeded replace the running ones.
        let mut created = Vec::new();
        let mut fresh = BTreeMap::new();
        let mut key = self.next_key;
        for (mut slot, textures) in slots {
            let loaded = self.backend.create_instance(key, slot.dims).and_then(|()| {
                created.push(key);
                self.backend.import_textures(key, &textures)
            });
            if let Err(e) = loaded {
                for k in created {
                    self.backend.destroy_instance(k);
                }
                return Err(e);
            }
            slot.key = key;
            key += 1;
            fresh.insert(slot.desc.name.clone(), slot);
        }
        for old in std::mem::replace(&mut self.instances, fresh).into_values() {
            self.forget_flags(&old);
            self.backend.destroy_instance(old.key);
        }
        for batch in &self.stealth_batches {
            if let Readback::Ticket(t) = batch.values {
                self.backend.forget_readback(t);
            }
        }
        self.next_key = key;
        self.tick = tick;
        self.next_query = next_query;
        self.queries = queries.into_iter().map(|(h, answers)| (h, PendingQuery { answers, in_flight: None })).collect();
        self.stealth_batches = stealth_batches;
        // The old ghosts are murk's: despawn those that are still ghosts.
        for old in self.stealth.values() {
            if let Some(g) = old.ghost {
                if world.get::<&Ghost>(g).is_ok() {
                    let _ = world.despawn(g);
                }
            }
        }
        self.stealth = stealth;
        let live: BTreeSet<u32> = world.iter().map(|e| e.entity().id()).collect();
        // hecs sizes its tables by the largest index: a saved id far beyond the
        // world's (a hostile 3 000 000 000) would allocate gigabytes.
        let reach = live.last().copied().unwrap_or(0).saturating_add(GHOST_ID_SLACK);
        for (bits, ghost, at, actor) in ghosts {
            let components = (Position(at), Ghost { actor });
            if live.contains(&ghost.id()) || ghost.id() > reach {
                let new = world.spawn(components);
                if let Some(state) = self.stealth.get_mut(&bits) {
                    state.ghost = Some(new);
                }
            } else {
                world.spawn_at(ghost, components);
            }
        }
        for (e, remaining) in reveals {
            // The game restores its own entities; murk restores their countdown.
            if let Ok(mut reveal) = world.get::<&mut TransientReveal>(e) {
                reveal.remaining_ticks = remaining;
            }
        }
        Ok(())
    }

    /// The inputs the backend would get for a full recompute of `name` now
    /// (occlusion with a fresh capture, and visibility through upscale, with
    /// rate steps for `elapsed_us`): for benches and tools that drive single
    /// passes. Changes nothing.
    pub fn frame_inputs(&self, name: &str, world: &World, elapsed_us: u64) -> Result<(OcclusionInput, RecomputeInput)> {
        let slot = self.slot(name)?;
        let g = gather(slot, world)?;
        let mut occlusion = g.occlusion;
        occlusion.capture = match g.capture {
            Some((_, Some(texels))) => Some(texels),
            _ => slot.capture.clone(),
        };
        Ok((occlusion, recompute_input(slot, g.sources, elapsed_us)?))
    }

    /// Reads a stage of an instance.
    pub fn read_stage(&mut self, name: &str, stage: Stage) -> Result<StageImage> {
        let key = self.slot(name)?.key;
        self.backend.read_stage(key, stage)
    }

    /// The final mask (output resolution, row-major).
    pub fn final_mask(&mut self, name: &str) -> Result<Vec<u16>> {
        match self.read_stage(name, Stage::Final)?.data {
            StageData::U16(v) => Ok(v),
            other => Err(MurkError::Backend { backend: self.backend.name(), message: format!("final mask has type {other:?}") }),
        }
    }

    /// Lockstep state hash of an instance: final mask, explored memory and
    /// composed mask, FNV-1a 64.
    pub fn state_hash(&mut self, name: &str) -> Result<u64> {
        let mut h = Fnv64::default();
        for stage in [Stage::Final, Stage::Memory, Stage::Compose] {
            h.write(&self.read_stage(name, stage)?.bytes());
        }
        Ok(h.finish())
    }
}

/// Names the instance that judged a world input.
fn in_instance(e: MurkError, name: &str) -> MurkError {
    match e {
        MurkError::InvalidValue { field, value, reason } => MurkError::InvalidValue { field: format!("instance `{name}`: {field}"), value, reason },
        MurkError::UnknownEntity(what) => MurkError::UnknownEntity(format!("instance `{name}`: {what}")),
        other => other,
    }
}

/// The textures of an instance moved from `old_area` (`old_dims`) to
/// `area` (`dims`): every mask resampled with [`resample_mask`], occlusion
/// empty (it is rebuilt on the next tick).
fn resample_textures(
    old: &[(String, StageImage)],
    old_area: &Area,
    old_dims: InstanceDims,
    area: &Area,
    dims: InstanceDims,
) -> Result<Vec<(String, StageImage)>> {
    let internal = (AreaTransform::new(old_area, old_dims.width, old_dims.height), AreaTransform::new(area, dims.width, dims.height));
    let output = (AreaTransform::new(old_area, old_dims.out_width, old_dims.out_height), AreaTransform::new(area, dims.out_width, dims.out_height));
    let (w, h) = (dims.width, dims.height);
    let n = (w * h) as usize;
    let mut out = vec![
        ("coverage".to_string(), StageImage { width: w, height: h, data: StageData::U8(vec![0; n]) }),
        ("height".to_string(), StageImage { width: w, height: h, data: StageData::I32(vec![crate::fixed::HEIGHT_FLOOR; n]) }),
        ("distance_field".to_string(), StageImage { width: 0, height: 0, data: StageData::U32(Vec::new()) }),
    ];
    for name in ["visibility", "blur", "memory", "compose", "upscale", "start", "final"] {
        let (from, to) = if ["upscale", "start", "final"].contains(&name) { &output } else { &internal };
        let img = old.iter().find(|(n, _)| n == name).map(|(_, i)| i);
        let values = match img.map(|i| &i.data) {
            Some(StageData::U16(v)) if v.len() == (from.width() * from.height()) as usize => resample_mask(v, from, to),
            _ => {
                return Err(MurkError::Backend {
                    backend: "export".into(),
                    message: format!("texture `{name}` is missing or not a {}x{} mask", from.width(), from.height()),
                })
            }
        };
        out.push((name.to_string(), StageImage { width: to.width(), height: to.height(), data: StageData::U16(values) }));
    }
    Ok(out)
}

/// Fractional bits of the resampling map.
const RESAMPLE_FRAC_BITS: u32 = 32;

/// Resamples a mask from the grid of `from` into the grid of `to` in world
/// space: each texel of `to` takes the texel of `from` that holds its centre,
/// or 0 where `from` does not reach.
///
/// The map from new texel coordinates to old ones is affine; its six
/// coefficients are computed once in `f64` (through the two transforms) and
/// rounded to 32 fractional bits; every texel then follows in 128-bit
/// integers, so the result is the same on every machine, and exact whenever
/// the coefficients are (a move by whole texels, a quarter turn, a texel
/// size ratio that is a power of two). Coefficients beyond 2^40 texels (an
/// area moved that far, or texels that many times larger) map nothing.
pub fn resample_mask(values: &[u16], from: &AreaTransform, to: &AreaTransform) -> Vec<u16> {
    let (ow, oh) = (from.width(), from.height());
    let (nw, nh) = (to.width(), to.height());
    let map = |tx: f64, ty: f64| {
        let (x, y) = to.texel_to_world(tx, ty);
        from.world_to_texel(x, y)
    };
    // The centre of new texel (0, 0), and the steps along a row and a column.
    let o = map(0.5, 0.5);
    let c = map(1.5, 0.5);
    let r = map(0.5, 1.5);
    let coefficients = [o.0, o.1, c.0 - o.0, c.1 - o.1, r.0 - o.0, r.1 - o.1];
    let limit = f64::from(1u32 << 20) * f64::from(1u32 << 20);
    let mut out = vec![0u16; (nw * nh) as usize];
    if coefficients.iter().any(|v| !v.is_finite() || v.abs() > limit) {
        return out;
    }
    let one = f64::from(1u32 << 16) * f64::from(1u32 << 16);
    let q: Vec<i128> = coefficients.iter().map(|v| (v * one).round() as i128).collect();
    for row in 0..nh {
        for col in 0..nw {
            let (cc, rr) = (i128::from(col), i128::from(row));
            let x = (q[0] + q[2] * cc + q[4] * rr) >> RESAMPLE_FRAC_BITS;
            let y = (q[1] + q[3] * cc + q[5] * rr) >> RESAMPLE_FRAC_BITS;
            if (0..i128::from(ow)).contains(&x) && (0..i128::from(oh)).contains(&y) {
                out[(row * nw + col) as usize] = values[(y as u32 * ow + x as u32) as usize];
            }
        }
    }
    out
}

/// A snapshot's capture blob: `width * height` little-endian `i32` heights,
/// each empty or within the height range.
fn read_capture(blob: &[u8], dims: InstanceDims, prefix: &str) -> Result<Vec<i32>> {
    let n = u64::from(dims.width) * u64::from(dims.height);
    if blob.len() as u64 != n * 4 {
        return Err(MurkError::invalid(
            format!("{prefix}.capture"),
            format!("{} bytes", blob.len()),
            format!("must hold {}x{} heights of 4 bytes = {} bytes", dims.width, dims.height, n * 4),
        ));
    }
    let texels: Vec<i32> = blob.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if let Some((i, v)) = texels.iter().enumerate().find(|(_, &v)| v != CAPTURE_EMPTY && !(-HEIGHT_LIMIT..=HEIGHT_WALL).contains(&v)) {
        return Err(MurkError::invalid(format!("{prefix}.capture[{i}]"), v, format!("must be empty or within -{HEIGHT_LIMIT}..={HEIGHT_WALL}")));
    }
    Ok(texels)
}

/// The textures an instance of `dims` holds after the occlusion build
/// `built_for` (mips, distance-field scale), in the order backends export
/// them: name, width, height, texel type (0 u8, 1 u16, 2 i32, 3 u32).
fn expected_textures(dims: InstanceDims, built_for: Option<(bool, u32)>) -> Vec<(String, u32, u32, u8)> {
    let (w, h) = (dims.width, dims.height);
    let mut out = vec![("coverage".to_string(), w, h, 0), ("height".to_string(), w, h, 2)];
    let (mips, scale) = built_for.unwrap_or((false, 0));
    if mips {
        let (mut lw, mut lh) = (w, h);
        while lw > 1 || lh > 1 {
            (lw, lh) = (lw.div_ceil(2), lh.div_ceil(2));
            out.push((format!("mip{}", out.len() - 1), lw, lh, 0));
        }
    }
    let (dw, dh) = if scale > 0 { (w.div_ceil(scale), h.div_ceil(scale)) } else { (0, 0) };
    out.push(("distance_field".to_string(), dw, dh, 3));
    for name in ["visibility", "blur", "memory", "compose"] {
        out.push((name.to_string(), w, h, 1));
    }
    for name in ["upscale", "start", "final"] {
        out.push((name.to_string(), dims.out_width, dims.out_height, 1));
    }
    out
}

/// Checks a snapshot's textures against what the instance must hold: every
/// texture present once, in order, of the right size and type, and the
/// occlusion textures within their ranges (coverage and mips 0 or 1,
/// heights within the height range).
fn check_textures(textures: &[(String, StageImage)], dims: InstanceDims, built_for: Option<(bool, u32)>, prefix: &str) -> Result<()> {
    let expected = expected_textures(dims, built_for);
    let listed: Vec<&str> = textures.iter().map(|(n, _)| n.as_str()).collect();
    let wanted: Vec<&str> = expected.iter().map(|(n, ..)| n.as_str()).collect();
    if listed != wanted {
        return Err(MurkError::invalid(
            format!("{prefix}.textures"),
            listed.join(", "),
            format!("must be exactly {} for its size and occlusion build", wanted.join(", ")),
        ));
    }
    for ((name, img), (_, w, h, kind)) in textures.iter().zip(&expected) {
        let field = format!("{prefix}.textures.{name}");
        let actual_kind = match img.data {
            StageData::U8(_) => 0,
            StageData::U16(_) => 1,
            StageData::I32(_) => 2,
            StageData::U32(_) => 3,
        };
        if (img.width, img.height, actual_kind) != (*w, *h, *kind) {
            return Err(MurkError::invalid(
                field,
                format!("{}x{} of type {actual_kind}", img.width, img.height),
                format!("must be {w}x{h} of type {kind} (0 u8, 1 u16, 2 i32, 3 u32)"),
            ));
        }
        let bad = match &img.data {
            StageData::U8(v) => v.iter().position(|&x| x > 1).map(|i| (i, i64::from(v[i]), "0 or 1".to_string())),
            StageData::I32(v) => v
                .iter()
                .position(|x| !(-HEIGHT_LIMIT..=HEIGHT_WALL).contains(x))
                .map(|i| (i, i64::from(v[i]), format!("-{HEIGHT_LIMIT}..={HEIGHT_WALL}"))),
            _ => None,
        };
        if let Some((i, v, range)) = bad {
            return Err(MurkError::invalid(format!("{field}[{i}]"), v, format!("must be {range}")));
        }
    }
    Ok(())
}

fn prefix_error(e: MurkError, prefix: &str) -> MurkError {
    match e {
        MurkError::InvalidValue { field, value, reason } => MurkError::InvalidValue { field: format!("{prefix}.{field}"), value, reason },
        other => other,
    }
}

/// The profile's target height in height units, checked against the height range.
fn target_height_units(desc: &InstanceDesc) -> Result<i32> {
    let units = f64::from(desc.profile.target_height) / (f64::from(desc.area.extents.z) / HEIGHT_UNITS_PER_SLAB);
    if units.abs() > f64::from(HEIGHT_LIMIT) {
        return Err(MurkError::invalid("profile.target_height", desc.profile.target_height, "must stay within 256 slab heights (extents.z)"));
    }
    Ok(units.round() as i32)
}

fn entity_label(e: Entity) -> String {
    format!("entity {}", e.id())
}

fn gather(slot: &Slot, world: &World) -> Result<Gathered> {
    let profile = &slot.desc.profile;
    let t = &slot.transform;
    let slab = Slab::logical(&slot.desc.area, profile.z_layering_area_scale);
    let (w, h) = (slot.dims.width, slot.dims.height);

    // Height captures.
    let mut capture_query = world.query::<&HeightCapture>();
    let mut captures: Vec<(Entity, &HeightCapture)> = capture_query.iter().collect();
    captures.sort_by_key(|(e, _)| e.to_bits());
    let capture = if captures.is_empty() {
        None
    } else {
        let signature = capture_signature(world, &captures)?;
        let dirty = slot.capture_dirty || signature.is_none() || signature != slot.capture_signature;
        let texels = if dirty { Some(resample_captures(&captures, t, &slab, profile.z_layering, w, h)?) } else { None };
        Some((signature, texels))
    };

    // Blockers.
    let mut blockers: Vec<(Entity, Position, Blocker)> =
        world.query::<(&Position, &Blocker)>().iter().map(|(e, (p, b))| (e, *p, b.clone())).collect();
    blockers.sort_by_key(|(e, _, _)| e.to_bits());
    let mut occlusion = OcclusionInput {
        width: w,
        height: h,
        build_mips: profile.ray_method.needs_mips(),
        distance_field_scale: if profile.ray_method.needs_distance_field() { profile.df_scale } else { 0 },
        ..Default::default()
    };
    let mut polygons: Vec<(Vec<[i32; 2]>, i32)> = Vec::new();
    for (e, pos, b) in &blockers {
        let label = entity_label(*e);
        let z = finite(|| format!("{label}.position.z"), pos.0.z)?;
        let x = finite(|| format!("{label}.position.x"), pos.0.x)?;
        let y = finite(|| format!("{label}.position.y"), pos.0.y)?;
        // What is wrong for every instance; lengths and heights are then
        // measured in this instance's units.
        b.check(&label)?;
        let height = b.height.map(f64::from);
        if profile.z_layering && b.use_height_layer && !slab.holds_column(z, height) {
            continue;
        }
        let top = match height {
            None => HEIGHT_WALL,
            Some(v) => t.height_q(|| format!("{label}.blocker.height"), z + v)?,
        };
        match &b.shape {
            BlockerShape::Circle { radius } => {
                let r = t.length_q(|| format!("{label}.blocker.shape.circle.radius"), *radius)?;
                let (tx, ty) = t.world_to_texel(x, y);
                let rt = f64::from(r) / f64::from(TEXEL_ONE);
                if tx + rt < 0.0 || ty + rt < 0.0 || tx - rt > f64::from(w) || ty - rt > f64::from(h) {
                    continue;
                }
                let [cx, cy] = AreaTransform::texel_q(tx, ty);
                let c = CircleTexel { x: cx, y: cy, radius: r, height: top };
                occlusion.circles.push(c);
            }
            BlockerShape::Rect { size, yaw_degrees } => {
                let (sx, sy, yaw) = (f64::from(size.x), f64::from(size.y), f64::from(*yaw_degrees));
                let (s, c) = sin_cos_degrees(yaw);
                let corners: Vec<(f64, f64)> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                    .iter()
                    .map(|(u, v)| {
                        let (lx, ly) = (u * sx / 2.0, v * sy / 2.0);
                        t.world_to_texel(x + lx * c - ly * s, y + lx * s + ly * c)
                    })
                    .collect();
                push_polygon(&mut polygons, &corners, top, w, h);
            }
            BlockerShape::Polygon { points } => {
                let corners: Vec<(f64, f64)> = points.iter().map(|p| t.world_to_texel(x + f64::from(p.x), y + f64::from(p.y))).collect();
                push_polygon(&mut polygons, &corners, top, w, h);
            }
        }
    }

    // Sources.
    let mut sources_in: Vec<(Entity, Position, VisionSource)> =
        world.query::<(&Position, &VisionSource)>().iter().map(|(e, (p, s))| (e, *p, *s)).collect();
    sources_in.sort_by_key(|(e, _, _)| e.to_bits());
    let mut sources = Vec::with_capacity(sources_in.len());
    for (e, pos, s) in &sources_in {
        let label = entity_label(*e);
        if let Some(src) = project_source(&label, pos, s, slot, &slab, slot.desc.observed_teams)? {
            sources.push(src);
        }
    }
    let mut anti: Vec<(Entity, Position, AntiVision)> = world.query::<(&Position, &AntiVision)>().iter().map(|(e, (p, a))| (e, *p, *a)).collect();
    anti.sort_by_key(|(e, _, _)| e.to_bits());
    for (e, pos, a) in &anti {
        if a.targets.0 & slot.desc.observed_teams.0 == 0 {
            continue;
        }
        // Projected as a source (the same checks and bounds), then marked.
        let label = format!("{}.anti_vision", entity_label(*e));
        let as_source = VisionSource { radius: a.radius, falloff: Some(a.falloff), eye_height: 0.0, cone: None, team: 0, height_layer: None };
        if let Some(mut src) = project_source(&label, pos, &as_source, slot, &slab, TeamMask::ALL)? {
            src.flags |= SOURCE_ANTI;
            sources.push(src);
        }
    }
    // Canonical order (by content, not by entity id), so the hashes and the
    // bins do not depend on how the game allocated its entities.
    sources.sort_unstable();
    let mut sh = Fnv64::default();
    for src in &sources {
        src.hash_into(&mut sh);
    }
    occlusion.circles.sort_unstable();
    polygons.sort_unstable();
    let mut bh = Fnv64::default();
    for c in &occlusion.circles {
        bh.write(&[0]);
        for v in [c.x, c.y, c.radius, c.height] {
            bh.write(&v.to_le_bytes());
        }
    }
    for (vertices, top) in polygons {
        bh.write(&[1]);
        let first = occlusion.vertices.len() as u32;
        for q in &vertices {
            bh.write(&q[0].to_le_bytes());
            bh.write(&q[1].to_le_bytes());
        }
        bh.write(&top.to_le_bytes());
        occlusion.polygons.push(PolygonTexel { first, count: vertices.len() as u32, height: top, pad: 0 });
        occlusion.vertices.extend(vertices);
    }
    Ok(Gathered { occlusion, blocker_hash: bh.finish(), capture, sources, source_hash: sh.finish() })
}

/// Projects one source into texel space; `None` when it does not take part
/// (other team, outside the slab, or too far to touch the grid).
fn project_source(label: &str, pos: &Position, s: &VisionSource, slot: &Slot, slab: &Slab, teams: TeamMask) -> Result<Option<SourceTexel>> {
    let t = &slot.transform;
    let profile = &slot.desc.profile;
    let x = finite(|| format!("{label}.position.x"), pos.0.x)?;
    let y = finite(|| format!("{label}.position.y"), pos.0.y)?;
    let z = finite(|| format!("{label}.position.z"), pos.0.z)?;
    // What is wrong for every instance (`VisionSource::check`); a radius
    // too long for this instance's texels is judged only if the source can
    // touch it.
    s.check(label)?;
    let radius_q = t.length_q(|| format!("{label}.source.radius"), s.radius);
    let falloff = s.falloff.map_or(f64::from(profile.smooth_falloff), f64::from);
    let eye_offset = f64::from(s.eye_height);
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
    if !teams.contains(s.team) {
        return Ok(None);
    }
    let (tx, ty) = t.world_to_texel(x, y);
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
    let eye = t.height_q(|| format!("{label}.source.eye_height"), z + eye_offset)?;
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
    Ok(Some(src))
}

fn push_polygon(polygons: &mut Vec<(Vec<[i32; 2]>, i32)>, corners: &[(f64, f64)], top: i32, w: u32, h: u32) {
    // Polygons are clipped to the grid widened by a margin on every side, not
    // to the grid itself: a clipped vertex is rounded to the 1/8-texel grid,
    // which tilts its edge, and a texel centre on the outline could then fall
    // in or out depending on the direction the world is turned. Vertices of
    // ordinary blockers lie within the margin and are never moved. The margin
    // keeps every cross product of the rasterizers below 2^31 (the GPU's are
    // 32-bit): (grid + 2 margin) texels of 8 steps, squared.
    let margin = f64::from(POLYGON_SPAN_TEXELS.saturating_sub(w.max(h)) / 2);
    let (lo_x, lo_y, hi_x, hi_y) = (-margin, -margin, f64::from(w) + margin, f64::from(h) + margin);
    let clipped = clip_to_rect(corners, (lo_x, lo_y), (hi_x, hi_y));
    if clipped.len() >= 3 {
        // Clipped vertices lie in the rectangle; with huge input coordinates
        // the interpolation can round far outside it (found by the API fuzz
        // target: a vertex at i32::MIN overflowed the rasterizer). Holding
        // them to the rectangle restores what exact arithmetic gives; for
        // ordinary coordinates it changes nothing (the error is far below
        // the 1/8-texel grid).
        polygons.push((clipped.iter().map(|&(x, y)| AreaTransform::texel_q(x.clamp(lo_x, hi_x), y.clamp(lo_y, hi_y))).collect(), top));
    }
}

/// The widest span, in texels, that polygon vertices may cover (grid and
/// margins): `(span * 8)^2` stays below 2^31.
const POLYGON_SPAN_TEXELS: u32 = 5792;

/// Sutherland-Hodgman clip of a polygon to the rectangle from `lo` to `hi`
/// (texel units), which holds the grid with a margin: it keeps the vertex
/// values small enough for 32-bit cross products.
fn clip_to_rect(poly: &[(f64, f64)], lo: (f64, f64), hi: (f64, f64)) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = poly.to_vec();
    let planes: [(usize, f64, bool); 4] = [(0, lo.0, true), (0, hi.0, false), (1, lo.1, true), (1, hi.1, false)];
    for (axis, bound, keep_above) in planes {
        let input = std::mem::take(&mut out);
        if input.is_empty() {
            break;
        }
        let coord = |p: (f64, f64)| if axis == 0 { p.0 } else { p.1 };
        let inside = |p: (f64, f64)| {
            if keep_above {
                coord(p) >= bound
            } else {
                coord(p) <= bound
            }
        };
        for i in 0..input.len() {
            let cur = input[i];
            let prev = input[(i + input.len() - 1) % input.len()];
            let (ci, pi) = (inside(cur), inside(prev));
            if ci != pi {
                let s = (bound - coord(prev)) / (coord(cur) - coord(prev));
                out.push((prev.0 + (cur.0 - prev.0) * s, prev.1 + (cur.1 - prev.1) * s));
            }
            if ci {
                out.push(cur);
            }
        }
    }
    out
}

/// Signature of the capture inputs for the show-only transform rule, or
/// `None` when the capture must be redone every recompute.
fn capture_signature(world: &World, captures: &[(Entity, &HeightCapture)]) -> Result<Option<u64>> {
    let mut h = Fnv64::default();
    for (e, c) in captures {
        match &c.mode {
            CaptureMode::FullScene | CaptureMode::ShowOnly { update_only_if_transform_changed: false, .. } => return Ok(None),
            CaptureMode::ShowOnly { members, update_only_if_transform_changed: true } => {
                h.write(&e.to_bits().get().to_le_bytes());
                for f in [c.origin.x, c.origin.y, c.cell_size] {
                    h.write(&f.to_bits().to_le_bytes());
                }
                h.write(&c.width.to_le_bytes());
                h.write(&c.height.to_le_bytes());
                for m in members {
                    h.write(&m.to_bits().get().to_le_bytes());
                    let pos = world
                        .get::<&Position>(*m)
                        .map_err(|_| MurkError::UnknownEntity(format!("{} (capture member of {})", entity_label(*m), entity_label(*e))))?;
                    for f in [pos.0.x, pos.0.y, pos.0.z] {
                        h.write(&f.to_bits().to_le_bytes());
                    }
                }
            }
        }
    }
    Ok(Some(h.finish()))
}

fn resample_captures(captures: &[(Entity, &HeightCapture)], t: &AreaTransform, slab: &Slab, z_layering: bool, w: u32, h: u32) -> Result<Vec<i32>> {
    for (e, c) in captures {
        let label = entity_label(*e);
        let cell = finite(|| format!("{label}.capture.cell_size"), c.cell_size)?;
        if cell <= 0.0 {
            return Err(MurkError::invalid(format!("{label}.capture.cell_size"), cell, "must be positive"));
        }
        finite(|| format!("{label}.capture.origin.x"), c.origin.x)?;
        finite(|| format!("{label}.capture.origin.y"), c.origin.y)?;
        let expected = u64::from(c.width) * u64::from(c.height);
        if c.cells.len() as u64 != expected {
            return Err(MurkError::invalid(format!("{label}.capture.cells"), c.cells.len(), format!("must hold width * height = {expected} cells")));
        }
    }
    let labeled: Vec<crate::resample::LabeledCapture> = captures.iter().map(|(e, c)| (entity_label(*e), *c)).collect();
    crate::resample::resample_captures(&labeled, t, slab, z_layering, w, h)
}

/// The recompute inputs of an instance for its projected sources, with rate
/// steps for `elapsed_us` since the last recompute.
fn recompute_input(slot: &Slot, sources: Vec<SourceTexel>, elapsed_us: u64) -> Result<RecomputeInput> {
    // In 128 bits: per_s * elapsed fits for any elapsed time (a u64 product
    // wraps after about 7.8 hours at the highest rate); the step saturates
    // at u32::MAX, where it already moves any texel the whole range.
    let step = |per_s: u32| (u128::from(per_s) * u128::from(elapsed_us) / 1_000_000).min(u128::from(u32::MAX)) as u32;
    let p = &slot.desc.profile;
    let bins = bin_sources(&sources, slot.dims.width, slot.dims.height, p.tile_size);
    Ok(RecomputeInput {
        sources,
        bins,
        method: p.ray_method,
        target_height: target_height_units(&slot.desc)?,
        df_scale: p.df_scale,
        soft_shadow_k_q8: if p.soft_shadows { slot.q.soft_shadow_k_q8 } else { 0 },
        df_jitter: slot.q.df_jitter,
        blur: BlurKernel::gaussian(p.blur_radius, p.blur_sigma, p.blur_iterations),
        forget_step: step(slot.q.forget_per_s),
        freeze_memory: p.freeze_memory,
        fade_in_step: step(slot.q.fade_in_per_s),
        relax_step: step(slot.q.relax_per_s),
        explored_value: slot.q.explored_value,
        show_memory_alpha: slot.q.show_memory_alpha,
        reveal_walls: p.reveal_walls,
        reuse_visibility: false,
    })
}

/// Which configured rates (fade-in, relax, forget unless memory is frozen)
/// got a step of 0 from the elapsed time: `(any, all)`. `all` is false when
/// no rate is configured.
fn starved_rates(q: &ProfileQ, input: &RecomputeInput) -> (bool, bool) {
    let rates = [
        (q.fade_in_per_s, input.fade_in_step),
        (q.relax_per_s, input.relax_step),
        (if input.freeze_memory { 0 } else { q.forget_per_s }, input.forget_step),
    ];
    let active: Vec<bool> = rates.iter().filter(|(per_s, _)| *per_s > 0).map(|(_, step)| *step == 0).collect();
    (active.iter().any(|s| *s), !active.is_empty() && active.iter().all(|s| *s))
}

/// Uses the "changed" flags that are due at tick `now`: a recompute that
/// changed nothing, under the inputs the instance still has, proves a fixed
/// point, and the instance is settled until an input changes. "Nothing
/// changed" proves it only when every configured rate could move a texel:
/// after a pause (dt = 0) or a tick too short for a rate to take one mask
/// unit, an unfinished fade also changes nothing.
fn resolve_flags(backend: &mut dyn Backend, slot: &mut Slot, now: u64) -> Result<()> {
    while slot.flags.front().is_some_and(|f| f.due <= now) {
        let flag = slot.flags.pop_front().expect("checked above");
        let changed = match flag.changed {
            Readback::Ready(c) => c,
            Readback::Ticket(t) => backend
                .poll_changed(t, true)?
                .ok_or_else(|| MurkError::Backend { backend: backend.name(), message: "a waited-for changed flag did not land".into() })?,
        };
        if flag.epoch == slot.epoch && !changed && !flag.starved {
            slot.settled = true;
        }
    }
    Ok(())
}

/// Applies a gathered tick to one instance.
fn apply(
    backend: &mut dyn Backend,
    slot: &mut Slot,
    g: Gathered,
    dt: u64,
    now: u64,
    built: &mut BTreeMap<u64, InstanceKey>,
    share: bool,
) -> Result<InstanceTick> {
    let mut outcome = InstanceTick::default();
    if let Some((signature, texels)) = g.capture {
        if let Some(texels) = texels {
            slot.stats.recaptures = slot.stats.recaptures.saturating_add(1);
            slot.capture = Some(texels);
            slot.occlusion_dirty = true;
        }
        slot.capture_signature = signature;
        slot.capture_dirty = false;
    } else if slot.capture.take().is_some() {
        slot.occlusion_dirty = true;
    }
    if slot.blocker_hash != Some(g.blocker_hash) {
        slot.occlusion_dirty = true;
    }
    let needs = (g.occlusion.build_mips, g.occlusion.distance_field_scale);
    if slot.built_for != Some(needs) {
        slot.occlusion_dirty = true;
    }
    if slot.occlusion_dirty {
        let mut input = g.occlusion;
        // Lend the capture to the build rather than copying it.
        input.capture = slot.capture.take();
        // Only instances of one tick can share a build; with one instance, skip hashing.
        let content = if share { input.content_hash() } else { 0 };
        let shared_from = if share { built.get(&content).copied() } else { None };
        let result = match shared_from {
            Some(from) => {
                backend.copy_occlusion(from, slot.key).map(|()| slot.stats.occlusion_shared = slot.stats.occlusion_shared.saturating_add(1))
            }
            None => backend.build_occlusion(slot.key, &input).map(|()| {
                if share {
                    built.insert(content, slot.key);
                }
                slot.stats.occlusion_builds = slot.stats.occlusion_builds.saturating_add(1);
            }),
        };
        slot.capture = input.capture.take();
        result?;
        slot.blocker_hash = Some(g.blocker_hash);
        slot.built_for = Some(needs);
        slot.occlusion_dirty = false;
        outcome.occlusion_built = true;
    }
    resolve_flags(backend, slot, now)?;
    let same_inputs =
        !outcome.occlusion_built && slot.source_hash == Some(g.source_hash) && slot.recomputed_profile == Some(slot.q) && slot.has_recomputed;
    if same_inputs && slot.settled {
        slot.stats.skipped_recomputes = slot.stats.skipped_recomputes.saturating_add(1);
        slot.rate_since_us = 0;
        return Ok(outcome);
    }
    if !same_inputs {
        slot.unsettle();
    }
    let elapsed = if slot.has_recomputed { slot.rate_since_us } else { dt };
    let mut input = recompute_input(slot, g.sources, elapsed)?;
    if outcome.occlusion_built {
        slot.last_input = None;
    }
    input.reuse_visibility = slot.last_input.as_ref().is_some_and(|last| last.same_visibility_inputs(&input));
    let report = backend.recompute(slot.key, &input);
    // A failed recompute may have left the textures half written.
    slot.last_input = None;
    let report = report?;
    let (starved, all_starved) = starved_rates(&slot.q, &input);
    slot.flags.push_back(PendingFlag { due: now.saturating_add(READBACK_LATENCY_TICKS), changed: report.changed, starved, epoch: slot.epoch });
    outcome.visibility_reused = input.reuse_visibility;
    slot.last_input = Some(input);
    slot.source_hash = Some(g.source_hash);
    slot.recomputed_profile = Some(slot.q);
    slot.has_recomputed = true;
    // When no rate could step, the elapsed time is still owed to them: keep
    // it for the next recompute instead of dropping it.
    if !all_starved {
        slot.rate_since_us = 0;
    }
    slot.blend_since_us = 0;
    slot.stats.recomputes = slot.stats.recomputes.saturating_add(1);
    outcome.recomputed = true;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipped_polygons_stay_on_the_grid_whatever_the_rounding() {
        // Found by the API fuzz target: clipping these corners to 16 x 488
        // texels rounded one vertex to x = -1.9e17, which the rasterizer's
        // bounding box arithmetic could not hold.
        let corners = [
            (963.359148033707, 899.9674911036683),
            (1.2749275191354807e31, -5.850116401778902e30),
            (520.1740535044701, 1078.3677369657385),
            (-1.6469866951122186e34, -3.589310923265844e34),
            (4.123468260409916e35, 8.986356546019871e35),
        ];
        let mut polygons = Vec::new();
        push_polygon(&mut polygons, &corners, 0, 16, 488);
        assert_eq!(polygons.len(), 1);
        // Within the grid widened by its margin: (5792 - 488) / 2 texels.
        let m = ((POLYGON_SPAN_TEXELS - 488) / 2) as i32 * TEXEL_ONE;
        for v in &polygons[0].0 {
            assert!((-m..=16 * TEXEL_ONE + m).contains(&v[0]) && (-m..=488 * TEXEL_ONE + m).contains(&v[1]), "{v:?}");
        }
    }
}
