//! Pass 9, upscale: bilinear from the internal (LOD) grid to the output grid.
//!
//! Inputs: composed at `w x h`, scale `s = 2^lod`. Output: `w*s x h*s`.
//! Output texel centre `o + 0.5` samples internal coordinate
//! `(o + 0.5) / s - 0.5 = (2o + 1 - s) / 2s`, whose floor and remainder give
//! the two taps and a Q16 weight exactly; edges clamp. X then Y, each
//! rounding `(a * (65536 - f) + b * f + 32768) >> 16`, inside 32 bits.
//! [`upscale_scalar`] is the reference; [`upscale`] mixes eight texels at a
//! time with `wide`. Twin: `backend-gpu/shaders/upscale.wgsl`.

use super::lanes::{load, narrow, store, LANES};
use rayon::prelude::*;
use wide::{u16x8, u32x8};

/// Taps and weight along one axis for output index `o`.
fn taps(o: u32, scale: u32, n: u32) -> (usize, usize, u32) {
    let num = 2 * i64::from(o) + 1 - i64::from(scale);
    let den = 2 * i64::from(scale);
    let i0 = num.div_euclid(den);
    let frac = num.rem_euclid(den);
    let f = (frac * 65536 / den) as u32;
    let clamp = |i: i64| i.clamp(0, i64::from(n) - 1) as usize;
    (clamp(i0), clamp(i0 + 1), f)
}

fn mix(a: u16, b: u16, f: u32) -> u16 {
    ((u32::from(a) * (65536 - f) + u32::from(b) * f + 32768) >> 16) as u16
}

/// [`mix`] in lanes, with `f < 2^16` (every weight [`taps`] gives):
/// `a * (65536 - f) + b * f = (a << 16) + b * f - a * f`, whose terms wrap
/// in 32 bits but whose sum does not.
#[inline]
fn mix8(a: u16x8, b: u16x8, f: u16x8) -> u16x8 {
    let wide_a = a.mul_widen(u16x8::splat(1)) << 16;
    narrow((wide_a + b.mul_widen(f) - a.mul_widen(f) + u32x8::splat(32768)) >> 16)
}

/// Upscales `src` (`w x h`) by `scale` into `dst`: rows in parallel; per
/// output row the two source rows are gathered at the column taps, then
/// mixed eight texels at a time. Tested equal to [`upscale_scalar`].
pub fn upscale(src: &[u16], w: u32, h: u32, scale: u32, dst: &mut [u16]) {
    if scale == 1 {
        dst.copy_from_slice(src);
        return;
    }
    let ow = (w * scale) as usize;
    let columns: Vec<(usize, usize, u32)> = (0..ow as u32).map(|ox| taps(ox, scale, w)).collect();
    let weights: Vec<u16> = columns.iter().map(|&(_, _, f)| f as u16).collect();
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
            let vertical = u16x8::splat(fy as u16);
            for x in (0..whole).step_by(LANES) {
                let f = load(&weights[x..]);
                let top = mix8(load(&a0[x..]), load(&b0[x..]), f);
                let bottom = mix8(load(&a1[x..]), load(&b1[x..]), f);
                store(mix8(top, bottom, vertical), &mut out[x..]);
            }
            for x in whole..ow {
                let f = u32::from(weights[x]);
                out[x] = mix(mix(a0[x], b0[x], f), mix(a1[x], b1[x], f), fy);
            }
        },
    );
}

/// The reference: each output texel from its four taps, one at a time.
pub fn upscale_scalar(src: &[u16], w: u32, h: u32, scale: u32, dst: &mut [u16]) {
    let ow = (w * scale) as usize;
    for (oy, out) in dst.chunks_mut(ow).enumerate() {
        let (y0, y1, fy) = taps(oy as u32, scale, h);
        for (ox, o) in out.iter_mut().enumerate() {
            let (x0, x1, fx) = taps(ox as u32, scale, w);
            let w = w as usize;
            let top = mix(src[y0 * w + x0], src[y0 * w + x1], fx);
            let bottom = mix(src[y1 * w + x0], src[y1 * w + x1], fx);
            *o = mix(top, bottom, fy);
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
            lod in 0u32..4,
        ) {
            let scale = 1 << lod;
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
        // Centres at internal -0.25, 0.25, 0.75, 1.25.
        assert_eq!(&dst[..4], &[0, 16384, 49151, 65535]);
    }
}
