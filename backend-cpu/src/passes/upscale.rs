//! Pass 9, upscale: bilinear from the internal (LOD) grid to the output grid.
//!
//! Inputs: composed at `w x h`, scale `s = 2^lod`. Output: `w*s x h*s`.
//! Output texel centre `o + 0.5` samples internal coordinate
//! `(o + 0.5) / s - 0.5 = (2o + 1 - s) / 2s`, whose floor and remainder give
//! the two taps and a Q16 weight exactly; edges clamp. X then Y, each
//! rounding `(a * (65536 - f) + b * f + 32768) >> 16`, inside 32 bits.
//! Twin: `backend-gpu/shaders/upscale.wgsl`.

use rayon::prelude::*;

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

/// Upscales `src` (`w x h`) by `scale` into `dst`.
pub fn upscale(src: &[u16], w: u32, h: u32, scale: u32, dst: &mut [u16]) {
    if scale == 1 {
        dst.copy_from_slice(src);
        return;
    }
    let ow = (w * scale) as usize;
    dst.par_chunks_mut(ow).enumerate().for_each(|(oy, out)| {
        let (y0, y1, fy) = taps(oy as u32, scale, h);
        for (ox, o) in out.iter_mut().enumerate() {
            let (x0, x1, fx) = taps(ox as u32, scale, w);
            let w = w as usize;
            let top = mix(src[y0 * w + x0], src[y0 * w + x1], fx);
            let bottom = mix(src[y1 * w + x0], src[y1 * w + x1], fx);
            *o = mix(top, bottom, fy);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubling_interpolates_between_texels() {
        let src = [0u16, 65535];
        let mut dst = [0u16; 8];
        upscale(&src, 2, 1, 2, &mut dst[..4]);
        // Centres at internal -0.25, 0.25, 0.75, 1.25.
        assert_eq!(&dst[..4], &[0, 16384, 49151, 65535]);
    }
}
