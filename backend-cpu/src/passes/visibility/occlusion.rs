//! What the visibility pass reads of the occlusion: the textures
//! ([`Occlusion`]) and the CPU-only tables derived from them once per build
//! ([`Accel`]: blocker tops, cover classes by rows and columns, coverage
//! sums), which make the marches and the shadowcast cheaper and change no
//! result.
use murk_core::fixed::HEIGHT_FLOOR;
use murk_core::{Grid, TexelRect};
use rayon::prelude::*;
use wide::i32x8;

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
    /// Coverage pyramid levels 1..
    pub mips: &'a [Grid<u8>],
    /// Distance field: squared distances in DF texels.
    pub distance_field: &'a Grid<u32>,
    /// CPU-only shortcuts derived from coverage and height; no result depends on them.
    pub accel: &'a Accel,
}

/// Most distinct covered tops the shadowcast shortcut keeps a class for.
pub const MAX_CLASSES: usize = 4;

/// Derived from coverage and height once per occlusion build, to make the
/// CPU marches cheaper; they change no result.
#[derive(Clone, Debug, Default)]
pub struct Accel {
    /// Coverage sums within bands of `BAND` rows, `width + 1` entries by
    /// `height + 1` rows: entry `(x, y)` counts the covered texels of columns `0..x` in
    /// the rows of row `y - 1`'s band above row `y` (0 for `y = 0`). With
    /// [`Accel::band_sums`] they make the summed-area table
    /// ([`Accel::covered_before`]): a ray whose bounding box sums to 0
    /// crosses no covered texel. A change to the coverage shifts the entries
    /// of its own band and one row per band below, not every row below.
    pub sums: Vec<u32>,
    /// Per band of `BAND` rows, `width + 1` entries: the covered texels
    /// of columns `0..x` in the rows above the band.
    pub band_sums: Vec<u32>,
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
    /// Covered texels per column in each band of [`BAND`] rows: the first
    /// pass counts them for the coverage sums.
    pub(super) column_counts: Vec<u32>,
    /// The distinct covered tops of each band of [`BAND`] rows: a local
    /// update rescans the bands it touches and merges them all.
    pub(super) bands: Vec<Levels>,
}

/// Rows per band of the parallel passes that build the tables.
pub(super) const BAND: usize = 32;

/// The distinct covered tops met so far (while there are at most
/// [`MAX_CLASSES`] + 1 of them: more means one class), and the lowest.
#[derive(Clone, Debug)]
pub(super) struct Levels {
    tops: Vec<i32>,
    lowest: i32,
    /// The last new covered top met (most covered texels repeat it).
    last: i32,
}

impl Levels {
    fn new() -> Self {
        Self { tops: Vec::with_capacity(MAX_CLASSES + 1), lowest: i32::MAX, last: i32::MIN }
    }

    fn add(&mut self, t: i32) {
        self.lowest = self.lowest.min(t);
        if self.tops.len() <= MAX_CLASSES && !self.tops.contains(&t) {
            self.tops.push(t);
        }
    }

    /// Notes the new covered tops of a row of tops, eight texels at a time:
    /// skipped whole when each is uncovered or repeats the last covered top.
    fn scan(&mut self, tops: &[i32]) {
        let empty = i32x8::splat(i32::MIN);
        for eight in tops.chunks(8) {
            if let Ok(lanes) = <[i32; 8]>::try_from(eight) {
                let lanes = i32x8::new(lanes);
                if (lanes.simd_eq(empty) | lanes.simd_eq(i32x8::splat(self.last))).to_bitmask() == 0xff {
                    continue;
                }
            }
            for &t in eight {
                if t != i32::MIN && self.last != t {
                    self.add(t);
                    self.last = t;
                }
            }
        }
    }

    /// Both bands' tops: sets and a minimum, so the order does not matter.
    fn merge(mut self, other: Self) -> Self {
        for t in other.tops {
            self.add(t);
        }
        self.lowest = self.lowest.min(other.lowest);
        self
    }
}

