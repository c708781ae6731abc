//! Each source's window (its reveal, or for anti-vision its concealment,
//! over its reach) and the cache that keeps windows across recomputes, keyed
//! by everything a window depends on.
//!
//! (Over 600 lines as one concept: a window is made, kept and updated by
//! the same keys and tables, and splitting the cache from the windows it
//! keys would make each half read the other's private fields.)
use super::occlusion::Occlusion;
use super::shadowcast::{bits_at, octants_reading, RayBits, ALL_OCTANTS, QUADRANTS};
use super::source::{falloff_at, falloff_value, occluded_value};
use crate::passes::lanes::{load, store, LANES};
use crate::passes::pieces;
use murk_core::fixed::TEXEL_ONE;
use murk_core::frame::{SOURCE_ANTI, SOURCE_HAS_CONE, SOURCE_SEE_THROUGH};
use murk_core::{RayMethod, RecomputeInput, SourceTexel, TexelRect};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use wide::{i32x8, u16x8};

/// What a source's window depends on besides the source and the occlusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RaySettings {
    pub(super) method: RayMethod,
    pub(super) target_height: i32,
    pub(super) df_scale: u32,
    pub(super) soft_shadow_k_q8: u32,
    pub(super) df_jitter: u16,
}

impl RaySettings {
    pub(super) fn of(input: &RecomputeInput) -> Self {
        Self {
            method: input.method,
            target_height: input.target_height,
            df_scale: input.df_scale,
            soft_shadow_k_q8: input.soft_shadow_k_q8,
            df_jitter: input.df_jitter,
        }
    }
}

/// Windows of more texels than this are built by rows in parallel.
pub(super) const LARGE_WINDOW: usize = 1 << 16;

/// One source's contribution over its reach: its reveal (steps 1-5) per
/// texel, or for an anti-vision source its concealment (steps 1-4), for the
/// grid texels `x0..x0 + width` by `y0..y0 + values.len() / width`.
#[derive(Clone, Debug)]
pub struct Window {
    pub(super) x0: i32,
    pub(super) y0: i32,
    pub(super) width: usize,
    pub(super) rows: usize,
    pub(super) values: Vec<u16>,
}

/// The box of a source's window `(x0, y0, width, rows)`: its reach (the
/// radius plus two texels around the source texel, as the tile bins use)
/// clipped to the grid; `None` when nothing of it is on the grid.
pub(super) fn window_box(s: &SourceTexel, occ: &Occlusion) -> Option<(i32, i32, usize, usize)> {
    let reach = (s.radius >> 3) + 2;
    let (sx, sy) = (s.x >> 3, s.y >> 3);
    let (x0, x1) = ((sx - reach).max(0), (sx + reach).min(occ.width as i32 - 1));
    let (y0, y1) = ((sy - reach).max(0), (sy + reach).min(occ.height as i32 - 1));
    (x0 <= x1 && y0 <= y1).then(|| (x0, y0, (x1 - x0 + 1) as usize, (y1 - y0 + 1) as usize))
}

/// What a source's shadowcast depends on besides the occlusion: its texel,
/// its radius (the sweep reads only the reach, the dark texels are those
/// within the radius) and its eye (not its sub-texel position, falloff or
/// cone).
pub(super) type ShadowKey = (i32, i32, i32, i32);

/// A source's shadowcast over its window box: the sweep, and as the box's
/// bit rows the texels the sweep and the march hide from the source (binary
/// methods: a texel is lit or dark whatever the falloff).
#[derive(Clone, Debug)]
pub(super) struct Shadow {
    pub(super) bits: RayBits,
    pub(super) dark: Vec<u64>,
}

impl Shadow {
    /// Whether the window of `s` asks the shadowcast (Step Scan, DDA and
    /// Hierarchical DDA, not anti-vision, not a source that sees through
    /// occlusion).
    pub(super) fn applies(input: &RecomputeInput, s: &SourceTexel) -> bool {
        s.flags & (SOURCE_ANTI | SOURCE_SEE_THROUGH) == 0 && matches!(input.method, RayMethod::StepScan | RayMethod::Dda | RayMethod::HierarchicalDda)
    }

    pub(super) fn key(s: &SourceTexel) -> ShadowKey {
        (s.x >> 3, s.y >> 3, s.radius, s.eye)
    }

    /// The shadowcast of `s`, or `None` where it does not apply (a cover at
    /// or below the eye, or no window). The dark texels depend on the
    /// source's texel and eye and on `input`'s ray settings only.
    /// `low` is the grid's [`LowBits`] for the source's limit, where kept
    /// (else the heights are compared).
    pub(super) fn build(input: &RecomputeInput, s: &SourceTexel, occ: &Occlusion, low: Option<&[u64]>) -> Option<Self> {
        let (x0, y0, width, rows) = window_box(s, occ)?;
        let bits = RayBits::build(s, occ, input.method, ALL_OCTANTS)?;
        let dark = dark_bits(input, s, occ, low, &bits, ALL_OCTANTS, (x0, y0, width, rows), (0, width as i64 - 1));
        Some(Self { bits, dark })
    }
}

