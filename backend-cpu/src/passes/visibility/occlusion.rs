//! What the visibility pass reads of the occlusion: the textures
//! ([`Occlusion`]) and the CPU-only tables derived from them once per build
//! ([`Accel`]: blocker tops, cover classes by rows and columns, coverage
//! sums), which make the marches and the shadowcast cheaper and change no
//! result.
use super::*;
use wide::{i32x8, CmpEq, CmpLt};

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
        // Every top is written below: only new memory is filled here.
        self.tops.resize(w * h, i32::MIN);
        self.tops.truncate(w * h);
        // The tops, and the distinct covered tops (as long as there are few
        // of them) and the lowest, per band of rows, then merged: sets and a
        // minimum, so the merge order does not matter.
        let add = |levels: &mut Vec<i32>, t: i32| {
            if levels.len() <= MAX_CLASSES && !levels.contains(&t) {
                levels.push(t);
            }
        };
        let band = line * 16;
        let (mut levels, lowest_top) = self
            .tops
            .par_chunks_mut(band)
            .zip(coverage.par_chunks(band).zip(heights.par_chunks(band)))
            .map(|(tops, (cov, hs))| {
                let (mut levels, mut lowest) = (Vec::with_capacity(MAX_CLASSES + 1), i32::MAX);
                // The last covered top added (most covered texels repeat it).
                let mut last = i32::MIN;
                let empty = i32x8::splat(i32::MIN);
                let mut tops8 = tops.chunks_exact_mut(8);
                let (mut cov8, mut hs8) = (cov.chunks_exact(8), hs.chunks_exact(8));
                for ((t, c), ht) in (&mut tops8).zip(&mut cov8).zip(&mut hs8) {
                    // Eight texels at a time: the height where covered.
                    let open = i32x8::new(std::array::from_fn(|i| i32::from(c[i]))).cmp_eq(i32x8::splat(0));
                    t.copy_from_slice(open.blend(empty, i32x8::new(ht.try_into().expect("eight heights"))).as_array_ref());
                }
                for ((t, &c), &ht) in tops8.into_remainder().iter_mut().zip(cov8.remainder()).zip(hs8.remainder()) {
                    *t = if c != 0 { ht } else { i32::MIN };
                }
                for eight in tops.chunks(8) {
                    // Eight texels at a time: skipped whole when each is
                    // uncovered or repeats the last covered top.
                    if let Ok(lanes) = <[i32; 8]>::try_from(eight) {
                        let lanes = i32x8::new(lanes);
                        if (lanes.cmp_eq(empty) | lanes.cmp_eq(i32x8::splat(last))).move_mask() == 0xff {
                            continue;
                        }
                    }
                    for &t in eight {
                        if t != i32::MIN && last != t {
                            lowest = lowest.min(t);
                            add(&mut levels, t);
                            last = t;
                        }
                    }
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
pub(super) fn class_rows(tops: &[i32], w: usize, level: i32, bits: &mut Vec<u64>) {
    let words = w.div_ceil(64);
    bits.clear();
    bits.resize(words * (tops.len() / w.max(1)), 0);
    bits.par_chunks_mut(words.max(1)).zip(tops.par_chunks(w.max(1))).for_each(|(row_bits, row)| {
        let below = i32x8::splat(level);
        for (word, texels) in row_bits.iter_mut().zip(row.chunks(64)) {
            // Uncovered texels hold `i32::MIN`, below every level. Eight
            // texels at a time: the lanes not below the level.
            *word = if texels.len() == 64 {
                texels.chunks_exact(8).enumerate().fold(0, |acc, (k, eight)| {
                    let lows = i32x8::new(eight.try_into().expect("eight tops")).cmp_lt(below).move_mask() as u64;
                    acc | (!lows & 0xff) << (8 * k)
                })
            } else {
                texels.iter().enumerate().fold(0, |acc, (i, &t)| acc | u64::from(t >= level) << i)
            };
        }
    });
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

/// Rows per band of the summed-area table's parallel passes.
pub(super) const SUM_BAND: usize = 32;

/// The summed-area table of a `w x h` coverage grid into `sums`: entry
/// `(x, y)` counts the covered texels in `[0, x) x [0, y)`. The covered
/// texels of each column within each band of rows are counted first (in
/// parallel), which gives the entries above each band; then bands of rows
/// in parallel sum their rows on top of those.
pub(super) fn coverage_sums(coverage: &[u8], w: usize, h: usize, sums: &mut Vec<u32>) {
    let stride = w + 1;
    // Every entry is written below (row 0 and column 0 as zeros): only new
    // memory is filled here.
    sums.resize(stride * (h + 1), 0);
    sums.truncate(stride * (h + 1));
    sums[..stride].fill(0);
    let (line, bands) = (w.max(1), h.div_ceil(SUM_BAND));
    let mut columns = vec![0u32; line * bands];
    columns.par_chunks_mut(line).zip(coverage.par_chunks(line * SUM_BAND)).for_each(|(counts, rows)| {
        for row in rows.chunks(line) {
            for (n, &c) in counts.iter_mut().zip(row) {
                *n += u32::from(c);
            }
        }
    });
    // The table's row at the top of each band: the row above it plus the
    // running sum of the band's column counts.
    let mut tops = vec![0u32; stride * bands];
    for band in 1..bands {
        let (before, now) = tops.split_at_mut(band * stride);
        let mut acc = 0u32;
        for ((o, &p), &n) in now[1..stride].iter_mut().zip(&before[(band - 1) * stride + 1..]).zip(&columns[(band - 1) * line..]) {
            acc += n;
            *o = p + acc;
        }
    }
    sums[stride..].par_chunks_mut(stride * SUM_BAND).zip(coverage.par_chunks(line * SUM_BAND)).zip(tops.par_chunks(stride)).for_each(
        |((out, rows), top)| {
            let mut above = top;
            for (line, row) in out.chunks_mut(stride).zip(rows.chunks(w.max(1))) {
                line[0] = 0;
                let mut acc = 0u32;
                for ((o, &c), &a) in line[1..].iter_mut().zip(row).zip(&above[1..]) {
                    acc += u32::from(c);
                    *o = acc + a;
                }
                above = line;
            }
        },
    );
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
        let stride = (w + 1) as usize;
        let at = |x: i32, y: i32| self.accel.sums[y as usize * stride + x as usize];
        at(x1 + 1, y1 + 1) + at(x0, y0) == at(x0, y1 + 1) + at(x1 + 1, y0)
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
        let (w, h, texels) = &self.mips[level - 1];
        let (bx, by) = (x >> level, y >> level);
        bx < 0 || by < 0 || bx as u32 >= *w || by as u32 >= *h || texels[(by as u32 * w + bx as u32) as usize] == 0
    }
}
