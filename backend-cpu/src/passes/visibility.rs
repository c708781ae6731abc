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

use murk_core::fixed::{hash2, isqrt, mask_mul, HEIGHT_FLOOR, TEXEL_ONE};
use murk_core::frame::{SOURCE_ANTI, SOURCE_HAS_CONE};
use murk_core::{RayMethod, RecomputeInput, SourceTexel};
use rayon::prelude::*;
use std::collections::BTreeMap;
use wide::{u16x16, u16x8, u8x16, CmpEq};

use super::lanes::{load, mask_mul8, max_into, store, LANES};
use super::rasterize::centre_q;
use super::shadowcast::RayBits;

/// The occlusion textures the visibility pass reads.
pub struct Occlusion<'a> {
    /// Grid width.
    pub width: u32,
    /// Grid height.
    pub height: u32,
    /// 0/1 coverage.
    pub coverage: &'a [u8],
    /// Heights (height units).
    pub heights: &'a [i32],
    /// Coverage pyramid levels 1.. (width, height, texels).
    pub mips: &'a [(u32, u32, Vec<u8>)],
    /// Distance field (width, height, squared distances).
    pub distance_field: (u32, u32, &'a [u32]),
    /// CPU-only shortcuts derived from coverage and height; no result depends on them.
    pub accel: &'a Accel,
}

/// Most distinct covered tops the shadowcast shortcut keeps a class for.
pub const MAX_CLASSES: usize = 4;

/// Derived from coverage and height once per occlusion build, to make the
/// CPU marches cheaper; they change no result.
#[derive(Clone, Debug, Default)]
pub struct Accel {
    /// Summed-area table of coverage, `(width + 1) x (height + 1)`: a ray whose
    /// bounding box sums to 0 crosses no covered texel.
    pub sums: Vec<u32>,
    /// Height where covered, `i32::MIN` where not: one load per visited texel.
    pub tops: Vec<i32>,
    /// Shadowcasting classes, ascending by top: for each distinct top of a
    /// covered texel, the texels covered at least that high as bits,
    /// `words_per_row` 64-bit words per row. With more than
    /// [`MAX_CLASSES`] distinct tops, only the first (every covered texel).
    pub classes: Vec<(i32, Vec<u64>)>,
    /// Words per row of the class bit sets.
    pub words_per_row: usize,
    /// The same classes transposed (one bit set per grid column, rows as
    /// bits), `words_per_column` words per column: the shadowcast sweep reads
    /// vertical lines of a class as whole words.
    pub classes_by_column: Vec<Vec<u64>>,
    /// Words per column of [`Accel::classes_by_column`].
    pub words_per_column: usize,
    /// Whether every distinct top has its class.
    pub classes_complete: bool,
    /// The lowest top of any covered texel (`i32::MAX` with none): a source
    /// whose eye is below it may shadowcast without looking at its window.
    pub lowest_top: i32,
}

impl Accel {
    /// Builds the tables, rows in parallel; the column bit sets are the row
    /// bit sets transposed 64 by 64 texels at a time.
    pub fn new(coverage: &[u8], heights: &[i32], width: u32, height: u32) -> Self {
        let mut accel = Self::default();
        accel.rebuild(coverage, heights, width, height);
        accel
    }

    /// [`Accel::new`] in place: the same tables, in the memory of the old
    /// ones (an occlusion rebuilt at the same size allocates nothing).
    pub fn rebuild(&mut self, coverage: &[u8], heights: &[i32], width: u32, height: u32) {
        let (w, h) = (width as usize, height as usize);
        let line = w.max(1);
        self.tops.clear();
        self.tops.resize(w * h, i32::MIN);
        self.tops.par_chunks_mut(line).zip(coverage.par_chunks(line).zip(heights.par_chunks(line))).for_each(|(tops, (cov, hs))| {
            for ((t, &c), &ht) in tops.iter_mut().zip(cov).zip(hs) {
                if c != 0 {
                    *t = ht;
                }
            }
        });
        // The distinct covered tops (as long as there are few of them) and
        // the lowest, per band of rows, then merged: sets and a minimum, so
        // the merge order does not matter.
        let add = |levels: &mut Vec<i32>, t: i32| {
            if levels.len() <= MAX_CLASSES && !levels.contains(&t) {
                levels.push(t);
            }
        };
        let (mut levels, lowest_top) = self
            .tops
            .par_chunks(line * 16)
            .map(|band| {
                let (mut levels, mut lowest) = (Vec::with_capacity(MAX_CLASSES + 1), i32::MAX);
                for &t in band.iter().filter(|&&t| t != i32::MIN) {
                    lowest = lowest.min(t);
                    add(&mut levels, t);
                }
                (levels, lowest)
            })
            .reduce(
                || (Vec::new(), i32::MAX),
                |(mut a, la), (b, lb)| {
                    for t in b {
                        add(&mut a, t);
                    }
                    (a, la.min(lb))
                },
            );
        self.classes_complete = levels.len() <= MAX_CLASSES;
        levels = if self.classes_complete { levels } else { vec![lowest_top] };
        levels.sort_unstable();
        self.lowest_top = lowest_top;
        self.words_per_row = w.div_ceil(64);
        self.words_per_column = h.div_ceil(64);
        // The old bit sets are reused, one per class.
        let mut spare: Vec<Vec<u64>> = self.classes.drain(..).map(|(_, bits)| bits).collect();
        for level in levels {
            let mut bits = spare.pop().unwrap_or_default();
            class_rows(&self.tops, w, level, &mut bits);
            self.classes.push((level, bits));
        }
        self.classes_by_column.resize_with(self.classes.len(), Vec::new);
        for ((_, rows), columns) in self.classes.iter().zip(self.classes_by_column.iter_mut()) {
            transpose_bits(rows, w, h, columns);
        }
        coverage_sums(coverage, w, h, &mut self.sums);
    }
}