/// The texels of the rows `y0..y0 + rows` of a window (`x0`, `width`) that
/// the rays of `s` leave dark, as bit rows of `width.div_ceil(64)` words,
/// for the columns `cols` (inclusive, from the window's first) of the
/// octants `octants` of `bits` (the others are left clear); empty when
/// nothing is covered anywhere.
#[allow(clippy::too_many_arguments, reason = "a source, its sweep and the part of its window asked")]
fn dark_bits(
    input: &RecomputeInput,
    s: &SourceTexel,
    occ: &Occlusion,
    low: Option<&[u64]>,
    bits: &RayBits,
    octants: u8,
    (x0, y0, width, rows): (i32, i32, usize, usize),
    cols: (i64, i64),
) -> Vec<u64> {
    let first = bits.first_class(x0, y0, width, rows, octants);
    let words = width.div_ceil(64);
    let mut dark = vec![0u64; first.len()];
    let (sx, sy) = (s.x >> 3, s.y >> 3);
    // Only texels with a cover on their ray can be dark. A cover on the
    // ray, and every cover rises above the eye (or there would be no
    // sweep): a target at or below the eye is hidden, as
    // `RayBits::blocked` answers first; a raised one asks the higher
    // classes, then the march.
    // No source of this key lights a texel whose centre lies, from
    // every point of the source texel, at or beyond its radius (Q3):
    // such texels are left out. Per row that leaves
    // the texels `sx - (q + 4) / 8 ..= sx + (q + 3) / 8`, `q` the largest
    // integer below the square root of what the row leaves of that
    // radius (a texel centre lies at least `8 d - 3` to the right, or
    // `8 d - 4` to the left, from the source texel `d` texels away).
    let far = i64::from(s.radius).pow(2);
    let near = |t: i32, st: i32| {
        i64::from(if t > st {
            8 * (t - st) - 3
        } else if t < st {
            8 * (st - t) - 4
        } else {
            0
        })
    };
    // A target is at or below the eye when its ground height is at most this.
    let low_limit = limit(input, s);
    let grid_words = (occ.width as usize).div_ceil(64);
    let fill = |(k, (out, laid)): (usize, (&mut [u64], &[u64]))| {
        let y = y0 + k as i32;
        let left = far - near(y, sy).pow(2);
        if left <= 0 {
            return;
        }
        let mut q = (left as f64).sqrt() as i64;
        while q * q >= left {
            q -= 1;
        }
        while (q + 1) * (q + 1) < left {
            q += 1;
        }
        let (xa, xb) = (i64::from(sx) - (q + 4) / 8 - i64::from(x0), i64::from(sx) + (q + 3) / 8 - i64::from(x0));
        let (xa, xb) = (xa.max(cols.0), xb.min(cols.1));
        let heights = &occ.heights[y as usize * occ.width as usize..];
        for (n, (o, &word)) in out.iter_mut().zip(laid).enumerate() {
            // The word's bits from `xa` to `xb`.
            let (lo, hi) = (xa - 64 * n as i64, xb - 64 * n as i64);
            if hi < 0 || lo > 63 {
                continue;
            }
            let from = if lo <= 0 { !0u64 } else { !0u64 << lo };
            let to = if hi >= 63 { !0u64 } else { !0u64 >> (63 - hi) };
            let mut set = word & from & to;
            if y == sy && (n as i32 * 64..n as i32 * 64 + 64).contains(&(sx - x0)) {
                // The source's own texel is never dark.
                set &= !(1u64 << (sx - x0 - n as i32 * 64));
            }
            if set == 0 {
                continue;
            }
            // Targets at or below the eye are hidden by any cover on their ray.
            let start = (x0 + n as i32 * 64) as usize;
            let count = (x0 as usize + width - start).min(64);
            let low = match low {
                Some(bits) => bits_at(&bits[y as usize * grid_words..][..grid_words], start, count),
                None => low_targets(&heights[start..start + count], low_limit),
            };
            *o |= set & low;
            let mut raised = set & !low;
            while raised != 0 {
                let i = raised.trailing_zeros();
                raised &= raised - 1;
                let x = x0 + n as i32 * 64 + i as i32;
                let target = i64::from(heights[x as usize]) + i64::from(input.target_height);
                let hidden = match bits.blocked_raised(occ, x, y, target as i32, s.eye) {
                    Some(hidden) => hidden,
                    None => occluded_value(input, occ, s, None, x as u32, y as u32, u16::MAX) == 0,
                };
                *o |= u64::from(hidden) << i;
            }
        }
    };
    if width * rows > LARGE_WINDOW {
        dark.par_chunks_mut(words).zip(first.par_chunks(words)).enumerate().for_each(fill);
    } else {
        dark.chunks_mut(words).zip(first.chunks(words)).enumerate().for_each(fill);
    }
    dark
}

