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
    let (dw, dh) = (width.div_ceil(scale), height.div_ceil(scale));
    let mut coarse = vec![0u8; (dw * dh) as usize];
    for y in 0..height {
        for x in 0..width {
            if coverage[(y * width + x) as usize] != 0 {
                coarse[((y / scale) * dw + x / scale) as usize] = 1;
            }
        }
    }
    // Column pass: vertical distance to the nearest covered texel (or none).
    let inf = i64::from(dw + dh) + 1;
    let mut vertical = vec![inf; (dw * dh) as usize];
    let columns: Vec<Vec<i64>> = (0..dw)
        .into_par_iter()
        .map(|x| {
            let mut col = vec![inf; dh as usize];
            let mut last: Option<i64> = None;
            for y in 0..dh {
                if coarse[(y * dw + x) as usize] != 0 {
                    last = Some(i64::from(y));
                }
                if let Some(l) = last {
                    col[y as usize] = i64::from(y) - l;
                }
            }
            last = None;
            for y in (0..dh).rev() {
                if coarse[(y * dw + x) as usize] != 0 {
                    last = Some(i64::from(y));
                }
                if let Some(l) = last {
                    col[y as usize] = col[y as usize].min(l - i64::from(y));
                }
            }
            col
        })
        .collect();
    for (x, col) in columns.iter().enumerate() {
        for (y, &v) in col.iter().enumerate() {
            vertical[y * dw as usize + x] = v;
        }
    }
    // Row pass: lower envelope of parabolas (x - q)^2 + g(q)^2.
    let mut out = vec![FAR; (dw * dh) as usize];
    out.par_chunks_mut(dw as usize).enumerate().for_each(|(y, row)| {
        let g: Vec<i64> = (0..dw as usize).map(|x| vertical[y * dw as usize + x]).collect();
        envelope_row(&g, inf, row);
    });
    (dw, dh, out)
}

/// One row of the lower envelope; `g[q] == inf` means no covered texel in column `q`.
fn envelope_row(g: &[i64], inf: i64, out: &mut [u32]) {
    let f = |q: usize| g[q] * g[q] + (q as i64) * (q as i64);
    let mut v: Vec<usize> = Vec::with_capacity(g.len());
    let mut z: Vec<i64> = Vec::with_capacity(g.len() + 1);
    for (q, &gq) in g.iter().enumerate() {
        if gq >= inf {
            continue;
        }
        // Drop parabolas that the new one hides from their left boundary on.
        let mut boundary = i64::MIN;
        while let Some(&last) = v.last() {
            // Floor of the intersection of the parabolas of `last` and `q`.
            let s = (f(q) - f(last)).div_euclid(2 * (q as i64 - last as i64));
            if s <= *z.last().expect("z has one entry per vertex") {
                v.pop();
                z.pop();
            } else {
                boundary = s;
                break;
            }
        }
        v.push(q);
        z.push(boundary);
    }
    if v.is_empty() {
        out.fill(FAR);
        return;
    }
    let mut k = 0;
    for (x, o) in out.iter_mut().enumerate() {
        let xi = x as i64;
        while k + 1 < v.len() && z[k + 1] < xi {
            k += 1;
        }
        let q = v[k] as i64;
        let d = (xi - q) * (xi - q) + g[v[k]] * g[v[k]];
        *o = d as u32;
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
