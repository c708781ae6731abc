//! Pass 3, distance field: exact squared Euclidean distance to the nearest
//! covered texel, at `df_scale` downscale (Distance Field method only).
//!
//! Inputs: coverage. Outputs: `(df_w, df_h, squared distances)` in DF texels;
//! a DF texel is covered when any texel of its `scale x scale` block is.
//! Texels with nothing covered in reach hold [`FAR`].
//! Invariant: exact (separable lower-envelope transform in integers), so the
//! result is unique and every backend agrees by construction.
//! Twin: `backend-gpu/shaders/distance_field.wgsl`.

use murk_core::{Grid, TexelRect};
use rayon::prelude::*;

/// Squared distance stored where no covered texel exists at all.
pub const FAR: u32 = u32::MAX;

/// Builds the distance field of `coverage` at `scale` (1, 2 or 4).
pub fn distance_field(coverage: &[u8], width: u32, height: u32, scale: u32) -> Grid<u32> {
    distance_field_kept(coverage, width, height, scale).0
}

/// [`distance_field`], with the column pass it was made from (per DF
/// texel, the vertical distance to the nearest covered DF texel in its
/// column, or the grid's `inf` where none is): what
/// [`update_distance_field`] starts from.
pub fn distance_field_kept(coverage: &[u8], width: u32, height: u32, scale: u32) -> (Grid<u32>, Vec<u32>) {
    let (dw, dh) = (width.div_ceil(scale) as usize, height.div_ceil(scale) as usize);
    let (w, s) = (width as usize, scale as usize);
    // Coarse coverage: a DF texel is covered when any texel of its block is.
    let coarse: std::borrow::Cow<[u8]> = if s == 1 {
        std::borrow::Cow::Borrowed(coverage)
    } else {
        let mut c = vec![0u8; dw * dh];
        c.par_chunks_mut(dw).enumerate().for_each(|(cy, row)| {
            for y in cy * s..((cy + 1) * s).min(height as usize) {
                for (x, &v) in coverage[y * w..(y + 1) * w].iter().enumerate() {
                    row[x / s] |= v;
                }
            }
        });
        std::borrow::Cow::Owned(c)
    };
    // Column pass: the vertical distance to the nearest covered texel above,
    // then below (`inf` if none). Vertical stripes of columns run in
    // parallel; each walks its rows in order, so memory is read row by row.
    let inf = (dw + dh + 1) as u32;
    let mut out = vec![0u32; dw * dh];
    let stripe = dw.div_ceil(4 * rayon::current_num_threads()).max(64);
    let mut stripes: Vec<Vec<&mut [u32]>> = (0..dw.div_ceil(stripe)).map(|_| Vec::with_capacity(dh)).collect();
    for row in out.chunks_mut(dw) {
        let mut rest = row;
        for list in stripes.iter_mut() {
            let (head, tail) = rest.split_at_mut(stripe.min(rest.len()));
            list.push(head);
            rest = tail;
        }
    }
    stripes.into_par_iter().enumerate().for_each(|(k, mut rows)| {
        let x0 = k * stripe;
        for y in 0..dh {
            let cov = &coarse[y * dw + x0..][..rows[y].len()];
            let (done, rest) = rows.split_at_mut(y);
            let row = &mut rest[0];
            match done.last() {
                None => row.iter_mut().zip(cov).for_each(|(r, &c)| *r = if c != 0 { 0 } else { inf }),
                Some(above) => row.iter_mut().zip(cov).zip(above.iter()).for_each(|((r, &c), &a)| *r = if c != 0 { 0 } else { (a + 1).min(inf) }),
            }
        }
        for y in (0..dh.saturating_sub(1)).rev() {
            let (head, below) = rows.split_at_mut(y + 1);
            head[y].iter_mut().zip(below[0].iter()).for_each(|(r, &b)| *r = (*r).min(b + 1));
        }
    });
    let columns = out.clone();
    // Row pass: lower envelope of parabolas (x - q)^2 + g(q)^2, one row per
    // task, from the column pass's row.
    out.par_chunks_mut(dw)
        .zip(columns.par_chunks(dw))
        .for_each_init(|| (Vec::with_capacity(dw), Vec::with_capacity(dw)), |(v, z), (row, g)| envelope_row(g, inf, v, z, row));
    (Grid { width: dw as u32, height: dh as u32, texels: out }, columns)
}