/// The ground height at or below which a target of `s` is at or below its
/// eye.
fn limit(input: &RecomputeInput, s: &SourceTexel) -> i64 {
    i64::from(s.eye) - i64::from(input.target_height)
}

/// At most this many limits keep [`LowBits`] (sources of more eye heights
/// than this compare heights).
const MAX_LOWS: usize = 4;

/// Per limit (see [`limit`]), the grid texels whose height is at most it,
/// as bit rows of `width.div_ceil(64)` words: what a shadowcast reads for
/// each texel behind cover, one bit instead of a height.
pub(super) type LowBits = BTreeMap<i64, Vec<u64>>;

/// Words `words` of grid row `y` of the low bits of `limit` into `row`.
fn fill_low_row(occ: &Occlusion, limit: i64, y: usize, row: &mut [u64], words: std::ops::Range<usize>) {
    let w = occ.width as usize;
    let heights = &occ.heights[y * w..(y + 1) * w];
    for k in words {
        row[k] = low_targets(&heights[64 * k..(64 * k + 64).min(w)], limit);
    }
}

/// Bit `i` set where `heights[i] <= limit`, for the (up to 64) heights
/// given; eight at a time with `wide`.
fn low_targets(heights: &[i32], limit: i64) -> u64 {
    let Ok(limit) = i32::try_from(limit) else {
        // Every i32 height is below a limit past i32, none below one under it.
        return if limit > 0 { !0 } else { 0 };
    };
    let above = i32x8::splat(limit);
    let mut low = 0u64;
    let mut chunks = heights.chunks_exact(8);
    for (k, chunk) in chunks.by_ref().enumerate() {
        let v = i32x8::new(chunk.try_into().expect("eight heights"));
        low |= u64::from(!v.simd_gt(above).to_bitmask() as u8) << (8 * k);
    }
    let done = heights.len() / 8 * 8;
    for (i, &h) in chunks.remainder().iter().enumerate() {
        low |= u64::from(h <= limit) << (done + i);
    }
    low
}

impl Window {
    /// Evaluates the source at every texel of its reach (the box the tile
    /// bins use: the radius plus two texels around the source texel,
    /// clipped to the grid).
    /// `shadow` is the source's [`Shadow`] where [`Shadow::applies`] (for
    /// the binary methods it settles most rays).
    pub(super) fn build(input: &RecomputeInput, occ: &Occlusion, s: &SourceTexel, falloff: Option<&FalloffTable>, shadow: Option<&Shadow>) -> Self {
        let (sx, sy) = (s.x >> 3, s.y >> 3);
        let Some((x0, y0, width, rows)) = window_box(s, occ) else {
            return Self { x0: (sx - (s.radius >> 3) - 2).max(0), y0: (sy - (s.radius >> 3) - 2).max(0), width: 0, rows: 0, values: Vec::new() };
        };
        let (x1, anti) = (x0 + width as i32 - 1, s.flags & SOURCE_ANTI != 0);
        let bits = shadow.map(|sh| &sh.bits);
        // A small window's values start as the rows of its falloff table,
        // copied (not cleared first).
        let small = width * rows <= LARGE_WINDOW;
        let mut values = match falloff {
            Some(table) if small => {
                let mut values = Vec::with_capacity(width * rows);
                for y in y0..y0 + rows as i32 {
                    values.extend_from_slice(table.span(y - sy, x0 - sx, width));
                }
                values
            }
            _ => vec![0u16; width * rows],
        };
        // The sweep's dark texels (worked out once per sweep, see
        // [`Shadow::build`]) are the texels the rays leave dark.
        let shadow = shadow.map(|sh| sh.dark.as_slice());
        let words = width.div_ceil(64);
        let fill = |(k, out): (usize, &mut [u16])| {
            let y = y0 + k as i32;
            // A small window's falloff was copied above.
            if falloff.is_none() || !small {
                falloff_into(s, falloff, (x0, y), out);
            }
            // Anti-vision, and a source that sees through occlusion, reveal
            // by their falloff alone.
            if anti || s.flags & SOURCE_SEE_THROUGH != 0 {
                return;
            }
            let occluded = |x: i32, v: u16| occluded_value(input, occ, s, bits, x as u32, y as u32, v);
            match (shadow, bits) {
                // Nothing is covered anywhere: every ray is clear.
                (Some([]), _) => {}
                (Some(dark), Some(_)) => clear_dark(out, &dark[k * words..(k + 1) * words]),
                _ => {
                    for (x, o) in (x0..=x1).zip(out.iter_mut()) {
                        if *o != 0 {
                            *o = occluded(x, *o);
                        }
                    }
                }
            }
        };
        // A large window (a long-sighted source) is shared among the threads
        // by rows; small ones are built one per task.
        if small {
            values.chunks_mut(width).enumerate().for_each(fill);
        } else {
            values.par_chunks_mut(width).enumerate().for_each(fill);
        }
        Self { x0, y0, width, rows, values }
    }

