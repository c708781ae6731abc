//! Memory, compose, the upscale copy, the blend start and the blend run over
//! the blocks that can still change (see [`super::dirty`]).
//!
//! Memory and compose are steps toward a fixed point: a block whose memory
//! and composed did not change in a recompute is at the fixed point of its
//! blurred visibility, and stays there until that changes or until the
//! rules change what the fixed point is ([`SettleKey`]). Such a block is
//! skipped with the bytes of a full pass (and reports no change, as the full
//! pass would). On the output grid, a block where the blend start, the
//! upscaled mask and the final mask are equal stays so until the upscaled
//! mask changes: the blend of equal values is that value, at every `t`.

use super::compose::{compose_simd, ComposeParams};
use super::dirty::{Blocks, BLOCK};
use super::footprints::TILE_ROWS;
use super::memory::memory_simd;
use super::pieces::{self, ROWS_TAKEN};
use murk_core::fixed::mask_mul;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// What decides the fixed points of memory and compose besides the blurred
/// visibility: the freeze flag, the compose baseline, and which rates move
/// at all (a step of 0 makes every value a fixed point; any positive step
/// has the same fixed points).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettleKey {
    freeze: bool,
    forgets: bool,
    fades_in: bool,
    relaxes: bool,
    explored_value: u16,
    mapped_value: u16,
    show_memory_alpha: u16,
}

impl SettleKey {
    /// The key of a recompute's memory and compose settings.
    pub fn new(forget_step: u32, freeze: bool, p: ComposeParams) -> Self {
        Self {
            freeze,
            forgets: forget_step > 0,
            fades_in: p.fade_in_step > 0,
            relaxes: p.relax_step > 0,
            explored_value: p.explored_value,
            mapped_value: p.mapped_value,
            show_memory_alpha: p.show_memory_alpha,
        }
    }
}

/// The scripted reveal planes of a grid ([`murk_core::RevealLayer`]), or of
/// one span of it.
#[derive(Clone, Copy, Debug)]
pub struct Planes<'a> {
    /// Scripted sight.
    pub sight: &'a [u16],
    /// Sight memory takes in.
    pub kept: &'a [u16],
    /// Mapped knowledge to add.
    pub map: &'a [u16],
}

impl<'a> Planes<'a> {
    /// The planes of `layer`.
    pub fn of(layer: &'a murk_core::RevealLayer) -> Self {
        Self { sight: &layer.sight, kept: &layer.kept, map: &layer.map }
    }

    fn span(&self, span: std::ops::Range<usize>) -> Self {
        Self { sight: &self.sight[span.clone()], kept: &self.kept[span.clone()], map: &self.map[span] }
    }
}

/// Memory then compose over one span of texels (at most [`BLOCK`]), with
/// the reveal planes when given and the mapped state: memory takes in
/// `max(blurred, kept)`, the mapped state rises to `map`, and compose moves
/// toward `max(blurred, sight, mapped * mapped_value * alpha, memory *
/// explored * alpha)`. Returns whether memory or the mapped state changed,
/// and whether composed did. Without planes and with no mapped texel it is
/// the memory and compose kernels as they are.
#[allow(clippy::too_many_arguments, reason = "the planes of one span")]
pub fn memory_compose_span(
    v: &[u16],
    m: &mut [u16],
    mapped: &mut [u16],
    c: &mut [u16],
    planes: Option<Planes>,
    step: u16,
    freeze: bool,
    p: ComposeParams,
) -> (bool, bool) {
    if planes.is_none() && mapped.iter().all(|&x| x == 0) {
        let memory_changed = !freeze && memory_simd(v, m, step);
        return (memory_changed, compose_simd(v, m, c, p));
    }
    let mut buffer = [0u16; BLOCK];
    let seen = &mut buffer[..v.len()];
    match planes {
        Some(pl) => seen.iter_mut().zip(v.iter().zip(pl.kept)).for_each(|(s, (&a, &b))| *s = a.max(b)),
        None => seen.copy_from_slice(v),
    }
    let mut changed = !freeze && memory_simd(seen, m, step);
    if let Some(pl) = planes {
        for (x, &add) in mapped.iter_mut().zip(pl.map) {
            changed |= add > *x;
            *x = (*x).max(add);
        }
    }
    for (i, s) in seen.iter_mut().enumerate() {
        let base = mask_mul(mask_mul(p.mapped_value, mapped[i]), p.show_memory_alpha);
        *s = v[i].max(planes.map_or(0, |pl| pl.sight[i])).max(base);
    }
    (changed, compose_simd(seen, m, c, p))
}