/// Brings `field` and its column pass `columns` (from
/// [`distance_field_kept`]) up to date with `coverage` where it changed,
/// which is inside `rects` (grid texels): the columns of DF texels over
/// them are redone, then every row whose column distances moved. Returns
/// the box of the DF texels whose value changed, in grid texels.
pub fn update_distance_field(
    coverage: &[u8],
    width: u32,
    height: u32,
    scale: u32,
    rects: &[TexelRect],
    field: &mut Grid<u32>,
    columns: &mut [u32],
) -> TexelRect {
    let (dw, dh) = (field.width as usize, field.height as usize);
    let (w, h, s) = (width as usize, height as usize, scale as usize);
    let inf = (dw + dh + 1) as u32;
    let covered = |cx: usize, cy: usize| {
        (cy * s..((cy + 1) * s).min(h)).any(|y| coverage[y * w + cx * s..(y * w + (cx + 1) * s).min((y + 1) * w)].iter().any(|&c| c != 0))
    };
    // The DF columns over the rectangles, each redone whole (a change moves
    // the distances of its column up to the next cover either side).
    let mut xs: Vec<usize> = rects.iter().flat_map(|r| r.x0 as usize / s..(r.x1 as usize).div_ceil(s)).collect();
    xs.sort_unstable();
    xs.dedup();
    let redone: Vec<(usize, Vec<u32>)> = xs
        .par_iter()
        .map(|&cx| {
            let mut g = vec![0u32; dh];
            let mut above = inf;
            for (cy, v) in g.iter_mut().enumerate() {
                above = if covered(cx, cy) { 0 } else { (above + 1).min(inf) };
                *v = above;
            }
            for cy in (0..dh.saturating_sub(1)).rev() {
                g[cy] = g[cy].min(g[cy + 1] + 1);
            }
            (cx, g)
        })
        .collect();
    let mut rows = vec![false; dh];
    for (cx, g) in redone {
        for (cy, v) in g.into_iter().enumerate() {
            if columns[cy * dw + cx] != v {
                columns[cy * dw + cx] = v;
                rows[cy] = true;
            }
        }
    }
    // The rows whose column distances moved, each redone whole: the box of
    // what changed in them.
    let spans: Vec<Option<(usize, usize, usize)>> = field
        .texels
        .par_chunks_mut(dw)
        .zip(columns.par_chunks(dw))
        .enumerate()
        .filter(|(cy, _)| rows[*cy])
        .map_init(
            || (Vec::with_capacity(dw), Vec::with_capacity(dw), Vec::with_capacity(dw)),
            |(v, z, old), (cy, (row, g))| {
                old.clear();
                old.extend_from_slice(row);
                envelope_row(g, inf, v, z, row);
                let first = row.iter().zip(old.iter()).position(|(a, b)| a != b)?;
                let last = row.iter().zip(old.iter()).rposition(|(a, b)| a != b).expect("a texel changed");
                Some((cy, first, last))
            },
        )
        .collect();
    let mut changed = TexelRect::default();
    for (cy, first, last) in spans.into_iter().flatten() {
        let r = TexelRect { x0: (first * s) as u32, y0: (cy * s) as u32, x1: ((last + 1) * s).min(w) as u32, y1: ((cy + 1) * s).min(h) as u32 };
        changed = changed.union(&r);
    }
    changed
}