    /// The window of `s` over `occ`, made from `old`, its window over the
    /// occlusion before that changed in `changed`. A texel's value depends
    /// only on the texels its octant reads ([`octants_reading`]), and every
    /// texel is answered from the octants of its quadrant ([`QUADRANTS`]):
    /// the quadrants that read a changed texel are swept and worked out
    /// again, the others keep `old`'s values. `None` where the shortcut
    /// does not apply (a method without it, a cover now at or below the
    /// eye in the window): the window is then built whole.
    pub(super) fn redo(
        input: &RecomputeInput,
        occ: &Occlusion,
        s: &SourceTexel,
        falloff: Option<&FalloffTable>,
        (old, changed): (&Window, &[TexelRect]),
        low: Option<&[u64]>,
    ) -> Option<Self> {
        let (x0, y0, width, rows) = window_box(s, occ)?;
        if (old.x0, old.y0, old.width, old.rows) != (x0, y0, width, rows) {
            return None;
        }
        let mut values = old.values.clone();
        if s.flags & (SOURCE_ANTI | SOURCE_SEE_THROUGH) != 0 {
            // Revealed by the falloff alone, whatever the occlusion.
            return Some(Self { x0, y0, width, rows, values });
        }
        if !Shadow::applies(input, s) {
            return None;
        }
        let (sx, sy, half) = (s.x >> 3, s.y >> 3, (s.radius >> 3) + 2);
        let read = changed.iter().fold(0u8, |m, r| m | octants_reading(sx, sy, half, r));
        let octants = QUADRANTS.iter().filter(|q| q.0 & read != 0).fold(0u8, |m, q| m | q.0);
        if octants == 0 {
            return Some(Self { x0, y0, width, rows, values });
        }
        let bits = RayBits::build(s, occ, input.method, octants)?;
        let words = width.div_ceil(64);
        for &(_, right, down) in QUADRANTS.iter().filter(|q| q.0 & octants != 0) {
            // The quadrant's texels in the window.
            let (bx0, bx1) = if right { (sx, sx + half) } else { (sx - half, sx - 1) };
            let (by0, by1) = if down { (sy, sy + half) } else { (sy - half, sy - 1) };
            let (bx0, bx1, by0, by1) = (bx0.max(x0), bx1.min(x0 + width as i32 - 1), by0.max(y0), by1.min(y0 + rows as i32 - 1));
            if bx0 > bx1 || by0 > by1 {
                continue;
            }
            let (c0, c1, n) = ((bx0 - x0) as usize, (bx1 - x0) as usize, (by1 - by0 + 1) as usize);
            let dark = dark_bits(input, s, occ, low, &bits, octants, (x0, by0, width, n), (c0 as i64, c1 as i64));
            let fill = |(k, row): (usize, &mut [u16])| {
                falloff_into(s, falloff, (bx0, by0 + k as i32), &mut row[c0..=c1]);
                // Empty when nothing is covered anywhere: every ray is clear.
                clear_dark(row, dark.get(k * words..(k + 1) * words).unwrap_or_default());
            };
            let part = &mut values[(by0 - y0) as usize * width..(by1 - y0 + 1) as usize * width];
            if part.len() > LARGE_WINDOW {
                part.par_chunks_mut(width).enumerate().for_each(fill);
            } else {
                part.chunks_mut(width).enumerate().for_each(fill);
            }
        }
        Some(Self { x0, y0, width, rows, values })
    }

    /// Heap bytes of the window's values.
    pub fn bytes(&self) -> usize {
        self.values.capacity() * 2
    }
}

/// Steps 1-4 of `s` (its falloff) for the grid texels from `(x0, y)` on
/// to the right, into `out`: from its table where it has one.
fn falloff_into(s: &SourceTexel, falloff: Option<&FalloffTable>, (x0, y): (i32, i32), out: &mut [u16]) {
    let (sx, sy) = (s.x >> 3, s.y >> 3);
    match falloff {
        Some(table) => out.copy_from_slice(table.span(y - sy, x0 - sx, out.len())),
        None => {
            for (x, o) in (x0..).zip(out.iter_mut()) {
                *o = falloff_value(s, x as u32, y as u32);
            }
        }
    }
}

/// Clears the texels of a window row whose bits are set in `dark` (the
/// row's words of a shadowcast's dark texels).
fn clear_dark(out: &mut [u16], dark: &[u64]) {
    let (bit, zero) = (u16x8::new([1, 2, 4, 8, 16, 32, 64, 128]), u16x8::splat(0));
    for (n, &word) in dark.iter().enumerate() {
        // Eight texels at a time: each byte of the word that has a bit set.
        let mut set = word;
        while set != 0 {
            let shift = set.trailing_zeros() / 8 * 8;
            let byte = (word >> shift) as u8;
            set &= !(0xff << shift);
            let at = n * 64 + shift as usize;
            if at + LANES <= out.len() {
                let keep = (u16x8::splat(u16::from(byte)) & bit).simd_eq(zero);
                store(load(&out[at..]) & keep, &mut out[at..]);
            } else {
                for i in (0..8).filter(|i| byte >> i & 1 != 0) {
                    out[at + i] = 0;
                }
            }
        }
    }
}

