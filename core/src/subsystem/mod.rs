//! The fog subsystem: one per game world ([`FogSubsystem`]). It creates and
//! destroys instances, applies profiles at run time, and ticks: it gathers
//! the world's sources, blockers and captures, applies the recompute rules
//! and the cadence, and drives the backend.
//!
//! One concept per file; a file imports only files on its row or below
//! (this one only declares them and re-exports):
//!
//! ```text
//! tick  actors  queries  scripted  area   the calls on FogSubsystem, each
//! memory  readout  state_hash  save       importing fog.rs
//! restore
//!    │
//! fog  rules  gather  body                the subsystem; one instance's tick;
//!    │                                    the snapshot body
//! sight  capture                          per-tick inputs over instances
//!    │
//! instance     Slot, InstanceState (saved), Caches (not saved)
//!    │
//! desc  reveal  blockers  sources         what an instance is made of, and
//! occlusion  lockstep  payload  timers    what the others share
//! naming  terrain
//! ```

mod actors;
mod area;
mod blockers;
mod body;
mod capture;
mod desc;
mod fog;
mod gather;
mod instance;
mod lockstep;
mod memory;
mod naming;
mod occlusion;
mod payload;
mod queries;
mod readout;
mod restore;
mod reveal;
mod rules;
mod save;
mod scripted;
mod sight;
mod sources;
mod state_hash;
mod terrain;
mod tick;
mod timers;

pub use area::resample_mask;
pub use body::{FogBody, InstanceBody, StealthBody, TextureBody};
pub use desc::{InstanceDesc, MIN_SLAB_HEIGHT, MIN_TEXEL_SIZE};
pub use fog::FogSubsystem;
pub use instance::{InstanceState, InstanceStats, PendingFlag};
pub use lockstep::{HashPart, LandedHash, PendingHash};
pub use memory::{MemoryBody, MEMORY_MAGIC};
pub use reveal::{ActiveReveal, FogTarget, Reveal, RevealArea, RevealId, RevealKind};
pub use rules::InstanceTick;
pub use save::SaveState;
pub use sight::{SightBatch, SightEvent, SightGroup, MAX_FOOTPRINT_TEXELS, MAX_OBSERVERS};
pub use tick::TickReport;
#[cfg(feature = "timers")]
pub use timers::SightTimes;