/// One row of the lower envelope; `g[q] >= inf` means no covered texel in
/// column `q`. `v` (each kept parabola's column and `g^2 + q^2`) and `z`
/// are scratch (`g` and `out` must not alias); boundaries are exact fractions `num / den` (`den > 0`;
/// `den == 0` is minus infinity), compared by cross multiplication, so the
/// loop divides nothing. Any exact envelope gives the same values at the
/// integer texels: the output is unique.
fn envelope_row(g: &[u32], inf: u32, v: &mut Vec<(i64, i64)>, z: &mut Vec<(i64, i64)>, out: &mut [u32]) {
    v.clear();
    z.clear();
    for (q, &gq) in g.iter().enumerate() {
        if gq >= inf {
            continue;
        }
        let q = q as i64;
        let fq = i64::from(gq * gq) + q * q;
        // Drop parabolas that the new one hides from their left boundary on.
        let mut boundary = (0i64, 0i64);
        while let Some(&(last, fl)) = v.last() {
            // The parabolas of `last` and `q` cross at num / den.
            let (num, den) = (fq - fl, 2 * (q - last));
            let (zn, zd) = z[z.len() - 1];
            if zd != 0 && num * zd <= zn * den {
                v.pop();
                z.pop();
            } else {
                boundary = (num, den);
                break;
            }
        }
        v.push((q, fq));
        z.push(boundary);
    }
    if v.is_empty() {
        out.fill(FAR);
        return;
    }
    let mut k = 0;
    for (x, o) in out.iter_mut().enumerate() {
        let xi = x as i64;
        while k + 1 < v.len() && z[k + 1].0 < xi * z[k + 1].1 {
            k += 1;
        }
        let (q, fq) = v[k];
        // (x - q)^2 + g^2 = fq - 2xq + x^2.
        *o = (fq - 2 * xi * q + xi * xi) as u32;
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
            let df = distance_field(&cov, w, h, 1).texels;
            prop_assert_eq!(df, brute(&cov, w, h));
        }
    }

    proptest! {
        #[test]
        fn an_update_equals_a_rebuild(w in 1u32..30, h in 1u32..30, scale in prop_oneof![Just(1u32), Just(2), Just(4)], seed in any::<u64>(),
            density in 0u64..30, rect in (0u32..30, 0u32..30, 1u32..12, 1u32..12)) {
            let mut cov: Vec<u8> = (0..w * h).map(|i| u8::from(murk_core::fixed::hash2(i as i32, seed as i32) % 100 < density as u32)).collect();
            let (mut field, mut columns) = distance_field_kept(&cov, w, h, scale);
            let r = TexelRect { x0: rect.0.min(w - 1), y0: rect.1.min(h - 1), x1: (rect.0 + rect.2).min(w), y1: (rect.1 + rect.3).min(h) };
            for y in r.y0..r.y1 {
                for x in r.x0..r.x1 {
                    let i = (y * w + x) as usize;
                    cov[i] = u8::from(murk_core::fixed::hash2(i as i32, !seed as i32).is_multiple_of(3));
                }
            }
            let before = field.clone();
            let changed = update_distance_field(&cov, w, h, scale, &[r], &mut field, &mut columns);
            let (want, want_columns) = distance_field_kept(&cov, w, h, scale);
            prop_assert_eq!(&field, &want);
            prop_assert_eq!(columns, want_columns);
            // Every DF texel that changed lies in the box reported.
            for (i, (a, b)) in before.texels.iter().zip(&want.texels).enumerate() {
                if a != b {
                    let (x, y) = ((i as u32 % want.width) * scale, (i as u32 / want.width) * scale);
                    prop_assert!(x >= changed.x0 && x < changed.x1 && y >= changed.y0 && y < changed.y1, "DF texel {} outside {:?}", i, changed);
                }
            }
        }
    }

    #[test]
    fn downscale_marks_blocks() {
        let mut cov = vec![0u8; 8 * 8];
        cov[5 * 8 + 5] = 1;
        let Grid { width: dw, height: dh, texels: df } = distance_field(&cov, 8, 8, 2);
        assert_eq!((dw, dh), (4, 4));
        assert_eq!(df[2 * 4 + 2], 0);
        assert_eq!(df[0], 8);
    }
}