/// The largest reach (texels from the source texel) given a shared falloff
/// table: 66 KB of table at most.
pub(super) const MAX_TABLE_REACH: i32 = 90;

/// The bytes of falloff tables kept from one update to the next; past
/// them, only the tables the last update used are kept. 4 MiB hold the 64
/// sub-texel offsets of several radii.
const TABLE_BYTES_KEPT: usize = 4 << 20;

/// Steps 1-4 of a source (range, cone, falloff, Z strength) over its whole
/// reach, by offset from the source texel. They depend on the source only
/// through [`FalloffTable::key`] (not its texel), so sources of the same
/// radius, falloff, cone, strength and sub-texel offset share one table.
#[derive(Clone, Debug)]
pub(super) struct FalloffTable {
    pub(super) reach: i32,
    pub(super) values: Vec<u16>,
}

impl FalloffTable {
    /// What the table depends on: the source with its texel dropped.
    pub(super) fn key(s: &SourceTexel) -> SourceTexel {
        SourceTexel { x: s.x & 7, y: s.y & 7, eye: 0, flags: s.flags & SOURCE_HAS_CONE, ..*s }
    }

    pub(super) fn new(key: &SourceTexel) -> Self {
        let reach = (key.radius >> 3) + 2;
        let one = i64::from(TEXEL_ONE);
        let mut values = Vec::with_capacity(((2 * reach + 1) * (2 * reach + 1)) as usize);
        for oy in -reach..=reach {
            for ox in -reach..=reach {
                values.push(falloff_at(key, i64::from(ox) * one + one / 2 - i64::from(key.x), i64::from(oy) * one + one / 2 - i64::from(key.y)));
            }
        }
        Self { reach, values }
    }

    /// Heap bytes of the table's values.
    fn bytes(&self) -> usize {
        self.values.capacity() * 2
    }

    /// The `len` values of the row `oy` texels below the source texel,
    /// from the texel `ox` to its right on.
    pub(super) fn span(&self, oy: i32, ox: i32, len: usize) -> &[u16] {
        let side = (2 * self.reach + 1) as usize;
        let at = (oy + self.reach) as usize * side + (ox + self.reach) as usize;
        &self.values[at..at + len]
    }
}

/// Source windows kept across recomputes of one instance, keyed by the
/// projected source (position in Q3 texels, radius, falloff, eye, cone, Z
/// strength, flags): sources with the same key share one window, a source
/// whose key did not change costs no ray, and windows of sources gone are
/// freed at the next recompute. A window is a pure function of its key, the
/// ray settings and the occlusion, so [`WindowCache::clear`] must run
/// whenever the occlusion changes; the settings are checked here.
#[derive(Clone, Debug, Default)]
pub struct WindowCache {
    pub(super) settings: Option<RaySettings>,
    /// The keys of the windows, ascending (each once).
    pub(super) keys: Vec<SourceTexel>,
    /// The window of each key, at its key's place. (Two arrays rather than
    /// a map: the update walks every key each tick, and a walk over a
    /// map's nodes waits on memory.) Shared with `recent` and the changes
    /// an update reports.
    pub(super) windows: Vec<Arc<Window>>,
    /// Windows dropped by the last updates, by key, with the update that
    /// dropped them: an update takes a missing key's window from here
    /// instead of building it. A rollback simulates again ticks whose
    /// sources stood where they stood a few updates ago, and a unit that
    /// paces comes back to where it was. At most twice as many as
    /// `windows` (and [`MIN_RECENT`]), the oldest dropped first: an
    /// instance of a few hundred sources (one team's of several) keeps the
    /// windows of as many updates as one of a thousand.
    pub(super) recent: BTreeMap<SourceTexel, (u64, Arc<Window>)>,
    /// Updates run (the age of `recent`'s windows).
    pub(super) updates: u64,
    /// The kept windows combined, before the finish: per texel the
    /// strongest reveal and the strongest concealment (2 bytes each), when
    /// `combined` says they match `windows`.
    pub(super) painted: Vec<u16>,
    pub(super) concealed: Vec<u16>,
    pub(super) combined: bool,
    /// The `reveal_walls` of the last finished grid, when one was finished.
    pub(super) finished: Option<bool>,
    /// The shadowcasts of the windows built by the last update, by
    /// [`Shadow::key`]: a source that moves within its texel (its window
    /// rebuilt for the new falloff) sweeps nothing again.
    pub(super) shadows: BTreeMap<ShadowKey, Option<Shadow>>,
    /// Windows forgotten since the last update because the occlusion under
    /// them changed ([`WindowCache::forget`]): the update reports them
    /// dropped.
    pub(super) forgotten: Vec<(SourceTexel, Arc<Window>)>,
    /// Where the occlusion changed since the last finished grid: the
    /// finish reads coverage there.
    pub(super) touched: Vec<TexelRect>,
    /// The low bits of the limits of the sources kept (when there are few
    /// enough of them), and where the heights changed since they were
    /// last brought up to date.
    pub(super) lows: LowBits,
    pub(super) lows_stale: Vec<TexelRect>,
    /// Falloff tables by [`FalloffTable::key`], kept across updates (a
    /// table depends on its key alone), and their bytes.
    pub(super) tables: BTreeMap<SourceTexel, FalloffTable>,
    pub(super) table_bytes: usize,
    /// Where the occlusion changed since the last update: a window
    /// forgotten since then whose source is still asked for is worked out
    /// again from its old values over these ([`Window::redo`]).
    pub(super) changed: Vec<TexelRect>,
}

