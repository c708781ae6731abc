//! Pass 5, visibility: per texel, the strongest reveal of the sources in its tile.
//!
//! Inputs: sources (Q3 texel space) binned per tile, coverage, height, and the
//! mips or distance field when the ray method reads them. Output: raw
//! visibility, `0..=65535`.
//!
//! Per source and texel, in this order (every step integer):
//! 1. range: the texel centre lies strictly inside the radius;
//! 2. cone: `dot(d, cone) >= cos(half) * |d|` (Q14);
//! 3. falloff: full inside `inner_radius`, then linear to 0 at `radius`;
//! 4. Z strength: times the source's Z-overlap factor;
//! 5. ray: from the source's texel to the target texel over the occlusion
//!    textures. A covered texel `c` at step `k` (Chebyshev distance from the
//!    source texel) of a ray of `n` steps blocks when
//!    `(height(c) - eye) * n > (target - eye) * k`, i.e. it rises above the
//!    line from the eye to the target (the target is its ground height plus
//!    the profile's target height). Uncovered texels never block. The target
//!    texel itself never blocks its own ray, so walls are lit.
//!
//! Sources combine by max, so the order of sources does not matter.
//! With `reveal_walls`, a covered texel then takes the strongest reveal of
//! its uncovered 8-neighbours where that is higher than its own: the face of
//! a wall beside lit floor is lit even where no ray reaches the wall texel's
//! centre (grazing angles). Anti-vision sources (flag `SOURCE_ANTI`) take
//! steps 1-4 only; the texel's result is
//! `reveal * (65535 - strongest anti-vision) / 65535`.
//! Twin: `backend-gpu/shaders/visibility.wgsl`.
//!
//! (The file is long for its tests: about half of it checks the windows,
//! the shortcuts and the marches against each other.)

use murk_core::fixed::mask_mul;
use murk_core::frame::SOURCE_ANTI;
use murk_core::RecomputeInput;
use std::collections::BTreeMap;
use wide::{i16x8, u16x16, u16x8, u8x16};

use crate::passes::dirty::{texel_rect, Blocks, BLOCK};
use crate::passes::lanes::{load, mask_mul8, max_into, max_into_rising, store, LANES};
use crate::passes::pieces::{self, ROWS_TAKEN};

mod march;
mod occlusion;
pub mod shadowcast;
mod source;
mod window;

pub use occlusion::{Accel, Occlusion, MAX_CLASSES};
pub use source::{falloff_value, source_value};
pub use window::{Window, WindowCache};

/// A window's box `(x0, y0, width, rows)` in grid texels.
type Box4 = (usize, usize, usize, usize);

/// Computes the visibility of every texel into `out` from scratch (every
/// source's window built anew). [`visibility_cached`] is the same with
/// windows kept across calls.
pub fn visibility(input: &RecomputeInput, occ: &Occlusion, out: &mut [u16]) {
    visibility_cached(input, occ, &mut WindowCache::default(), out);
}

/// Computes the visibility of every texel into `out`, building only the
/// windows `cache` lacks; returns how many were built.
///
/// Each band of `tile_size` rows (in parallel) combines the windows of the
/// sources binned to its tiles: the strongest reveal and the strongest
/// anti-vision, each into a grid the cache keeps. Both combine by max, so
/// the order of sources changes no result, and a kept combination only
/// needs the changes: the boxes of dropped windows are combined anew from
/// every window over them, and new windows are added by max. A second pass
/// over rows then lights covered texels from their open neighbours (with
/// `reveal_walls`, see [`wall_reveal`]) and applies the anti-vision.
pub fn visibility_cached(input: &RecomputeInput, occ: &Occlusion, cache: &mut WindowCache, out: &mut [u16]) -> usize {
    visibility_changes(input, occ, cache, out).0
}

