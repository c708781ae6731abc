//! One fog instance as the subsystem holds it ([`Slot`]): its description,
//! what follows from it, its state ([`InstanceState`], what the recompute
//! rules decide from, saved in snapshots as it is) and its caches
//! ([`Caches`], never saved).
//!
//! ```text
//! Slot ── key, desc ── q, transform, dims  (made from desc when checked)
//!   ├── state    InstanceState  saved: hashes, dirty flags, capture, cadence
//!   │                           timers, counters, input epoch, the flags in
//!   │                           flight, the reveals and their signature
//!   ├── caches   Caches         not saved: a restored instance rebuilds
//!   │                           them, to the same bytes
//!   └── capture_marks, reveal_stale  not saved: a snapshot marks the capture
//!                                    dirty; a restore hands the layer over
//! ```

use super::blockers::BlockerMemo;
use super::desc::{Checked, InstanceDesc};
use super::occlusion::BuiltShapes;
use super::reveal::{reveal_layer, reveal_signature, ActiveReveal, RevealKind};
use super::sources::SourceMemo;
use crate::backend::{InstanceDims, InstanceKey, Readback, TexelRect};
use crate::error::Result;
use crate::frame::{RecomputeInput, RevealLayer};
use crate::profile::ProfileQ;
use crate::texture::OcclusionBuild;
use crate::transform::AreaTransform;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::{Arc, Weak};

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

/// An instance's state besides its description and its textures: what
/// the rules decide from, saved in snapshots as it is (a snapshot lands
/// the flags in flight first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceState {
    /// Hash of the blockers of the last occlusion build.
    pub blocker_hash: Option<u64>,
    /// Signature of the capture inputs of the last recapture.
    pub capture_signature: Option<u64>,
    /// The captured heights, one per internal texel (in a snapshot, their
    /// little-endian bytes).
    #[serde(with = "crate::serde_adapters::heights_as_bytes")]
    pub capture: Option<Vec<i32>>,
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
    /// "Changed" flags of recent recomputes, oldest first, each used
    /// [`crate::frame::READBACK_LATENCY_TICKS`] after its recompute.
    pub flags: VecDeque<PendingFlag>,
    /// Scripted reveals, oldest first.
    pub reveals: Vec<ActiveReveal>,
    /// The signature of the reveals the last recompute was set up for
    /// (`None`: none).
    pub reveal_signature: Option<u64>,
}

impl InstanceState {
    /// A new instance's state: nothing built, captured or recomputed yet.
    pub(crate) fn fresh() -> Self {
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
            flags: VecDeque::new(),
            reveals: Vec::new(),
            reveal_signature: None,
        }
    }
}

/// A recompute's "changed" flag on its way back from the backend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingFlag {
    /// The first tick whose recompute rules use it.
    pub due: u64,
    /// Memory or composed changed in that recompute (in a snapshot, landed).
    #[serde(with = "crate::serde_adapters::landed")]
    pub changed: Readback<bool>,
    /// A configured rate could not step in that recompute.
    pub starved: bool,
    /// The input epoch the recompute ran under.
    pub epoch: u64,
}

/// What an instance keeps between ticks to do less work, and never saves:
/// each is a function of what it was made from, so an instance without
/// them (a restored one) does the work once and gets the same bytes.
#[derive(Default)]
pub(crate) struct Caches {
    /// The inputs of the last recompute, while the occlusion it read is
    /// still the one built: a recompute with the same visibility inputs
    /// keeps visibility and blur.
    pub(crate) last_input: Option<RecomputeInput>,
    /// The blockers the backend's occlusion was last built from (`None`:
    /// not known, the next change rebuilds it whole). Kept in save states
    /// (shared), so that a blocker changed after a load updates the loaded
    /// occlusion where it changed.
    pub(crate) built_shapes: Option<Arc<BuiltShapes>>,
    /// The blockers' projections of the last tick, so a tick projects only
    /// the blockers that changed.
    pub(crate) blocker_memo: BlockerMemo,
    /// The vision sources' projections of the last tick, by entity, so a
    /// tick projects only the sources that changed.
    pub(crate) source_memo: SourceMemo,
    /// The capture as a save state holds it, while no tick changed the
    /// capture since (a save shares it; weak: the states are the caller's).
    pub(crate) saved_capture: Option<Weak<Vec<i32>>>,
    /// The explored count asked for without waiting and not landed yet
    /// ([`crate::FogSubsystem::poll_explored`]): its ticket.
    pub(crate) explored_asked: Option<u64>,
}

/// One instance of the subsystem.
pub(crate) struct Slot {
    /// The backend's key.
    pub(crate) key: InstanceKey,
    pub(crate) desc: InstanceDesc,
    /// The profile in integers.
    pub(crate) q: ProfileQ,
    /// The world-to-texel mapping at the internal resolution.
    pub(crate) transform: AreaTransform,
    pub(crate) dims: InstanceDims,
    /// What the rules decide from (saved).
    pub(crate) state: InstanceState,
    /// What spares work (not saved).
    pub(crate) caches: Caches,
    /// Rectangles of the capture a game marked dirty since the last
    /// recapture (`FogSubsystem::mark_capture_dirty_in`). Not saved: a
    /// snapshot marks the capture dirty instead.
    pub(crate) capture_marks: Vec<TexelRect>,
    /// The backend does not hold the reveal layer of
    /// `state.reveal_signature` (a restore, a new grid): it is handed over
    /// again on the next tick. Not saved: a restore sets it.
    pub(crate) reveal_stale: bool,
}

impl Slot {
    /// A new instance of a checked description under `key`: nothing built,
    /// captured or recomputed yet.
    pub(crate) fn new(key: InstanceKey, desc: InstanceDesc, checked: Checked) -> Self {
        let Checked { q, transform, dims } = checked;
        Self {
            key,
            desc,
            q,
            transform,
            dims,
            state: InstanceState::fresh(),
            caches: Caches::default(),
            capture_marks: Vec::new(),
            reveal_stale: false,
        }
    }

    /// Something the recompute reads changed: the instance is not settled,
    /// and the flags of earlier recomputes no longer speak for it.
    pub(crate) fn unsettle(&mut self) {
        self.state.settled = false;
        self.state.epoch = self.state.epoch.wrapping_add(1);
    }

    /// The layer this tick needs uploaded, when it differs from the one the
    /// backend holds: `Some(None)` clears it.
    pub(crate) fn reveal_update(&self) -> Result<Option<(Option<u64>, Option<RevealLayer>)>> {
        let signature = reveal_signature(&self.state.reveals);
        if self.state.reveal_signature == signature && !self.reveal_stale {
            return Ok(None);
        }
        Ok(Some((signature, reveal_layer(&self.state.reveals, &self.transform)?)))
    }

    /// After the tick: reveals age; sight reveals past their ticks and map
    /// reveals taken in end.
    pub(crate) fn age_reveals(&mut self) {
        for r in &mut self.state.reveals {
            r.age = r.age.saturating_add(1);
        }
        self.state.reveals.retain(|r| match r.reveal.kind {
            RevealKind::Sight { .. } => r.reveal.ticks.is_none_or(|n| r.age < n),
            RevealKind::Map => !r.applied,
        });
    }
}