/// The fewest dropped windows a [`WindowCache`] keeps for reuse, whatever
/// the number it holds.
pub(super) const MIN_RECENT: usize = 64;

/// What one [`WindowCache::update`] changed.
pub(super) struct Changes {
    /// Windows built.
    pub(super) built: usize,
    /// The windows dropped (those with a box on the grid), with their keys.
    pub(super) removed: Vec<(SourceTexel, Arc<Window>)>,
    /// The places of the windows built now (whose keys were not kept
    /// before) among the windows kept now.
    pub(super) added: Vec<usize>,
    /// Per source of the input, the place of its key among the windows
    /// kept now (in key order).
    pub(super) rank: Vec<u32>,
}

impl Window {
    /// The window's box `(x0, y0, width, rows)` in grid texels.
    pub(super) fn rect(&self) -> (usize, usize, usize, usize) {
        (self.x0 as usize, self.y0 as usize, self.width, self.rows)
    }
}

impl WindowCache {
    /// Forgets every window (the occlusion changed).
    pub fn clear(&mut self) {
        // The falloff tables stay: they depend on the sources alone.
        self.windows.clear();
        self.keys.clear();
        self.recent.clear();
        self.shadows.clear();
        self.forgotten.clear();
        self.touched.clear();
        self.lows.clear();
        self.lows_stale.clear();
        self.changed.clear();
        self.combined = false;
        self.finished = None;
    }

    /// Keeps the windows and their combination but finishes every texel on
    /// the next call: the grid the last call finished was replaced (a
    /// state loaded over the same occlusion).
    pub fn unfinish(&mut self) {
        self.finished = None;
    }

    /// Keeps the windows and their combination but finishes `rects` again
    /// on the next call: the grid the last call finished was replaced
    /// there (a state loaded over the same occlusion, whose visibility
    /// differs from the one held in those rectangles only).
    pub fn refinish(&mut self, rects: Vec<TexelRect>) {
        self.touched.extend(rects);
    }

    /// Forgets the windows and shadowcasts whose box meets one of `rects`
    /// (the occlusion changed there; a window reads the occlusion of its
    /// box only). With `shadows`, every shadowcast goes: the cover classes
    /// they were swept over changed.
    pub fn forget(&mut self, rects: &[TexelRect], shadows: bool) {
        let meets = |(x0, y0, w, rows): (usize, usize, usize, usize)| {
            let b = TexelRect { x0: x0 as u32, y0: y0 as u32, x1: (x0 + w) as u32, y1: (y0 + rows) as u32 };
            rects.iter().any(|r| r.meets(&b))
        };
        // The windows dropped before were made over the occlusion before
        // this change.
        self.recent.clear();
        let kept = std::mem::take(&mut self.keys).into_iter().zip(std::mem::take(&mut self.windows));
        for (k, win) in kept {
            if !meets(win.rect()) {
                self.keys.push(k);
                self.windows.push(win);
            } else if win.width > 0 && win.rows > 0 {
                self.forgotten.push((k, win));
            }
        }
        if shadows {
            self.shadows.clear();
        } else {
            self.shadows.retain(|&(sx, sy, radius, _), _| {
                let reach = (radius >> 3) + 2;
                let b = TexelRect {
                    x0: (sx - reach).max(0) as u32,
                    y0: (sy - reach).max(0) as u32,
                    x1: (sx + reach + 1).max(0) as u32,
                    y1: (sy + reach + 1).max(0) as u32,
                };
                !rects.iter().any(|r| r.meets(&b))
            });
        }
        self.touched.extend_from_slice(rects);
        self.lows_stale.extend_from_slice(rects);
        self.changed.extend_from_slice(rects);
    }

    /// Windows kept.
    pub fn len(&self) -> usize {
        self.windows.len()
    }

