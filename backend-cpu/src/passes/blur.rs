//! Pass 6, blur: separable Gaussian, repeated `iterations` times.
//!
//! Inputs: visibility and a kernel of integer weights summing to 256.
//! Output: blurred visibility. Edges clamp. Each step sums the rows of each
//! column into a 32-bit scratch without rounding (`sum_i w_i * v`, below
//! 2^24), then the columns of that (`sum_j w_j * scratch`, below 2^32) and
//! rounds once: `(sum + 32768) >> 16`. The double sum is symmetric in the
//! two axes, so the blur commutes with transposition and quarter turns.
//! [`blur_scalar`] is the reference; [`blur`] runs bands of rows in
//! parallel, eight texels at a time with `wide`. Twin: `backend-gpu/shaders/blur.wgsl`.

use super::lanes::{load, narrow, store, LANES};
use murk_core::BlurKernel;
use rayon::prelude::*;
use wide::{u16x8, u32x8};

/// Output rows per parallel task: each task sums its rows and the kernel
/// radius around them along X into a scratch that stays in cache, then
/// along Y.
const BAND: usize = 32;

/// Blurs `src` into `dst` (both `width * height`).
pub fn blur(kernel: &BlurKernel, width: u32, height: u32, src: &[u16], dst: &mut [u16]) {
    let (w, h) = (width as usize, height as usize);
    if kernel.iterations == 0 {
        dst.copy_from_slice(src);
        return;
    }
    blur_once(&kernel.weights, w, h, src, dst);
    // Each further step reads the previous one's result.
    let mut previous = Vec::new();
    for _ in 1..kernel.iterations {
        previous.clear();
        previous.extend_from_slice(dst);
        blur_once(&kernel.weights, w, h, &previous, dst);
    }
}

/// One step of the blur from `src` into `dst`, bands of rows in parallel.
fn blur_once(weights: &[u32], w: usize, h: usize, src: &[u16], dst: &mut [u16]) {
    let r = weights.len() / 2;
    dst.par_chunks_mut(w * BAND).enumerate().for_each_init(
        || (Vec::new(), Vec::new(), Vec::new()),
        |(padded, sums, rows), (band, out)| {
            // Scratch row k: the sums along X of grid row `first + k`, clamped.
            let (first, count) = ((band * BAND) as i64 - r as i64, out.len() / w + 2 * r);
            sums.resize(count * w, 0);
            for (k, line) in sums.chunks_mut(w).enumerate() {
                let y = (first + k as i64).clamp(0, h as i64 - 1) as usize;
                blur_row(weights, &src[y * w..(y + 1) * w], padded, line);
            }
            // Output row i weighs scratch rows i..=i + 2r.
            for (i, line) in out.chunks_mut(w).enumerate() {
                rows.clear();
                rows.extend((0..weights.len()).map(|j| (i + j) * w));
                blur_column(weights, sums, rows, line);
            }
        },
    );
}

/// One row along X: `line` padded by the kernel radius on both sides (edge
/// texels repeated) into `padded`, then eight unrounded sums at a time.
fn blur_row(weights: &[u32], line: &[u16], padded: &mut Vec<u16>, out: &mut [u32]) {
    let r = weights.len() / 2;
    let w = line.len();
    padded.clear();
    padded.extend(std::iter::repeat_n(line[0], r));
    padded.extend_from_slice(line);
    padded.extend(std::iter::repeat_n(line[w - 1], r));
    let whole = w / LANES * LANES;
    for x in (0..whole).step_by(LANES) {
        let mut acc = u32x8::splat(0);
        for (j, &wt) in weights.iter().enumerate() {
            acc += load(&padded[x + j..]).mul_widen(u16x8::splat(wt as u16));
        }
        out[x..x + LANES].copy_from_slice(acc.as_array_ref());
    }
    for x in whole..w {
        out[x] = weights.iter().enumerate().map(|(j, &wt)| wt * u32::from(padded[x + j])).sum();
    }
}

/// One row along Y: output texel `x` weighs texel `x` of the scratch rows
/// starting at `rows` (already clamped) and rounds once. The scratch sums
/// are below 2^24 and the weights at most 256: split as `hi * 65536 + lo`,
/// each product is a 16-bit one.
fn blur_column(weights: &[u32], src: &[u32], rows: &[usize], out: &mut [u16]) {
    let w = out.len();
    let whole = w / LANES * LANES;
    for x in (0..whole).step_by(LANES) {
        let mut acc = u32x8::splat(32768);
        for (&wt, &row) in weights.iter().zip(rows) {
            let sums: [u32; LANES] = src[row + x..row + x + LANES].try_into().expect("eight sums");
            let (hi, lo) = (u16x8::new(sums.map(|v| (v >> 16) as u16)), u16x8::new(sums.map(|v| v as u16)));
            let wt = u16x8::splat(wt as u16);
            acc += (hi.mul_widen(wt) << 16) + lo.mul_widen(wt);
        }
        store(narrow(acc >> 16), &mut out[x..]);
    }
    for x in whole..w {
        let acc = weights.iter().zip(rows).fold(32768u32, |acc, (&wt, &row)| acc + wt * src[row + x]);
        out[x] = (acc >> 16) as u16;
    }
}