/// Memory then compose over the blocks marked in `todo` (those whose blurred
/// visibility may have changed, and those not known settled); `unsettled`
/// becomes the blocks where memory, the mapped state or composed changed,
/// `moved` those where composed changed, `remembered` those where memory or
/// the mapped state changed. Returns whether any texel of them
/// changed. Unmarked blocks must be settled (at the fixed point): there the
/// bytes and the answer are those of [`memory_compose_span`] over the whole
/// grid. With `upscaled` (the upscale of scale 1, a copy of composed), each
/// block whose composed moved is copied into it while it is at hand.
#[allow(clippy::too_many_arguments, reason = "the grids and marks of one pass")]
pub fn memory_compose_marked(
    blurred: &[u16],
    memory: &mut [u16],
    mapped: &mut [u16],
    composed: &mut [u16],
    upscaled: Option<&mut [u16]>,
    planes: Option<Planes>,
    (forget_step, freeze): (u32, bool),
    p: ComposeParams,
    todo: &Blocks,
    unsettled: &mut Blocks,
    moved: &mut Blocks,
    remembered: &mut Blocks,
) -> bool {
    let (w, per_row) = (todo.width, todo.per_row);
    let step = forget_step.min(u32::from(u16::MAX)) as u16;
    let mut copies: Vec<Option<&mut [u16]>> = match upscaled {
        Some(u) => u.chunks_mut(w).map(Some).collect(),
        None => (0..todo.height).map(|_| None).collect(),
    };
    let rows = memory
        .chunks_mut(w)
        .zip(composed.chunks_mut(w).zip(mapped.chunks_mut(w)))
        .zip(blurred.chunks(w).zip(copies.iter_mut()))
        .zip(todo.marks.chunks(per_row))
        .zip(unsettled.marks.chunks_mut(per_row).zip(moved.marks.chunks_mut(per_row)))
        .zip(remembered.marks.chunks_mut(per_row));
    let any = AtomicBool::new(false);
    pieces::each(
        rows,
        ROWS_TAKEN,
        || (),
        |_, row, (((((m, (c, mp)), (v, copy)), todo), (unsettled, moved)), remembered)| {
            let mut row_changed = false;
            for (b, &marked) in todo.iter().enumerate() {
                if !marked {
                    unsettled[b] = false;
                    moved[b] = false;
                    remembered[b] = false;
                    continue;
                }
                let span = b * BLOCK..((b + 1) * BLOCK).min(w);
                let at = row * w + span.start..row * w + span.end;
                let pl = planes.map(|pl| pl.span(at));
                let (memory_changed, composed_changed) =
                    memory_compose_span(&v[span.clone()], &mut m[span.clone()], &mut mp[span.clone()], &mut c[span.clone()], pl, step, freeze, p);
                if let Some(copy) = copy.as_mut().filter(|_| composed_changed) {
                    copy[span.clone()].copy_from_slice(&c[span]);
                }
                unsettled[b] = memory_changed || composed_changed;
                moved[b] = composed_changed;
                remembered[b] = memory_changed;
                row_changed |= memory_changed || composed_changed;
            }
            // Read before written: the flag's cache line stays shared.
            if row_changed && !any.load(Ordering::Relaxed) {
                any.store(true, Ordering::Relaxed);
            }
        },
    );
    any.into_inner()
}

/// Copies the marked blocks of `src` into `dst` (grids of `marks`' size).
pub fn copy_marked(src: &[u16], dst: &mut [u16], marks: &Blocks) {
    let (w, per_row) = (marks.width, marks.per_row);
    dst.par_chunks_mut(w).zip(src.par_chunks(w)).zip(marks.marks.par_chunks(per_row)).for_each(|((d, s), m)| {
        for (x0, x1) in Blocks::spans(m, w) {
            d[x0..x1].copy_from_slice(&s[x0..x1]);
        }
    });
}

