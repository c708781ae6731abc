//! What a fog handle owns: the `hecs` world its entities live in, the fog
//! subsystem over it, the report of its last tick, and an answer staged by
//! a size query.

use crate::image::MurkImageInfo;
use crate::raw::{self, Filled};
use crate::status::{FfiError, Result};
use murk_core::hecs::{Entity, World};
use murk_core::{FogSubsystem, TickReport};

/// The state behind one fog handle.
pub(crate) struct FogHandle {
    /// The world the caller's entities live in.
    pub(crate) world: World,
    /// The fog subsystem over it.
    pub(crate) fog: FogSubsystem,
    /// What the last `murk_tick` reported (events, sight changes).
    pub(crate) report: TickReport,
    /// An answer made for a size query, kept for the call that fetches
    /// it; any other call on the handle drops it (see
    /// `registry::with_fog_staged`), so the answer fetched is always of
    /// the state the query saw.
    pub(crate) staged: Option<Staged>,
}

/// Which answer is staged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StagedKey {
    /// `murk_snapshot_save`.
    Snapshot,
    /// `murk_memory_export` of an instance.
    Memory(String),
    /// `murk_read_stage` of an instance and stage.
    Stage(String, String),
}

/// An answer made once and fetched by a later call.
pub(crate) struct Staged {
    /// What it answers.
    pub(crate) key: StagedKey,
    /// Its bytes.
    pub(crate) bytes: Vec<u8>,
    /// For a stage: its size and texel type.
    pub(crate) image: Option<MurkImageInfo>,
}

impl FogHandle {
    /// A handle's state over a new, empty world.
    pub(crate) fn new(fog: FogSubsystem) -> Self {
        Self { world: World::new(), fog, report: TickReport::default(), staged: None }
    }

    /// The live entity an entity handle names.
    pub(crate) fn entity(&self, bits: u64) -> Result<Entity> {
        Entity::from_bits(bits).filter(|&e| self.world.contains(e)).ok_or(FfiError::StaleEntity(bits))
    }

    /// Delivers a staged answer into the caller's buffer: the one
    /// `previous` holds when it answers `key`, else a new one from `make`.
    /// Its image info goes to `out_info` when that is not null, before
    /// the bytes (so it is there when the buffer is too small). A size
    /// query or a buffer too small keeps the answer staged for the next
    /// call.
    #[expect(clippy::too_many_arguments, reason = "the C call's buffer triple and outputs, passed through")]
    pub(crate) fn deliver(
        &mut self,
        previous: Option<Staged>,
        key: StagedKey,
        make: impl FnOnce(&mut Self) -> Result<Staged>,
        out: *mut u8,
        capacity: usize,
        out_len: *mut usize,
        out_info: *mut MurkImageInfo,
    ) -> Result<()> {
        let staged = match previous {
            Some(s) if s.key == key => s,
            _ => make(self)?,
        };
        if !out_info.is_null() {
            raw::write(out_info, staged.image.unwrap_or_default(), "out_info")?;
        }
        let filled = raw::fill(out, capacity, &staged.bytes, out_len, "buf");
        if matches!(filled, Ok(Filled::Queried) | Err(FfiError::BufferTooSmall { .. })) {
            self.staged = Some(staged);
        }
        filled.map(drop)
    }
}
