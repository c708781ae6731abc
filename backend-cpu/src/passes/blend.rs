//! Pass 10, blend (every tick): `final = lerp(start, upscaled, t / 65536)`.
//!
//! `start` is the final mask as it was at the last recompute, so the blend
//! hides the step between recomputes. Twin: `backend-gpu/shaders/blend.wgsl`.

use murk_core::fixed::lerp_mask;
use rayon::prelude::*;

/// Writes the blend of `start` toward `target` at `t` into `out`.
pub fn blend(start: &[u16], target: &[u16], t: u32, out: &mut [u16]) {
    out.par_iter_mut().zip(start.par_iter().zip(target.par_iter())).for_each(|(o, (&a, &b))| *o = lerp_mask(a, b, t));
}