/// [`visibility_cached`], also answering which blocks of `out` changed
/// (exactly: a marked block holds a texel whose bytes changed), and which
/// blocks hold a texel within `input.blur`'s radius of a changed texel
/// along its row (the blocks a blur must redo on that row, before rows are
/// widened; exactly those). When the
/// kept combination is updated, only the blocks of the boxes of the windows
/// dropped and added (widened by one texel with `reveal_walls`, as walls
/// read their 8-neighbours) are finished again: `out` must hold what the
/// last call with this cache wrote (a cache that has not finished a grid,
/// or finished it under another `reveal_walls`, finishes every texel).
pub fn visibility_changes(input: &RecomputeInput, occ: &Occlusion, cache: &mut WindowCache, out: &mut [u16]) -> (usize, Blocks, Blocks) {
    let w = occ.width as usize;
    let bins = &input.bins;
    let changes = cache.update(input, occ);
    // Redoing a dropped window's box costs about as much as its share of a
    // full combination: past half the windows dropped, combine everything.
    let incremental = cache.combined && cache.painted.len() == out.len() && 2 * changes.removed.len() < cache.windows.len();
    cache.painted.resize(out.len(), 0);
    cache.concealed.resize(out.len(), 0);
    let windows = &cache.windows;
    let band_rows = bins.tile_size as usize;
    // Each source's window (looked up once, not once per band it meets).
    let of_source: Vec<(&Window, bool)> =
        input.sources.iter().zip(&changes.rank).map(|(s, &r)| (&windows[r as usize], s.flags & SOURCE_ANTI != 0)).collect();
    // With no anti-vision window the concealment combined is 0 everywhere.
    let any_anti = of_source.iter().any(|&(_, anti)| anti);
    let added: Vec<(&Window, bool)> = changes.added.iter().map(|&i| (&windows[i], cache.keys[i].flags & SOURCE_ANTI != 0)).collect();
    // A dropped window and a new one over the same grid make a pair (best a
    // source that moved within its texel, over the same box; else one that
    // stepped to a texel beside it). With the new window's value taken as 0
    // outside its box: where the new value is at least the old one, or the
    // old one was below the combined value, the combination becomes the
    // maximum of the kept value and the new one (which adding the new
    // windows does); only the texels where the old value was the maximum
    // and the new one is lower are combined anew. Dropped windows left
    // without a partner have their whole box combined anew.
    let (mut pairs, mut unpaired): (Vec<(&Window, &Window, bool)>, Vec<Box4>) = (Vec::new(), Vec::new());
    if incremental {
        // The new windows not paired yet, by grid and box corner.
        let mut free: BTreeMap<(bool, usize, usize), Vec<&Window>> = BTreeMap::new();
        for &(win, anti) in added.iter().filter(|(win, _)| win.width > 0 && win.rows > 0) {
            free.entry((anti, win.y0 as usize, win.x0 as usize)).or_default().push(win);
        }
        let mut take = |anti: bool, (x0, y0): (usize, usize), same: Option<Box4>| {
            let list = free.get_mut(&(anti, y0, x0))?;
            let at = list.iter().position(|win| same.is_none_or(|r| win.rect() == r))?;
            Some(list.swap_remove(at))
        };
        // Same boxes first, then boxes whose corner is one texel away.
        let mut left = Vec::new();
        for (key, old) in &changes.removed {
            let anti = key.flags & SOURCE_ANTI != 0;
            match take(anti, (old.x0 as usize, old.y0 as usize), Some(old.rect())) {
                Some(new) => pairs.push((old, new, anti)),
                None => left.push((old, anti)),
            }
        }
        for (old, anti) in left {
            let (x0, y0) = (old.x0 as usize, old.y0 as usize);
            let beside = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
                .into_iter()
                .filter_map(|(dx, dy): (isize, isize)| Some((x0.checked_add_signed(dx)?, y0.checked_add_signed(dy)?)))
                .find_map(|corner| take(anti, corner, None));
            match beside {
                Some(new) => pairs.push((old, new, anti)),
                None => unpaired.push(old.rect()),
            }
        }
    }
    // The finish redoes, on a kept combination, the blocks where the
    // combination may have changed, widened by `by` texels (walls read
    // their 8-neighbours); rows are widened after the bands.
    let by = usize::from(input.reveal_walls);
    let per_row = w.div_ceil(BLOCK);
    let mark = |marks: &mut [bool], row: usize, (a, b): (usize, usize)| {
        let (a, b) = (a.saturating_sub(by), (b + by).min(w));
        marks[row * per_row + a / BLOCK..=row * per_row + (b - 1) / BLOCK].fill(true);
    };
    // Max the windows of `list` (with whether each is anti-vision) over the
    // box `bx0..bx1` by `by0..by1` into the band starting at row `y0`; with
    // `marks` (the band's), marking the texels where a value rose.
    let combine = |list: &[(&Window, bool)],
                   y0: usize,
                   reveal: &mut [u16],
                   conceal: &mut [u16],
                   (bx0, bx1): (usize, usize),
                   (by0, by1): (usize, usize),
                   mut marks: Option<&mut [bool]>| {
        for &(win, anti) in list {
            let target = if anti { &mut *conceal } else { &mut *reveal };
            let (wx0, wy0, ww, wrows) = win.rect();
            let (x0, x1) = (wx0.max(bx0), (wx0 + ww).min(bx1));
            if x0 >= x1 {
                continue;
            }
            for y in wy0.max(by0)..(wy0 + wrows).min(by1) {
                let from = (y - wy0) * ww + x0 - wx0;
                let (dst, src) = (&mut target[(y - y0) * w + x0..(y - y0) * w + x1], &win.values[from..from + x1 - x0]);
                match marks.as_deref_mut() {
                    Some(marks) => max_into_rising(dst, src, |a, b| mark(marks, y - y0, (x0 + a, x0 + b))),
                    None => max_into(dst, src),
                }
            }
        }
    };
    let mut rising = Blocks::new(w, occ.height as usize, false);
    let bands = cache.painted.chunks_mut(w * band_rows).zip(cache.concealed.chunks_mut(w * band_rows));
    pieces::each(
        bands.zip(rising.marks.chunks_mut(per_row * band_rows)),
        1,
        || (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()),
        |(seen, band_windows, spans, near, aligned), band, ((reveal, conceal), marks)| {
            // The sources binned to the band's tiles, each once (`seen`
            // holds the last band + 1 that listed a source).
            let tile_row = band as u32;
            seen.resize(input.sources.len(), 0u32);
            band_windows.clear();
            for t in tile_row * bins.tiles_x..(tile_row + 1) * bins.tiles_x {
                for &i in &bins.indices[bins.offsets[t as usize] as usize..bins.offsets[t as usize + 1] as usize] {
                    if seen[i as usize] != tile_row + 1 {
                        seen[i as usize] = tile_row + 1;
                        band_windows.push(of_source[i as usize]);
                    }
                }
            }
            let (y0, y1) = (band * band_rows, band * band_rows + reveal.len() / w);
            if !incremental {
                reveal.fill(0);
                conceal.fill(0);
                combine(band_windows, y0, reveal, conceal, (0, w), (y0, y1), None);
                return;
            }
            // The pairs, against the combination as it was: per row, the
            // span of texels to combine anew.
            spans.clear();
            for (p, &(old, new, anti)) in pairs.iter().enumerate() {
                let grid = if anti { &*conceal } else { &*reveal };
                let (ox, oy, ow, orows) = old.rect();
                let (nx, ny, nw, nrows) = new.rect();
                for y in oy.max(y0)..(oy + orows).min(y1) {
                    let r = (y - oy) * ow;
                    let at = (y - y0) * w + ox;
                    // The new window's values over the old row (0 outside its box).
                    let beside: &[u16] = if (nx, ny, nw, nrows) == (ox, oy, ow, orows) {
                        &new.values[r..r + ow]
                    } else {
                        aligned.clear();
                        aligned.resize(ow, 0);
                        let (a, b) = (ox.max(nx), (ox + ow).min(nx + nw));
                        if (ny..ny + nrows).contains(&y) && a < b {
                            let from = (y - ny) * nw + a - nx;
                            aligned[a - ox..b - ox].copy_from_slice(&new.values[from..from + b - a]);
                        }
                        aligned
                    };
                    if let Some((a, b)) = pair_span(&old.values[r..r + ow], beside, &grid[at..at + ow]) {
                        spans.push((p, y, ox + a, ox + b));
                    }
                }
            }
            // Each unpaired dropped window's box, cleared and combined anew
            // from every window over it (a later box clears only what it
            // recombines).
            for &(rx, ry, rw, rrows) in &unpaired {
                let (ry0, ry1) = (ry.max(y0), (ry + rrows).min(y1));
                for y in ry0..ry1 {
                    let at = (y - y0) * w + rx;
                    reveal[at..at + rw].fill(0);
                    conceal[at..at + rw].fill(0);
                    mark(marks, y - y0, (rx, rx + rw));
                }
                if ry0 < ry1 {
                    combine(band_windows, y0, reveal, conceal, (rx, rx + rw), (ry0, ry1), None);
                }
            }
            // The pairs' spans, from the windows over the pair's box.
            let mut last = usize::MAX;
            for &(p, y, a, b) in spans.iter() {
                if p != last {
                    let (ox, oy, ow, orows) = pairs[p].0.rect();
                    near.clear();
                    near.extend(band_windows.iter().copied().filter(|(win, _)| {
                        let (x0, wy0, ww, wrows) = win.rect();
                        x0 < ox + ow && ox < x0 + ww && wy0 < oy + orows && oy < wy0 + wrows
                    }));
                    last = p;
                }
                let at = (y - y0) * w;
                reveal[at + a..at + b].fill(0);
                conceal[at + a..at + b].fill(0);
                mark(marks, y - y0, (a, b));
                combine(near, y0, reveal, conceal, (a, b), (y, y + 1), None);
            }
            // New windows add to what is kept.
            combine(&added, y0, reveal, conceal, (0, w), (y0, y1), Some(marks));
        },
    );
    cache.combined = true;
    // The texels the finish must redo. On a kept combination, those whose
    // painted reveal or concealment may have changed (the texels combined
    // anew, and those where a new window raised the value), and (walls read
    // their 8-neighbours) the texels beside them; the other blocks keep what
    // they hold. Otherwise every window's box (and the texels beside it):
    // outside them nothing is painted, so the finished texel is 0.
    let kept = incremental && cache.finished == Some(input.reveal_walls);
    let mut region = if kept {
        rising.widened_rows(by)
    } else {
        let mut boxes = Blocks::new(w, occ.height as usize, false);
        for (x0, y0, ww, rows) in cache.windows.iter().map(Window::rect).filter(|&(_, _, ww, rows)| ww > 0 && rows > 0) {
            boxes.mark(texel_rect(x0, y0, x0 + ww, y0 + rows), by);
        }
        boxes
    };
    // Where the coverage changed, the finish reads it (a wall's own texel,
    // and with `reveal_walls` its neighbours').
    for r in cache.touched.drain(..) {
        region.mark(r, by);
    }
    cache.finished = Some(input.reveal_walls);
    // Covered texels read their neighbours' reveal as painted, before any
    // texel is lit or concealed. Each block finished is compared with what
    // it held.
    let painted = &cache.painted;
    let blur_by = input.blur.radius();
    let (mut changed, mut reach) = (Blocks::new(w, occ.height as usize, false), Blocks::new(w, occ.height as usize, false));
    let rows = out.chunks_mut(w).zip(cache.concealed.chunks(w));
    pieces::each(
        rows.zip(changed.marks.chunks_mut(per_row).zip(reach.marks.chunks_mut(per_row))),
        ROWS_TAKEN,
        || (Vec::new(), Vec::new()),
        |(near, texels), y, ((row, conceal), (changed, reach))| {
            // Per block of the row, its texels that changed (bit i: texel i).
            texels.clear();
            texels.resize(per_row, 0u16);
            let marks = &region.marks[y * per_row..(y + 1) * per_row];
            for (x0, x1) in Blocks::spans(marks, w) {
                let conceal = any_anti.then_some(conceal);
                finish_span(occ, painted, input.reveal_walls, conceal, y, (x0, x1), near, row, &mut texels[x0 / BLOCK..x1.div_ceil(BLOCK)]);
            }
            if !kept {
                for (b, (t, _)) in texels.iter_mut().zip(marks).enumerate().filter(|(_, (_, &m))| !m) {
                    let block = &mut row[b * BLOCK..((b + 1) * BLOCK).min(w)];
                    *t = block.iter().enumerate().fold(0, |acc, (i, &v)| acc | u16::from(v != 0) << i);
                    if *t != 0 {
                        block.fill(0);
                    }
                }
            }
            for (b, &t) in texels.iter().enumerate().filter(|(_, &t)| t != 0) {
                changed[b] = true;
                let (lo, hi) = (b * BLOCK + t.trailing_zeros() as usize, b * BLOCK + BLOCK - 1 - t.leading_zeros() as usize);
                reach[lo.saturating_sub(blur_by) / BLOCK..=(hi + blur_by).min(w - 1) / BLOCK].fill(true);
            }
        },
    );
    (changes.built, changed, reach)
}

