//! Snapshots of the whole fog state (every instance's settings, timers and
//! textures, stealth states, sight sets), as bytes a save game or a
//! rejoining peer keeps.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::guard::call;
use crate::handle::{Staged, StagedKey};
use crate::{raw, registry};
use murk_core::TickReport;

/// Saves the fog state (murk's snapshot container: versioned,
/// LZ4-compressed, checksummed; the world's entities are the caller's to
/// save) into `buf` of `capacity` bytes; `out_len` receives its size. Ask
/// for the size first with a null `buf` and capacity 0: the snapshot made
/// for that question is kept, and the next call on the fog handle, if it
/// is this one, copies it (any other call in between drops it, so the
/// bytes are always of the state the question saw).
#[no_mangle]
pub extern "C" fn murk_snapshot_save(fog: u64, buf: *mut u8, capacity: usize, out_len: *mut usize) -> i32 {
    call(|| {
        registry::with_fog_staged(fog, |h, previous| {
            let make = |h: &mut crate::handle::FogHandle| {
                let bytes = h.fog.snapshot(&h.world)?;
                Ok(Staged { key: StagedKey::Snapshot, bytes, image: None })
            };
            h.deliver(previous, StagedKey::Snapshot, make, buf, capacity, out_len, std::ptr::null_mut())
        })
    })
}

/// Restores a snapshot of `len` bytes made by `murk_snapshot_save` (of
/// this fog handle or another): the fog state is replaced whole, the
/// snapshot's instances replacing the handle's; the world's entities are
/// left as they are (stealth states and transient reveals are matched by
/// entity handle, so a game restores its entities first, in the order it
/// spawned them). A damaged snapshot, one of another format version, or
/// one whose fields disagree is an error naming what is wrong, and changes
/// nothing. The events of the last tick are forgotten (the sight sets are
/// the snapshot's).
#[no_mangle]
pub extern "C" fn murk_snapshot_load(fog: u64, bytes: *const u8, len: usize) -> i32 {
    call(|| {
        let bytes = raw::slice(bytes, len, "bytes")?;
        registry::with_fog(fog, |h| {
            h.fog.restore(&mut h.world, bytes)?;
            // The last tick's events were of the state replaced.
            h.report = TickReport::default();
            Ok(())
        })
    })
}
