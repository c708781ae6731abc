//! Which texels a recompute may have changed: marks per grid row and block
//! of [`BLOCK`] columns. A pass given marks recomputes the marked blocks
//! only; every texel it skips is one whose inputs did not change since it
//! was last written, so the bytes are those of a full pass (each pass's
//! region variant is tested against its full twin).

use murk_core::TexelRect;

/// Texels per block along a row (a multiple of the 16-texel kernels).
pub const BLOCK: usize = 16;

/// The rectangle of texels `x0..x1` by `y0..y1`, from a grid's `usize`
/// indices (grids are at most 4096 texels a side).
pub fn texel_rect(x0: usize, y0: usize, x1: usize, y1: usize) -> TexelRect {
    TexelRect { x0: x0 as u32, y0: y0 as u32, x1: x1 as u32, y1: y1 as u32 }
}

/// The widest reach in rows that [`Blocks::widened_rows`] ORs in whole
/// (past it, a running count per block is cheaper).
const DIRECT_REACH: usize = 2;

/// Marks read at once by [`Blocks::any`] and [`Blocks::all`].
const SCAN_RUN: usize = 512;

/// Marks per row and block of [`BLOCK`] columns over a `width` by `height`
/// grid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Blocks {
    /// Grid width in texels.
    pub width: usize,
    /// Grid height in texels.
    pub height: usize,
    /// Blocks per row.
    pub per_row: usize,
    /// Row-major marks, `per_row` per row.
    pub marks: Vec<bool>,
}

impl Blocks {
    /// Every block marked (`all`) or none.
    pub fn new(width: usize, height: usize, all: bool) -> Self {
        let per_row = width.div_ceil(BLOCK);
        Self { width, height, per_row, marks: vec![all; per_row * height] }
    }

    /// Marks every block that holds a texel of `rect` widened by `by` on
    /// every side (clipped to the grid).
    pub fn mark(&mut self, rect: TexelRect, by: usize) {
        let (x0, y0) = ((rect.x0 as usize).saturating_sub(by), (rect.y0 as usize).saturating_sub(by));
        let (x1, y1) = ((rect.x1 as usize + by).min(self.width), (rect.y1 as usize + by).min(self.height));
        if x0 >= x1 || y0 >= y1 {
            return;
        }
        let (b0, b1) = (x0 / BLOCK, (x1 - 1) / BLOCK + 1);
        for y in y0..y1 {
            self.marks[y * self.per_row + b0..y * self.per_row + b1].fill(true);
        }
    }

    /// The blocks marked in a row within `by` rows of their own.
    pub fn widened_rows(&self, by: usize) -> Blocks {
        let per_row = self.per_row;
        if by <= DIRECT_REACH {
            // A row `k` rows away is `k * per_row` marks away.
            let mut wide = self.clone();
            for k in 1..=by {
                or_shifted(&mut wide.marks, &self.marks, k * per_row);
            }
            return wide;
        }
        let mut wide = Blocks::new(self.width, self.height, false);
        if self.marks.is_empty() {
            return wide;
        }
        let row = |y: usize| &self.marks[y * per_row..(y + 1) * per_row];
        // Output row y reads rows y - by..=y + by: one row comes in and one
        // goes out per step.
        let mut run = RowRun::new(per_row);
        for y in 0..by.min(self.height) {
            run.add(row(y));
        }
        for (y, out) in wide.marks.chunks_mut(per_row).enumerate() {
            if y + by < self.height {
                run.add(row(y + by));
            }
            if y > by {
                run.remove(row(y - by - 1));
            }
            run.write(out);
        }
        wide
    }

    /// Marks every block marked in `other` (the same grid) too.
    pub fn add(&mut self, other: &Blocks) {
        for (m, &o) in self.marks.iter_mut().zip(&other.marks) {
            *m |= o;
        }
    }

    /// Whether any block is marked. Asked of every instance every tick,
    /// mostly of marks that are all clear: read in runs without a branch per
    /// mark (a fold the compiler makes wide), stopping at the first run
    /// with a mark.
    pub fn any(&self) -> bool {
        self.marks.chunks(SCAN_RUN).any(|run| run.iter().fold(false, |a, &m| a | m))
    }

    /// Whether every block is marked (read as [`Blocks::any`] reads).
    pub fn all(&self) -> bool {
        self.marks.chunks(SCAN_RUN).all(|run| run.iter().fold(true, |a, &m| a & m))
    }

    /// The marked texel spans `x0..x1` of one row's marks, runs of marked
    /// blocks joined.
    pub fn spans(row: &[bool], width: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut b = 0;
        std::iter::from_fn(move || {
            while b < row.len() && !row[b] {
                b += 1;
            }
            if b == row.len() {
                return None;
            }
            let start = b;
            while b < row.len() && row[b] {
                b += 1;
            }
            Some((start * BLOCK, (b * BLOCK).min(width)))
        })
    }
}

/// `out[i] |= marks[i - shift]` and `out[i] |= marks[i + shift]` wherever
/// that index is in range: one pass over the grid each way, with no step
/// per row.
fn or_shifted(out: &mut [bool], marks: &[bool], shift: usize) {
    let n = marks.len();
    if shift >= n {
        return;
    }
    for (o, &m) in out[shift..].iter_mut().zip(&marks[..n - shift]) {
        *o |= m;
    }
    for (o, &m) in out.iter_mut().zip(&marks[shift..]) {
        *o |= m;
    }
}