/// The texels of a `w`-wide grid of tops covered at least as high as
/// `level`, as bits, `w.div_ceil(64)` words per row, into `bits`.
fn class_rows(tops: &[i32], w: usize, level: i32, bits: &mut Vec<u64>) {
    let words = w.div_ceil(64);
    bits.clear();
    bits.resize(words * (tops.len() / w.max(1)), 0);
    bits.par_chunks_mut(words.max(1)).zip(tops.par_chunks(w.max(1))).for_each(|(row_bits, row)| {
        for (word, texels) in row_bits.iter_mut().zip(row.chunks(64)) {
            // Uncovered texels hold `i32::MIN`, below every level.
            *word = texels.iter().enumerate().fold(0, |acc, (i, &t)| acc | u64::from(t >= level) << i);
        }
    });
}

/// A row-major bit set of `w x h` texels (`w.div_ceil(64)` words per row)
/// as a column-major one (`h.div_ceil(64)` words per column, rows as bits),
/// into `columns`.
fn transpose_bits(rows: &[u64], w: usize, h: usize, columns: &mut Vec<u64>) {
    let (words_per_row, words_per_column) = (w.div_ceil(64), h.div_ceil(64));
    columns.clear();
    columns.resize(words_per_column * w, 0);
    // Each task owns 64 grid columns: word `k` of every row.
    columns.par_chunks_mut((64 * words_per_column).max(1)).enumerate().for_each(|(k, out)| {
        let mut block = [0u64; 64];
        for yb in 0..words_per_column {
            for (i, b) in block.iter_mut().enumerate() {
                let y = yb * 64 + i;
                *b = if y < h { rows[y * words_per_row + k] } else { 0 };
            }
            transpose64(&mut block);
            for (c, &b) in block.iter().enumerate().take(out.len() / words_per_column) {
                out[c * words_per_column + yb] = b;
            }
        }
    });
}

/// Transposes a 64 x 64 bit matrix in place: bit `c` of word `r` becomes
/// bit `r` of word `c` (the blocks across the diagonal swapped, at halving
/// sizes).
fn transpose64(a: &mut [u64; 64]) {
    let (mut j, mut m) = (32, 0x0000_0000_ffff_ffff_u64);
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k] ^= t << j;
            a[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

/// Rows per band of the summed-area table's parallel passes.
const SUM_BAND: usize = 32;

/// The summed-area table of a `w x h` coverage grid into `sums`: entry
/// `(x, y)` counts the covered texels in `[0, x) x [0, y)`. Bands of rows in
/// parallel sum within the band; each band then adds the total of the
/// bands above it (taken from their last rows, in order).
fn coverage_sums(coverage: &[u8], w: usize, h: usize, sums: &mut Vec<u32>) {
    let stride = w + 1;
    sums.clear();
    sums.resize(stride * (h + 1), 0);
    let band_sums = |out: &mut [u32], rows: &[u8]| {
        let mut above = vec![0u32; stride];
        for (line, row) in out.chunks_mut(stride).zip(rows.chunks(w.max(1))) {
            let mut acc = 0u32;
            for ((o, &c), &a) in line[1..].iter_mut().zip(row).zip(&above[1..]) {
                acc += u32::from(c);
                *o = acc + a;
            }
            above.copy_from_slice(line);
        }
    };
    sums[stride..].par_chunks_mut(stride * SUM_BAND).zip(coverage.par_chunks(w.max(1) * SUM_BAND)).for_each(|(out, rows)| band_sums(out, rows));
    // The running total above each band, then added to its rows.
    let mut offsets = vec![0u32; stride * h.div_ceil(SUM_BAND)];
    for band in 1..h.div_ceil(SUM_BAND) {
        let last = &sums[(band * SUM_BAND) * stride..][..stride];
        let (before, now) = offsets.split_at_mut(band * stride);
        for ((o, &p), &l) in now[..stride].iter_mut().zip(&before[(band - 1) * stride..]).zip(last) {
            *o = p + l;
        }
    }
    sums[stride..].par_chunks_mut(stride * SUM_BAND).zip(offsets.par_chunks(stride)).skip(1).for_each(|(out, offset)| {
        for line in out.chunks_mut(stride) {
            for (s, &o) in line.iter_mut().zip(offset) {
                *s += o;
            }
        }
    });
}

impl Occlusion<'_> {
    /// Whether no texel of the box spanned by two texels is covered (texels
    /// outside the grid are never covered). Every texel a Step Scan or DDA
    /// ray visits lies in the box of its two ends, so such a ray is clear.
    fn empty_box(&self, ax: i32, ay: i32, bx: i32, by: i32) -> bool {
        let (w, h) = (self.width as i32, self.height as i32);
        let (x0, x1) = (ax.min(bx).max(0), ax.max(bx).min(w - 1));
        let (y0, y1) = (ay.min(by).max(0), ay.max(by).min(h - 1));
        if x0 > x1 || y0 > y1 {
            return true;
        }
        let stride = (w + 1) as usize;
        let at = |x: i32, y: i32| self.accel.sums[y as usize * stride + x as usize];
        at(x1 + 1, y1 + 1) + at(x0, y0) == at(x0, y1 + 1) + at(x1 + 1, y0)
    }

    fn height_at(&self, x: i32, y: i32) -> i32 {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            self.heights[(y as u32 * self.width + x as u32) as usize]
        } else {
            HEIGHT_FLOOR
        }
    }
    /// Whether the block of mip level `level` holding texel `(x, y)` is empty.
    fn mip_empty(&self, level: usize, x: i32, y: i32) -> bool {
        let (w, h, texels) = &self.mips[level - 1];
        let (bx, by) = (x >> level, y >> level);
        bx < 0 || by < 0 || bx as u32 >= *w || by as u32 >= *h || texels[(by as u32 * w + bx as u32) as usize] == 0
    }
}

/// One ray: from the source texel `(sx, sy)` to the target `(tx, ty)`.
struct Ray {
    sx: i32,
    sy: i32,
    tx: i32,
    ty: i32,
    n: i64,
    eye: i64,
    rise: i64,
}

impl Ray {
    /// Whether texel `(x, y)` blocks this ray.
    fn blocks(&self, occ: &Occlusion, x: i32, y: i32) -> bool {
        if x < 0 || y < 0 || x as u32 >= occ.width || y as u32 >= occ.height {
            return false;
        }
        let top = occ.accel.tops[(y as u32 * occ.width + x as u32) as usize];
        if top == i32::MIN {
            return false;
        }
        let k = i64::from((x - self.sx).abs().max((y - self.sy).abs()));
        (i64::from(top) - self.eye) * self.n > self.rise * k
    }
}

