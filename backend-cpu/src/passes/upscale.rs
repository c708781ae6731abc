//! Pass 9, upscale: bilinear from the internal (LOD) grid to the output grid.
//!
//! Inputs: composed at `w x h`, scale `s` (`2^lod`; the overlay look any
//! `1..=16`). Output: `w*s x h*s`. Output texel centre `o + 0.5` samples
//! internal coordinate `(o + 0.5) / s - 0.5 = (2o + 1 - s) / 2s`, whose floor
//! gives the two taps and whose remainder the weight `f` of the second in
//! units of `1 / 2s`, exactly; edges clamp. The four taps mix in one sum,
//! `a (2s - fx)(2s - fy) + b fx (2s - fy) + c (2s - fx) fy + d fx fy`,
//! rounded once, to the nearest, by `(2s)^2` (a power of two for the fog, a
//! shift): at most `65535 * 32^2 < 2^26`. One rounding of a sum symmetric in
//! X and Y makes the upscale commute with quarter turns and mirrors of the
//! grid, which mixing X then Y, each rounded, does not.
//! [`upscale_scalar`] is the reference; [`upscale`] mixes eight texels at a
//! time with `wide`. Twin: `backend-gpu/shaders/upscale.wgsl`.

use super::lanes::{load, narrow, store, LANES};
use rayon::prelude::*;
use wide::u32x8;

/// Taps and the weight of the second (in units of `1 / 2 scale`) along one
/// axis for output index `o`.
fn taps(o: u32, scale: u32, n: u32) -> (usize, usize, u32) {
    let num = 2 * i64::from(o) + 1 - i64::from(scale);
    let den = 2 * i64::from(scale);
    let i0 = num.div_euclid(den);
    let f = num.rem_euclid(den) as u32;
    let clamp = |i: i64| i.clamp(0, i64::from(n) - 1) as usize;
    (clamp(i0), clamp(i0 + 1), f)
}

/// The four taps `[a, b; c, d]` mixed with weights `fx`, `fy` of `den`.
fn mix4([a, b, c, d]: [u16; 4], fx: u32, fy: u32, den: u32) -> u16 {
    let top = u32::from(a) * (den - fx) + u32::from(b) * fx;
    let bottom = u32::from(c) * (den - fx) + u32::from(d) * fx;
    let all = den * den;
    ((top * (den - fy) + bottom * fy + all / 2) / all) as u16
}

/// Upscales `src` (`w x h`) by `scale` into `dst`: rows in parallel; per
/// output row the two source rows are gathered at the column taps, then
/// mixed eight texels at a time where `(2 scale)^2` is a power of two.
/// Tested equal to [`upscale_scalar`].
pub fn upscale(src: &[u16], w: u32, h: u32, scale: u32, dst: &mut [u16]) {
    if scale == 1 {
        dst.copy_from_slice(src);
        return;
    }
    let den = 2 * scale;
    let all = den * den;
    if !all.is_power_of_two() {
        return upscale_scalar(src, w, h, scale, dst);
    }
    let shift = all.trailing_zeros() as i32;
    let ow = (w * scale) as usize;
    let columns: Vec<(usize, usize, u32)> = (0..ow as u32).map(|ox| taps(ox, scale, w)).collect();
    let weights: Vec<u16> = columns.iter().map(|&(_, _, f)| f as u16).collect();
    let rest: Vec<u16> = columns.iter().map(|&(_, _, f)| (den - f) as u16).collect();
    dst.par_chunks_mut(ow).enumerate().for_each_init(
        || vec![vec![0u16; ow]; 4],
        |rows, (oy, out)| {
            let (y0, y1, fy) = taps(oy as u32, scale, h);
            let (w, whole) = (w as usize, ow / LANES * LANES);
            let [a0, b0, a1, b1] = &mut rows[..] else { unreachable!("four row buffers") };
            for (ox, &(x0, x1, _)) in columns.iter().enumerate() {
                (a0[ox], b0[ox]) = (src[y0 * w + x0], src[y0 * w + x1]);
                (a1[ox], b1[ox]) = (src[y1 * w + x0], src[y1 * w + x1]);
            }
            let (wy, ry) = (u32x8::splat(fy), u32x8::splat(den - fy));
            for x in (0..whole).step_by(LANES) {
                let (f, r) = (load(&weights[x..]), load(&rest[x..]));
                // Products of u16 lanes, widened: each below 2^21.
                let top = load(&a0[x..]).widening_mul(r) + load(&b0[x..]).widening_mul(f);
                let bottom = load(&a1[x..]).widening_mul(r) + load(&b1[x..]).widening_mul(f);
                let sum = top * ry + bottom * wy + u32x8::splat(all / 2);
                store(narrow(sum >> shift), &mut out[x..]);
            }
            for x in whole..ow {
                let f = u32::from(weights[x]);
                out[x] = mix4([a0[x], b0[x], a1[x], b1[x]], f, fy, den);
            }
        },
    );
}

