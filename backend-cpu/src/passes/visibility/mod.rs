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

use murk_core::fixed::{mask_mul, MASK_MAX};
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
pub use source::{falloff_value, line_light, source_value};
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
        input.sources.iter().zip(&changes.rank).map(|(s, &r)| (&*windows[r as usize], s.flags & SOURCE_ANTI != 0)).collect();
    // With no anti-vision window the concealment combined is 0 everywhere.
    let any_anti = of_source.iter().any(|&(_, anti)| anti);
    let added: Vec<(&Window, bool)> = changes.added.iter().map(|&i| (&*windows[i], cache.keys[i].flags & SOURCE_ANTI != 0)).collect();
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
            let (mut last, mut near_anti) = (usize::MAX, false);
            for &(p, y, a, b) in spans.iter() {
                if p != last {
                    let (ox, oy, ow, orows) = pairs[p].0.rect();
                    near.clear();
                    near.extend(band_windows.iter().copied().filter(|(win, _)| {
                        let (x0, wy0, ww, wrows) = win.rect();
                        x0 < ox + ow && ox < x0 + ww && wy0 < oy + orows && oy < wy0 + wrows
                    }));
                    near_anti = near.iter().any(|&(_, anti)| anti);
                    last = p;
                }
                let at = (y - y0) * w;
                mark(marks, y - y0, (a, b));
                recombine_span(near, near_anti, y, (a, b), &mut reveal[at..at + w], &mut conceal[at..at + w]);
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
        for (x0, y0, ww, rows) in cache.windows.iter().map(|w| w.rect()).filter(|&(_, _, ww, rows)| ww > 0 && rows > 0) {
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

/// Texels `a..b` of row `y` of the combination (`reveal` and `conceal`,
/// the row's), made anew from the windows of `list` (with whether each is
/// anti-vision; `anti`: whether any is). A grid takes no more windows once
/// every texel of the span holds [`MASK_MAX`], which no window can raise:
/// where sources overlap, a span is usually whole after a window or two.
fn recombine_span(list: &[(&Window, bool)], anti: bool, y: usize, (a, b): (usize, usize), reveal: &mut [u16], conceal: &mut [u16]) {
    reveal[a..b].fill(0);
    conceal[a..b].fill(0);
    // Whether each grid is done: reveal, then conceal (done at 0 when no
    // window of the list conceals).
    let mut done = [false, !anti];
    for &(win, is_anti) in list {
        let k = usize::from(is_anti);
        let (wx0, wy0, ww, wrows) = win.rect();
        let (x0, x1) = (wx0.max(a), (wx0 + ww).min(b));
        if done[k] || x0 >= x1 || !(wy0..wy0 + wrows).contains(&y) {
            continue;
        }
        let target = if is_anti { &mut *conceal } else { &mut *reveal };
        let from = (y - wy0) * ww + x0 - wx0;
        max_into(&mut target[x0..x1], &win.values[from..from + x1 - x0]);
        if target[a..b].iter().fold(MASK_MAX, |m, &v| m & v) == MASK_MAX {
            done[k] = true;
            if done == [true, true] {
                return;
            }
        }
    }
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
mod tests;