/// What a source's window depends on besides the source and the occlusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RaySettings {
    method: RayMethod,
    target_height: i32,
    df_scale: u32,
    soft_shadow_k_q8: u32,
    df_jitter: u16,
}

impl RaySettings {
    fn of(input: &RecomputeInput) -> Self {
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
const LARGE_WINDOW: usize = 1 << 16;

/// One source's contribution over its reach: its reveal (steps 1-5) per
/// texel, or for an anti-vision source its concealment (steps 1-4), for the
/// grid texels `x0..x0 + width` by `y0..y0 + values.len() / width`.
#[derive(Clone, Debug)]
pub struct Window {
    x0: i32,
    y0: i32,
    width: usize,
    rows: usize,
    values: Vec<u16>,
}

/// The box of a source's window `(x0, y0, width, rows)`: its reach (the
/// radius plus two texels around the source texel, as the tile bins use)
/// clipped to the grid; `None` when nothing of it is on the grid.
fn window_box(s: &SourceTexel, occ: &Occlusion) -> Option<(i32, i32, usize, usize)> {
    let reach = (s.radius >> 3) + 2;
    let (sx, sy) = (s.x >> 3, s.y >> 3);
    let (x0, x1) = ((sx - reach).max(0), (sx + reach).min(occ.width as i32 - 1));
    let (y0, y1) = ((sy - reach).max(0), (sy + reach).min(occ.height as i32 - 1));
    (x0 <= x1 && y0 <= y1).then(|| (x0, y0, (x1 - x0 + 1) as usize, (y1 - y0 + 1) as usize))
}

/// What a source's shadowcast depends on besides the occlusion: its texel,
/// its reach and its eye (not its sub-texel position, falloff or cone).
type ShadowKey = (i32, i32, i32, i32);

/// A source's shadowcast over its window box: the sweep, and its first
/// class laid out as the box's bit rows.
#[derive(Clone, Debug)]
struct Shadow {
    bits: RayBits,
    first: Vec<u64>,
}

impl Shadow {
    /// Whether the window of `s` asks the shadowcast (DDA and Hierarchical
    /// DDA, not anti-vision).
    fn applies(input: &RecomputeInput, s: &SourceTexel) -> bool {
        s.flags & SOURCE_ANTI == 0 && matches!(input.method, RayMethod::Dda | RayMethod::HierarchicalDda)
    }

    fn key(s: &SourceTexel) -> ShadowKey {
        (s.x >> 3, s.y >> 3, (s.radius >> 3) + 2, s.eye)
    }

    /// The shadowcast of `s`, or `None` where it does not apply (a cover at
    /// or below the eye, or no window).
    fn build(s: &SourceTexel, occ: &Occlusion) -> Option<Self> {
        let (x0, y0, width, rows) = window_box(s, occ)?;
        let bits = RayBits::build(s, occ)?;
        let first = bits.first_class(x0, y0, width, rows);
        Some(Self { bits, first })
    }
}

impl Window {
    /// Evaluates the source at every texel of its reach (the box the tile
    /// bins use: the radius plus two texels around the source texel,
    /// clipped to the grid).
    /// `shadow` is the source's [`Shadow`] where [`Shadow::applies`] (for
    /// DDA and Hierarchical DDA it settles most rays).
    fn build(input: &RecomputeInput, occ: &Occlusion, s: &SourceTexel, falloff: Option<&FalloffTable>, shadow: Option<&Shadow>) -> Self {
        let (sx, sy) = (s.x >> 3, s.y >> 3);
        let Some((x0, y0, width, rows)) = window_box(s, occ) else {
            return Self { x0: (sx - (s.radius >> 3) - 2).max(0), y0: (sy - (s.radius >> 3) - 2).max(0), width: 0, rows: 0, values: Vec::new() };
        };
        let (x1, anti) = (x0 + width as i32 - 1, s.flags & SOURCE_ANTI != 0);
        let bits = shadow.map(|sh| &sh.bits);
        let mut values = vec![0u16; width * rows];
        // Where the sweep says no cover lies on the ray, the texel is lit
        // without asking the march (the first test of `RayBits::blocked`):
        // only texels with a cover on their ray are visited.
        let shadow = shadow.map(|sh| sh.first.as_slice());
        let words = width.div_ceil(64);
        let fill = |(k, out): (usize, &mut [u16])| {
            let y = y0 + k as i32;
            match falloff {
                Some(table) => {
                    let from = (x0 - sx + table.reach) as usize;
                    out.copy_from_slice(&table.row(y - sy)[from..from + width]);
                }
                None => {
                    for (x, o) in (x0..=x1).zip(out.iter_mut()) {
                        *o = falloff_value(s, x as u32, y as u32);
                    }
                }
            }
            if anti {
                return;
            }
            let occluded = |x: i32, v: u16| occluded_value(input, occ, s, bits, x as u32, y as u32, v);
            // Where the sweep leaves the texel to the march.
            let march = |x: i32, v: u16| occluded_value(input, occ, s, None, x as u32, y as u32, v);
            match (shadow, bits) {
                // Nothing is covered anywhere: every ray is clear.
                (Some([]), _) => {}
                (Some(shadow), Some(sweep)) => {
                    let heights = &occ.heights[y as usize * occ.width as usize..];
                    for (n, &word) in shadow[k * words..(k + 1) * words].iter().enumerate() {
                        let mut set = word;
                        while set != 0 {
                            let i = n * 64 + set.trailing_zeros() as usize;
                            set &= set - 1;
                            let x = x0 + i as i32;
                            if out[i] == 0 || (x, y) == (sx, sy) {
                                continue;
                            }
                            // A cover on the ray, and every cover rises above
                            // the eye (or there would be no sweep): a target at
                            // or below the eye is hidden, as `RayBits::blocked`
                            // answers first; a raised one asks the higher
                            // classes, then the march.
                            let target = i64::from(heights[x as usize]) + i64::from(input.target_height);
                            out[i] = if target <= i64::from(s.eye) {
                                0
                            } else {
                                match sweep.blocked_raised(x, y, target as i32, s.eye) {
                                    Some(true) => 0,
                                    Some(false) => out[i],
                                    None => march(x, out[i]),
                                }
                            };
                        }
                    }
                }
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
        if values.len() > LARGE_WINDOW {
            values.par_chunks_mut(width).enumerate().for_each(fill);
        } else {
            values.chunks_mut(width).enumerate().for_each(fill);
        }
        Self { x0, y0, width, rows, values }
    }

    /// Heap bytes of the window's values.
    pub fn bytes(&self) -> usize {
        self.values.capacity() * 2
    }
}

/// The largest reach (texels from the source texel) given a shared falloff
/// table: 66 KB of table at most.
const MAX_TABLE_REACH: i32 = 90;

/// Steps 1-4 of a source (range, cone, falloff, Z strength) over its whole
/// reach, by offset from the source texel. They depend on the source only
/// through [`FalloffTable::key`] (not its texel), so sources of the same
/// radius, falloff, cone, strength and sub-texel offset share one table.
struct FalloffTable {
    reach: i32,
    values: Vec<u16>,
}

impl FalloffTable {
    /// What the table depends on: the source with its texel dropped.
    fn key(s: &SourceTexel) -> SourceTexel {
        SourceTexel { x: s.x & 7, y: s.y & 7, eye: 0, flags: s.flags & SOURCE_HAS_CONE, ..*s }
    }

    fn new(key: &SourceTexel) -> Self {
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

    /// The row `oy` texels below the source texel.
    fn row(&self, oy: i32) -> &[u16] {
        let side = (2 * self.reach + 1) as usize;
        let at = (oy + self.reach) as usize * side;
        &self.values[at..at + side]
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
    settings: Option<RaySettings>,
    windows: BTreeMap<SourceTexel, Window>,
    /// The kept windows combined, before the finish: per texel the
    /// strongest reveal and the strongest concealment (2 bytes each), when
    /// `combined` says they match `windows`.
    painted: Vec<u16>,
    concealed: Vec<u16>,
    combined: bool,
    /// The shadowcasts of the windows built by the last update, by
    /// [`Shadow::key`]: a source that moves within its texel (its window
    /// rebuilt for the new falloff) sweeps nothing again.
    shadows: BTreeMap<ShadowKey, Option<Shadow>>,
}

/// What one [`WindowCache::update`] changed.
struct Changes {
    /// Windows built.
    built: usize,
    /// The boxes of the windows dropped: `(x0, y0, width, rows)`.
    removed: Vec<(usize, usize, usize, usize)>,
    /// Keys whose windows were not kept before (built now).
    added: Vec<SourceTexel>,
}

impl Window {
    /// The window's box `(x0, y0, width, rows)` in grid texels.
    fn rect(&self) -> (usize, usize, usize, usize) {
        (self.x0 as usize, self.y0 as usize, self.width, self.rows)
    }
}

impl WindowCache {
    /// Forgets every window (the occlusion changed).
    pub fn clear(&mut self) {
        self.windows.clear();
        self.shadows.clear();
        self.combined = false;
    }

    /// Windows kept.
    pub fn len(&self) -> usize {
        self.windows.len()
    }

    /// Whether no window is kept.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Heap bytes of the kept windows' values (the combined grids add 4
    /// bytes per texel).
    pub fn bytes(&self) -> usize {
        self.windows.values().map(Window::bytes).sum()
    }

    /// Makes the cache hold exactly the windows of `input`'s sources,
    /// building the missing ones in parallel.
    fn update(&mut self, input: &RecomputeInput, occ: &Occlusion) -> Changes {
        let settings = RaySettings::of(input);
        if self.settings != Some(settings) {
            self.clear();
            self.settings = Some(settings);
        }
        let mut wanted: Vec<SourceTexel> = input.sources.clone();
        wanted.sort_unstable();
        wanted.dedup();
        let gone: Vec<SourceTexel> = self.windows.keys().filter(|k| wanted.binary_search(k).is_err()).copied().collect();
        let removed = gone.iter().filter_map(|k| self.windows.remove(k)).map(|w| w.rect()).filter(|r| r.2 > 0).collect();
        let missing: Vec<SourceTexel> = wanted.into_iter().filter(|k| !self.windows.contains_key(k)).collect();
        // Tables for the reaches worth sharing; a long-sighted source (whose
        // square table could be far larger than its clipped window) computes
        // its falloff per texel.
        let mut keys: Vec<SourceTexel> = missing.iter().map(FalloffTable::key).filter(|k| (k.radius >> 3) + 2 <= MAX_TABLE_REACH).collect();
        keys.sort_unstable();
        keys.dedup();
        let tables: BTreeMap<SourceTexel, FalloffTable> = keys.into_par_iter().map(|k| (k, FalloffTable::new(&k))).collect();
        // Shadowcasts: those of the last update still asked for are kept,
        // the others dropped, the missing ones swept.
        let mut asked: Vec<(ShadowKey, SourceTexel)> = missing.iter().filter(|s| Shadow::applies(input, s)).map(|s| (Shadow::key(s), *s)).collect();
        asked.sort_unstable_by_key(|&(k, _)| k);
        asked.dedup_by_key(|&mut (k, _)| k);
        self.shadows.retain(|k, _| asked.binary_search_by_key(k, |&(a, _)| a).is_ok());
        let swept: Vec<(ShadowKey, Option<Shadow>)> =
            asked.par_iter().filter(|(k, _)| !self.shadows.contains_key(k)).map(|(k, s)| (*k, Shadow::build(s, occ))).collect();
        self.shadows.extend(swept);
        let shadows = &self.shadows;
        let built: Vec<(SourceTexel, Window)> = missing
            .par_iter()
            .map(|s| {
                let shadow = if Shadow::applies(input, s) { shadows.get(&Shadow::key(s)).and_then(Option::as_ref) } else { None };
                (*s, Window::build(input, occ, s, tables.get(&FalloffTable::key(s)), shadow))
            })
            .collect();
        self.windows.extend(built);
        Changes { built: missing.len(), removed, added: missing }
    }
}

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
    let added: Vec<(&Window, bool)> = changes.added.iter().map(|s| (&windows[s], s.flags & SOURCE_ANTI != 0)).collect();
    // Max the windows of `list` (with whether each is anti-vision) over the
    // box `bx0..bx1` by `by0..by1` into the band starting at row `y0`.
    let combine =
        |list: &[(&Window, bool)], y0: usize, reveal: &mut [u16], conceal: &mut [u16], (bx0, bx1): (usize, usize), (by0, by1): (usize, usize)| {
            for &(win, anti) in list {
                let target = if anti { &mut *conceal } else { &mut *reveal };
                let (wx0, wy0, ww, wrows) = win.rect();
                let (x0, x1) = (wx0.max(bx0), (wx0 + ww).min(bx1));
                if x0 >= x1 {
                    continue;
                }
                for y in wy0.max(by0)..(wy0 + wrows).min(by1) {
                    let from = (y - wy0) * ww + x0 - wx0;
                    max_into(&mut target[(y - y0) * w + x0..(y - y0) * w + x1], &win.values[from..from + x1 - x0]);
                }
            }
        };
    cache.painted.par_chunks_mut(w * band_rows).zip(cache.concealed.par_chunks_mut(w * band_rows)).enumerate().for_each_init(
        || (Vec::new(), Vec::new()),
        |(list, band_windows), (band, (reveal, conceal))| {
            let tile_row = band as u32;
            list.clear();
            for t in tile_row * bins.tiles_x..(tile_row + 1) * bins.tiles_x {
                list.extend_from_slice(&bins.indices[bins.offsets[t as usize] as usize..bins.offsets[t as usize + 1] as usize]);
            }
            list.sort_unstable();
            list.dedup();
            band_windows.clear();
            band_windows.extend(list.iter().map(|&i| {
                let s = &input.sources[i as usize];
                (&windows[s], s.flags & SOURCE_ANTI != 0)
            }));
            let (y0, y1) = (band * band_rows, band * band_rows + reveal.len() / w);
            if !incremental {
                reveal.fill(0);
                conceal.fill(0);
                combine(band_windows, y0, reveal, conceal, (0, w), (y0, y1));
                return;
            }
            // Each dropped window's box, cleared and combined anew from every
            // window over it (a later box clears only what it recombines).
            for &(rx, ry, rw, rrows) in &changes.removed {
                let (ry0, ry1) = (ry.max(y0), (ry + rrows).min(y1));
                for y in ry0..ry1 {
                    let at = (y - y0) * w + rx;
                    reveal[at..at + rw].fill(0);
                    conceal[at..at + rw].fill(0);
                }
                if ry0 < ry1 {
                    combine(band_windows, y0, reveal, conceal, (rx, rx + rw), (ry0, ry1));
                }
            }
            // New windows add to what is kept.
            combine(&added, y0, reveal, conceal, (0, w), (y0, y1));
        },
    );
    cache.combined = true;
    // Covered texels read their neighbours' reveal as painted, before any
    // texel is lit or concealed.
    let painted = &cache.painted;
    out.par_chunks_mut(w)
        .zip(cache.concealed.par_chunks(w))
        .enumerate()
        .for_each_init(Vec::new, |near, (y, (row, conceal))| finish_row(occ, painted, input.reveal_walls, conceal, y, near, row));
    changes.built
}

/// Row `y` of the finished visibility: each texel's painted reveal, for a
/// covered texel raised to its open neighbours' (with `reveal_walls`, as
/// [`wall_reveal`]), then scaled down by the anti-vision in `conceal`.
/// Eight texels at a time with `wide`; [`finish_row_scalar`] is the
/// reference. `near` is scratch.
pub fn finish_row(occ: &Occlusion, painted: &[u16], reveal_walls: bool, conceal: &[u16], y: usize, near: &mut Vec<u16>, out: &mut [u16]) {
    let (w, h) = (occ.width as usize, occ.height as usize);
    // near[x + 1]: the strongest open reveal in column x of rows y-1..=y+1,
    // with a zero (no neighbour) at both ends.
    near.clear();
    near.resize(w + 2, 0);
    if reveal_walls {
        for ny in y.saturating_sub(1)..=(y + 1).min(h - 1) {
            open_max_into(&mut near[1..=w], &painted[ny * w..(ny + 1) * w], &occ.coverage[ny * w..(ny + 1) * w]);
        }
    }
    let (own, coverage) = (&painted[y * w..(y + 1) * w], &occ.coverage[y * w..(y + 1) * w]);
    let whole = w / LANES * LANES;
    let (zero, full) = (u16x8::splat(0), u16x8::splat(u16::MAX));
    for x in (0..whole).step_by(LANES) {
        let mine = load(&own[x..]);
        let open = u16x8::new(std::array::from_fn(|i| u16::from(coverage[x + i]))).cmp_eq(zero);
        let beside = load(&near[x..]).max(load(&near[x + 1..])).max(load(&near[x + 2..]));
        let lit = open.blend(mine, mine.max(beside));
        store(mask_mul8(lit, full - load(&conceal[x..])), &mut out[x..]);
    }
    for x in whole..w {
        let lit = if coverage[x] == 0 { own[x] } else { own[x].max(near[x]).max(near[x + 1]).max(near[x + 2]) };
        out[x] = mask_mul(lit, u16::MAX - conceal[x]);
    }
}

/// `near[x] = max(near[x], reveal[x] where coverage[x] is 0)`, sixteen
/// texels at a time.
fn open_max_into(near: &mut [u16], reveal: &[u16], coverage: &[u8]) {
    const N: usize = 16;
    let whole = near.len() / N * N;
    let zero = u16x16::splat(0);
    for x in (0..whole).step_by(N) {
        let open = u16x16::from(u8x16::new(coverage[x..x + N].try_into().expect("16 texels"))).cmp_eq(zero);
        let r = u16x16::new(reveal[x..x + N].try_into().expect("16 texels")) & open;
        let m = u16x16::new(near[x..x + N].try_into().expect("16 texels")).max(r);
        near[x..x + N].copy_from_slice(m.as_array_ref());
    }
    for x in whole..near.len() {
        if coverage[x] == 0 {
            near[x] = near[x].max(reveal[x]);
        }
    }
}

/// The reference of [`finish_row`], one texel at a time.
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

/// The reveal of one source at one texel.
pub fn source_value(input: &RecomputeInput, occ: &Occlusion, s: &SourceTexel, x: u32, y: u32) -> u16 {
    source_value_with(input, occ, s, None, x, y)
}

/// [`source_value`], answered from the source's shadowcast window where it
/// settles the ray (see [`super::shadowcast`]), by the march otherwise.
fn source_value_with(input: &RecomputeInput, occ: &Occlusion, s: &SourceTexel, bits: Option<&RayBits>, x: u32, y: u32) -> u16 {
    occluded_value(input, occ, s, bits, x, y, falloff_value(s, x, y))
}

/// Step 5 applied to `v`, the source's falloff at the texel.
fn occluded_value(input: &RecomputeInput, occ: &Occlusion, s: &SourceTexel, bits: Option<&RayBits>, x: u32, y: u32, v: u16) -> u16 {
    if v == 0 {
        return 0;
    }
    let (sx, sy) = (s.x >> 3, s.y >> 3);
    let (tx, ty) = (x as i32, y as i32);
    if (sx, sy) == (tx, ty) {
        return v;
    }
    let target = i64::from(occ.height_at(tx, ty)) + i64::from(input.target_height);
    let eye = i64::from(s.eye);
    let ray = Ray { sx, sy, tx, ty, n: i64::from((tx - sx).abs().max((ty - sy).abs())), eye, rise: target - eye };
    match bits.and_then(|b| b.blocked(tx, ty, target as i32, s.eye)) {
        Some(false) => return v,
        Some(true) => return 0,
        None => {}
    }
    let binary = matches!(input.method, RayMethod::StepScan | RayMethod::Dda | RayMethod::HierarchicalDda);
    if binary && occ.empty_box(sx, sy, tx, ty) {
        return v;
    }
    let light = match input.method {
        RayMethod::None => u16::MAX,
        RayMethod::StepScan => hard(step_scan(&ray, occ)),
        RayMethod::Dda => hard(dda(&ray, occ, false)),
        RayMethod::HierarchicalDda => hard(dda(&ray, occ, true)),
        RayMethod::DistanceField => distance_field_march(&ray, occ, input),
    };
    mask_mul(v, light)
}

/// Steps 1-4 of a source at a texel: range, cone, falloff and Z strength
/// (no occlusion).
pub fn falloff_value(s: &SourceTexel, x: u32, y: u32) -> u16 {
    falloff_at(s, centre_q(x) - i64::from(s.x), centre_q(y) - i64::from(s.y))
}

/// [`falloff_value`] of a texel centre `(dx, dy)` Q3 texels from the source.
fn falloff_at(s: &SourceTexel, dx: i64, dy: i64) -> u16 {
    let r = i64::from(s.radius);
    if dx.abs() >= r || dy.abs() >= r {
        return 0;
    }
    let d2 = dx * dx + dy * dy;
    if d2 >= r * r {
        return 0;
    }
    if s.flags & SOURCE_HAS_CONE != 0 && d2 > 0 {
        let d = i64::from(isqrt(d2 as u32));
        if dx * i64::from(s.cone_x) + dy * i64::from(s.cone_y) < i64::from(s.cone_cos) * d {
            return 0;
        }
    }
    let inner = i64::from(s.inner_radius);
    let v = if d2 <= inner * inner {
        u16::MAX
    } else {
        let d = i64::from(isqrt(d2 as u32));
        ((r - d) * 65535 / (r - inner)) as u16
    };
    mask_mul(v, s.strength as u16)
}

fn hard(visible: bool) -> u16 {
    if visible {
        u16::MAX
    } else {
        0
    }
}

/// Step Scan: one texel per step along the major axis, the texel nearest the
/// line (ties away from the source's axis). True when nothing blocks.
fn step_scan(ray: &Ray, occ: &Occlusion) -> bool {
    let (ddx, ddy) = (i64::from(ray.tx - ray.sx), i64::from(ray.ty - ray.sy));
    let (nx, ny) = (ddx.abs(), ddy.abs());
    let n = nx.max(ny);
    for k in 1..n {
        // Minor coordinate: round(k * minor / n), half away from zero.
        let (x, y) = if nx >= ny {
            (i64::from(ray.sx) + ddx.signum() * k, i64::from(ray.sy) + ddy.signum() * ((2 * k * ny + n) / (2 * n)))
        } else {
            (i64::from(ray.sx) + ddx.signum() * ((2 * k * nx + n) / (2 * n)), i64::from(ray.sy) + ddy.signum() * k)
        };
        if ray.blocks(occ, x as i32, y as i32) {
            return false;
        }
    }
    true
}

/// DDA: every texel the segment between the texel centres passes through.
/// At an exact corner crossing the ray is blocked only when both texels
/// beside the corner block. With `hierarchical`, texels inside an empty
/// block of the mip chain are skipped without reading coverage; the result
/// is the same by construction. True when nothing blocks.
fn dda(ray: &Ray, occ: &Occlusion, hierarchical: bool) -> bool {
    let (ddx, ddy) = (ray.tx - ray.sx, ray.ty - ray.sy);
    let (nx, ny) = (i64::from(ddx.abs()), i64::from(ddy.abs()));
    let (stx, sty) = (ddx.signum(), ddy.signum());
    let (mut x, mut y) = (ray.sx, ray.sy);
    let (mut ix, mut iy) = (0i64, 0i64);
    // The largest empty mip block we are inside: (level, block x, block y).
    let mut empty: Option<(usize, i32, i32)> = None;
    let mut check = |x: i32, y: i32| -> bool {
        if hierarchical {
            if let Some((l, bx, by)) = empty {
                if (x >> l, y >> l) == (bx, by) {
                    return false;
                }
            }
            empty = None;
            let mut level = 0;
            while level < occ.mips.len() && occ.mip_empty(level + 1, x, y) {
                level += 1;
            }
            if level > 0 {
                empty = Some((level, x >> level, y >> level));
                return false;
            }
        }
        ray.blocks(occ, x, y)
    };
    loop {
        let a = (2 * ix + 1) * ny;
        let b = (2 * iy + 1) * nx;
        if a == b {
            let side_x = check(x + stx, y);
            let side_y = check(x, y + sty);
            if side_x && side_y {
                return false;
            }
            x += stx;
            y += sty;
            ix += 1;
            iy += 1;
        } else if a < b {
            x += stx;
            ix += 1;
        } else {
            y += sty;
            iy += 1;
        }
        if ix == nx && iy == ny {
            return true;
        }
        if check(x, y) {
            return false;
        }
    }
}

/// Distance Field: sphere tracing from the source texel centre toward the
/// target centre, stepping by the distance to the nearest covered DF texel
/// less a margin of 1.5 DF texels (at least half a texel), optionally
/// jittered by a hash of the texel. On a covered texel the height test
/// decides. Soft shadows darken by `k * distance / travelled`. Returns the
/// light factor, mask scale.
fn distance_field_march(ray: &Ray, occ: &Occlusion, input: &RecomputeInput) -> u16 {
    let (dfw, dfh, df) = occ.distance_field;
    let scale = i64::from(input.df_scale);
    let one = i64::from(TEXEL_ONE);
    let dxq = i64::from(ray.tx - ray.sx) * one;
    let dyq = i64::from(ray.ty - ray.sy) * one;
    let len = i64::from(isqrt((dxq * dxq + dyq * dyq) as u32));
    let (ox, oy) = (i64::from(ray.sx) * one + one / 2, i64::from(ray.sy) * one + one / 2);
    let mut travelled = 0i64;
    let mut light = i64::from(u16::MAX);
    let k_q8 = i64::from(input.soft_shadow_k_q8);
    let jitter = i64::from(input.df_jitter);
    while travelled < len {
        let px = ox + dxq * travelled / len;
        let py = oy + dyq * travelled / len;
        let (cx, cy) = ((px >> 3) as i32, (py >> 3) as i32);
        if (cx, cy) == (ray.tx, ray.ty) {
            break;
        }
        let (gx, gy) = (i64::from(cx).div_euclid(scale), i64::from(cy).div_euclid(scale));
        let d2 = if gx < 0 || gy < 0 || gx >= i64::from(dfw) || gy >= i64::from(dfh) { u32::MAX } else { df[(gy * i64::from(dfw) + gx) as usize] };
        let mut step;
        if d2 == 0 && (cx, cy) != (ray.sx, ray.sy) {
            if ray.blocks(occ, cx, cy) {
                return 0;
            }
            step = one / 2;
        } else {
            let dist = i64::from(isqrt(d2.min(1 << 30))) * scale * one;
            step = (dist - 3 * scale * one / 2).max(one / 2);
            if k_q8 > 0 && travelled > 0 && d2 > 0 {
                // The ratio saturates at 256 long before dist reaches 2^16;
                // the cap keeps the GPU twin's product inside 32 bits.
                let ratio = (k_q8 * dist.min(1 << 16) / travelled).min(256);
                light = light.min(ratio * 65535 / 256);
            }
        }
        if jitter > 0 {
            let h = i64::from(hash2(cx, cy) & 0xffff);
            let factor = 65536 - jitter + ((jitter * h) >> 15);
            // Any step of 4x the ray length ends the march even when jitter
            // halves it; the cap keeps the GPU twin's product inside 32 bits.
            step = ((step.min(4 * len) * (factor >> 4)) >> 12).max(1);
        }
        travelled += step;
    }
    light as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use murk_core::fixed::HEIGHT_WALL;
    use murk_core::BlurKernel;
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
            show_memory_alpha: 65535,
            reveal_walls,
            reuse_visibility: false,
        }
    }

    /// The cache holds one window per distinct source key: equal sources
    /// share one, sources that leave free theirs, and a moved source costs
    /// exactly one new window.
    #[test]
    fn the_window_cache_keeps_one_window_per_distinct_source_and_frees_the_rest() {
        let (w, h) = (48u32, 40u32);
        let (cov, heights) = grid(w, h, 3, 10, 12, false, false);
        let accel = Accel::new(&cov, &heights, w, h);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: (0, 0, &[]), accel: &accel };
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
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: (0, 0, &[]), accel: &accel };
            // Inside the grid, at its edges and (seeds 1 and 4) outside it.
            let (px, py) = ([115, -25, 200, 70, 150, 229][seed as usize], [95, 180, 10, 60, 205, 0][seed as usize]);
            let s = SourceTexel { x: px * 8 + 5, y: py * 8 + 2, radius: (70 + 9 * seed) * 8, eye: 12, strength: 65535, ..Default::default() };
            let bits = RayBits::build(&s, &occ).expect("every cover rises above the eye");
            let input = dda_input(vec![s], w, h, 3 * seed, false);
            let win = Window::build(&input, &occ, &s, None, Shadow::build(&s, &occ).as_ref());
            assert!(seed != 0 || win.width > 128, "the window spans three words");
            let rows = win.values.len() / win.width;
            let laid = bits.first_class(win.x0, win.y0, win.width, rows);
            for (k, &v) in win.values.iter().enumerate() {
                let (i, r) = (k % win.width, k / win.width);
                let (x, y) = (win.x0 + i as i32, win.y0 + r as i32);
                let bit = laid[r * win.width.div_ceil(64) + i / 64] >> (i % 64) & 1 != 0;
                assert_eq!(bit, bits.blocked(x, y, 12, 12) == Some(true), "seed {seed}: first-class bit of ({x}, {y})");
                if k % 7 == 0 {
                    assert_eq!(v, source_value(&input, &occ, &s, x as u32, y as u32), "seed {seed}: texel ({x}, {y})");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        /// A kept combination updated tick by tick (sources moved, added,
        /// dropped, shared, anti-vision among them) gives the bytes of a
        /// cold pass at every tick, on 1 and 3 threads.
        #[test]
        fn kept_combination_equals_a_cold_pass(
            seed in any::<i32>(), density in 0u32..30, (w, h) in (20u32..90, 20u32..90), ticks in 2usize..7, reveal_walls in any::<bool>(),
        ) {
            let (cov, heights) = grid(w, h, seed, density, 12, false, true);
            let accel = Accel::new(&cov, &heights, w, h);
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: (0, 0, &[]), accel: &accel };
            let source = |k: u32, tick: u32| {
                let r = hash2(k as i32, seed);
                // One source in five steps each tick, the others stand.
                let step = if k % 5 == 0 { tick * (1 + r % 5) } else { 0 };
                let (x, y) = ((r >> 4) % (w * 8) + step, (r >> 14) % (h * 8) + 2 * step);
                let flags = if r % 7 == 0 { SOURCE_ANTI } else { 0 };
                SourceTexel { x: (x % (w * 8)) as i32, y: (y % (h * 8)) as i32, radius: 40 + (r >> 24) as i32 % 80, eye: 12, strength: 65535, flags, ..Default::default() }
            };
            // Source k appears at tick k % 4; every sixth leaves again at tick 2 + k % 3.
            let alive = |k: u32, tick: u32| tick >= k % 4 && (k % 6 != 0 || tick < 2 + k % 3);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
                let mut cache = WindowCache::default();
                let mut out = vec![0u16; (w * h) as usize];
                for tick in 0..ticks as u32 {
                    // Two equal sources share a window throughout.
                    let sources: Vec<SourceTexel> = (0..40u32).filter(|&k| alive(k, tick)).map(|k| source(k, tick)).chain([source(99, 0), source(99, 0)]).collect();
                    let input = dda_input(sources, w, h, 0, reveal_walls);
                    pool.install(|| visibility_cached(&input, &occ, &mut cache, &mut out));
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
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: (0, 0, &[]), accel: &accel };
        let s =
            SourceTexel { x: 550 * 8 + 3, y: 540 * 8 + 5, radius: 530 * 8, inner_radius: 100 * 8, eye: 12, strength: 65535, ..Default::default() };
        let input = dda_input(vec![s], w, h, 0, false);
        let bits = RayBits::build(&s, &occ).expect("every cover rises above the eye: the window is swept");
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
                    sums[y * (w + 1) + x + 1] + sums[(y + 1) * (w + 1) + x] - sums[y * (w + 1) + x] + u32::from(coverage[y * w + x]);
            }
        }
        Accel { sums, tops, classes, words_per_row, classes_by_column, words_per_column, classes_complete, lowest_top }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        /// The tables built in parallel by words are the tables built bit by
        /// bit, for widths and heights on both sides of 64 and 128, with few
        /// distinct tops (one class each) and with many (one class), on 1
        /// and 3 threads, built fresh or over the tables of another grid.
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
                for got in [fresh, reused] {
                prop_assert_eq!(&got.sums, &want.sums);
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
        /// The `wide` finish of a row (walls lit, anti-vision applied) gives
        /// the bytes of the per-texel reference, edges and all lanes.
        #[test]
        fn finish_row_equals_its_scalar_twin(
            (w, h, texels) in (1u32..40, 1u32..12).prop_flat_map(|(w, h)| (Just(w), Just(h), prop::collection::vec((any::<bool>(), any::<u16>(), prop_oneof![Just(0u16), any::<u16>()]), (w * h) as usize))),
            reveal_walls in any::<bool>(),
        ) {
            let cov: Vec<u8> = texels.iter().map(|t| u8::from(t.0)).collect();
            let painted: Vec<u16> = texels.iter().map(|t| t.1).collect();
            let conceal: Vec<u16> = texels.iter().map(|t| t.2).collect();
            let heights = vec![0; cov.len()];
            let accel = Accel::default();
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: (0, 0, &[]), accel: &accel };
            let mut near = Vec::new();
            for y in 0..h as usize {
                let row = y * w as usize..(y + 1) * w as usize;
                let (mut a, mut b) = (vec![0u16; w as usize], vec![1u16; w as usize]);
                finish_row_scalar(&occ, &painted, reveal_walls, &conceal[row.clone()], y, &mut a);
                finish_row(&occ, &painted, reveal_walls, &conceal[row], y, &mut near, &mut b);
                prop_assert_eq!(a, b, "row {}", y);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        /// The shadowcast shortcut gives exactly what the DDA march gives, for
        /// every texel of the window, whether the target is below or above the eye.
        #[test]
        fn shadowcast_equals_the_dda_march(
            w in 4u32..40, h in 4u32..40, seed in any::<i32>(), density in 0u32..60,
            px in 0u32..320, py in 0u32..320, radius in 8i32..200, eye in 1i32..400, low in any::<bool>(), palette in any::<bool>(),
            target_height in -20i32..60,
        ) {
            let (cov, heights) = grid(w, h, seed, density, eye, low, palette);
            let accel = Accel::new(&cov, &heights, w, h);
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: (0, 0, &[]), accel: &accel };
            let s = SourceTexel { x: (px % (w * 8)) as i32, y: (py % (h * 8)) as i32, radius, eye, strength: 65535, ..Default::default() };
            let input = dda_input(vec![s], w, h, target_height, false);
            let bits = RayBits::build(&s, &occ);
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
                    let rows = b.first_class(x0, y0, width, (y1 - y0 + 1) as usize);
                    for y in y0..=y1 {
                        for x in x0..=x1 {
                            let (row, i) = ((y - y0) as usize * width.div_ceil(64), (x - x0) as usize);
                            let laid = rows.get(row + i / 64).is_some_and(|word| word >> (i % 64) & 1 != 0);
                            prop_assert_eq!(laid, b.blocked(x, y, eye, eye) == Some(true), "first-class bit of texel ({}, {})", x, y);
                        }
                    }
                }
            }
            // The window as visibility builds it (falloff table, the sweep's
            // clear texels laid out at once) holds the same values.
            let table = FalloffTable::new(&FalloffTable::key(&s));
            let shadow = Shadow::build(&s, &occ);
            for falloff in [Some(&table), None] {
                let win = Window::build(&input, &occ, &s, falloff, shadow.as_ref());
                for (k, &v) in win.values.iter().enumerate() {
                    let (x, y) = (win.x0 + (k % win.width) as i32, win.y0 + (k / win.width) as i32);
                    prop_assert_eq!(v, source_value(&input, &occ, &s, x as u32, y as u32), "window texel ({}, {})", x, y);
                }
            }
        }
    }
}