/// The reference: each output texel from its four taps, one at a time.
pub fn upscale_scalar(src: &[u16], w: u32, h: u32, scale: u32, dst: &mut [u16]) {
    let ow = (w * scale) as usize;
    let den = 2 * scale;
    for (oy, out) in dst.chunks_mut(ow).enumerate() {
        let (y0, y1, fy) = taps(oy as u32, scale, h);
        for (ox, o) in out.iter_mut().enumerate() {
            let (x0, x1, fx) = taps(ox as u32, scale, w);
            let w = w as usize;
            *o = mix4([src[y0 * w + x0], src[y0 * w + x1], src[y1 * w + x0], src[y1 * w + x1]], fx, fy, den);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn simd_equals_scalar(
            (w, h, texels) in (1u32..20, 1u32..8).prop_flat_map(|(w, h)| (Just(w), Just(h), prop::collection::vec(prop_oneof![Just(0u16), Just(65535), any::<u16>()], (w * h) as usize))),
            scale in 1u32..=16,
        ) {
            let n = (w * h * scale * scale) as usize;
            let (mut a, mut b) = (vec![0u16; n], vec![1u16; n]);
            upscale_scalar(&texels, w, h, scale, &mut a);
            upscale(&texels, w, h, scale, &mut b);
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn doubling_interpolates_between_texels() {
        let src = [0u16, 65535];
        let mut dst = [0u16; 8];
        upscale(&src, 2, 1, 2, &mut dst[..4]);
        // Centres at internal -0.25, 0.25, 0.75, 1.25: weights 0, 1/4, 3/4, 1.
        assert_eq!(&dst[..4], &[0, 16384, 49151, 65535]);
    }

    /// A quarter turn of the grid, and a mirror, commute with the upscale.
    #[test]
    fn the_upscale_commutes_with_quarter_turns_and_mirrors() {
        let (w, h) = (5u32, 3u32);
        let src: Vec<u16> = (0..w * h).map(|i| (i * 40503 % 65536) as u16).collect();
        // Turned a quarter: texel (x, y) goes to (h - 1 - y, x) of an h x w grid.
        let turn = |v: &[u16], w: u32, h: u32| -> Vec<u16> {
            let mut out = vec![0u16; v.len()];
            for y in 0..h {
                for x in 0..w {
                    out[(x * h + (h - 1 - y)) as usize] = v[(y * w + x) as usize];
                }
            }
            out
        };
        let mirror = |v: &[u16], w: u32| -> Vec<u16> { v.chunks(w as usize).flat_map(|r| r.iter().rev().copied()).collect() };
        for scale in [2u32, 4, 3, 16] {
            let (ow, oh) = (w * scale, h * scale);
            let mut up = vec![0u16; (ow * oh) as usize];
            upscale(&src, w, h, scale, &mut up);
            let mut turned = vec![0u16; up.len()];
            upscale(&turn(&src, w, h), h, w, scale, &mut turned);
            assert_eq!(turned, turn(&up, ow, oh), "scale {scale}: turned");
            let mut mirrored = vec![0u16; up.len()];
            upscale(&mirror(&src, w), w, h, scale, &mut mirrored);
            assert_eq!(mirrored, mirror(&up, ow), "scale {scale}: mirrored");
        }
    }
}