/// Whether two spans of at most [`BLOCK`] texels hold the same values (a
/// whole block compared as arrays, without a call).
fn same_block(a: &[u16], b: &[u16]) -> bool {
    match (<&[u16; BLOCK]>::try_from(a), <&[u16; BLOCK]>::try_from(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// What [`blend_marked`] marks besides the blocks it leaves unsettled:
/// grids of one mark per band of [`TILE_ROWS`] rows and block column.
#[derive(Default)]
pub struct BandMarks<'a> {
    /// Where a value changed.
    pub changed: Option<&'a mut [bool]>,
    /// Where a blended value is not the target's.
    pub apart: Option<&'a mut [bool]>,
}

/// The blend ([`super::blend::blend`]) of the blocks marked in `unsettled`;
/// a block whose start, target and blend are then equal is unmarked. Blocks
/// not marked must hold equal start, target and final values. Each block
/// where a value changed, or is left apart from the target, is marked in
/// that grid of `marks`. In parallel bands of [`TILE_ROWS`]
/// rows. With `restart` (the first blend after a recompute), each marked
/// block's start first takes the final values the block holds: the blend
/// starts anew from where the last one stopped.
pub fn blend_marked(start: &mut [u16], target: &[u16], t: u32, out: &mut [u16], unsettled: &mut Blocks, restart: bool, marks: BandMarks) {
    let (w, per_row) = (unsettled.width, unsettled.per_row);
    if w == 0 {
        return;
    }
    type Band<'a> = ((&'a mut [u16], (&'a mut [u16], &'a [u16])), &'a mut [bool]);
    type Asked<'a> = (Option<&'a mut [bool]>, Option<&'a mut [bool]>);
    let blend_band = |((o, (a, b)), marks): Band, (mut changed, mut apart): Asked| {
        for ((o, (a, b)), marks) in o.chunks_mut(w).zip(a.chunks_mut(w).zip(b.chunks(w))).zip(marks.chunks_mut(per_row)) {
            for (k, mark) in marks.iter_mut().enumerate().filter(|(_, m)| **m) {
                let span = k * BLOCK..((k + 1) * BLOCK).min(w);
                if restart {
                    a[span.clone()].copy_from_slice(&o[span.clone()]);
                }
                // What the block held, kept only where it is asked about.
                let mut before = [0u16; BLOCK];
                if changed.is_some() {
                    before[..span.len()].copy_from_slice(&o[span.clone()]);
                }
                super::blend::blend_simd(&a[span.clone()], &b[span.clone()], t, &mut o[span.clone()]);
                if let Some(changed) = changed.as_mut() {
                    if !same_block(&o[span.clone()], &before[..span.len()]) {
                        changed[k] = true;
                    }
                }
                if let Some(apart) = apart.as_mut() {
                    if !same_block(&o[span.clone()], &b[span.clone()]) {
                        apart[k] = true;
                    }
                }
                // Where the start equals the target the blend gives the
                // target: the block has settled.
                *mark = !same_block(&a[span.clone()], &b[span]);
            }
        }
    };
    let band = TILE_ROWS * w;
    let count = out.len().div_ceil(band);
    // Each grid of marks asked for, as one optional row per band (a grid
    // holds a row for every band; were one short, every band would still
    // be blended).
    fn rows(marks: Option<&mut [bool]>, per_row: usize, count: usize) -> Vec<Option<&mut [bool]>> {
        match marks {
            Some(marks) => {
                debug_assert!(marks.len() >= per_row * count, "a grid of {} marks for {count} bands of {per_row}", marks.len());
                marks.chunks_mut(per_row.max(1)).map(Some).chain(std::iter::repeat_with(|| None)).take(count).collect()
            }
            None => (0..count).map(|_| None).collect(),
        }
    }
    let changed = rows(marks.changed, per_row, count);
    let apart = rows(marks.apart, per_row, count);
    let bands = out
        .chunks_mut(band)
        .zip(start.chunks_mut(band).zip(target.chunks(band)))
        .zip(unsettled.marks.chunks_mut(TILE_ROWS * per_row))
        .zip(changed.into_iter().zip(apart));
    pieces::each(bands, 2, || (), |_, _, (rows, (changed, apart))| blend_band(rows, (changed, apart)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::dirty::texel_rect;
    use crate::passes::{blend::blend, compose::compose, memory::memory};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
        /// A sequence of recomputes whose blurred visibility changes in a
        /// rectangle each step, run over the marked blocks only (that
        /// rectangle's blocks and the unsettled ones), gives at every step
        /// the bytes and the answers of the whole-grid passes; so does the
        /// blend (upscale of scale 1: the composed mask is the target) at
        /// every tick between recomputes, marking the blocks that changed or
        /// stay apart from the target, on 1 and 3 threads.
        #[test]
        fn marked_passes_equal_the_whole_grid(
            (w, h) in (1usize..50, 1usize..20), seed in any::<u64>(), steps in 1usize..12,
            forget_step in prop_oneof![Just(0u32), 1u32..9000], freeze in any::<bool>(),
            fade_in_step in prop_oneof![Just(0u32), 1u32..30000, Just(u32::MAX)], relax_step in prop_oneof![Just(0u32), 1u32..30000],
            explored_value in any::<u16>(), ticks in 1u32..3, threads in 1usize..4,
        ) {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let p = ComposeParams { fade_in_step, relax_step, explored_value, mapped_value: 0, show_memory_alpha: 65535 };
            let mut rng = seed;
            let mut next = || { rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (rng >> 33) as usize };
            let n = w * h;
            let mut blurred = vec![0u16; n];
            let (mut m_full, mut c_full, mut f_full, mut s_full) = (vec![0u16; n], vec![0u16; n], vec![0u16; n], vec![0u16; n]);
            let (mut m, mut c, mut f, mut s, mut up) = (vec![0u16; n], vec![0u16; n], vec![0u16; n], vec![0u16; n], vec![0u16; n]);
            let (mut unsettled, mut moved, mut out_unsettled) = (Blocks::new(w, h, true), Blocks::new(w, h, false), Blocks::new(w, h, true));
            let mut first = true;
            let per_row = w.div_ceil(BLOCK);
            let bands = per_row * h.div_ceil(TILE_ROWS);
            for step in 0..steps {
                // Blurred visibility changes in one rectangle (or nowhere).
                let (x0, x1, y0, y1) = { let (a, b, c, d) = (next() % (w + 1), next() % (w + 1), next() % (h + 1), next() % (h + 1)); (a.min(b), a.max(b), c.min(d), c.max(d)) };
                let value = [0u16, 65535, 30000, next() as u16][next() % 4];
                for y in y0..y1 { for x in x0..x1 { blurred[y * w + x] = if next() % 3 == 0 { 0 } else { value }; } }
                let mut todo = Blocks::new(w, h, first);
                todo.mark(texel_rect(x0, y0, x1, y1), 0);
                todo.add(&unsettled);
                first = false;
                let want = memory(&blurred, &mut m_full, forget_step, freeze) | compose(&blurred, &m_full, &mut c_full, p);
                let mut mapped = vec![0u16; n];
                let (m_before, c_before) = (m.clone(), c.clone());
                let mut remembered = Blocks::new(w, h, false);
                let got = pool.install(|| {
                    memory_compose_marked(&blurred, &mut m, &mut mapped, &mut c, Some(&mut up), None, (forget_step, freeze), p, &todo, &mut unsettled, &mut moved, &mut remembered)
                });
                prop_assert_eq!(got, want, "step {}: changed", step);
                // Every block where memory or composed changed is marked so.
                for (i, b) in (0..h).flat_map(|y| (0..w.div_ceil(BLOCK)).map(move |b| (y, b))).enumerate() {
                    let span = b.0 * w + b.1 * BLOCK..b.0 * w + ((b.1 + 1) * BLOCK).min(w);
                    prop_assert!(m[span.clone()] == m_before[span.clone()] || remembered.marks[i], "step {}: memory moved in block {:?}", step, b);
                    prop_assert!(c[span.clone()] == c_before[span] || moved.marks[i], "step {}: composed moved in block {:?}", step, b);
                }
                prop_assert_eq!(&m, &m_full, "step {}: memory", step);
                prop_assert_eq!(&c, &c_full, "step {}: composed", step);
                // The upscale copy (made by the pass), the blend start and the blends.
                prop_assert_eq!(&up, &c, "step {}: upscaled", step);
                out_unsettled.add(&moved);
                s_full.copy_from_slice(&f_full);
                // The first blend takes the start from the final mask as it goes.
                for tick in 0..ticks {
                    let t = if tick + 1 == ticks { 65536 } else { (next() % 65537) as u32 };
                    blend(&s_full, &c_full, t, &mut f_full);
                    let before = f.clone();
                    let (mut changed, mut apart) = (vec![false; bands], vec![false; bands]);
                    let marks = BandMarks { changed: Some(&mut changed), apart: Some(&mut apart) };
                    pool.install(|| blend_marked(&mut s, &up, t, &mut f, &mut out_unsettled, tick == 0, marks));
                    prop_assert_eq!(&f, &f_full, "step {} tick {}: final", step, tick);
                    // A block is marked changed where, and only where, a
                    // value of it changed.
                    let band_block = |i: usize| i / w / TILE_ROWS * per_row + i % w / BLOCK;
                    let (mut moved, mut off) = (vec![false; changed.len()], vec![false; changed.len()]);
                    for (i, _) in f.iter().zip(&before).enumerate().filter(|(_, (a, b))| a != b) {
                        moved[band_block(i)] = true;
                    }
                    for (i, _) in f.iter().zip(&up).enumerate().filter(|(_, (a, b))| a != b) {
                        off[band_block(i)] = true;
                    }
                    prop_assert_eq!(&changed, &moved, "step {} tick {}: changed blocks", step, tick);
                    prop_assert_eq!(&apart, &off, "step {} tick {}: blocks apart from the target", step, tick);
                }
                prop_assert_eq!(&s, &s_full, "step {}: start", step);
            }
        }

        /// With reveal planes and a mapped state, the marked passes over
        /// every block give what the rule gives texel by texel, one texel
        /// at a time in scalar integers, on 1 and 3 threads.
        #[test]
        fn reveal_planes_and_the_mapped_state_follow_the_rule(
            w in 1usize..40, h in 1usize..6, seed in any::<u64>(), planes_on in any::<bool>(), freeze in any::<bool>(),
            forget_step in prop_oneof![Just(0u32), 1u32..9000], fade_in_step in prop_oneof![Just(0u32), 1u32..30000, Just(u32::MAX)],
            relax_step in 0u32..30000, explored_value in any::<u16>(), mapped_value in any::<u16>(), alpha in any::<u16>(), threads in 1usize..4,
        ) {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let p = ComposeParams { fade_in_step, relax_step, explored_value, mapped_value, show_memory_alpha: alpha };
            let mut rng = seed;
            let mut next = || { rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); [0u16, 65535, (rng >> 40) as u16][(rng >> 33) as usize % 3] };
            let n = w * h;
            let mut grid = || (0..n).map(|_| next()).collect::<Vec<u16>>();
            let (v, m0, mapped0, c0) = (grid(), grid(), grid(), grid());
            let (sight, kept, map) = (grid(), grid(), grid());
            let layer = murk_core::RevealLayer { sight, kept, map };
            let planes = planes_on.then(|| Planes::of(&layer));
            // The rule, texel by texel.
            let (mut m1, mut mapped1, mut c1) = (m0.clone(), mapped0.clone(), c0.clone());
            let mut want = false;
            for i in 0..n {
                let (sight, kept, map) = if planes_on { (layer.sight[i], layer.kept[i], layer.map[i]) } else { (0, 0, 0) };
                let seen = v[i].max(kept);
                if !freeze {
                    let next = if seen > 0 { m1[i].max(seen) } else { m1[i].saturating_sub(forget_step.min(65535) as u16) };
                    want |= next != m1[i];
                    m1[i] = next;
                }
                want |= map > mapped1[i];
                mapped1[i] = mapped1[i].max(map);
                let explored = mask_mul(mask_mul(explored_value, m1[i]), alpha);
                let known = mask_mul(mask_mul(mapped_value, mapped1[i]), alpha);
                let target = u32::from(v[i].max(sight).max(explored).max(known));
                let cur = u32::from(c1[i]);
                let next = if target > cur { cur + (target - cur).min(fade_in_step) } else { cur - (cur - target).min(relax_step) };
                want |= next != cur;
                c1[i] = next as u16;
            }
            let (mut m, mut mapped, mut c) = (m0, mapped0, c0);
            let all = Blocks::new(w, h, true);
            let (mut unsettled, mut moved, mut remembered) = (Blocks::new(w, h, false), Blocks::new(w, h, false), Blocks::new(w, h, false));
            let got = pool.install(|| {
                memory_compose_marked(&v, &mut m, &mut mapped, &mut c, None, planes, (forget_step, freeze), p, &all, &mut unsettled, &mut moved, &mut remembered)
            });
            prop_assert_eq!(got, want);
            prop_assert_eq!(m, m1);
            prop_assert_eq!(mapped, mapped1);
            prop_assert_eq!(c, c1);
        }
    }
}
