//! Pass 6, blur: separable Gaussian, X then Y, repeated `iterations` times.
//!
//! Inputs: visibility and a kernel of integer weights summing to 65536.
//! Output: blurred visibility. Edges clamp. Each output is
//! `(sum(w * v) + 32768) >> 16`, which fits 32 bits (weights sum to 2^16).
//! Twin: `backend-gpu/shaders/blur.wgsl`.

use murk_core::BlurKernel;
use rayon::prelude::*;

/// Blurs `src` into `dst` (both `width * height`); `tmp` is scratch of the same size.
pub fn blur(kernel: &BlurKernel, width: u32, height: u32, src: &[u16], dst: &mut [u16], tmp: &mut [u16]) {
    dst.copy_from_slice(src);
    if kernel.iterations == 0 {
        return;
    }
    let (w, h) = (width as usize, height as usize);
    let r = kernel.radius() as i64;
    for _ in 0..kernel.iterations {
        // X pass: dst -> tmp.
        tmp.par_chunks_mut(w).zip(dst.par_chunks(w)).for_each(|(out, line)| {
            for (x, o) in out.iter_mut().enumerate() {
                let mut acc = 32768u32;
                for (j, &wt) in kernel.weights.iter().enumerate() {
                    let sx = (x as i64 + j as i64 - r).clamp(0, w as i64 - 1) as usize;
                    acc += wt * u32::from(line[sx]);
                }
                *o = (acc >> 16) as u16;
            }
        });
        // Y pass: tmp -> dst.
        let tmp_ro: &[u16] = tmp;
        dst.par_chunks_mut(w).enumerate().for_each(|(y, out)| {
            for (x, o) in out.iter_mut().enumerate() {
                let mut acc = 32768u32;
                for (j, &wt) in kernel.weights.iter().enumerate() {
                    let sy = (y as i64 + j as i64 - r).clamp(0, h as i64 - 1) as usize;
                    acc += wt * u32::from(tmp_ro[sy * w + x]);
                }
                *o = (acc >> 16) as u16;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_field_stays_flat_and_impulse_spreads_symmetrically() {
        let k = BlurKernel::gaussian(2, 1.0, 1);
        assert_eq!(k.weights.iter().sum::<u32>(), 65536);
        let (w, h) = (9u32, 9u32);
        let src = vec![40000u16; 81];
        let mut dst = vec![0u16; 81];
        let mut tmp = vec![0u16; 81];
        blur(&k, w, h, &src, &mut dst, &mut tmp);
        assert!(dst.iter().all(|&v| v == 40000));
        let mut imp = vec![0u16; 81];
        imp[4 * 9 + 4] = 65535;
        blur(&k, w, h, &imp, &mut dst, &mut tmp);
        assert!(dst[4 * 9 + 4] > dst[4 * 9 + 5] && dst[4 * 9 + 5] > dst[4 * 9 + 6]);
        assert_eq!(dst[4 * 9 + 3], dst[4 * 9 + 5]);
        assert_eq!(dst[3 * 9 + 4], dst[4 * 9 + 5]);
        assert_eq!(dst[0], 0);
    }
}