impl Accel {
    /// Builds the tables, bands of rows in parallel; the column bit sets are
    /// the row bit sets transposed 64 by 64 texels at a time.
    pub fn new(coverage: &[u8], heights: &[i32], width: u32, height: u32) -> Self {
        let mut accel = Self::default();
        accel.rebuild(coverage, heights, width, height);
        accel
    }

    /// [`Accel::new`] in place: the same tables, in the memory of the old
    /// ones (an occlusion rebuilt at the same size allocates nothing).
    pub fn rebuild(&mut self, coverage: &[u8], heights: &[i32], width: u32, height: u32) {
        let line = (width as usize).max(1);
        self.build_rows(width, height, coverage.par_chunks(line).zip(heights.par_chunks(line)));
        coverage_sums(coverage, width as usize, height as usize, &self.column_counts, (&mut self.sums, &mut self.band_sums));
    }

    /// The covered texels in columns `0..x` of rows `0..y` of a grid
    /// `width` wide (`x <= width`, `y <= height`).
    pub fn covered_before(&self, width: usize, x: usize, y: usize) -> u32 {
        let stride = width + 1;
        self.sums[y * stride + x].wrapping_add(self.band_sums[y.saturating_sub(1) / BAND * stride + x])
    }

    /// Writes the coverage and heights row by row with `fill(row, coverage,
    /// heights)` and builds the tables from each row while it is fresh in
    /// the cache: [`Accel::rebuild`] over what `fill` wrote, in one pass
    /// over the grid instead of two.
    pub fn fill_and_rebuild(
        &mut self,
        coverage: &mut [u8],
        heights: &mut [i32],
        width: u32,
        height: u32,
        fill: impl Fn(u32, &mut [u8], &mut [i32]) + Sync,
    ) {
        let line = (width as usize).max(1);
        let rows = coverage.par_chunks_mut(line).zip(heights.par_chunks_mut(line)).enumerate().map(|(row, (c, h))| {
            fill(row as u32, c, h);
            (&*c, &*h)
        });
        self.build_rows(width, height, rows);
        // The coverage sums read the coverage once all of it is written.
        coverage_sums(coverage, width as usize, height as usize, &self.column_counts, (&mut self.sums, &mut self.band_sums));
    }