/// For one row of a pair (a dropped window's values `old`, the new
/// window's `new` over the same texels, the combination `painted` as it
/// was): a span `a..b` holding every texel where the new value is below the
/// old one and the old one is the combined value, or `None` when there is
/// none. Sixteen texels at a time (the span is widened to whole steps).
pub(crate) fn pair_span(old: &[u16], new: &[u16], painted: &[u16]) -> Option<(usize, usize)> {
    const N: usize = 16;
    let n = old.len();
    if n < N {
        let needs = |i: &usize| new[*i] < old[*i] && old[*i] == painted[*i];
        let a = (0..n).find(needs)?;
        let b = (0..n).rev().find(needs).expect("a texel was found") + 1;
        return Some((a, b));
    }
    let step = |at: usize| {
        let load = |v: &[u16]| u16x16::new(v[at..at + N].try_into().expect("16 texels"));
        let (o, nw, p) = (load(old), load(new), load(painted));
        let needs = o.simd_eq(p) & !nw.max(o).simd_eq(nw);
        needs.as_array() != &[0u16; N]
    };
    let starts = (0..n / N).map(|k| k * N).chain((!n.is_multiple_of(N)).then_some(n - N));
    let (mut a, mut b) = (usize::MAX, 0);
    for at in starts.filter(|&at| step(at)) {
        a = a.min(at);
        b = b.max(at + N);
    }
    (a < b).then_some((a, b))
}

/// Texels `x0..x1` of row `y` of the finished visibility: each texel's
/// painted reveal, for a covered texel raised to its open neighbours' (with
/// `reveal_walls`, as [`wall_reveal`]), then scaled down by the anti-vision
/// in `conceal` (the whole row; `None` where no texel is concealed). Eight
/// texels at a time with `wide`;
/// [`finish_row_scalar`] is the reference. `near` is scratch; `out` is the
/// whole row. In `changed[b]`, for each run `b` of [`BLOCK`] texels from
/// `x0` on, bit `i` is set where the run's texel `i` changed value (other
/// bits are left as they are).
#[allow(clippy::too_many_arguments, reason = "the grids and marks of one pass")]
pub fn finish_span(
    occ: &Occlusion,
    painted: &[u16],
    reveal_walls: bool,
    conceal: Option<&[u16]>,
    y: usize,
    (x0, x1): (usize, usize),
    near: &mut Vec<u16>,
    out: &mut [u16],
    changed: &mut [u16],
) {
    let (w, h) = (occ.width as usize, occ.height as usize);
    let n = x1 - x0;
    // near[i]: the strongest open reveal in column x0 + i - 1 of rows
    // y-1..=y+1, zero for a column outside the grid (no neighbour).
    near.clear();
    near.resize(n + 2, 0);
    if reveal_walls {
        let (c0, c1) = (x0.saturating_sub(1), (x1 + 1).min(w));
        let at = c0 + 1 - x0;
        for ny in y.saturating_sub(1)..=(y + 1).min(h - 1) {
            open_max_into(&mut near[at..at + c1 - c0], &painted[ny * w + c0..ny * w + c1], &occ.coverage[ny * w + c0..ny * w + c1]);
        }
    }
    let (own, coverage) = (&painted[y * w + x0..y * w + x1], &occ.coverage[y * w + x0..y * w + x1]);
    let (conceal, out) = (conceal.map(|c| &c[x0..x1]), &mut out[x0..x1]);
    let whole = n / LANES * LANES;
    let (zero, full) = (u16x8::splat(0), u16x8::splat(u16::MAX));
    for x in (0..whole).step_by(LANES) {
        let mine = load(&own[x..]);
        let open = u16x8::new(std::array::from_fn(|i| u16::from(coverage[x + i]))).simd_eq(zero);
        let beside = load(&near[x..]).max(load(&near[x + 1..])).max(load(&near[x + 2..]));
        let lit = open.select(mine, mine.max(beside));
        // A texel with no concealment keeps its reveal (`mask_mul(v, 65535)` is `v`).
        let v = conceal.map_or(lit, |c| mask_mul8(lit, full - load(&c[x..])));
        // One bit per lane whose value changed.
        let same = bytemuck::cast::<u16x8, i16x8>(v ^ load(&out[x..])).simd_eq(i16x8::splat(0));
        changed[x / BLOCK] |= ((!same.to_bitmask() & 0xff) as u16) << (x % BLOCK);
        store(v, &mut out[x..]);
    }
    for x in whole..n {
        let lit = if coverage[x] == 0 { own[x] } else { own[x].max(near[x]).max(near[x + 1]).max(near[x + 2]) };
        let v = conceal.map_or(lit, |c| mask_mul(lit, u16::MAX - c[x]));
        changed[x / BLOCK] |= u16::from(v != out[x]) << (x % BLOCK);
        out[x] = v;
    }
}

/// `near[x] = max(near[x], reveal[x] where coverage[x] is 0)`, sixteen
/// texels at a time.
fn open_max_into(near: &mut [u16], reveal: &[u16], coverage: &[u8]) {
    const N: usize = 16;
    let whole = near.len() / N * N;
    let zero = u16x16::splat(0);
    for x in (0..whole).step_by(N) {
        let open = u16x16::from(u8x16::new(coverage[x..x + N].try_into().expect("16 texels"))).simd_eq(zero);
        let r = u16x16::new(reveal[x..x + N].try_into().expect("16 texels")) & open;
        let m = u16x16::new(near[x..x + N].try_into().expect("16 texels")).max(r);
        near[x..x + N].copy_from_slice(m.as_array());
    }
    for x in whole..near.len() {
        if coverage[x] == 0 {
            near[x] = near[x].max(reveal[x]);
        }
    }
}

/// The reference of [`finish_span`] over a whole row, one texel at a time.
pub fn finish_row_scalar(occ: &Occlusion, painted: &[u16], reveal_walls: bool, conceal: &[u16], y: usize, out: &mut [u16]) {
    for (x, (o, &c)) in out.iter_mut().zip(conceal).enumerate() {
        let r = if reveal_walls { wall_reveal(occ, painted, x, y) } else { painted[y * occ.width as usize + x] };
        *o = mask_mul(r, u16::MAX - c);
    }
}