/// The union of the marks of a run of rows, kept as a count per block
/// (rows come in and go out one at a time, each costing one pass over a
/// row).
#[derive(Clone, Debug, Default)]
pub struct RowRun {
    counts: Vec<u32>,
}

impl RowRun {
    /// An empty run over rows of `per_row` blocks.
    pub fn new(per_row: usize) -> Self {
        Self { counts: vec![0; per_row] }
    }

    /// Empties the run, for rows of `per_row` blocks.
    pub fn reset(&mut self, per_row: usize) {
        self.counts.clear();
        self.counts.resize(per_row, 0);
    }

    /// A row comes into the run.
    pub fn add(&mut self, row: &[bool]) {
        for (c, &m) in self.counts.iter_mut().zip(row) {
            *c += u32::from(m);
        }
    }

    /// A row that came in goes out of the run.
    pub fn remove(&mut self, row: &[bool]) {
        for (c, &m) in self.counts.iter_mut().zip(row) {
            *c -= u32::from(m);
        }
    }

    /// Writes the union: a block is marked where a row of the run marks it.
    pub fn write(&self, out: &mut [bool]) {
        for (o, &c) in out.iter_mut().zip(&self.counts) {
            *o = c != 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    /// `any` and `all` read in runs: a lone mark (or a lone clear block) is
    /// found wherever it lies, in a full run or in the last, partial one.
    #[test]
    fn any_and_all_see_one_block_anywhere() {
        for blocks in [1, SCAN_RUN - 1, SCAN_RUN, SCAN_RUN + 1, 3 * SCAN_RUN + 7] {
            let (mut some, mut most) = (Blocks::new(blocks * BLOCK, 1, false), Blocks::new(blocks * BLOCK, 1, true));
            assert!(!some.any() && !some.all());
            assert!(most.any() && most.all());
            for at in [0, blocks / 2, blocks - 1] {
                some.marks[at] = true;
                most.marks[at] = false;
                assert!(some.any() && (some.all() == (blocks == 1)), "{blocks} blocks, mark at {at}");
                assert!(!most.all() && (most.any() == (blocks > 1)), "{blocks} blocks, clear at {at}");
                some.marks[at] = false;
                most.marks[at] = true;
            }
        }
    }

    proptest::proptest! {
        /// Widening rows gives what marking each marked block again on the
        /// rows within the same reach gives (reaches under and over the
        /// one where whole rows are ORed).
        #[test]
        fn widened_rows_marks_every_row_within_reach(
            (w, h, marks) in (1usize..120, 1usize..40).prop_flat_map(|(w, h)| (proptest::strategy::Just(w), proptest::strategy::Just(h), proptest::collection::vec(proptest::bool::weighted(0.1), w.div_ceil(BLOCK) * h))),
            by in 0usize..12,
        ) {
            let blocks = Blocks { width: w, height: h, per_row: w.div_ceil(BLOCK), marks };
            let mut want = Blocks::new(w, h, false);
            for (i, _) in blocks.marks.iter().enumerate().filter(|(_, &m)| m) {
                let (b, y) = (i % blocks.per_row, i / blocks.per_row);
                want.mark(texel_rect(b * BLOCK, y.saturating_sub(by), ((b + 1) * BLOCK).min(w), y + by + 1), 0);
            }
            proptest::prop_assert_eq!(blocks.widened_rows(by), want);
        }
    }

    #[test]
    fn marks_clip_and_spans_join_runs() {
        let mut b = Blocks::new(40, 5, false);
        assert!(!b.any());
        b.mark(TexelRect { x0: 17, y0: 1, x1: 20, y1: 2 }, 1);
        // Columns 16..21, rows 0..3: block 1 of rows 0, 1 and 2.
        assert_eq!(Blocks::spans(&b.marks[0..3], 40).collect::<Vec<_>>(), vec![(16, 32)]);
        assert_eq!(Blocks::spans(&b.marks[9..12], 40).collect::<Vec<_>>(), vec![]);
        b.mark(TexelRect { x0: 30, y0: 4, x1: 50, y1: 9 }, 0);
        assert_eq!(Blocks::spans(&b.marks[12..15], 40).collect::<Vec<_>>(), vec![(16, 40)]);
        b.mark(TexelRect { x0: 0, y0: 4, x1: 1, y1: 5 }, 0);
        assert_eq!(Blocks::spans(&b.marks[12..15], 40).collect::<Vec<_>>(), vec![(0, 40)]);
        let mut one = Blocks::new(40, 6, false);
        one.mark(TexelRect { x0: 20, y0: 1, x1: 21, y1: 2 }, 0);
        // Rows only: block 1 of rows 0..=2 for the mark on row 1, none beyond.
        let rows = one.widened_rows(1);
        for y in 0..6 {
            assert_eq!(&rows.marks[y * 3..y * 3 + 3], if y <= 2 { &[false, true, false] } else { &[false, false, false] }, "row {y}");
        }
        assert_eq!(one.widened_rows(0), one);
        let mut all = Blocks::new(40, 5, true);
        assert!(all.all());
        all.add(&b);
        assert!(all.all());
    }
}
