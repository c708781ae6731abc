//! The fog subsystem of one world ([`FogSubsystem`]): what it holds, and
//! its instances: creating and destroying them, reading their settings,
//! applying profiles at run time and marking what must be redone. Ticking
//! is in `tick.rs`; the other calls are grouped by what they serve (queries,
//! stealth actors, reveals, hashes, snapshots, ...), each file above this one.

use super::desc::InstanceDesc;
use super::instance::{InstanceStats, Slot};
use super::lockstep::PendingHashes;
use super::naming::in_instance;
use super::payload::PayloadKind;
use super::sight::{FootprintMemo, SightBatch};
use super::sources::{project_source, Projecting};
use super::timers::SightTimers;
use crate::backend::{Backend, InstanceDims, InstanceKey, Readback, ReadbackHold, TexelRect};
use crate::components::{Position, TeamMask, VisionSource};
use crate::error::{MurkError, Result};
use crate::profile::Profile;
use crate::query::PendingQuery;
use crate::stealth::{StealthBatch, StealthState};
use crate::texture::{Texture, TiledImage};
use crate::transform::AreaTransform;
use crate::zlayer::Slab;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Weak;

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
    pub(crate) payloads: Vec<PayloadKind>,
    /// Stealth samples in flight, oldest first (one batch per tick with actors).
    pub(crate) stealth_batches: VecDeque<StealthBatch>,
    pub(crate) queries: BTreeMap<u64, PendingQuery>,
    pub(crate) next_query: u64,
    /// Whether every tick hashes its state (see `FogSubsystem::set_hash_every_tick`).
    pub(crate) hash_every_tick: bool,
    /// The per-tick hashes in flight, oldest first.
    pub(crate) pending_hashes: PendingHashes,
    /// The id the next reveal gets.
    pub(crate) next_reveal: u64,
    /// Each observer's tracked entities in sight (entity bits, ascending),
    /// observers with none left out.
    pub(crate) sight: BTreeMap<String, Vec<u64>>,
    /// The entities tracked at the last tick (bits, ascending).
    pub(crate) tracked: Vec<u64>,
    /// Footprint samples in flight, oldest first.
    pub(crate) sight_batches: VecDeque<SightBatch>,
    /// The last tick's footprints (a cache for entities that stand still).
    pub(crate) footprint_memo: FootprintMemo,
    /// Time in the sight steps (measured with the `timers` feature only).
    pub(crate) sight_timers: SightTimers,
    /// The texture last saved or loaded in place by a save state, by
    /// instance and texture: the next save shares its tiles whose version
    /// the backend still holds, while a state still holds it (weak: the
    /// states are the caller's).
    pub(crate) saved_images: BTreeMap<(InstanceKey, Texture), Weak<TiledImage>>,
    /// The backend's holds on the values the state last loaded had in
    /// flight and that have not landed here yet: its tickets are polled
    /// after the load, whether or not a state still holds them.
    pub(crate) holds: Vec<(u64, ReadbackHold)>,
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
            pending_hashes: PendingHashes::new(),
            next_reveal: 0,
            sight: BTreeMap::new(),
            tracked: Vec::new(),
            sight_batches: VecDeque::new(),
            footprint_memo: FootprintMemo::default(),
            sight_timers: SightTimers::default(),
            saved_images: BTreeMap::new(),
            holds: Vec::new(),
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
        let checked = desc.checked(&prefix)?;
        let key = self.next_key;
        let next_key =
            key.checked_add(1).ok_or_else(|| MurkError::invalid("instance keys", key, "are used up: every key up to u32::MAX was given out"))?;
        self.backend.create_instance(key, checked.dims)?;
        self.next_key = next_key;
        let slot = Slot::new(key, desc, checked);
        self.instances.insert(slot.desc.name.clone(), slot);
        Ok(())
    }

    /// Checks an instance description as [`FogSubsystem::create_instance`]
    /// would (area, resolution, profile, the texel and slab sizes, the target
    /// height against the slab), with errors naming fields under `prefix`.
    pub fn check_desc(desc: &InstanceDesc, prefix: &str) -> Result<()> {
        desc.checked(prefix).map(|_| ())
    }

    /// Destroys an instance and frees its textures.
    pub fn destroy_instance(&mut self, name: &str) -> Result<()> {
        let slot = self.instances.remove(name).ok_or_else(|| MurkError::UnknownInstance(name.to_string()))?;
        self.forget_flags(&slot);
        self.backend.destroy_instance(slot.key);
        Ok(())
    }

    /// Tells the backend that the flags (and the explored count) still in
    /// flight for a slot going away will never be asked for.
    pub(crate) fn forget_flags(&mut self, slot: &Slot) {
        for flag in &slot.state.flags {
            if let Readback::Ticket(t) = flag.changed {
                self.backend.forget_readback(t);
            }
        }
        if let Some(t) = slot.caches.explored_asked {
            self.backend.forget_readback(t);
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
        let checked = desc.checked(&format!("instance `{name}`"))?;
        let slot = self.slot_mut(name)?;
        slot.q = checked.q;
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
            let into = Projecting { t: &slot.transform, profile: &slot.desc.profile, slab: &slab, teams, terrain: None };
            project_source(label, &pos, &source, into).map_err(|e| in_instance(e, name))?;
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
}
