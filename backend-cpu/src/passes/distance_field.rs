//! Pass 3, distance field: exact squared Euclidean distance to the nearest
//! covered texel, at `df_scale` downscale (Distance Field method only).
//!
//! Inputs: coverage. Outputs: `(df_w, df_h, squared distances)` in DF texels;
//! a DF texel is covered when any texel of its `scale x scale` block is.
//! Texels with nothing covered in reach hold [`FAR`].
//! Invariant: exact (separable lower-envelope transform in integers), so the
//! result is unique and every backend agrees by construction.
//! Twin: `backend-gpu/shaders/distance_field.wgsl`.

use rayon::prelude::*;

/// Squared distance stored where no covered texel exists at all.
pub const FAR: u32 = u32::MAX;

/// Builds the distance field of `coverage` at `scale` (1, 2 or 4).
pub fn distance_field(coverage: &[u8], width: u32, height: u32, scale: u32) -> (u32, u32, Vec<u32>) {
    let (dw, dh) = (width.div_ceil(scale) as usize, height.div_ceil(scale) as usize);
    let (w, s) = (width as usize, scale as usize);
    // Coarse coverage: a DF texel is covered when any texel of its block is.
    let mut coarse = if s == 1 { coverage.to_vec() } else { vec![0u8; dw * dh] };
    if s > 1 {
        coarse.par_chunks_mut(dw).enumerate().for_each(|(cy, row)| {
            for y in cy * s..((cy + 1) * s).min(height as usize) {
                for (x, &c) in coverage[y * w..(y + 1) * w].iter().enumerate() {
                    row[x / s] |= c;
                }
            }
        });
    }
    // Column pass, done row by row so memory is read in order: the vertical
    // distance to the nearest covered texel above, then below (inf if none).
    let inf = (dw + dh + 1) as i32;
    let mut vertical = vec![inf; dw * dh];
    for y in 0..dh {
        let (done, rest) = vertical.split_at_mut(y * dw);
        let row = &mut rest[..dw];
        let cov = &coarse[y * dw..(y + 1) * dw];
        if y == 0 {
            for (r, &c) in row.iter_mut().zip(cov) {
                *r = if c != 0 { 0 } else { inf };
            }
        } else {
            let above = &done[(y - 1) * dw..];
            for ((r, &c), &a) in row.iter_mut().zip(cov).zip(above) {
                *r = if c != 0 { 0 } else { (a + 1).min(inf) };
            }
        }
    }
    for y in (0..dh.saturating_sub(1)).rev() {
        let (head, below) = vertical.split_at_mut((y + 1) * dw);
        for (r, &b) in head[y * dw..].iter_mut().zip(&below[..dw]) {
            *r = (*r).min(b + 1);
        }
    }
    // Row pass: lower envelope of parabolas (x - q)^2 + g(q)^2, one row per
    // task with its own scratch.
    let mut out = vec![FAR; dw * dh];
    out.par_chunks_mut(dw)
        .zip(vertical.par_chunks(dw))
        .for_each_init(|| (Vec::with_capacity(dw), Vec::with_capacity(dw + 1)), |(v, z), (row, g)| envelope_row(g, inf, v, z, row));
    (dw as u32, dh as u32, out)
}

/// One row of the lower envelope; `g[q] >= inf` means no covered texel in
/// column `q`. `v` and `z` are scratch; boundaries are exact fractions
/// `num / den` (`den > 0`; `den == 0` is minus infinity), compared by cross
/// multiplication, so the loop divides nothing. Any exact envelope gives the
/// same values at the integer texels: the output is unique.
fn envelope_row(g: &[i32], inf: i32, v: &mut Vec<i32>, z: &mut Vec<(i64, i64)>, out: &mut [u32]) {
    let n = g.len();
    v.resize(n, 0);
    z.resize(n + 1, (0, 0));
    let mut count = 0usize;
    for (q, &gq) in g.iter().enumerate() {
        if gq >= inf {
            continue;
        }
        let q = q as i32;
        let fq = i64::from(gq * gq + q * q);
        // Drop parabolas that the new one hides from their left boundary on.
        let mut boundary = (0i64, 0i64);
        while count > 0 {
            let last = v[count - 1];
            let gl = g[last as usize];
            // The parabolas of `last` and `q` cross at num / den.
            let (num, den) = (fq - i64::from(gl * gl + last * last), 2 * i64::from(q - last));
            let (zn, zd) = z[count - 1];
            if zd != 0 && num * zd <= zn * den {
                count -= 1;
            } else {
                boundary = (num, den);
                break;
            }
        }
        v[count] = q;
        z[count] = boundary;
        count += 1;
    }
    if count == 0 {
        out.fill(FAR);
        return;
    }
    let mut k = 0;
    for (x, o) in out.iter_mut().enumerate() {
        let xi = x as i64;
        while k + 1 < count && z[k + 1].0 < xi * z[k + 1].1 {
            k += 1;
        }
        let q = v[k];
        let gq = g[q as usize];
        let dx = x as i32 - q;
        *o = (dx * dx + gq * gq) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(cov: &[u8], w: u32, h: u32) -> Vec<u32> {
        let pts: Vec<(i64, i64)> = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .filter(|&(x, y)| cov[(y * w + x) as usize] != 0)
            .map(|(x, y)| (i64::from(x), i64::from(y)))
            .collect();
        (0..h)
            .flat_map(|y| (0..w).map(move |x| (i64::from(x), i64::from(y))))
            .map(|(x, y)| pts.iter().map(|&(px, py)| ((x - px).pow(2) + (y - py).pow(2)) as u32).min().unwrap_or(FAR))
            .collect()
    }

    proptest! {
        #[test]
        fn matches_brute_force(w in 1u32..24, h in 1u32..24, seed in any::<u64>(), density in 0u64..40) {
            let cov: Vec<u8> = (0..w * h).map(|i| u8::from(murk_core::fixed::hash2(i as i32, seed as i32) % 100 < density as u32)).collect();
            let (_, _, df) = distance_field(&cov, w, h, 1);
            prop_assert_eq!(df, brute(&cov, w, h));
        }
    }

    #[test]
    fn downscale_marks_blocks() {
        let mut cov = vec![0u8; 8 * 8];
        cov[5 * 8 + 5] = 1;
        let (dw, dh, df) = distance_field(&cov, 8, 8, 2);
        assert_eq!((dw, dh), (4, 4));
        assert_eq!(df[2 * 4 + 2], 0);
        assert_eq!(df[0], 8);
    }
}
