//! Stealth actors: state, events and the per-tick update rule.
//!
//! Each tick, after the masks are updated, every [`StealthActor`] samples the
//! final mask where it stands (the instance overlapping it in X/Y, closest in
//! Z, or the one it names); [`crate::READBACK_LATENCY_TICKS`] ticks later
//! the subsystem compares that sample with the cutoff: `value >= cutoff` is
//! visible. Keep the cutoff above the explored value: remembered areas then
//! never count as visible. This module holds the state, the events and the
//! fade rule; the subsystem's sampling and update of its actors is in
//! `subsystem/actors.rs`.
//!
//! ```text
//!            value >= cutoff                 FreezeWithGhost
//!   hidden ───────────────────> visible ─────────────────────> hidden + ghost
//!      ^   Revealed (+GhostRemoved)  │   Hidden, GhostSpawned at the
//!      └─────────────────────────────┘   last position seen
//! ```
//!
//! Events come out in actor order (entity id), and per actor in the order
//! GhostRemoved, Revealed, Hidden, GhostSpawned.

use crate::backend::Readback;
use crate::components::{HideMode, StealthActor, VisibilityPolicy};
use crate::error::{finite, MurkError, Result};
use crate::fixed::Fnv64;
use hecs::Entity;
use serde::{Deserialize, Serialize};

/// Runtime state of one stealth actor (saved in snapshots as it is).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StealthState {
    /// Result of the last check.
    pub last_visible: bool,
    /// Mask value at the actor's position at the last check.
    pub last_value: u16,
    /// Where the actor was when last seen (world, bit patterns of `f32`).
    pub last_known: Option<[u32; 3]>,
    /// Fade toward visible (65535) or hidden (0).
    pub fade: u16,
    /// The ghost standing in for it, if any (in a snapshot, its bits).
    #[serde(with = "crate::serde_adapters::entity_or_none")]
    pub ghost: Option<Entity>,
    /// The instance that answered the last check.
    pub instance: Option<String>,
    /// The registered payload components as they were when the actor was
    /// last seen (name, postcard bytes), which its ghost carries.
    pub payload: Vec<(String, Vec<u8>)>,
}

impl StealthState {
    /// The last known position as a vector.
    pub fn last_known_position(&self) -> Option<glam::Vec3> {
        self.last_known.map(|[x, y, z]| glam::Vec3::new(f32::from_bits(x), f32::from_bits(y), f32::from_bits(z)))
    }

    /// Feeds the state into the lockstep hash.
    pub fn hash_into(&self, actor: Entity, h: &mut Fnv64) {
        h.write(&actor.to_bits().get().to_le_bytes());
        h.write(&[u8::from(self.last_visible)]);
        h.write(&self.last_value.to_le_bytes());
        h.write(&self.fade.to_le_bytes());
        match self.last_known {
            Some(p) => {
                h.write(&[1]);
                for v in p {
                    h.write(&v.to_le_bytes());
                }
            }
            None => h.write(&[0]),
        }
        // Whether there is a ghost, not its id: ids are local handles.
        h.write(&[u8::from(self.ghost.is_some())]);
        h.write(&(self.payload.len() as u64).to_le_bytes());
        for (name, bytes) in &self.payload {
            for part in [name.as_bytes(), bytes] {
                h.write(&(part.len() as u64).to_le_bytes());
                h.write(part);
            }
        }
    }
}

/// A stealth transition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum StealthEvent {
    /// The actor became visible.
    Revealed {
        /// The actor.
        #[serde(serialize_with = "crate::serde_adapters::entity_bits")]
        actor: Entity,
    },
    /// The actor became hidden.
    Hidden {
        /// The actor.
        #[serde(serialize_with = "crate::serde_adapters::entity_bits")]
        actor: Entity,
    },
    /// A ghost was spawned at the last position the actor was seen at.
    GhostSpawned {
        /// The actor.
        #[serde(serialize_with = "crate::serde_adapters::entity_bits")]
        actor: Entity,
        /// The ghost entity.
        #[serde(serialize_with = "crate::serde_adapters::entity_bits")]
        ghost: Entity,
    },
    /// The ghost was removed (the actor was seen again or is gone).
    GhostRemoved {
        /// The actor.
        #[serde(serialize_with = "crate::serde_adapters::entity_bits")]
        actor: Entity,
        /// The ghost entity.
        #[serde(serialize_with = "crate::serde_adapters::entity_bits")]
        ghost: Entity,
    },
}

impl StealthEvent {
    /// The actor the event is about.
    pub fn actor(&self) -> Entity {
        match self {
            StealthEvent::Revealed { actor } | StealthEvent::Hidden { actor } => *actor,
            StealthEvent::GhostSpawned { actor, .. } | StealthEvent::GhostRemoved { actor, .. } => *actor,
        }
    }
}

/// A stealth actor's settings, checked and in integers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StealthQ {
    /// Hide mode.
    pub hide_mode: HideMode,
    /// Policy.
    pub policy: VisibilityPolicy,
    /// Cutoff override, mask scale.
    pub cutoff: Option<u16>,
    /// Fade duration in microseconds.
    pub fade_us: u64,
    /// Named instance.
    pub instance: Option<String>,
    /// A state per observer.
    pub per_observer: bool,
    /// Shown only while detected.
    pub cloaked: bool,
}

