//! Pass 6, blur: separable Gaussian, repeated `iterations` times.
//!
//! Inputs: visibility and a kernel of integer weights summing to 256.
//! Output: blurred visibility. Edges clamp. Each step sums the rows of each
//! column without rounding (`sum_i w_i * v`, below 2^24), then the columns
//! of that (`sum_j w_j * scratch`, below 2^32) and rounds once:
//! `(sum + 32768) >> 16`. ([`blur`] keeps the first sums as two 16-bit
//! sums, of the values' high bytes and of their low bytes, so that every
//! product in lanes is a 16-bit one.) The double sum is symmetric in the
//! two axes, so the blur commutes with transposition and quarter turns.
//! [`blur_scalar`] is the reference; [`blur`] runs bands of rows in
//! parallel, eight texels at a time with `wide`. Twin: `backend-gpu/shaders/blur.wgsl`.

use super::dirty::{Blocks, RowRun, BLOCK};
use super::lanes::{load, narrow, store, LANES};
use super::pieces;
use murk_core::BlurKernel;
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
    let mut changed = Blocks::new(w, h, false);
    blur_once_marked(weights, w, h, src, dst, None, &mut changed);
}

/// [`blur`] of the texels in the blocks `marks` marks, the others of `dst`
/// untouched: each marked texel gets the bytes of the whole blur. Gives the
/// blocks whose bytes it changed (those a later pass has to redo). With
/// more than one iteration (whose intermediate steps are not kept) every
/// texel is blurred, and every block given.
pub fn blur_marked(kernel: &BlurKernel, width: u32, height: u32, src: &[u16], dst: &mut [u16], marks: &Blocks) -> Blocks {
    let (w, h) = (width as usize, height as usize);
    if kernel.iterations != 1 {
        blur(kernel, width, height, src, dst);
        return Blocks::new(w, h, true);
    }
    let mut changed = Blocks::new(w, h, false);
    blur_once_marked(&kernel.weights, w, h, src, dst, Some(marks), &mut changed);
    changed
}

/// One step of the blur from `src` into `dst` (the marked blocks only,
/// given `marks`), bands of rows in parallel; the blocks whose bytes it
/// changed are marked in `changed`.
fn blur_once_marked(weights: &[u32], w: usize, h: usize, src: &[u16], dst: &mut [u16], marks: Option<&Blocks>, changed: &mut Blocks) {
    // Kernels of up to nine taps with their length known to the compiler.
    match weights.len() {
        1 => blur_once_taps::<1>(weights, w, h, src, dst, marks, changed),
        3 => blur_once_taps::<3>(weights, w, h, src, dst, marks, changed),
        5 => blur_once_taps::<5>(weights, w, h, src, dst, marks, changed),
        7 => blur_once_taps::<7>(weights, w, h, src, dst, marks, changed),
        9 => blur_once_taps::<9>(weights, w, h, src, dst, marks, changed),
        _ => blur_once_taps::<0>(weights, w, h, src, dst, marks, changed),
    }
}