/// The reference: the same blur one texel at a time, each tap clamped to
/// the grid.
pub fn blur_scalar(kernel: &BlurKernel, width: u32, height: u32, src: &[u16], dst: &mut [u16], tmp: &mut [u32]) {
    dst.copy_from_slice(src);
    let (w, h) = (width as usize, height as usize);
    let r = kernel.radius() as i64;
    for _ in 0..kernel.iterations {
        for (out, line) in tmp.chunks_mut(w).zip(dst.chunks(w)) {
            for (x, o) in out.iter_mut().enumerate() {
                *o = 0;
                for (j, &wt) in kernel.weights.iter().enumerate() {
                    let sx = (x as i64 + j as i64 - r).clamp(0, w as i64 - 1) as usize;
                    *o += wt * u32::from(line[sx]);
                }
            }
        }
        for (y, out) in dst.chunks_mut(w).enumerate() {
            for (x, o) in out.iter_mut().enumerate() {
                let mut acc = 32768u32;
                for (j, &wt) in kernel.weights.iter().enumerate() {
                    let sy = (y as i64 + j as i64 - r).clamp(0, h as i64 - 1) as usize;
                    acc += wt * tmp[sy * w + x];
                }
                *o = (acc >> 16) as u16;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Blurring the transposed grid gives the transposed blur, byte for
        /// byte (no rounding between the two axes).
        #[test]
        fn blur_commutes_with_transposition(
            (n, texels) in (1u32..24).prop_flat_map(|n| (Just(n), prop::collection::vec(any::<u16>(), (n * n) as usize))),
            radius in 0u32..5, sigma in prop_oneof![Just(0.05f32), 0.3f32..4.0], iterations in 0u32..3,
        ) {
            let k = BlurKernel::gaussian(radius, sigma, iterations);
            let transpose = |v: &[u16]| -> Vec<u16> { (0..n * n).map(|i| v[((i % n) * n + i / n) as usize]).collect() };
            let len = texels.len();
            let (mut a, mut b) = (vec![0u16; len], vec![0u16; len]);
            blur(&k, n, n, &texels, &mut a);
            blur(&k, n, n, &transpose(&texels), &mut b);
            prop_assert_eq!(transpose(&a), b);
        }

        /// The banded `wide` blur gives the bytes of the scalar reference,
        /// with grids of one band and of several (bands of 32 rows).
        #[test]
        fn simd_equals_scalar(
            (w, h, texels) in (1u32..40, 1u32..80).prop_flat_map(|(w, h)| (Just(w), Just(h), prop::collection::vec(prop_oneof![Just(0u16), Just(65535), any::<u16>()], (w * h) as usize))),
            radius in 0u32..5, sigma in prop_oneof![Just(0.05f32), 0.3f32..4.0], iterations in 0u32..3,
        ) {
            let k = BlurKernel::gaussian(radius, sigma, iterations);
            let n = texels.len();
            let (mut a, mut b, mut ta) = (vec![0u16; n], vec![0u16; n], vec![0u32; n]);
            blur_scalar(&k, w, h, &texels, &mut a, &mut ta);
            blur(&k, w, h, &texels, &mut b);
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn flat_field_stays_flat_and_impulse_spreads_symmetrically() {
        let k = BlurKernel::gaussian(2, 1.0, 1);
        assert_eq!(k.weights.iter().sum::<u32>(), BlurKernel::ONE);
        let (w, h) = (9u32, 9u32);
        let src = vec![40000u16; 81];
        let mut dst = vec![0u16; 81];
        blur(&k, w, h, &src, &mut dst);
        assert!(dst.iter().all(|&v| v == 40000));
        let mut imp = vec![0u16; 81];
        imp[4 * 9 + 4] = 65535;
        blur(&k, w, h, &imp, &mut dst);
        assert!(dst[4 * 9 + 4] > dst[4 * 9 + 5] && dst[4 * 9 + 5] > dst[4 * 9 + 6]);
        assert_eq!(dst[4 * 9 + 3], dst[4 * 9 + 5]);
        assert_eq!(dst[3 * 9 + 4], dst[4 * 9 + 5]);
        assert_eq!(dst[0], 0);
    }
}