/// Validates an actor's settings; `label` names it in errors.
pub fn quantize(label: &(impl std::fmt::Display + ?Sized), a: &StealthActor) -> Result<StealthQ> {
    let cutoff = finite(|| format!("{label}.stealth.cutoff_override"), a.cutoff_override)?;
    if cutoff > 1.0 {
        return Err(MurkError::invalid(
            format!("{label}.stealth.cutoff_override"),
            a.cutoff_override,
            "must be at most 1 (negative: use the instance's)",
        ));
    }
    let fade = finite(|| format!("{label}.stealth.fade_seconds"), a.fade_seconds)?;
    if !(0.0..=3600.0).contains(&fade) {
        return Err(MurkError::invalid(format!("{label}.stealth.fade_seconds"), a.fade_seconds, "must be within 0..=3600"));
    }
    if a.per_observer && a.instance.is_some() {
        return Err(MurkError::invalid(
            format!("{label}.stealth.instance"),
            a.instance.as_deref().unwrap_or_default(),
            "cannot be set with per_observer (every instance observes the actor)",
        ));
    }
    Ok(StealthQ {
        per_observer: a.per_observer,
        cloaked: a.cloaked,
        hide_mode: a.hide_mode,
        policy: a.policy,
        cutoff: (cutoff >= 0.0).then(|| crate::fixed::unit_to_mask(cutoff)),
        fade_us: (fade * 1.0e6).round() as u64,
        instance: a.instance.clone(),
    })
}

/// Moves `fade` one tick toward its target.
pub fn step_fade(fade: u16, visible: bool, fade_us: u64, dt_us: u64) -> u16 {
    let target = if visible { u16::MAX } else { 0 };
    if fade_us == 0 {
        return target;
    }
    let step = (u64::from(u16::MAX) * dt_us / fade_us).clamp(1, u64::from(u16::MAX)) as u16;
    if visible {
        fade.saturating_add(step)
    } else {
        fade.saturating_sub(step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fades_take_their_seconds() {
        // 0.5 s fade at 0.1 s ticks: five steps of 13107.
        let mut f = 0;
        for k in 1..=5u16 {
            f = step_fade(f, true, 500_000, 100_000);
            assert_eq!(f, 13107 * k);
        }
        assert_eq!(step_fade(f, true, 500_000, 100_000), 65535);
        assert_eq!(step_fade(65535, false, 0, 100_000), 0);
    }

    #[test]
    fn bad_settings_name_the_field() {
        let a = StealthActor { cutoff_override: 2.0, ..StealthActor::default() };
        assert!(quantize("actor", &a).unwrap_err().to_string().contains("actor.stealth.cutoff_override = 2"));
        let a = StealthActor { fade_seconds: f32::NAN, ..StealthActor::default() };
        assert!(quantize("actor", &a).unwrap_err().to_string().contains("fade_seconds = NaN"));
    }
}

/// The stealth samples of one tick on their way back from the backend
/// (kept in snapshots, landed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StealthBatch {
    /// The tick whose stealth update uses them.
    pub due: u64,
    /// One per actor, in actor order.
    pub samples: Vec<StealthSample>,
    /// The sampled final-mask values, in the order of the requests.
    #[serde(with = "crate::serde_adapters::landed")]
    pub values: Readback<Vec<u16>>,
    /// The lights of the detectors' sight lines to cloaked actors, one
    /// batch per instance that traced any.
    pub detections: Vec<DetectionLines>,
}

/// One instance's sight lines from detectors to cloaked actors, on their
/// way back from the backend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetectionLines {
    /// The light of each line.
    #[serde(with = "crate::serde_adapters::landed")]
    pub lights: Readback<Vec<u16>>,
}

/// Whether a cloaked actor's sample is detected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detect {
    /// Decided when the sample was taken: a detector in range (or one in
    /// sight over an instance that sees through walls), or none.
    Decided(bool),
    /// Detected when a line of `lines[first..first + count]` of
    /// `StealthBatch::detections[batch]` lets at least `cutoff` through.
    Lines {
        /// Which batch of the detections.
        batch: usize,
        /// The first line.
        first: usize,
        /// How many lines (at least one).
        count: usize,
        /// The light a line needs.
        cutoff: u16,
    },
}

/// What one actor's stealth update needs, taken when its sample was asked
/// for (kept in snapshots while the sample is in flight).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StealthSample {
    /// The actor's entity bits.
    pub actor: u64,
    /// Where it stood (bit patterns of `f32`).
    pub position: [u32; 3],
    /// The instance answering for it and its value's index in the batch.
    pub located: Option<(String, usize)>,
    /// Visible at or above this value.
    pub cutoff: u16,
    /// Whether the fog decides its visibility.
    pub policy: VisibilityPolicy,
    /// What happens when it hides.
    pub hide_mode: HideMode,
    /// Its fade time in microseconds.
    pub fade_us: u64,
    /// The observer whose state it updates (`None`: the actor's one state).
    pub observer: Option<String>,
    /// The registered payload components now (name, postcard bytes).
    pub payload: Vec<(String, Vec<u8>)>,
    /// For a cloaked actor, whether a detector detects it (`None`: not
    /// cloaked).
    pub detect: Option<Detect>,
}