/// [`blur_once_marked`] for a kernel of `N` taps (0: any length).
fn blur_once_taps<const N: usize>(weights: &[u32], w: usize, h: usize, src: &[u16], dst: &mut [u16], marks: Option<&Blocks>, changed: &mut Blocks) {
    let r = weights.len() / 2;
    let splat: Vec<u16x8> = weights.iter().map(|&wt| u16x8::splat(wt as u16)).collect();
    let splat = &splat[..];
    let per_row = w.div_ceil(BLOCK);
    let every = vec![true; per_row];
    let row_marks = |y: usize| marks.map_or(&every[..], |m| &m.marks[y * per_row..(y + 1) * per_row]);
    let bands = dst.chunks_mut(w * BAND).zip(changed.marks.chunks_mut(per_row.max(1) * BAND));
    pieces::each(
        bands,
        1,
        || (Vec::new(), Vec::new(), Vec::new(), Vec::new(), RowRun::default()),
        |(padded, sums, rows, columns, run), band, (out, changed)| {
            // Scratch rows 2k and 2k + 1: the sums along X of the high and
            // the low bytes of grid row `first + k`, clamped, over the blocks
            // marked in an output row that reads them (rows k - 2r..=k).
            let count_out = out.len() / w;
            let (first, count) = ((band * BAND) as i64 - r as i64, count_out + 2 * r);
            sums.resize(2 * count * w, 0);
            columns.clear();
            columns.resize(per_row, false);
            run.reset(per_row);
            for (k, pair) in sums.chunks_mut(2 * w).enumerate() {
                // Output rows k - 2r..=k, one coming in and one going out.
                if k < count_out {
                    run.add(row_marks(band * BAND + k));
                }
                if let Some(gone) = k.checked_sub(2 * r + 1).filter(|&i| i < count_out) {
                    run.remove(row_marks(band * BAND + gone));
                }
                run.write(columns);
                let y = (first + k as i64).clamp(0, h as i64 - 1) as usize;
                let (hi, lo) = pair.split_at_mut(w);
                for span in Blocks::spans(columns, w) {
                    blur_row::<N>(splat, weights, &src[y * w..(y + 1) * w], span, padded, hi, lo);
                }
            }
            // Output row i weighs scratch rows i..=i + 2r.
            for (i, (line, changed)) in out.chunks_mut(w).zip(changed.chunks_mut(per_row.max(1))).enumerate() {
                rows.clear();
                rows.extend((0..weights.len()).map(|j| 2 * (i + j) * w));
                for (x0, x1) in Blocks::spans(row_marks(band * BAND + i), w) {
                    let blocks = &mut changed[x0 / BLOCK..x1.div_ceil(BLOCK)];
                    blur_column::<N>(splat, weights, &sums[x0..], w, rows, &mut line[x0..x1], blocks);
                }
            }
        },
    );
}

/// One row along X over texels `x0..x1`: those texels and the kernel radius
/// on both sides of them (clamped to the row) into `padded`, then the sums
/// of the weighted high bytes into `hi[x0..x1]` and of the low bytes into
/// `lo[x0..x1]`, eight at a time. The weights sum to 256 and a byte is at
/// most 255, so each sum fits 16 bits: the products are 16-bit ones.
fn blur_row<const N: usize>(
    splat: &[u16x8],
    weights: &[u32],
    line: &[u16],
    (x0, x1): (usize, usize),
    padded: &mut Vec<u16>,
    hi: &mut [u16],
    lo: &mut [u16],
) {
    let taps = if N == 0 { weights.len() } else { N };
    let r = taps / 2;
    let w = line.len();
    // Away from the row's ends the texels are read in place.
    let texels: &[u16] = if x0 >= r && x1 + r <= w {
        &line[x0 - r..x1 + r]
    } else {
        padded.clear();
        padded.extend((0..x1 - x0 + 2 * r).map(|k| line[(x0 + k).saturating_sub(r).min(w - 1)]));
        padded
    };
    let (hi, lo) = (&mut hi[x0..x1], &mut lo[x0..x1]);
    let n = x1 - x0;
    let whole = n / LANES * LANES;
    let byte = u16x8::splat(0xff);
    for x in (0..whole).step_by(LANES) {
        let (mut acc_hi, mut acc_lo) = (u16x8::splat(0), u16x8::splat(0));
        for (j, &wt) in splat[..taps].iter().enumerate() {
            let v = load(&texels[x + j..]);
            acc_hi += (v >> 8) * wt;
            acc_lo += (v & byte) * wt;
        }
        store(acc_hi, &mut hi[x..]);
        store(acc_lo, &mut lo[x..]);
    }
    for x in whole..n {
        hi[x] = weights.iter().enumerate().map(|(j, &wt)| wt as u16 * (texels[x + j] >> 8)).sum();
        lo[x] = weights.iter().enumerate().map(|(j, &wt)| wt as u16 * (texels[x + j] & 0xff)).sum();
    }
}