    /// Everything but the coverage sums: one pass over the rows (tops,
    /// distinct tops, covered texels per column and band), then the class
    /// bit sets from the tops.
    fn build_rows<'a>(&mut self, width: u32, height: u32, rows: impl IndexedParallelIterator<Item = (&'a [u8], &'a [i32])>) {
        let (w, h) = (width as usize, height as usize);
        let line = w.max(1);
        // Every top and count is written below: only new memory is filled here.
        self.tops.resize(w * h, i32::MIN);
        self.tops.truncate(w * h);
        self.column_counts.resize(line * h.div_ceil(BAND), 0);
        self.column_counts.truncate(line * h.div_ceil(BAND));
        self.bands = rows
            .chunks(BAND)
            .zip(self.tops.par_chunks_mut(line * BAND))
            .zip(self.column_counts.par_chunks_mut(line))
            .map(|((band, tops), counts)| {
                let mut levels = Levels::new();
                counts.fill(0);
                for ((cov, hs), tops) in band.into_iter().zip(tops.chunks_mut(line)) {
                    // The height where covered: a branch-free select over
                    // slices, which the compiler turns into vector code.
                    for ((t, &c), &ht) in tops.iter_mut().zip(cov).zip(hs) {
                        *t = if c != 0 { ht } else { i32::MIN };
                    }
                    levels.scan(tops);
                    for (n, &c) in counts.iter_mut().zip(cov) {
                        *n += u32::from(c != 0);
                    }
                }
                levels
            })
            .collect();
        let (tops, lowest, complete) = self.levels();
        self.lowest_top = lowest;
        self.classes_complete = complete;
        self.words_per_row = w.div_ceil(64);
        self.words_per_column = h.div_ceil(64);
        // The old bit sets are reused, one per class.
        let mut spare: Vec<Vec<u64>> = self.classes.drain(..).map(|(_, bits)| bits).collect();
        let mut bits: Vec<Vec<u64>> = tops.iter().map(|_| spare.pop().unwrap_or_default()).collect();
        class_rows(&self.tops, w, &tops, &mut bits);
        self.classes = tops.into_iter().zip(bits).collect();
        self.classes_by_column.resize_with(self.classes.len(), Vec::new);
        for ((_, rows), columns) in self.classes.iter().zip(self.classes_by_column.iter_mut()) {
            transpose_bits(rows, w, h, columns);
        }
    }

    /// The class tops (ascending), the lowest covered top and whether every
    /// distinct top has its class, from the bands' tops.
    pub(super) fn levels(&self) -> (Vec<i32>, i32, bool) {
        let levels = self.bands.iter().cloned().fold(Levels::new(), Levels::merge);
        let complete = levels.tops.len() <= MAX_CLASSES;
        let mut tops = if complete { levels.tops } else { vec![levels.lowest] };
        tops.sort_unstable();
        (tops, levels.lowest, complete)
    }

    /// Brings the tables up to date with `coverage` and `heights` where
    /// they changed, which is inside `rects` only: the same tables as
    /// [`Accel::rebuild`] makes, at the cost of the rectangles (and of the
    /// coverage sums below and right of them, shifted by what changed).
    /// Returns whether the class tops stayed the same.
    pub fn update(&mut self, coverage: &[u8], heights: &[i32], width: u32, height: u32, rects: &[TexelRect]) -> bool {
        let (w, h) = (width as usize, height as usize);
        let line = w.max(1);
        let mut touched = vec![false; h.div_ceil(BAND)];
        for r in rects {
            let (x0, y0, x1, y1) = (r.x0 as usize, r.y0 as usize, r.x1 as usize, r.y1 as usize);
            let rw = x1 - x0;
            // Per texel of the rectangle, what its coverage gained (+1) or
            // lost (-1), as a summed-area table over the rectangle.
            let mut delta = vec![0i32; (rw + 1) * (y1 - y0 + 1)];
            let mut moved = false;
            for y in y0..y1 {
                let band = y / BAND;
                touched[band] = true;
                let mut acc = 0i32;
                for x in x0..x1 {
                    let i = y * w + x;
                    let (was, now) = (self.tops[i] != i32::MIN, coverage[i] != 0);
                    let d = i32::from(now) - i32::from(was);
                    if d != 0 {
                        let n = &mut self.column_counts[band * line + x];
                        *n = n.wrapping_add_signed(d);
                        moved = true;
                    }
                    acc += d;
                    let at = (y - y0 + 1) * (rw + 1) + (x - x0 + 1);
                    delta[at] = delta[at - rw - 1] + acc;
                    self.tops[i] = if now { heights[i] } else { i32::MIN };
                }
            }
            if moved {
                shift_sums((&mut self.sums, &mut self.band_sums), w, h, r, &delta);
            }
        }
        for (band, _) in touched.iter().enumerate().filter(|(_, &t)| t) {
            let mut levels = Levels::new();
            for row in self.tops[band * BAND * line..((band + 1) * BAND).min(h) * line].chunks(line) {
                levels.scan(row);
            }
            self.bands[band] = levels;
        }
        let (tops, lowest, complete) = self.levels();
        let was_complete = self.classes_complete;
        self.lowest_top = lowest;
        self.classes_complete = complete;
        let words = w.div_ceil(64);
        // A class whose bits are the texels covered at least its top: kept
        // where the level stays (and, with one class, where it is every
        // covered texel before and after), redone over the rectangles; a new
        // level is laid out whole.
        let mut old: Vec<(i32, Vec<u64>, Vec<u64>)> =
            self.classes.drain(..).zip(self.classes_by_column.drain(..)).map(|((t, rows), columns)| (t, rows, columns)).collect();
        let same = old.iter().map(|(t, _, _)| *t).eq(tops.iter().copied()) && was_complete == complete;
        for &top in &tops {
            let keep = old.iter().position(|(t, _, _)| *t == top).filter(|_| complete && was_complete).or_else(|| {
                // One class each side: every covered texel, whatever the lowest.
                (!complete && !was_complete && old.len() == 1).then_some(0)
            });
            match keep {
                Some(k) => {
                    let (_, mut rows, mut columns) = old.swap_remove(k);
                    for r in rects {
                        let (y0, y1) = (r.y0 as usize, r.y1 as usize);
                        class_band::<1>(&self.tops[y0 * line..y1 * line], w, &[top], &mut [&mut rows[y0 * words..y1 * words]]);
                        for k in r.x0 as usize / 64..(r.x1 as usize).div_ceil(64) {
                            for yb in y0 / 64..y1.div_ceil(64) {
                                transpose_block(&rows, w, h, k, yb, &mut columns);
                            }
                        }
                    }
                    self.classes.push((top, rows));
                    self.classes_by_column.push(columns);
                }
                None => {
                    let mut bits = [Vec::new()];
                    class_rows(&self.tops, w, &[top], &mut bits);
                    let [rows] = bits;
                    let mut columns = Vec::new();
                    transpose_bits(&rows, w, h, &mut columns);
                    self.classes.push((top, rows));
                    self.classes_by_column.push(columns);
                }
            }
        }
        same
    }
}

