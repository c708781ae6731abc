//! Reading textures: the final mask that materials sample, or any stage
//! of the pipeline by its name, into the caller's buffer.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::guard::call;
use crate::handle::{FogHandle, Staged, StagedKey};
use crate::image::{MurkImageInfo, MURK_TEXEL_I32, MURK_TEXEL_U16, MURK_TEXEL_U32, MURK_TEXEL_U8};
use crate::status::FfiError;
use crate::{raw, registry};
use murk_core::{pass_outputs, TextureData, TextureRow};
use std::ffi::{c_char, c_void};

/// The texture named `name` (`final`, `memory`, ..., `mips` for the
/// pyramid), among those a pass writes.
fn texture_row(name: &str) -> Result<&'static TextureRow, FfiError> {
    pass_outputs().find(|row| row.name == name).ok_or_else(|| {
        let names: Vec<&str> = pass_outputs().map(|row| row.name).collect();
        FfiError::invalid("stage", name, format!("must be one of {}", names.join(", ")))
    })
}

/// Reads stage `stage` (UTF-8, `stage_len` bytes: `final` for the mask
/// materials sample, or `coverage`, `height`, `mips`, `distance_field`,
/// `visibility`, `blur`, `memory`, `mapped`, `compose`, `upscale`) of
/// instance `instance` into `buf` of `capacity` bytes: row-major texels in
/// the machine's byte order. `out_len` receives the bytes it needs and
/// `out_info` (may be null) its size and texel type. A null `buf` with
/// capacity 0 asks for both only; the image read for that question is
/// kept, and the next call on the fog handle, if it reads the same stage,
/// copies it (any other call in between drops it). On the GPU backend
/// reading waits for the device.
#[no_mangle]
pub extern "C" fn murk_read_stage(
    fog: u64,
    instance: *const c_char,
    instance_len: usize,
    stage_name: *const c_char,
    stage_len: usize,
    buf: *mut c_void,
    capacity: usize,
    out_len: *mut usize,
    out_info: *mut MurkImageInfo,
) -> i32 {
    call(|| {
        let instance = raw::text(instance, instance_len, "instance")?;
        let name = raw::text(stage_name, stage_len, "stage")?;
        let row = texture_row(name)?;
        let key = StagedKey::Stage(instance.to_string(), name.to_string());
        registry::with_fog_staged(fog, |h, previous| {
            let make = |h: &mut FogHandle| {
                let img = h.fog.read_row(instance, row)?;
                let (texel_type, texel_bytes, bytes): (u32, u32, Vec<u8>) = match img.data {
                    TextureData::U8(v) => (MURK_TEXEL_U8, 1, v),
                    TextureData::U16(v) => (MURK_TEXEL_U16, 2, v.iter().flat_map(|t| t.to_ne_bytes()).collect()),
                    TextureData::I32(v) => (MURK_TEXEL_I32, 4, v.iter().flat_map(|t| t.to_ne_bytes()).collect()),
                    TextureData::U32(v) => (MURK_TEXEL_U32, 4, v.iter().flat_map(|t| t.to_ne_bytes()).collect()),
                };
                let image = MurkImageInfo { width: img.width, height: img.height, texel_type, texel_bytes };
                Ok(Staged { key: key.clone(), bytes, image: Some(image) })
            };
            h.deliver(previous, key.clone(), make, buf.cast::<u8>(), capacity, out_len, out_info)
        })
    })
}