    /// Whether no window is kept.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Heap bytes of the kept windows' values, those kept for reuse
    /// included (the combined grids add 4 bytes per texel).
    pub fn bytes(&self) -> usize {
        self.windows.iter().chain(self.recent.values().map(|(_, w)| w)).map(|w| w.bytes()).sum()
    }

    /// Brings the low bits up to date where the heights changed, and keeps
    /// those of the limits of the swept sources in `wanted` (none when
    /// they have more than [`MAX_LOWS`] limits), building the missing ones.
    fn update_lows(&mut self, input: &RecomputeInput, occ: &Occlusion, wanted: &[SourceTexel]) {
        let words = (occ.width as usize).div_ceil(64);
        for r in self.lows_stale.drain(..) {
            let span = r.x0 as usize / 64..(r.x1 as usize).div_ceil(64);
            for (&at, bits) in &mut self.lows {
                let rows = r.y0 as usize * words..r.y1 as usize * words;
                bits[rows].par_chunks_mut(words).enumerate().for_each(|(k, row)| fill_low_row(occ, at, r.y0 as usize + k, row, span.clone()));
            }
        }
        let mut limits: Vec<i64> = wanted.iter().filter(|s| Shadow::applies(input, s)).map(|s| limit(input, s)).collect();
        limits.sort_unstable();
        limits.dedup();
        if limits.len() > MAX_LOWS {
            limits.clear();
        }
        self.lows.retain(|at, _| limits.binary_search(at).is_ok());
        for at in limits {
            self.lows.entry(at).or_insert_with(|| {
                let mut bits = vec![0u64; words * occ.height as usize];
                bits.par_chunks_mut(words).enumerate().for_each(|(y, row)| fill_low_row(occ, at, y, row, 0..words));
                bits
            });
        }
    }

