//! Pass 10, blend (every tick): `final = lerp(start, upscaled, t / 65536)`.
//!
//! `start` is the final mask as it was at the last recompute, so the blend
//! hides the step between recomputes. [`blend_scalar`] is the reference;
//! [`blend_simd`] does eight texels at a time with `wide` and is tested equal
//! to it. Twin: `backend-gpu/shaders/blend.wgsl`.

use super::lanes::{load, store, CHUNK, LANES};
use murk_core::fixed::lerp_mask;
use rayon::prelude::*;
use wide::u16x8;

/// Writes the blend of `start` toward `target` at `t` into `out`, in
/// parallel chunks of [`CHUNK`] texels.
pub fn blend(start: &[u16], target: &[u16], t: u32, out: &mut [u16]) {
    out.par_chunks_mut(CHUNK).zip(start.par_chunks(CHUNK).zip(target.par_chunks(CHUNK))).for_each(|(o, (a, b))| blend_simd(a, b, t, o));
}

/// The reference: [`lerp_mask`] per texel.
pub fn blend_scalar(start: &[u16], target: &[u16], t: u32, out: &mut [u16]) {
    for (o, (&a, &b)) in out.iter_mut().zip(start.iter().zip(target)) {
        *o = lerp_mask(a, b, t);
    }
}

/// [`blend_scalar`] eight texels at a time: the rise `(b - a) * t >> 16` is
/// the high half of a 16-bit product (`t < 2^16`; `t = 2^16` is the target
/// itself), and at most one of rise and fall is non-zero. The tail goes
/// through the scalar twin.
pub fn blend_simd(start: &[u16], target: &[u16], t: u32, out: &mut [u16]) {
    if t >= 1 << 16 {
        out.copy_from_slice(&target[..out.len()]);
        return;
    }
    let whole = out.len() / LANES * LANES;
    let tt = u16x8::splat(t as u16);
    for x in (0..whole).step_by(LANES) {
        let (a, b) = (load(&start[x..]), load(&target[x..]));
        let rise = b.saturating_sub(a).mul_keep_high(tt);
        let fall = a.saturating_sub(b).mul_keep_high(tt);
        store(a + rise - fall, &mut out[x..]);
    }
    blend_scalar(&start[whole..], &target[whole..], t, &mut out[whole..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn simd_equals_scalar(pairs in prop::collection::vec((any::<u16>(), any::<u16>()), 0..70), t in prop_oneof![Just(0u32), Just(65536), 0u32..=65536]) {
            let (a, b): (Vec<u16>, Vec<u16>) = pairs.into_iter().unzip();
            let (mut s, mut v) = (vec![0u16; a.len()], vec![1u16; a.len()]);
            blend_scalar(&a, &b, t, &mut s);
            blend_simd(&a, &b, t, &mut v);
            prop_assert_eq!(s, v);
        }
    }
}