/// The reveal of texel `(x, y)` under `reveal_walls`: an open texel keeps
/// its own; a covered texel takes the strongest of its own and of its open
/// 8-neighbours (texels outside the grid are not neighbours). Only open
/// texels give, so a wall never lights the wall behind it, and the rule is
/// the same whether sources are combined before or after it (max commutes).
pub fn wall_reveal(occ: &Occlusion, reveal: &[u16], x: usize, y: usize) -> u16 {
    let (w, h) = (occ.width as usize, occ.height as usize);
    let mut r = reveal[y * w + x];
    if occ.coverage[y * w + x] == 0 {
        return r;
    }
    for ny in y.saturating_sub(1)..=(y + 1).min(h - 1) {
        for nx in x.saturating_sub(1)..=(x + 1).min(w - 1) {
            let k = ny * w + nx;
            if occ.coverage[k] == 0 {
                r = r.max(reveal[k]);
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::shadowcast::{octants_reading, RayBits, ALL_OCTANTS};
    use super::source::source_value_with;
    use super::window::{FalloffTable, Shadow};
    use super::*;
    use murk_core::fixed::hash2;
    use murk_core::fixed::HEIGHT_WALL;
    use murk_core::BlurKernel;
    use murk_core::Grid;
    use murk_core::{RayMethod, SourceTexel, TexelRect};
    use proptest::prelude::*;

    /// A random grid: covered texels rise above `eye` (walls or lower tops),
    /// except with `low` some covered texels sit at or below it; uncovered
    /// ground has random heights so some targets rise above the eye.
    /// With `palette`, covered tops take at most four values (so the
    /// shortcut keeps a class per top and decides raised targets too).
    fn grid(w: u32, h: u32, seed: i32, density: u32, eye: i32, low: bool, palette: bool) -> (Vec<u8>, Vec<i32>) {
        let (mut cov, mut heights) = (Vec::new(), Vec::new());
        let tops = [HEIGHT_WALL, eye + 1, eye + 1 + (seed.unsigned_abs() % 300) as i32, 2 * eye + 5];
        for i in 0..(w * h) as i32 {
            let r = hash2(i, seed);
            let covered = r % 100 < density;
            cov.push(u8::from(covered));
            heights.push(match (covered, r / 100 % 4) {
                (true, 1) if low => eye - (r / 400 % 50) as i32,
                (true, k) if palette => tops[k as usize],
                (true, 0) => HEIGHT_WALL,
                (true, _) => eye + 1 + (r / 400 % 300) as i32,
                (false, _) => (r / 400 % (2 * eye.max(1) as u32 + 40)) as i32,
            });
        }
        (cov, heights)
    }

    /// DDA inputs for `sources` over a `w x h` grid (bins of 16 texels), no
    /// blur, the given target height and walls rule.
    fn dda_input(sources: Vec<SourceTexel>, w: u32, h: u32, target_height: i32, reveal_walls: bool) -> RecomputeInput {
        RecomputeInput {
            bins: murk_core::bin_sources(&sources, w, h, 16),
            sources,
            method: RayMethod::Dda,
            target_height,
            df_scale: 1,
            soft_shadow_k_q8: 0,
            df_jitter: 0,
            blur: BlurKernel::gaussian(0, 1.0, 0),
            forget_step: 0,
            freeze_memory: false,
            fade_in_step: 0,
            relax_step: 0,
            explored_value: 32768,
            mapped_value: 0,
            show_memory_alpha: 65535,
            reveal_walls,
            reuse_visibility: false,
        }
    }

    /// Ground heights changed in place under kept windows, and covers came
    /// and went (the cache told where, as a local occlusion update does):
    /// the windows of the sources that stand, worked out again from their
    /// old values, and those swept after the sources moved, which read the
    /// heights as kept low bits, give the bytes of a cold pass over the
    /// new occlusion.
    #[test]
    fn windows_after_a_local_change_equal_a_cold_pass() {
        let (w, h) = (72u32, 56u32);
        for seed in 0..4 {
            let (mut cov, mut heights) = grid(w, h, seed, 12, 12, false, true);
            let mut accel = Accel::new(&cov, &heights, w, h);
            let src = |x: i32, y: i32| SourceTexel { x: x * 8 + 3, y: y * 8 + 4, radius: 30 * 8, eye: 12, strength: 65535, ..Default::default() };
            let at = |dx: i32| vec![src(20 + dx, 20), src(50 - dx, 30), src(36, 12 + dx)];
            let mut cache = WindowCache::default();
            let mut out = vec![0u16; (w * h) as usize];
            {
                let occ =
                    Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
                visibility_cached(&dda_input(at(0), w, h, 2, true), &occ, &mut cache, &mut out);
            }
            // Open ground in the rectangle swaps sides of the eye.
            let rect = TexelRect { x0: 24, y0: 14, x1: 50, y1: 40 };
            for y in rect.y0..rect.y1 {
                for x in rect.x0..rect.x1 {
                    let i = (y * w + x) as usize;
                    if cov[i] == 0 {
                        heights[i] = if heights[i] + 2 <= 12 { 30 + (i as i32 % 7) } else { i as i32 % 9 };
                    }
                }
            }
            // A building of walls goes up, trees fall.
            let site = TexelRect { x0: 30 + seed as u32, y0: 24, x1: 33 + seed as u32, y1: 27 };
            for y in site.y0..site.y1 {
                for x in site.x0..site.x1 {
                    let i = (y * w + x) as usize;
                    (cov[i], heights[i]) = if cov[i] == 0 { (1, HEIGHT_WALL) } else { (0, 3) };
                }
            }
            let same_classes = accel.update(&cov, &heights, w, h, &[rect, site]);
            cache.forget(&[rect, site], !same_classes);
            let occ =
                Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            for dx in 0..3 {
                let input = dda_input(at(dx), w, h, 2, true);
                visibility_cached(&input, &occ, &mut cache, &mut out);
                let mut cold = vec![0u16; out.len()];
                visibility(&input, &occ, &mut cold);
                assert_eq!(out, cold, "seed {seed}, step {dx}");
            }
        }
    }

    /// A raised target on a diagonal of the source, with a low cover before
    /// it on the diagonal and walls on both sides of the last corner: DDA's
    /// ray is stopped at that corner, Step Scan's passes (it visits no
    /// corner); the sweep answers both as their marches do, every texel.
    #[test]
    fn the_last_corner_on_a_diagonal_stops_dda_not_step_scan() {
        let (w, h) = (8u32, 8u32);
        let (mut cov, mut heights) = (vec![0u8; 64], vec![0i32; 64]);
        let mut set = |x: usize, y: usize, c: u8, top: i32| (cov[y * 8 + x], heights[y * 8 + x]) = (c, top);
        set(2, 2, 1, 11);
        set(3, 4, 1, HEIGHT_WALL);
        set(4, 3, 1, HEIGHT_WALL);
        set(4, 4, 0, 50);
        let accel = Accel::new(&cov, &heights, w, h);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        let s = SourceTexel { x: 8 + 4, y: 8 + 4, radius: 40, eye: 10, strength: 65535, ..Default::default() };
        let mut at_target = Vec::new();
        for method in [RayMethod::Dda, RayMethod::StepScan] {
            let input = RecomputeInput { method, ..dda_input(vec![s], w, h, 0, false) };
            let bits = RayBits::build(&s, &occ, method, ALL_OCTANTS).expect("every cover rises above the eye");
            for (x, y) in (0..h).flat_map(|y| (0..w).map(move |x| (x, y))) {
                let march = source_value(&input, &occ, &s, x, y);
                assert_eq!(source_value_with(&input, &occ, &s, Some(&bits), x, y), march, "{method:?}: texel ({x}, {y})");
            }
            at_target.push(source_value(&input, &occ, &s, 4, 4));
        }
        assert_eq!(at_target[0], 0, "DDA stops at the last corner");
        assert_ne!(at_target[1], 0, "Step Scan passes it");
    }

    /// The cache holds one window per distinct source key: equal sources
    /// share one, sources that leave free theirs, and a moved source costs
    /// exactly one new window.
    #[test]
    fn the_window_cache_keeps_one_window_per_distinct_source_and_frees_the_rest() {
        let (w, h) = (48u32, 40u32);
        let (cov, heights) = grid(w, h, 3, 10, 12, false, false);
        let accel = Accel::new(&cov, &heights, w, h);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        let src = |x: i32, y: i32| SourceTexel { x: x * 8 + 4, y: y * 8 + 4, radius: 80, eye: 12, strength: 65535, ..Default::default() };
        let input = |sources: Vec<SourceTexel>| dda_input(sources, w, h, 0, true);
        let mut cache = WindowCache::default();
        let mut out = vec![0u16; (w * h) as usize];
        let three = input(vec![src(5, 5), src(5, 5), src(20, 30), src(40, 10)]);
        assert_eq!(visibility_cached(&three, &occ, &mut cache, &mut out), 3, "two equal sources share one window");
        assert_eq!(cache.len(), 3);
        let first = out.clone();
        assert_eq!(visibility_cached(&three, &occ, &mut cache, &mut out), 0, "nothing changed: no window is built");
        assert_eq!(out, first);
        let moved = input(vec![src(5, 5), src(21, 30), src(40, 10)]);
        assert_eq!(visibility_cached(&moved, &occ, &mut cache, &mut out), 1, "one source moved: one window");
        assert_eq!(cache.len(), 3, "the old window of the moved source is freed");
        let mut fresh = vec![0u16; out.len()];
        visibility(&moved, &occ, &mut fresh);
        assert_eq!(out, fresh, "kept windows give the bytes of a cold pass");
        visibility_cached(&input(vec![src(40, 10)]), &occ, &mut cache, &mut out);
        assert_eq!(cache.len(), 1);
        assert!(cache.bytes() > 0 && cache.bytes() <= 2 * 25 * 25);
    }

    /// Windows wider than 64 texels (bit rows of several words, runs
    /// copied across word edges, reversed or not), and windows of sources
    /// outside the grid, hold the first-class bit of every texel and build
    /// the bytes of the march.
    #[test]
    fn wide_windows_lay_out_the_sweep_across_words() {
        let (w, h) = (230u32, 190u32);
        for seed in 0..6 {
            let (cov, heights) = grid(w, h, seed, 4 + seed as u32, 12, false, seed % 2 == 0);
            let accel = Accel::new(&cov, &heights, w, h);
            let occ =
                Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            // Inside the grid, at its edges and (seeds 1 and 4) outside it.
            let (px, py) = ([115, -25, 200, 70, 150, 229][seed as usize], [95, 180, 10, 60, 205, 0][seed as usize]);
            let s = SourceTexel { x: px * 8 + 5, y: py * 8 + 2, radius: (70 + 9 * seed) * 8, eye: 12, strength: 65535, ..Default::default() };
            let bits = RayBits::build(&s, &occ, RayMethod::Dda, ALL_OCTANTS).expect("every cover rises above the eye");
            let input = dda_input(vec![s], w, h, 3 * seed, false);
            let win = Window::build(&input, &occ, &s, None, Shadow::build(&input, &s, &occ, None).as_ref());
            assert!(seed != 0 || win.width > 128, "the window spans three words");
            let rows = win.values.len() / win.width;
            let laid = bits.first_class(win.x0, win.y0, win.width, rows, ALL_OCTANTS);
            for (k, &v) in win.values.iter().enumerate() {
                let (i, r) = (k % win.width, k / win.width);
                let (x, y) = (win.x0 + i as i32, win.y0 + r as i32);
                let bit = laid[r * win.width.div_ceil(64) + i / 64] >> (i % 64) & 1 != 0;
                assert_eq!(bit, bits.blocked(&occ, x, y, 12, 12) == Some(true), "seed {seed}: first-class bit of ({x}, {y})");
                if k % 7 == 0 {
                    assert_eq!(v, source_value(&input, &occ, &s, x as u32, y as u32), "seed {seed}: texel ({x}, {y})");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
        /// A kept combination updated tick by tick (sources moved, added,
        /// dropped, shared, anti-vision among them; every third tick a cache
        /// emptied over the grid it finished) gives the bytes of a cold pass
        /// at every tick, on 1 and 3 threads; the blocks it gives as changed
        /// are those holding a changed texel, and the blocks it gives as
        /// within the blur's reach along a row are those within the blur's
        /// radius of a changed texel on that row (radii under and over a
        /// block).
        #[test]
        fn kept_combination_equals_a_cold_pass(
            seed in any::<i32>(), density in 0u32..30, (w, h) in (20u32..90, 20u32..90), ticks in 2usize..7, reveal_walls in any::<bool>(),
            blur_radius in prop_oneof![0u32..4, 14u32..20],
        ) {
            let (cov, heights) = grid(w, h, seed, density, 12, false, true);
            let accel = Accel::new(&cov, &heights, w, h);
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            let source = |k: u32, tick: u32| {
                let r = hash2(k as i32, seed);
                // One source in five steps each tick, the others stand.
                let step = if k.is_multiple_of(5) { tick * (1 + r % 5) } else { 0 };
                let (x, y) = ((r >> 4) % (w * 8) + step, (r >> 14) % (h * 8) + 2 * step);
                let flags = if r.is_multiple_of(7) { SOURCE_ANTI } else { 0 };
                SourceTexel { x: (x % (w * 8)) as i32, y: (y % (h * 8)) as i32, radius: 40 + (r >> 24) as i32 % 80, eye: 12, strength: 65535, flags, ..Default::default() }
            };
            // Source k appears at tick k % 4; every sixth leaves again at tick 2 + k % 3.
            let alive = |k: u32, tick: u32| tick >= k % 4 && (!k.is_multiple_of(6) || tick < 2 + k % 3);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
                let mut cache = WindowCache::default();
                let mut out = vec![0u16; (w * h) as usize];
                for tick in 0..ticks as u32 {
                    if tick % 3 == 2 {
                        // Nothing kept (an occlusion rebuilt): a cold
                        // combination over a grid finished for other sources.
                        cache = WindowCache::default();
                    }
                    // Two equal sources share a window throughout.
                    let sources: Vec<SourceTexel> = (0..40u32).filter(|&k| alive(k, tick)).map(|k| source(k, tick)).chain([source(99, 0), source(99, 0)]).collect();
                    let mut input = dda_input(sources, w, h, 0, reveal_walls);
                    input.blur = BlurKernel::gaussian(blur_radius, 2.0, 1);
                    let before = out.clone();
                    let (_, changed, reach) = pool.install(|| visibility_changes(&input, &occ, &mut cache, &mut out));
                    // The blocks marked are exactly those holding a texel
                    // that changed, and those within the radius of one
                    // along its row.
                    let (mut want, mut within) = (Blocks::new(w as usize, h as usize, false), Blocks::new(w as usize, h as usize, false));
                    let r = input.blur.radius();
                    for (i, (a, b)) in before.iter().zip(&out).enumerate() {
                        if a != b {
                            let (x, y) = (i % w as usize, i / w as usize);
                            want.mark(texel_rect(x, y, x + 1, y + 1), 0);
                            within.mark(texel_rect(x.saturating_sub(r), y, x + r + 1, y + 1), 0);
                        }
                    }
                    prop_assert_eq!(&changed, &want, "tick {}: changed blocks", tick);
                    prop_assert_eq!(&reach, &within, "tick {}: blocks within the blur's reach", tick);
                    let mut cold = vec![0u16; out.len()];
                    visibility(&input, &occ, &mut cold);
                    prop_assert_eq!(&out, &cold, "tick {} on {} threads", tick, threads);
                }
            }
        }
    }

    /// A source wider than any window the shortcut once kept (half side over
    /// 512) is swept too, and agrees with the march on sampled texels.
    #[test]
    fn a_long_sighted_source_is_swept_and_agrees_with_the_march() {
        let (w, h) = (1100u32, 1100u32);
        let (cov, heights) = grid(w, h, 7, 1, 12, false, false);
        let accel = Accel::new(&cov, &heights, w, h);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        let s =
            SourceTexel { x: 550 * 8 + 3, y: 540 * 8 + 5, radius: 530 * 8, inner_radius: 100 * 8, eye: 12, strength: 65535, ..Default::default() };
        let input = dda_input(vec![s], w, h, 0, false);
        let bits = RayBits::build(&s, &occ, RayMethod::Dda, ALL_OCTANTS).expect("every cover rises above the eye: the window is swept");
        let (mut lit, mut dark) = (0, 0);
        for k in 0..4000 {
            // Half the samples anywhere, half within 120 texels of the source.
            let (x, y) = if k % 2 == 0 { (hash2(k, 1) % w, hash2(k, 2) % h) } else { (430 + hash2(k, 1) % 240, 420 + hash2(k, 2) % 240) };
            let fast = source_value_with(&input, &occ, &s, Some(&bits), x, y);
            assert_eq!(fast, source_value(&input, &occ, &s, x, y), "texel ({x}, {y})");
            if fast > 0 {
                lit += 1
            } else {
                dark += 1
            }
        }
        assert!(lit > 100 && dark > 100, "the sample sees both light and shadow ({lit} lit, {dark} dark)");
    }

    /// The occlusion tables built texel by texel, one bit at a time: what
    /// the parallel, transposing [`Accel::new`] must reproduce.
    fn accel_reference(coverage: &[u8], heights: &[i32], width: u32, height: u32) -> Accel {
        let (w, h) = (width as usize, height as usize);
        let tops: Vec<i32> = coverage.iter().zip(heights).map(|(&c, &ht)| if c != 0 { ht } else { i32::MIN }).collect();
        let (mut levels, mut lowest_top) = (Vec::new(), i32::MAX);
        for &t in tops.iter().filter(|&&t| t != i32::MIN) {
            lowest_top = lowest_top.min(t);
            if levels.len() <= MAX_CLASSES && !levels.contains(&t) {
                levels.push(t);
            }
        }
        let classes_complete = levels.len() <= MAX_CLASSES;
        levels = if classes_complete { levels } else { vec![lowest_top] };
        levels.sort_unstable();
        let (words_per_row, words_per_column) = (w.div_ceil(64), h.div_ceil(64));
        let mut classes: Vec<(i32, Vec<u64>)> = levels.iter().map(|&l| (l, vec![0u64; words_per_row * h])).collect();
        let mut classes_by_column: Vec<Vec<u64>> = classes.iter().map(|_| vec![0u64; words_per_column * w]).collect();
        for (i, &t) in tops.iter().enumerate().filter(|(_, &t)| t != i32::MIN) {
            let (x, y) = (i % w, i / w);
            for ((level, bits), by_column) in classes.iter_mut().zip(classes_by_column.iter_mut()) {
                if *level <= t {
                    bits[y * words_per_row + x / 64] |= 1 << (x % 64);
                    by_column[x * words_per_column + y / 64] |= 1 << (y % 64);
                }
            }
        }
        let mut sums = vec![0u32; (w + 1) * (h + 1)];
        for y in 0..h {
            for x in 0..w {
                sums[(y + 1) * (w + 1) + x + 1] =
                    sums[y * (w + 1) + x + 1] + sums[(y + 1) * (w + 1) + x] - sums[y * (w + 1) + x] + u32::from(coverage[y * w + x] != 0);
            }
        }
        // Here `sums` holds the whole summed-area table, which the built
        // tables give through `covered_before` (see `summed_area`).
        Accel { sums, tops, classes, words_per_row, classes_by_column, words_per_column, classes_complete, lowest_top, ..Accel::default() }
    }

    /// The whole summed-area table of built tables, entry by entry.
    fn summed_area(accel: &Accel, w: u32, h: u32) -> Vec<u32> {
        let (w, h) = (w as usize, h as usize);
        (0..=h).flat_map(|y| (0..=w).map(move |x| accel.covered_before(w, x, y))).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        /// The tables built in parallel by words are the tables built bit by
        /// bit, for widths and heights on both sides of 64 and 128, with few
        /// distinct tops (one class each) and with many (one class), on 1
        /// and 3 threads, built fresh, over the tables of another grid, or
        /// from rows written by a fill.
        #[test]
        fn accel_equals_its_texel_by_texel_twin(w in 1u32..140, h in 1u32..140, seed in any::<i32>(), density in 0u32..80, palette in any::<bool>()) {
            let (cov, heights) = grid(w, h, seed, density, 30, true, palette);
            let want = accel_reference(&cov, &heights, w, h);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
                // Built fresh, and rebuilt over the tables of another grid
                // (another size, other tops).
                let (other_cov, other_heights) = grid(h + 3, w, seed ^ 5, 40, 30, false, !palette);
                let mut reused = Accel::new(&other_cov, &other_heights, h + 3, w);
                pool.install(|| reused.rebuild(&cov, &heights, w, h));
                let fresh = pool.install(|| Accel::new(&cov, &heights, w, h));
                // Written row by row by a fill (as the rasterizer does) over
                // other values, then built from what it wrote.
                let (mut filled_cov, mut filled_heights) = (vec![1u8; cov.len()], vec![-3; heights.len()]);
                let mut filled = Accel::new(&other_cov, &other_heights, h + 3, w);
                pool.install(|| {
                    filled.fill_and_rebuild(&mut filled_cov, &mut filled_heights, w, h, |row, c, hs| {
                        let at = row as usize * w as usize;
                        c.copy_from_slice(&cov[at..at + c.len()]);
                        hs.copy_from_slice(&heights[at..at + hs.len()]);
                    })
                });
                prop_assert_eq!((&filled_cov, &filled_heights), (&cov, &heights));
                for got in [fresh, reused, filled] {
                prop_assert_eq!(&summed_area(&got, w, h), &want.sums);
                prop_assert_eq!(&got.tops, &want.tops);
                prop_assert_eq!(&got.classes, &want.classes);
                prop_assert_eq!(&got.classes_by_column, &want.classes_by_column);
                prop_assert_eq!((got.words_per_row, got.words_per_column), (want.words_per_row, want.words_per_column));
                prop_assert_eq!((got.classes_complete, got.lowest_top), (want.classes_complete, want.lowest_top));
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        /// Tables brought up to date over changed rectangles are the tables
        /// of the changed grid built bit by bit, on 1 and 3 threads: tops
        /// that appear and vanish, class sets that grow, shrink or overflow.
        #[test]
        fn an_updated_accel_equals_its_texel_by_texel_twin(w in 1u32..140, h in 1u32..140, seed in any::<i32>(), density in 0u32..80,
            palettes in (any::<bool>(), any::<bool>()), rects in prop::collection::vec((0u32..140, 0u32..140, 1u32..40, 1u32..40), 1..4)) {
            let (before_cov, before_heights) = grid(w, h, seed, density, 30, true, palettes.0);
            let (other_cov, other_heights) = grid(w, h, seed ^ 9, 80 - density, 30, true, palettes.1);
            let rects: Vec<TexelRect> = rects.iter().map(|&(x, y, rw, rh)| {
                let (x0, y0) = (x % w, y % h);
                TexelRect { x0, y0, x1: (x0 + rw).min(w), y1: (y0 + rh).min(h) }
            }).collect();
            let (mut cov, mut heights) = (before_cov.clone(), before_heights.clone());
            for r in &rects {
                for y in r.y0..r.y1 {
                    for x in r.x0..r.x1 {
                        let i = (y * w + x) as usize;
                        (cov[i], heights[i]) = (other_cov[i], other_heights[i]);
                    }
                }
            }
            let want = accel_reference(&cov, &heights, w, h);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
                let mut got = Accel::new(&before_cov, &before_heights, w, h);
                pool.install(|| got.update(&cov, &heights, w, h, &rects));
                prop_assert_eq!(&summed_area(&got, w, h), &want.sums);
                prop_assert_eq!(&got.tops, &want.tops);
                prop_assert_eq!(&got.classes, &want.classes);
                prop_assert_eq!(&got.classes_by_column, &want.classes_by_column);
                prop_assert_eq!((got.classes_complete, got.lowest_top), (want.classes_complete, want.lowest_top));
                // What a later update reads (per band) is a rebuild's too.
                let rebuilt = Accel::new(&cov, &heights, w, h);
                prop_assert_eq!(&got.column_counts, &rebuilt.column_counts);
                prop_assert_eq!((&got.sums, &got.band_sums), (&rebuilt.sums, &rebuilt.band_sums));
                prop_assert_eq!(got.levels(), rebuilt.levels());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        /// A shadowcast is shared by the sources of one texel, radius and
        /// eye whatever their sub-texel position and falloff: a window built
        /// with another such source's shadowcast holds the march's values.
        #[test]
        fn a_shadowcast_serves_every_source_of_its_key(
            seed in any::<i32>(), density in 0u32..40, (px, py) in (0i32..40, 0i32..40), (a, b) in (0i32..64, 0i32..64), reach8 in 2i32..12, r in 0i32..8, (ia, ib) in (0i32..90, 0i32..90),
        ) {
            let (w, h) = (40u32, 40u32);
            let (cov, heights) = grid(w, h, seed, density, 12, false, true);
            let accel = Accel::new(&cov, &heights, w, h);
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            let radius = reach8 * 8 + r;
            let src = |sub: i32, inner: i32| SourceTexel { x: px * 8 + sub % 8, y: py * 8 + sub / 8, radius, inner_radius: radius * inner / 100, eye: 12, strength: 65535, ..Default::default() };
            let (one, other) = (src(a, ia), src(b, ib));
            prop_assert_eq!(Shadow::key(&one), Shadow::key(&other));
            let input = dda_input(vec![other], w, h, 0, false);
            let shadow = Shadow::build(&input, &one, &occ, None);
            let win = Window::build(&input, &occ, &other, None, shadow.as_ref());
            for (k, &v) in win.values.iter().enumerate() {
                let (x, y) = (win.x0 + (k % win.width) as i32, win.y0 + (k / win.width) as i32);
                prop_assert_eq!(v, source_value(&input, &occ, &other, x as u32, y as u32), "texel ({}, {})", x, y);
            }
        }
    }

    proptest! {
        /// The span of a pair's row holds every texel where the new value
        /// is below the old one and the old one is the combined value, and
        /// is `None` only where there is none (widths on both sides of 16).
        #[test]
        fn pair_span_holds_every_texel_to_combine_anew(
            texels in prop::collection::vec((prop_oneof![Just(0u16), Just(65535), 0u16..40], prop_oneof![Just(0u16), Just(65535), 0u16..40], any::<bool>()), 0..70),
        ) {
            let old: Vec<u16> = texels.iter().map(|t| t.0).collect();
            let new: Vec<u16> = texels.iter().map(|t| t.1).collect();
            // The combined value is the old one, or above it.
            let painted: Vec<u16> = texels.iter().map(|t| if t.2 { t.0 } else { t.0.saturating_add(5) }).collect();
            let needs: Vec<usize> = (0..old.len()).filter(|&i| new[i] < old[i] && old[i] == painted[i]).collect();
            match pair_span(&old, &new, &painted) {
                None => prop_assert!(needs.is_empty()),
                Some((a, b)) => {
                    prop_assert!(!needs.is_empty() && a < b && b <= old.len());
                    prop_assert!(needs.iter().all(|i| (a..b).contains(i)));
                }
            }
        }
    }

    proptest! {
        /// The `wide` finish of a row or of any span of it (walls lit,
        /// anti-vision applied) gives the bytes of the per-texel reference,
        /// edges and all lanes.
        #[test]
        fn finish_row_equals_its_scalar_twin(
            (w, h, texels) in (1u32..40, 1u32..12).prop_flat_map(|(w, h)| (Just(w), Just(h), prop::collection::vec((any::<bool>(), any::<u16>(), prop_oneof![Just(0u16), any::<u16>()]), (w * h) as usize))),
            reveal_walls in any::<bool>(), cut in (any::<u16>(), any::<u16>()),
        ) {
            let cov: Vec<u8> = texels.iter().map(|t| u8::from(t.0)).collect();
            let painted: Vec<u16> = texels.iter().map(|t| t.1).collect();
            let conceal: Vec<u16> = texels.iter().map(|t| t.2).collect();
            let heights = vec![0; cov.len()];
            let accel = Accel::default();
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            let mut near = Vec::new();
            // Per run of BLOCK texels from x0, a bit for each of its texels whose values in `before` and `after` differ.
            let runs = |x0: usize, x1: usize, before: &[u16], after: &[u16]| -> Vec<u16> {
                (x0..x1).step_by(BLOCK).map(|a| (a..(a + BLOCK).min(x1)).fold(0, |bits, x| bits | u16::from(before[x] != after[x]) << (x - a))).collect()
            };
            for y in 0..h as usize {
                let row = y * w as usize..(y + 1) * w as usize;
                let (mut a, mut b) = (vec![0u16; w as usize], vec![1u16; w as usize]);
                finish_row_scalar(&occ, &painted, reveal_walls, &conceal[row.clone()], y, &mut a);
                let mut changed = vec![0u16; (w as usize).div_ceil(BLOCK)];
                finish_span(&occ, &painted, reveal_walls, Some(&conceal[row.clone()]), y, (0, w as usize), &mut near, &mut b, &mut changed);
                prop_assert_eq!(&a, &b, "row {}", y);
                // No concealment given: the bytes of a row concealed nowhere.
                let (mut open, mut none) = (vec![0u16; w as usize], vec![1u16; w as usize]);
                finish_row_scalar(&occ, &painted, reveal_walls, &vec![0u16; w as usize], y, &mut open);
                finish_span(&occ, &painted, reveal_walls, None, y, (0, w as usize), &mut near, &mut none, &mut vec![0u16; (w as usize).div_ceil(BLOCK)]);
                prop_assert_eq!(&open, &none, "row {} without concealment", y);
                prop_assert_eq!(changed, runs(0, w as usize, &a, &vec![1u16; w as usize]), "row {}: changed runs", y);
                // Any span of the row: its texels as the whole row's, the others untouched.
                let (x0, x1) = (cut.0 as usize % (w as usize + 1), cut.1 as usize % (w as usize + 1));
                let (x0, x1) = (x0.min(x1), x0.max(x1));
                // A texel already holding its value is not a change.
                let mut c: Vec<u16> = (0..w as usize).map(|x| if x % 3 == 0 { a[x] } else { 7 }).collect();
                let before = c.clone();
                let mut changed = vec![0u16; (x1 - x0).div_ceil(BLOCK)];
                finish_span(&occ, &painted, reveal_walls, Some(&conceal[row]), y, (x0, x1), &mut near, &mut c, &mut changed);
                for x in 0..w as usize {
                    prop_assert_eq!(c[x], if (x0..x1).contains(&x) { a[x] } else { before[x] }, "row {} span {}..{} texel {}", y, x0, x1, x);
                }
                prop_assert_eq!(changed, runs(x0, x1, &before, &c), "row {} span {}..{}: changed runs", y, x0, x1);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        /// The shadowcast shortcut gives exactly what the DDA march (or the
        /// Step Scan march) gives, for every texel of the window, whether
        /// the target is below or above the eye.
        #[test]
        fn shadowcast_equals_the_march(
            w in 4u32..40, h in 4u32..40, seed in any::<i32>(), density in 0u32..60,
            px in 0u32..320, py in 0u32..320, radius in 8i32..200, eye in 1i32..400, low in any::<bool>(), palette in any::<bool>(),
            target_height in -20i32..60, step_scan in any::<bool>(),
        ) {
            let (cov, heights) = grid(w, h, seed, density, eye, low, palette);
            let accel = Accel::new(&cov, &heights, w, h);
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            let s = SourceTexel { x: (px % (w * 8)) as i32, y: (py % (h * 8)) as i32, radius, eye, strength: 65535, ..Default::default() };
            let method = if step_scan { RayMethod::StepScan } else { RayMethod::Dda };
            let input = RecomputeInput { method, ..dda_input(vec![s], w, h, target_height, false) };
            let bits = RayBits::build(&s, &occ, method, ALL_OCTANTS);
            let any_low = cov.iter().zip(&heights).any(|(&c, &t)| c != 0 && t <= eye);
            if !any_low {
                prop_assert!(bits.is_some(), "every cover is above the eye: the shortcut applies");
            }
            for y in 0..h {
                for x in 0..w {
                    let fast = source_value_with(&input, &occ, &s, bits.as_ref(), x, y);
                    let march = source_value(&input, &occ, &s, x, y);
                    prop_assert_eq!(fast, march, "texel ({}, {})", x, y);
                }
            }
            // The sweep's first-class bits laid out as window rows agree, texel
            // by texel, with what `blocked` reads first (for a target at the eye).
            if let Some(b) = &bits {
                let (sx, sy, reach) = (s.x >> 3, s.y >> 3, (s.radius >> 3) + 2);
                let (x0, x1) = ((sx - reach).max(0), (sx + reach).min(w as i32 - 1));
                let (y0, y1) = ((sy - reach).max(0), (sy + reach).min(h as i32 - 1));
                if x0 <= x1 && y0 <= y1 {
                    let width = (x1 - x0 + 1) as usize;
                    let rows = b.first_class(x0, y0, width, (y1 - y0 + 1) as usize, ALL_OCTANTS);
                    for y in y0..=y1 {
                        for x in x0..=x1 {
                            let (row, i) = ((y - y0) as usize * width.div_ceil(64), (x - x0) as usize);
                            let laid = rows.get(row + i / 64).is_some_and(|word| word >> (i % 64) & 1 != 0);
                            prop_assert_eq!(laid, b.blocked(&occ, x, y, eye, eye) == Some(true), "first-class bit of texel ({}, {})", x, y);
                        }
                    }
                }
            }
            // The window as visibility builds it (falloff table, the sweep's
            // clear texels laid out at once) holds the same values.
            let table = FalloffTable::new(&FalloffTable::key(&s));
            let shadow = Shadow::build(&input, &s, &occ, None);
            for falloff in [Some(&table), None] {
                let win = Window::build(&input, &occ, &s, falloff, shadow.as_ref());
                for (k, &v) in win.values.iter().enumerate() {
                    let (x, y) = (win.x0 + (k % win.width) as i32, win.y0 + (k / win.width) as i32);
                    prop_assert_eq!(v, source_value(&input, &occ, &s, x as u32, y as u32), "window texel ({}, {})", x, y);
                }
            }
        }

        /// The octants said to read a rectangle are exactly those whose
        /// sweep reads one of its texels, texel by texel.
        #[test]
        fn octants_reading_are_those_whose_sweep_reads_the_rectangle(
            sx in -4i32..30, sy in -4i32..30, half in 1i32..12, r in (0u32..32, 0u32..32, 1u32..8, 1u32..8),
        ) {
            let rect = TexelRect { x0: r.0, y0: r.1, x1: r.0 + r.2, y1: r.1 + r.3 };
            let octants = [(1, 0, 0, 1), (0, 1, 1, 0), (0, -1, 1, 0), (-1, 0, 0, 1), (-1, 0, 0, -1), (0, -1, -1, 0), (0, 1, -1, 0), (1, 0, 0, -1)];
            let mut want = 0u8;
            for (o, (a, b, c, d)) in octants.into_iter().enumerate() {
                for j in 0..=half {
                    for i in 0..=j + 1 {
                        let (x, y) = (sx + j * a + i * b, sy + j * c + i * d);
                        if x >= rect.x0 as i32 && x < rect.x1 as i32 && y >= rect.y0 as i32 && y < rect.y1 as i32 {
                            want |= 1 << o;
                        }
                    }
                }
            }
            prop_assert_eq!(octants_reading(sx, sy, half, &rect), want);
        }

        /// A window worked out again from its old values after the
        /// occlusion changed in a rectangle (covers come, go or change
        /// height, ground rises or sinks) holds the values of one built
        /// whole over the new occlusion, for DDA and Step Scan, targets
        /// below and above the eye, anti-vision and see-through sources.
        #[test]
        fn a_window_redone_after_a_local_change_equals_one_built_whole(
            w in 4u32..48, h in 4u32..48, seed in any::<i32>(), seed2 in any::<i32>(), density in 0u32..50,
            px in 0u32..384, py in 0u32..384, radius in 8i32..160, eye in 1i32..400, palette in any::<bool>(),
            target_height in -20i32..60, step_scan in any::<bool>(), flags in prop_oneof![6 => Just(0u32), 1 => Just(SOURCE_ANTI), 1 => Just(murk_core::frame::SOURCE_SEE_THROUGH)],
            rect in (0u32..48, 0u32..48, 1u32..12, 1u32..12), rects in 1usize..3,
        ) {
            let (mut cov, mut heights) = grid(w, h, seed, density, eye, false, palette);
            let mut accel = Accel::new(&cov, &heights, w, h);
            let s = SourceTexel { x: (px % (w * 8)) as i32, y: (py % (h * 8)) as i32, radius, eye, strength: 65535, flags, ..Default::default() };
            let method = if step_scan { RayMethod::StepScan } else { RayMethod::Dda };
            let input = RecomputeInput { method, ..dda_input(vec![s], w, h, target_height, false) };
            let table = FalloffTable::new(&FalloffTable::key(&s));
            let old = {
                let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
                Window::build(&input, &occ, &s, Some(&table), Shadow::build(&input, &s, &occ, None).as_ref())
            };
            // One or two rectangles take the texels of another grid.
            let (cov2, heights2) = grid(w, h, seed2, density + 10, eye, false, palette);
            let mut changed = Vec::new();
            for k in 0..rects as u32 {
                let (x0, y0) = ((rect.0 + 7 * k) % w, (rect.1 + 5 * k) % h);
                let r = TexelRect { x0, y0, x1: (x0 + rect.2).min(w), y1: (y0 + rect.3).min(h) };
                for y in r.y0..r.y1 {
                    for x in r.x0..r.x1 {
                        let i = (y * w + x) as usize;
                        (cov[i], heights[i]) = (cov2[i], heights2[i]);
                    }
                }
                changed.push(r);
            }
            accel.update(&cov, &heights, w, h, &changed);
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            let whole = |falloff| Window::build(&input, &occ, &s, falloff, Shadow::build(&input, &s, &occ, None).as_ref());
            let any_low = cov.iter().zip(&heights).any(|(&c, &t)| c != 0 && t <= eye);
            for falloff in [Some(&table), None] {
                let redone = Window::redo(&input, &occ, &s, falloff, (&old, &changed), None);
                prop_assert!(redone.is_some() || any_low, "every cover is above the eye: the window is redone");
                if let Some(redone) = redone {
                    prop_assert_eq!((redone.x0, redone.y0, redone.width, redone.rows), (old.x0, old.y0, old.width, old.rows));
                    prop_assert_eq!(redone.values, whole(falloff).values);
                }
            }
        }
    }
}
