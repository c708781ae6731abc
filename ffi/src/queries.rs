//! The gameplay questions beside the tick, as C calls: whether one point
//! sees another, how much of an instance is explored, and what a sensor
//! layer senses that sight does not (its blips).

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::guard::call;
use crate::{raw, registry};
use murk_core::glam::Vec3;
use murk_core::SightLine;
use std::ffi::c_char;

/// The answer to a sight line (`murk_core::SightAnswer`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MurkSightAnswer {
    /// The light the ray lets through, `0..=65535` (0 or 65535 for the
    /// binary ray methods).
    pub light: u16,
    /// 1 when `light` reaches the instance's visibility cutoff: a lone
    /// source at full strength at the looker would show the target.
    pub visible: u32,
}

/// Where a blip stands (`murk_core::Blip`): a position only.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MurkBlip {
    /// World position, moved by the layer's `blip_error`.
    pub position: [f32; 3],
}

/// Whether an eye `eye_height` above `from` (3 floats, world X, Y, Z) sees
/// the ground under `to` (3 floats) in instance `instance`, under the
/// rules of its visibility pass and over the occlusion its last tick
/// built, answered now into `out_answer`. An end outside the grid or not
/// finite, or an eye height that is not finite, is an error naming it
/// (`lines[0].to`, as a batch of one line names it). Like a Rust
/// `line_of_sight`, the call takes a query handle: the next snapshot's
/// handle counter moves.
#[no_mangle]
pub extern "C" fn murk_line_of_sight(
    fog: u64,
    instance: *const c_char,
    instance_len: usize,
    from: *const f32,
    to: *const f32,
    eye_height: f32,
    out_answer: *mut MurkSightAnswer,
) -> i32 {
    call(|| {
        let instance = raw::text(instance, instance_len, "instance")?;
        let point = |ptr, name| raw::slice(ptr, 3, name).map(Vec3::from_slice);
        let line = SightLine { from: point(from, "from")?, to: point(to, "to")?, eye_height };
        let answer = registry::with_fog(fog, |h| Ok(h.fog.line_of_sight(instance, line)?))?;
        raw::write(out_answer, MurkSightAnswer { light: answer.light, visible: u32::from(answer.visible) }, "out_answer")
    })
}

/// How many texels of instance `instance` are explored (its memory above
/// 0) into `out_texels`, and how many it has into `out_of`.
#[no_mangle]
pub extern "C" fn murk_explored(fog: u64, instance: *const c_char, instance_len: usize, out_texels: *mut u64, out_of: *mut u64) -> i32 {
    call(|| {
        let instance = raw::text(instance, instance_len, "instance")?;
        let explored = registry::with_fog(fog, |h| Ok(h.fog.explored(instance)?))?;
        raw::write(out_texels, explored.texels, "out_texels")?;
        raw::write(out_of, explored.of, "out_of")
    })
}

/// The blips of sensor-layer instance `instance` after the last tick (the
/// tracked entities it senses that no sight instance of its teams sees,
/// as positions only, ordered by position) into `buf` of `capacity`
/// blips; `out_len` receives how many (a null `buf` with capacity 0 asks
/// for that only). A sight instance (layer 0) has none: an error.
#[no_mangle]
pub extern "C" fn murk_blips(
    fog: u64,
    instance: *const c_char,
    instance_len: usize,
    buf: *mut MurkBlip,
    capacity: usize,
    out_len: *mut usize,
) -> i32 {
    call(|| {
        let instance = raw::text(instance, instance_len, "instance")?;
        let blips: Vec<MurkBlip> = registry::with_fog(fog, |h| {
            Ok(h.fog.blips(&h.world, instance)?.into_iter().map(|b| MurkBlip { position: b.position.to_array() }).collect())
        })?;
        raw::fill(buf, capacity, &blips, out_len, "buf").map(drop)
    })
}