/// Adds to the coverage sums of a `w x h` grid what the coverage of `r`
/// changed by: `delta` is the summed-area table of the change over `r`
/// (`(r.x1 - r.x0 + 1)` entries a row, zero row and column first). The
/// whole table's entry `(x, y)` shifts by the change above and left of it;
/// a band's own entries by what of that lies in the band (the rows of the
/// bands `r` meets, in parallel), the entries above each band below `r`
/// by all of it.
fn shift_sums((sums, band_sums): (&mut [u32], &mut [u32]), w: usize, h: usize, r: &TexelRect, delta: &[i32]) {
    let stride = w + 1;
    let (x0, y0, x1, y1) = (r.x0 as usize, r.y0 as usize, r.x1 as usize, r.y1 as usize);
    let rw = x1 - x0;
    // The change above table row `y` (rows `0..y`), by column from `x0`.
    let above = |y: usize| {
        let dy = y.saturating_sub(y0).min(y1 - y0);
        &delta[dy * (rw + 1)..(dy + 1) * (rw + 1)]
    };
    // Adds `now - base` (both by column from `x0`; past `x1`, their last).
    let add = |line: &mut [u32], now: &[i32], base: &[i32]| {
        for ((o, &v), &b) in line[x0 + 1..=x1].iter_mut().zip(&now[1..]).zip(&base[1..]) {
            *o = o.wrapping_add_signed(v - b);
        }
        let total = now[rw] - base[rw];
        if total != 0 {
            for o in &mut line[x1 + 1..] {
                *o = o.wrapping_add_signed(total);
            }
        }
    };
    // Table rows y0 + 1 ..= the end of the band of the last changed row.
    let last = ((y1 - 1) / BAND + 1) * BAND;
    sums[(y0 + 1) * stride..(last.min(h) + 1) * stride].par_chunks_mut(stride).enumerate().for_each(|(k, line)| {
        let y = y0 + 1 + k;
        add(line, above(y), above((y - 1) / BAND * BAND));
    });
    let none = vec![0i32; rw + 1];
    for (band, line) in band_sums.chunks_mut(stride).enumerate().skip(y0 / BAND + 1) {
        add(line, above(band * BAND), &none);
    }
}

/// The texels of a `w`-wide grid of tops covered at least as high as each
/// of `levels`, as bits, `w.div_ceil(64)` words per row, into `bits` (one
/// bit set per level): one pass over the tops for all the levels.
pub(super) fn class_rows(tops: &[i32], w: usize, levels: &[i32], bits: &mut [Vec<u64>]) {
    let (words, rows) = (w.div_ceil(64), tops.len() / w.max(1));
    for b in bits.iter_mut() {
        b.clear();
        b.resize(words * rows, 0);
    }
    // Per band of rows, each level's words of that band.
    let mut bands: Vec<Vec<&mut [u64]>> = (0..rows.div_ceil(BAND)).map(|_| Vec::with_capacity(levels.len())).collect();
    for b in bits.iter_mut() {
        for (band, part) in bands.iter_mut().zip(b.chunks_mut((words * BAND).max(1))) {
            band.push(part);
        }
    }
    let rows_of = |tops: &[i32], parts: &mut [&mut [u64]]| match levels.len() {
        0 => {}
        1 => class_band::<1>(tops, w, levels, parts),
        2 => class_band::<2>(tops, w, levels, parts),
        3 => class_band::<3>(tops, w, levels, parts),
        _ => class_band::<MAX_CLASSES>(tops, w, levels, parts),
    };
    bands.into_par_iter().zip(tops.par_chunks((w * BAND).max(1))).for_each(|(mut parts, tops)| rows_of(tops, &mut parts));
}