    /// Makes the cache hold exactly the windows of `input`'s sources,
    /// building the missing ones in parallel.
    pub(super) fn update(&mut self, input: &RecomputeInput, occ: &Occlusion) -> Changes {
        let settings = RaySettings::of(input);
        if self.settings != Some(settings) {
            self.clear();
            self.settings = Some(settings);
        }
        // The distinct keys in order, and each source's place among them.
        // (The subsystem hands the sources over in order: then the keys
        // are the sources, each in its own place.)
        let sources = &input.sources;
        let (wanted, rank) = if sources.is_sorted_by(|a, b| a < b) {
            (sources.clone(), (0..sources.len() as u32).collect())
        } else {
            let mut order: Vec<u32> = (0..sources.len() as u32).collect();
            order.sort_unstable_by(|&a, &b| sources[a as usize].cmp(&sources[b as usize]));
            let (mut wanted, mut rank) = (Vec::with_capacity(sources.len()), vec![0u32; sources.len()]);
            for &i in &order {
                let s = sources[i as usize];
                if wanted.last() != Some(&s) {
                    wanted.push(s);
                }
                rank[i as usize] = wanted.len() as u32 - 1;
            }
            (wanted, rank)
        };
        // Windows forgotten because the occlusion changed under them, by
        // key (at their place in `removed`): those still asked for are
        // worked out again from their old values.
        let mut removed: Vec<(SourceTexel, Arc<Window>)> = std::mem::take(&mut self.forgotten);
        // (Those were made over the occlusion before; the ones dropped now
        // after them are kept for reuse.)
        let stale = removed.len();
        self.updates += 1;
        let again: BTreeMap<SourceTexel, usize> = removed.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect();
        let changed = std::mem::take(&mut self.changed);
        // One walk over the kept windows and the wanted keys (both
        // ascending): a kept window whose key is wanted takes its place
        // among the new ones (`slots`), the others are dropped (those with
        // a box on the grid reported).
        debug_assert_eq!(self.keys.len(), self.windows.len(), "a window per key");
        let mut kept = std::mem::take(&mut self.keys).into_iter().zip(std::mem::take(&mut self.windows)).peekable();
        let (mut slots, mut missing, mut taken) = (Vec::with_capacity(wanted.len()), Vec::new(), Vec::new());
        let mut drop_one = |(k, win): (SourceTexel, Arc<Window>)| {
            if win.width > 0 && win.rows > 0 {
                removed.push((k, win));
            }
        };
        for &k in &wanted {
            while let Some(gone) = kept.next_if(|(g, _)| *g < k) {
                drop_one(gone);
            }
            match kept.next_if(|(g, _)| *g == k) {
                Some((_, win)) => slots.push(Some(win)),
                None => match self.recent.remove(&k).filter(|_| !again.contains_key(&k)) {
                    // Not combined: placed as a new window, built by no
                    // one.
                    Some((_, win)) => {
                        taken.push(slots.len());
                        slots.push(Some(win));
                    }
                    None => {
                        missing.push(k);
                        slots.push(None);
                    }
                },
            }
        }
        kept.for_each(drop_one);
        // Tables for the reaches worth sharing; a long-sighted source (whose
        // square table could be far larger than its clipped window) computes
        // its falloff per texel.
        let mut keys: Vec<SourceTexel> = missing.iter().map(FalloffTable::key).filter(|k| (k.radius >> 3) + 2 <= MAX_TABLE_REACH).collect();
        keys.sort_unstable();
        keys.dedup();
        let new: Vec<SourceTexel> = keys.iter().filter(|k| !self.tables.contains_key(k)).copied().collect();
        let made: Vec<(SourceTexel, FalloffTable)> = new.into_par_iter().map(|k| (k, FalloffTable::new(&k))).collect();
        self.table_bytes += made.iter().map(|(_, t)| t.bytes()).sum::<usize>();
        self.tables.extend(made);
        if self.table_bytes > TABLE_BYTES_KEPT {
            self.tables.retain(|k, _| keys.binary_search(k).is_ok());
            self.table_bytes = self.tables.values().map(FalloffTable::bytes).sum();
        }
        // Shadowcasts: those of the last update still asked for are kept,
        // the others dropped, the missing ones swept.
        let mut asked: Vec<(ShadowKey, SourceTexel)> =
            missing.iter().filter(|s| Shadow::applies(input, s) && !again.contains_key(s)).map(|s| (Shadow::key(s), *s)).collect();
        asked.sort_unstable_by_key(|&(k, _)| k);
        asked.dedup_by_key(|&mut (k, _)| k);
        self.shadows.retain(|k, _| asked.binary_search_by_key(k, |&(a, _)| a).is_ok());
        self.update_lows(input, occ, &wanted);
        let lows = &self.lows;
        let sweep: Vec<&(ShadowKey, SourceTexel)> = asked.iter().filter(|(k, _)| !self.shadows.contains_key(k)).collect();
        let mut swept: Vec<Option<Shadow>> = sweep.iter().map(|_| None).collect();
        pieces::each(
            sweep.iter().zip(&mut swept),
            1,
            || (),
            |_, _, (&&(_, s), out)| {
                *out = Shadow::build(input, &s, occ, lows.get(&limit(input, &s)).map(Vec::as_slice));
            },
        );
        self.shadows.extend(sweep.iter().map(|&&(k, _)| k).zip(swept));
        let (shadows, tables) = (&self.shadows, &self.tables);
        let build = |s: &SourceTexel| {
            let table = tables.get(&FalloffTable::key(s));
            if let Some(&at) = again.get(s) {
                let low = lows.get(&limit(input, s)).map(Vec::as_slice);
                let redone = Window::redo(input, occ, s, table, (&*removed[at].1, &changed), low);
                // Where the shortcut no longer applies, built whole.
                let window = redone.unwrap_or_else(|| {
                    let shadow = Shadow::applies(input, s).then(|| Shadow::build(input, s, occ, low)).flatten();
                    Window::build(input, occ, s, table, shadow.as_ref())
                });
                return window;
            }
            let shadow = if Shadow::applies(input, s) { shadows.get(&Shadow::key(s)).and_then(Option::as_ref) } else { None };
            Window::build(input, occ, s, table, shadow)
        };
        let mut built: Vec<Option<Window>> = missing.iter().map(|_| None).collect();
        pieces::each(missing.iter().zip(&mut built), 1, || (), |_, _, (s, out)| *out = Some(build(s)));
        // The new windows into the places left for them, in key order.
        let mut built = built.into_iter().map(|window| window.expect("every item runs"));
        let mut added = Vec::with_capacity(missing.len() + taken.len());
        let mut taken = taken.into_iter().peekable();
        self.windows = slots
            .into_iter()
            .enumerate()
            .map(|(i, slot)| {
                if taken.next_if_eq(&i).is_some() {
                    added.push(i);
                }
                slot.unwrap_or_else(|| {
                    added.push(i);
                    Arc::new(built.next().expect("a window built per missing key"))
                })
            })
            .collect();
        self.keys = wanted;
        self.keep_recent(&removed[stale..]);
        Changes { built: missing.len(), removed, added, rank }
    }

    /// Keeps the windows just dropped for the next updates, forgetting the
    /// oldest past the bound.
    fn keep_recent(&mut self, removed: &[(SourceTexel, Arc<Window>)]) {
        // When more than half the windows went (an army on the move), few
        // of them come back soon and the bound would hold not many more
        // updates than this one: none are kept.
        if 2 * removed.len() > self.windows.len().max(MIN_RECENT) {
            self.recent.clear();
            return;
        }
        let at = self.updates;
        self.recent.extend(removed.iter().map(|(k, win)| (*k, (at, win.clone()))));
        let bound = (2 * self.windows.len()).max(MIN_RECENT);
        // Whole updates' windows go, the oldest first (which windows are
        // kept changes no byte: a window is a function of its key).
        while self.recent.len() > bound {
            let oldest = self.recent.values().map(|(at, _)| *at).min().expect("more than the bound");
            self.recent.retain(|_, (at, _)| *at != oldest);
        }
    }
}