/// One row along Y: output texel `x` weighs texel `x` of the scratch rows
/// starting at `rows` (high-byte sums, the low-byte sums `w` after them)
/// and rounds once: `(sum_j w_j * (256 * hi_j + lo_j) + 32768) >> 16`, each
/// product a 16-bit one, the sum below 2^32. `out` starts at a block's
/// edge; each block whose bytes it changes is marked in `changed`.
fn blur_column<const N: usize>(splat: &[u16x8], weights: &[u32], src: &[u16], w: usize, rows: &[usize], out: &mut [u16], changed: &mut [bool]) {
    let taps = if N == 0 { weights.len() } else { N };
    let n = out.len();
    let whole = n / LANES * LANES;
    for x in (0..whole).step_by(LANES) {
        let mut acc = u32x8::splat(32768);
        for (&wt, &row) in splat[..taps].iter().zip(&rows[..taps]) {
            acc += (load(&src[row + x..]).widening_mul(wt) << 8) + load(&src[row + w + x..]).widening_mul(wt);
        }
        let value = narrow(acc >> 16);
        changed[x / BLOCK] |= bytemuck::cast::<u16x8, u128>(value ^ load(&out[x..])) != 0;
        store(value, &mut out[x..]);
    }
    for x in whole..n {
        let acc =
            weights.iter().zip(rows).fold(32768u32, |acc, (&wt, &row)| acc + wt * (256 * u32::from(src[row + x]) + u32::from(src[row + w + x])));
        let value = (acc >> 16) as u16;
        changed[x / BLOCK] |= value != out[x];
        out[x] = value;
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
    use crate::passes::dirty::texel_rect;
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

    proptest! {
        /// Blurring the marked blocks over an old result gives, on every
        /// texel whose inputs within the radius changed only inside the
        /// marks' reach, the bytes of a whole blur; unmarked texels keep the
        /// old bytes. Here: a whole blur of `old`, then `new` differing from
        /// `old` only in up to three rectangles (marks of different columns
        /// on nearby rows), and the marks those rectangles widened by the
        /// radius: the result is the whole blur of `new`.
        #[test]
        fn marked_blur_equals_the_whole_blur(
            (w, h, old, new) in (1u32..70, 1u32..80).prop_flat_map(|(w, h)| (Just(w), Just(h),
                prop::collection::vec(any::<u16>(), (w * h) as usize), prop::collection::vec(any::<u16>(), (w * h) as usize))),
            rects in prop::collection::vec((any::<u16>(), any::<u16>(), any::<u16>(), any::<u16>()), 1..4),
            radius in 0u32..5, sigma in 0.3f32..4.0, threads in 1usize..4,
        ) {
            let k = BlurKernel::gaussian(radius, sigma, 1);
            let (wu, hu) = (w as usize, h as usize);
            let mut marks = Blocks::new(wu, hu, false);
            let mut mixed = old.clone();
            for rect in rects {
                let (ax, bx) = (rect.0 as usize % (wu + 1), rect.1 as usize % (wu + 1));
                let (ay, by) = (rect.2 as usize % (hu + 1), rect.3 as usize % (hu + 1));
                let (x0, x1, y0, y1) = (ax.min(bx), ax.max(bx), ay.min(by), ay.max(by));
                for i in (0..wu * hu).filter(|i| (x0..x1).contains(&(i % wu)) && (y0..y1).contains(&(i / wu))) {
                    mixed[i] = new[i];
                }
                marks.mark(texel_rect(x0, y0, x1, y1), radius as usize);
            }
            let (mut want, mut got) = (vec![0u16; wu * hu], vec![0u16; wu * hu]);
            blur(&k, w, h, &mixed, &mut want);
            blur(&k, w, h, &old, &mut got);
            let before = got.clone();
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let changed = pool.install(|| blur_marked(&k, w, h, &mixed, &mut got, &marks));
            // Exactly the blocks whose bytes moved are given as changed (a
            // kernel of no step, radius 0, gives every block).
            for (b, &mark) in changed.marks.iter().enumerate() {
                let (y, x0) = (b / marks.per_row, b % marks.per_row * BLOCK);
                let span = y * wu + x0..y * wu + (x0 + BLOCK).min(wu);
                let moved = k.iterations != 1 || got[span.clone()] != before[span];
                prop_assert_eq!(mark, moved, "block {} of row {}", x0 / BLOCK, y);
            }
            prop_assert_eq!(got, want);
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