/// [`class_rows`] over one band of rows, for `N` levels (`levels.len()`, at
/// least 1), into `parts` (each level's words of the band).
fn class_band<const N: usize>(tops: &[i32], w: usize, levels: &[i32], parts: &mut [&mut [u64]]) {
    let words = w.div_ceil(64);
    let levels: [i32; N] = std::array::from_fn(|i| levels[i]);
    let below = levels.map(i32x8::splat);
    for (r, row) in tops.chunks(w.max(1)).enumerate() {
        for (k, texels) in row.chunks(64).enumerate() {
            let mut word = [0u64; N];
            if texels.len() == 64 {
                // Eight texels at a time, loaded once for every level: the
                // lanes not below it. Uncovered texels hold `i32::MIN`,
                // below every level.
                for (j, eight) in texels.chunks_exact(8).enumerate() {
                    let lanes = i32x8::new(eight.try_into().expect("eight tops"));
                    for (word, below) in word.iter_mut().zip(below) {
                        *word |= (!(lanes.simd_lt(below).to_bitmask() as u64) & 0xff) << (8 * j);
                    }
                }
            } else {
                for (word, level) in word.iter_mut().zip(levels) {
                    *word = texels.iter().enumerate().fold(0, |acc, (i, &t)| acc | u64::from(t >= level) << i);
                }
            }
            for (part, word) in parts.iter_mut().zip(word) {
                part[r * words + k] = word;
            }
        }
    }
}

/// A row-major bit set of `w x h` texels (`w.div_ceil(64)` words per row)
/// as a column-major one (`h.div_ceil(64)` words per column, rows as bits),
/// into `columns`.
pub(super) fn transpose_bits(rows: &[u64], w: usize, h: usize, columns: &mut Vec<u64>) {
    let (words_per_row, words_per_column) = (w.div_ceil(64), h.div_ceil(64));
    columns.clear();
    columns.resize(words_per_column * w, 0);
    // Each task owns 64 grid columns: word `k` of every row.
    columns.par_chunks_mut((64 * words_per_column).max(1)).enumerate().for_each(|(k, out)| {
        for yb in 0..words_per_column {
            transpose_into(rows, words_per_row, h, k, yb, words_per_column, out);
        }
    });
}

/// One 64 x 64 block of [`transpose_bits`] again: grid columns `64 k..`
/// (row word `k`) of rows `64 yb..`, into `columns` (all of it).
pub(super) fn transpose_block(rows: &[u64], w: usize, h: usize, k: usize, yb: usize, columns: &mut [u64]) {
    let words_per_column = h.div_ceil(64);
    let out = &mut columns[k * 64 * words_per_column..((k + 1) * 64).min(w) * words_per_column];
    transpose_into(rows, w.div_ceil(64), h, k, yb, words_per_column, out);
}

/// Transposes row word `k` of rows `64 yb..64 yb + 64` into word `yb` of
/// the columns of `out` (the grid columns of word `k`).
fn transpose_into(rows: &[u64], words_per_row: usize, h: usize, k: usize, yb: usize, words_per_column: usize, out: &mut [u64]) {
    let mut block = [0u64; 64];
    for (i, b) in block.iter_mut().enumerate() {
        let y = yb * 64 + i;
        *b = if y < h { rows[y * words_per_row + k] } else { 0 };
    }
    transpose64(&mut block);
    for (c, &b) in block.iter().enumerate().take(out.len() / words_per_column) {
        out[c * words_per_column + yb] = b;
    }
}

