//! The lockstep hashes of every tick on their way back from the backend:
//! what a tick hashes (`HASHED`, per instance), what it delivers
//! [`READBACK_LATENCY_TICKS`](crate::frame::READBACK_LATENCY_TICKS) ticks later ([`LandedHash`]), and how the
//! hashes in flight are saved and checked when restored (the subsystem's
//! calls are in `state_hash.rs`).

use crate::backend::Readback;
use crate::error::{MurkError, Result};
use crate::texture::Texture;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};

/// The textures of an instance's state hash, in order.
pub(crate) const HASHED: [Texture; 4] = [Texture::Final, Texture::Memory, Texture::Mapped, Texture::Compose];

/// The lockstep hash of the state after a tick, delivered by a later tick's report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LandedHash {
    /// `FogSubsystem::tick_count` of the state it hashes.
    pub ticks: u64,
    /// The hash, equal to what `FogSubsystem::lockstep_hash` returned then.
    pub hash: u64,
}

/// A per-tick hash taken and not yet delivered: its instance values may
/// still be in flight (in a snapshot, landed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingHash {
    /// Tick count of the hashed state.
    pub ticks: u64,
    /// The tick (by the count before it) whose report delivers it.
    pub due: u64,
    /// Each instance's texture hashes, by name.
    pub parts: Vec<HashPart>,
    /// The hash of the stealth states then.
    pub stealth: u64,
}

/// One instance's part of a [`PendingHash`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HashPart {
    /// The instance.
    pub instance: String,
    /// Its final, memory, mapped and composed hashes (`HASHED`), in order.
    #[serde(with = "crate::serde_adapters::landed")]
    pub hashes: Readback<Vec<u64>>,
}

/// The per-tick hashes in flight, oldest first.
pub(crate) type PendingHashes = VecDeque<PendingHash>;

/// Checks the per-tick hashes of a restored snapshot: one texture hash per
/// `HASHED` texture for each instance, each named by the snapshot (a hash
/// still in flight only when the backend holds its ticket, in `held`).
pub(crate) fn check_restored_hashes(hashes: &[PendingHash], names: &BTreeSet<String>, held: &BTreeSet<u64>) -> Result<()> {
    for (i, h) in hashes.iter().enumerate() {
        for part in &h.parts {
            let name = &part.instance;
            if !names.contains(name) {
                return Err(MurkError::invalid(format!("snapshot.lockstep[{i}].instances"), name, "names no instance of the snapshot"));
            }
            let count = match &part.hashes {
                Readback::Ready(values) => values.len(),
                // Held for a rollback state: the backend's own.
                Readback::Ticket(t) if held.contains(t) => HASHED.len(),
                Readback::Ticket(_) => 0,
            };
            if count != HASHED.len() {
                return Err(MurkError::invalid(
                    format!("snapshot.lockstep[{i}].instances.{name}"),
                    count,
                    format!("must hold {} texture hashes", HASHED.len()),
                ));
            }
        }
    }
    Ok(())
}
