//! Explored memory as save data: what one player (instance) has explored
//! and has mapped, exported as a blob and imported into an instance, as
//! its own memory or as an ally's map.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::guard::call;
use crate::handle::{Staged, StagedKey};
use crate::{raw, registry};
use std::ffi::c_char;

/// Exports instance `instance`'s explored memory and mapped state (murk's
/// memory blob, naming the instance and its area) into `buf` of
/// `capacity` bytes; `out_len` receives its size. Size questions as for
/// `murk_snapshot_save`.
#[no_mangle]
pub extern "C" fn murk_memory_export(
    fog: u64,
    instance: *const c_char,
    instance_len: usize,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
) -> i32 {
    call(|| {
        let name = raw::text(instance, instance_len, "instance")?;
        let key = StagedKey::Memory(name.to_string());
        registry::with_fog_staged(fog, |h, previous| {
            let make = |h: &mut crate::handle::FogHandle| Ok(Staged { key: key.clone(), bytes: h.fog.export_memory(name)?, image: None });
            h.deliver(previous, key.clone(), make, buf, capacity, out_len, std::ptr::null_mut())
        })
    })
}

/// Imports a memory blob of `len` bytes from `murk_memory_export` into
/// instance `instance`, resampled into its current area: with `as_map` 0
/// it replaces the explored memory and mapped state (the blob must come
/// from an instance of the same name: a player's own save data); with
/// `as_map` 1 what the blob knew is added to the mapped state (an ally's
/// map). A damaged blob, or one that covers none of the instance's area,
/// is an error, and changes nothing.
#[no_mangle]
pub extern "C" fn murk_memory_import(fog: u64, instance: *const c_char, instance_len: usize, bytes: *const u8, len: usize, as_map: u32) -> i32 {
    call(|| {
        let name = raw::text(instance, instance_len, "instance")?;
        let blob = raw::slice(bytes, len, "bytes")?;
        registry::with_fog(fog, |h| {
            let imported = if as_map != 0 { h.fog.import_memory_as_map(name, blob) } else { h.fog.import_memory(name, blob) };
            Ok(imported?)
        })
    })
}