/// Transposes a 64 x 64 bit matrix in place: bit `c` of word `r` becomes
/// bit `r` of word `c` (the blocks across the diagonal swapped, at halving
/// sizes).
pub(super) fn transpose64(a: &mut [u64; 64]) {
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

/// The coverage sums of a `w x h` coverage grid (see [`Accel::sums`]):
/// per band of [`BAND`] rows, the sums within the band into `sums`, and
/// into `band_sums` the entries above it. `columns` holds, per band, the
/// covered texels of each column in that band (counted by the first pass):
/// they give the entries above each band; then bands of rows in parallel
/// sum their own rows.
pub(super) fn coverage_sums(coverage: &[u8], w: usize, h: usize, columns: &[u32], (sums, band_sums): (&mut Vec<u32>, &mut Vec<u32>)) {
    let stride = w + 1;
    // Every entry is written below (row 0 and column 0 as zeros): only new
    // memory is filled here.
    sums.resize(stride * (h + 1), 0);
    sums.truncate(stride * (h + 1));
    sums[..stride].fill(0);
    let (line, bands) = (w.max(1), h.div_ceil(BAND));
    // The entries above each band: those above the band before plus the
    // band before's column counts, summed along the row.
    band_sums.clear();
    band_sums.resize(stride * bands.max(1), 0);
    for band in 1..bands {
        let (before, now) = band_sums.split_at_mut(band * stride);
        let mut acc = 0u32;
        for ((o, &p), &n) in now[1..stride].iter_mut().zip(&before[(band - 1) * stride + 1..]).zip(&columns[(band - 1) * line..]) {
            acc += n;
            *o = p + acc;
        }
    }
    sums[stride..].par_chunks_mut(stride * BAND).zip(coverage.par_chunks(line * BAND)).for_each(|(out, rows)| {
        let zero = vec![0u32; stride];
        let mut above: &[u32] = &zero;
        for (line, row) in out.chunks_mut(stride).zip(rows.chunks(w.max(1))) {
            line[0] = 0;
            // The running count along the row, then the entries above
            // added in a second, branch-free loop the compiler vectorizes.
            let mut acc = 0u32;
            for (o, &c) in line[1..].iter_mut().zip(row) {
                acc += u32::from(c != 0);
                *o = acc;
            }
            for (o, &a) in line[1..].iter_mut().zip(&above[1..]) {
                *o += a;
            }
            above = line;
        }
    });
}

impl Occlusion<'_> {
    /// Whether no texel of the box spanned by two texels is covered (texels
    /// outside the grid are never covered). Every texel a Step Scan or DDA
    /// ray visits lies in the box of its two ends, so such a ray is clear.
    pub(super) fn empty_box(&self, ax: i32, ay: i32, bx: i32, by: i32) -> bool {
        let (w, h) = (self.width as i32, self.height as i32);
        let (x0, x1) = (ax.min(bx).max(0), ax.max(bx).min(w - 1));
        let (y0, y1) = (ay.min(by).max(0), ay.max(by).min(h - 1));
        if x0 > x1 || y0 > y1 {
            return true;
        }
        let at = |x: i32, y: i32| self.accel.covered_before(w as usize, x as usize, y as usize);
        at(x1 + 1, y1 + 1).wrapping_add(at(x0, y0)) == at(x0, y1 + 1).wrapping_add(at(x1 + 1, y0))
    }

    /// The top of the cover at texel `(x, y)`; `i32::MIN` where nothing
    /// covers it or it lies outside the grid.
    pub(super) fn top_at(&self, x: i32, y: i32) -> i32 {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            self.accel.tops[(y as u32 * self.width + x as u32) as usize]
        } else {
            i32::MIN
        }
    }

    pub(super) fn height_at(&self, x: i32, y: i32) -> i32 {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            self.heights[(y as u32 * self.width + x as u32) as usize]
        } else {
            HEIGHT_FLOOR
        }
    }
    /// Whether the block of mip level `level` holding texel `(x, y)` is empty.
    pub(super) fn mip_empty(&self, level: usize, x: i32, y: i32) -> bool {
        let m = &self.mips[level - 1];
        let (bx, by) = (x >> level, y >> level);
        bx < 0 || by < 0 || bx as u32 >= m.width || by as u32 >= m.height || m.texels[(by as u32 * m.width + bx as u32) as usize] == 0
    }
}
