//! The height-capture resample: every texel of an instance takes the highest
//! capture cell under its centre, in height units.
//!
//! Rows are filled in parallel (bands of [`BAND_ROWS`] rows on the rayon
//! pool current where it is called: the tick calls it inside
//! `Backend::run_parallel`, so the CPU backend's own pool); each texel is a pure function of its row and column, so the bytes
//! do not depend on the thread count. The floating-point steps (world point
//! to cell, cell height to height units) are the same operations as a texel
//! by texel loop, but each is computed once per distinct input: a band
//! remembers, per capture, the cell column of each texel column's last world
//! X, the cell row of the last world Y and the heights of the last two cell values,
//! and reuses a result when the input has the same bits. For an area at yaw
//! 0 the world X of a texel column is the same on every row and the world Y
//! of a row the same on every column, so almost every division is skipped,
//! and the texels of a row go eight at a time: when the eight cell values
//! under them are among the (up to four) values a band has already turned
//! into heights, their heights come from `wide` compares and blends (eight
//! adjacent cells read at once where texels are as wide as cells).

use crate::components::HeightCapture;
use crate::error::Result;
use crate::fixed::{floor_exact, HEIGHT_WALL};
use crate::frame::CAPTURE_EMPTY;
use crate::transform::AreaTransform;
use crate::zlayer::Slab;
use rayon::prelude::*;
use std::ops::Range;
use wide::i32x8;

/// Rows per parallel task.
const BAND_ROWS: usize = 16;

/// One capture and the label its errors name (`entity 4`).
pub(crate) type LabeledCapture<'a> = (String, &'a HeightCapture);

/// What a capture cell's value gives a texel.
#[derive(Clone, Copy)]
enum CellHeight {
    /// Nothing there (`NaN`, or outside the slab with Z layering).
    Skip,
    /// A height in height units.
    Units(i32),
    /// Too far from the slab for the height format: an error.
    OutOfRange,
}

/// The height of a cell value `z` (`+inf` is a wall).
fn cell_height(z: f32, t: &AreaTransform, slab: &Slab, z_layering: bool) -> CellHeight {
    let z = f64::from(z);
    if z.is_nan() {
        return CellHeight::Skip;
    }
    if z == f64::INFINITY {
        return CellHeight::Units(HEIGHT_WALL);
    }
    if z_layering && !slab.holds_height(z) {
        return CellHeight::Skip;
    }
    t.height_units(z).map_or(CellHeight::OutOfRange, CellHeight::Units)
}

/// The cell index along one axis of the world coordinate `v`: `None`
/// outside the `cells` cells starting at `origin`.
fn cell_index(v: f64, origin: f32, cell: f64, cells: u32) -> Option<u32> {
    let c = floor_exact((v - f64::from(origin)) / cell);
    (c >= 0.0 && c < f64::from(cells)).then_some(c as u32)
}

/// A result remembered with the bits of the input it was computed from.
#[derive(Clone, Copy)]
struct Memo<K, V> {
    key: Option<K>,
    value: V,
}

impl<K: PartialEq + Copy, V: Copy> Memo<K, V> {
    fn new(value: V) -> Self {
        Self { key: None, value }
    }

    /// The value for `key`, computed by `f` unless `key` is the last one.
    fn get(&mut self, key: K, f: impl FnOnce() -> V) -> V {
        if self.key != Some(key) {
            self.value = f();
            self.key = Some(key);
        }
        self.value
    }
}

/// The last two results, each with the bits of its input (a terrain
/// alternating between two heights, floor and wall, hits every time).
#[derive(Clone, Copy)]
struct Memo2<V> {
    recent: Memo<u32, V>,
    older: Memo<u32, V>,
}

impl<V: Copy> Memo2<V> {
    fn new(value: V) -> Self {
        Self { recent: Memo::new(value), older: Memo::new(value) }
    }

    /// The value for `key`, computed by `f` unless `key` is one of the last two.
    #[inline]
    fn get(&mut self, key: u32, f: impl FnOnce() -> V) -> V {
        if self.recent.key == Some(key) {
            return self.recent.value;
        }
        if self.older.key != Some(key) {
            self.older = Memo { key: Some(key), value: f() };
        }
        std::mem::swap(&mut self.recent, &mut self.older);
        self.recent.value
    }
}

/// Per capture at yaw 0: the spans of texel columns on the capture (in
/// column order), each with whether its texel columns take consecutive cell
/// columns (texels as wide as cells: eight texels read eight adjacent
/// cells), and each texel column's cell column (0 off the capture).
type AlignedColumns = (Vec<(usize, usize, bool)>, Vec<u32>);

/// Texels per step of the known-values path.
const LANES: usize = 8;

/// Up to four cell values (their bits) whose heights are known, each with
/// the height it gives ([`CAPTURE_EMPTY`] for a value that gives nothing,
/// which the maximum ignores). A lookup compares with the `len` known
/// entries only, unrolled for each count.
#[derive(Clone, Copy)]
struct Known {
    entries: [(u32, i32); 4],
    len: usize,
}

impl Known {
    const EMPTY: Self = Self { entries: [(0, CAPTURE_EMPTY); 4], len: 0 };

    /// Remembers a value's height while there is room.
    fn learn(&mut self, bits: u32, height: i32) {
        if self.len == self.entries.len() || self.entries[..self.len].iter().any(|&(k, _)| k == bits) {
            return;
        }
        self.entries[self.len] = (bits, height);
        self.len += 1;
    }

    /// The heights of `LANES` cell values (their bits), or `None` when one
    /// is not known: each lane compared with each of the `len` known
    /// entries, without a branch per lane.
    #[inline]
    fn heights(&self, bits: [u32; LANES]) -> Option<i32x8> {
        let bits = i32x8::new(bits.map(|b| b as i32));
        match self.len {
            1 => self.heights_of::<1>(bits),
            2 => self.heights_of::<2>(bits),
            3 => self.heights_of::<3>(bits),
            _ => self.heights_of::<4>(bits),
        }
    }

    /// [`Known::heights`] against the first `N` entries (`N` is `len`).
    #[inline]
    fn heights_of<const N: usize>(&self, bits: i32x8) -> Option<i32x8> {
        let (mut heights, mut hit) = (i32x8::splat(CAPTURE_EMPTY), i32x8::splat(0));
        for &(k, q) in &self.entries[..N] {
            let same = bits.simd_eq(i32x8::splat(k as i32));
            heights = same.select(i32x8::splat(q), heights);
            hit |= same;
        }
        (hit.to_bitmask() == 0xff).then_some(heights)
    }
}

/// Per capture, what one band remembers between texels.
struct CaptureMemo {
    columns: Vec<Memo<u64, Option<u32>>>,
    row: Memo<u64, Option<u32>>,
    height: Memo2<CellHeight>,
    known: Known,
}

/// The captured height of every texel of a `w`-wide grid over `t`, row by
/// row ([`CAPTURE_EMPTY`] where no capture has a cell): the highest of the
/// captures' cells under the texel centre. The captures are validated
/// already (positive finite cell size, finite origin, `width * height`
/// cells). An error names the first out-of-range cell in texel order.
///
/// Only rows `rows` are resampled (their texels, row by row): the same
/// heights the whole grid gives there.
pub(crate) fn resample_captures(
    captures: &[LabeledCapture],
    t: &AreaTransform,
    slab: &Slab,
    z_layering: bool,
    w: u32,
    rows: Range<u32>,
) -> Result<Vec<i32>> {
    let width = w as usize;
    let first_row = rows.start as usize;
    let mut out = vec![CAPTURE_EMPTY; width * rows.len()];
    if width == 0 {
        return Ok(out);
    }
    let columns: Vec<(f64, f64)> = (0..w).map(|col| t.texel_column_terms(f64::from(col) + 0.5)).collect();
    // When the columns' terms along Y are zeros (an area at yaw 0), a row
    // whose term along X is zero too has the world X of each texel column
    // independent of the row, and the world Y of the row independent of the
    // column: those equal the general sums up to the sign of a zero, which
    // gives the same cell. Each capture's cell column per texel column is
    // then found once for the whole grid.
    let aligned: Option<Vec<AlignedColumns>> = columns.iter().all(|c| c.1 == 0.0).then(|| {
        captures
            .iter()
            .map(|(_, c)| {
                let cxs: Vec<Option<u32>> = columns
                    .iter()
                    .map(|&column| cell_index(t.texel_terms_to_world(column, (0.0, 0.0)).0, c.origin.x, f64::from(c.cell_size), c.width))
                    .collect();
                let mut spans: Vec<(usize, usize)> = Vec::new();
                for (col, cx) in cxs.iter().enumerate() {
                    match (cx, spans.last_mut()) {
                        (None, _) => {}
                        (Some(_), Some(last)) if last.1 == col => last.1 = col + 1,
                        (Some(_), _) => spans.push((col, col + 1)),
                    }
                }
                let cxs: Vec<u32> = cxs.iter().map(|cx| cx.unwrap_or(0)).collect();
                let spans = spans.into_iter().map(|(a, b)| (a, b, cxs[a..b].iter().zip(cxs[a]..).all(|(&cx, next)| cx == next))).collect();
                (spans, cxs)
            })
            .collect()
    });
    let bands: Vec<Result<()>> = out
        .par_chunks_mut(width * BAND_ROWS)
        .enumerate()
        .map(|(band, texels)| {
            // The column memos are made by the first row that takes the
            // general path (rows at yaw 0 need none).
            let mut memos: Vec<CaptureMemo> = captures
                .iter()
                .map(|_| CaptureMemo { columns: Vec::new(), row: Memo::new(None), height: Memo2::new(CellHeight::Skip), known: Known::EMPTY })
                .collect();
            for (k, row_out) in texels.chunks_mut(width).enumerate() {
                let row = first_row + band * BAND_ROWS + k;
                let row_terms = t.texel_row_terms(row as f64 + 0.5);
                if let Some(cell_columns) = aligned.as_ref().filter(|_| row_terms.0 == 0.0) {
                    let y = t.texel_terms_to_world((0.0, 0.0), row_terms).1;
                    // Capture by capture over the row (the maximum does not
                    // depend on the order); the first out-of-range cell in
                    // texel order is the lowest column, the first capture
                    // at equal columns.
                    let mut first_error: Option<(usize, usize, usize, f32)> = None;
                    for (n, (((_, c), memo), (spans, cxs))) in captures.iter().zip(memos.iter_mut()).zip(cell_columns).enumerate() {
                        let Some(cy) = cell_index(y, c.origin.y, f64::from(c.cell_size), c.height) else {
                            continue;
                        };
                        let cw = c.width as usize;
                        let cells = &c.cells[cy as usize * cw..(cy as usize + 1) * cw];
                        'spans: for &(a, b, consecutive) in spans {
                            let mut col = a;
                            while col < b {
                                let end = (col + LANES).min(b);
                                if end - col == LANES && memo.known.len > 0 {
                                    // Eight texels whose cell values are all
                                    // known: their heights without a branch.
                                    let bits: [u32; LANES] = if consecutive {
                                        let cx = cxs[col] as usize;
                                        let eight: &[f32; LANES] = cells[cx..cx + LANES].try_into().expect("eight cells");
                                        eight.map(f32::to_bits)
                                    } else {
                                        std::array::from_fn(|i| cells[cxs[col + i] as usize].to_bits())
                                    };
                                    if let Some(heights) = memo.known.heights(bits) {
                                        let o = &mut row_out[col..end];
                                        o.copy_from_slice(i32x8::new(o[..].try_into().expect("eight texels")).max(heights).as_array());
                                        col = end;
                                        continue;
                                    }
                                }
                                for (col, o) in (col..end).zip(row_out[col..end].iter_mut()) {
                                    let cx = cxs[col];
                                    let z = cells[cx as usize];
                                    match memo.height.get(z.to_bits(), || cell_height(z, t, slab, z_layering)) {
                                        CellHeight::Skip => memo.known.learn(z.to_bits(), CAPTURE_EMPTY),
                                        CellHeight::Units(q) => {
                                            memo.known.learn(z.to_bits(), q);
                                            *o = (*o).max(q);
                                        }
                                        CellHeight::OutOfRange => {
                                            if first_error.is_none_or(|e| col < e.0) {
                                                first_error = Some((col, n, cy as usize * cw + cx as usize, z));
                                            }
                                            break 'spans;
                                        }
                                    }
                                }
                                col = end;
                            }
                        }
                    }
                    if let Some((_, n, i, z)) = first_error {
                        let field = || format!("{}.capture.cells[{i}]", captures[n].0);
                        return Err(t.height_q(field, f64::from(z)).expect_err("height_q refuses what height_units refuses"));
                    }
                    continue;
                }
                for memo in memos.iter_mut().filter(|m| m.columns.is_empty()) {
                    memo.columns = vec![Memo::new(None); width];
                }
                for ((col, &column), o) in columns.iter().enumerate().zip(row_out.iter_mut()) {
                    let (x, y) = t.texel_terms_to_world(column, row_terms);
                    let mut best = CAPTURE_EMPTY;
                    for ((label, c), memo) in captures.iter().zip(memos.iter_mut()) {
                        let cell = f64::from(c.cell_size);
                        let Some(cx) = memo.columns[col].get(x.to_bits(), || cell_index(x, c.origin.x, cell, c.width)) else {
                            continue;
                        };
                        let Some(cy) = memo.row.get(y.to_bits(), || cell_index(y, c.origin.y, cell, c.height)) else {
                            continue;
                        };
                        let i = cy as usize * c.width as usize + cx as usize;
                        let z = c.cells[i];
                        match memo.height.get(z.to_bits(), || cell_height(z, t, slab, z_layering)) {
                            CellHeight::Skip => {}
                            CellHeight::Units(q) => best = best.max(q),
                            CellHeight::OutOfRange => {
                                let field = || format!("{label}.capture.cells[{i}]");
                                return Err(t.height_q(field, f64::from(z)).expect_err("height_q refuses what height_units refuses"));
                            }
                        }
                    }
                    *o = best;
                }
            }
            Ok(())
        })
        .collect();
    // The first error in texel order, as a loop over the texels would stop at.
    bands.into_iter().collect::<Result<()>>()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::CaptureMode;
    use crate::transform::Area;
    use glam::{Vec2, Vec3};
    use proptest::prelude::*;

    /// The resample texel by texel, every step computed for every texel:
    /// what the banded, remembering version must reproduce.
    fn reference(captures: &[LabeledCapture], t: &AreaTransform, slab: &Slab, z_layering: bool, w: u32, h: u32) -> Result<Vec<i32>> {
        let mut out = vec![CAPTURE_EMPTY; (w * h) as usize];
        for row in 0..h {
            for col in 0..w {
                let (x, y) = t.texel_to_world(f64::from(col) + 0.5, f64::from(row) + 0.5);
                let mut best = CAPTURE_EMPTY;
                for (label, c) in captures {
                    let cell = f64::from(c.cell_size);
                    let cx = ((x - f64::from(c.origin.x)) / cell).floor();
                    let cy = ((y - f64::from(c.origin.y)) / cell).floor();
                    if cx < 0.0 || cy < 0.0 || cx >= f64::from(c.width) || cy >= f64::from(c.height) {
                        continue;
                    }
                    let i = cy as usize * c.width as usize + cx as usize;
                    let z = f64::from(c.cells[i]);
                    if z.is_nan() {
                        continue;
                    }
                    let q = if z == f64::INFINITY {
                        HEIGHT_WALL
                    } else {
                        if z_layering && !slab.holds_height(z) {
                            continue;
                        }
                        t.height_q(format!("{label}.capture.cells[{i}]").as_str(), z)?
                    };
                    best = best.max(q);
                }
                out[(row * w + col) as usize] = best;
            }
        }
        Ok(out)
    }

    /// A cell value: mostly a few repeated heights (as terrain has), some
    /// random ones, holes, walls, and rarely one too far for the format.
    fn cell_value() -> impl Strategy<Value = f32> {
        prop_oneof![
            8 => prop::sample::select(vec![0.0f32, 0.0, 1.5, 4.0, -2.0]),
            4 => -20.0f32..20.0,
            2 => Just(f32::NAN),
            2 => Just(f32::INFINITY),
            1 => Just(f32::NEG_INFINITY),
            1 => Just(1e9f32),
        ]
    }

    /// A cell value of a terrain with few heights (floor, a ledge, walls,
    /// holes): the values the eight-lane path learns and then reads.
    fn terrain_value() -> impl Strategy<Value = f32> {
        prop::sample::select(vec![0.0f32, 0.0, 0.0, 4.0, f32::INFINITY, f32::NAN])
    }

    fn capture() -> impl Strategy<Value = HeightCapture> {
        (-30.0f32..10.0, -30.0f32..10.0, prop::sample::select(vec![0.5f32, 1.0, 0.75, 2.0, 0.3]), 1u32..24, 1u32..24, any::<bool>()).prop_flat_map(
            |(ox, oy, cell_size, cw, ch, terrain)| {
                let value = if terrain { terrain_value().boxed() } else { cell_value().boxed() };
                prop::collection::vec(value, (cw * ch) as usize).prop_map(move |cells| HeightCapture {
                    origin: Vec2::new(ox, oy),
                    cell_size,
                    width: cw,
                    height: ch,
                    cells,
                    mode: CaptureMode::FullScene,
                    enabled: true,
                })
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        /// The banded, parallel resample gives the bytes (or the error) of
        /// the texel by texel loop, on 1 and 3 threads, for areas at
        /// quarter turns and at arbitrary yaws, some with texels exactly as
        /// wide as the first capture's cells.
        #[test]
        fn resample_equals_the_texel_by_texel_loop(
            captures in prop::collection::vec(capture(), 1..4),
            (cx, cy) in (-5.0f32..5.0, -5.0f32..5.0),
            (ex, ez) in (1.0f32..40.0, 1.0f32..30.0),
            yaw in prop_oneof![prop::sample::select(vec![0.0f32, 90.0, 180.0, 270.0, -90.0]), -360.0f32..360.0],
            (w, h) in (1u32..40, 1u32..50),
            z_layering in any::<bool>(),
            cell_wide in any::<bool>(),
        ) {
            let ex = if cell_wide { captures[0].cell_size * w as f32 } else { ex };
            let area = Area { center: Vec3::new(cx, cy, 1.0), extents: Vec3::new(ex, ex * h as f32 / w as f32, ez), yaw_degrees: yaw };
            let t = AreaTransform::new(&area, w, h);
            let slab = Slab::logical(&area, 1.0);
            let labeled: Vec<LabeledCapture> = captures.iter().enumerate().map(|(k, c)| (format!("entity {k}"), c)).collect();
            let expected = reference(&labeled, &t, &slab, z_layering, w, h).map_err(|e| e.to_string());
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
                let got = pool.install(|| resample_captures(&labeled, &t, &slab, z_layering, w, 0..h)).map_err(|e| e.to_string());
                // A band of rows alone gives those rows of the whole grid.
                if let (Ok(all), Ok(part)) = (&expected, resample_captures(&labeled, &t, &slab, z_layering, w, h / 3..h)) {
                    prop_assert_eq!(&part[..], &all[(h / 3 * w) as usize..]);
                }
                prop_assert_eq!(&got, &expected, "{} threads", threads);
            }
        }
    }

    /// The captures in the property test do reach every outcome: heights,
    /// walls, holes and texels outside every capture.
    #[test]
    fn a_resample_holds_heights_walls_and_holes() {
        let c = HeightCapture {
            origin: Vec2::new(0.0, 0.0),
            cell_size: 1.0,
            width: 4,
            height: 2,
            cells: vec![0.0, 4.0, f32::INFINITY, f32::NAN, 1.5, 1.5, 4.0, 0.0],
            mode: CaptureMode::FullScene,
            enabled: true,
        };
        let area = Area { center: Vec3::new(3.0, 1.5, 1.0), extents: Vec3::new(6.0, 3.0, 10.0), yaw_degrees: 0.0 };
        let t = AreaTransform::new(&area, 6, 3);
        let slab = Slab::logical(&area, 1.0);
        let labeled = vec![("entity 0".to_string(), &c)];
        let got = resample_captures(&labeled, &t, &slab, false, 6, 0..3).expect("in range");
        let (h4, h15) = (t.height_units(4.0).expect("in range"), t.height_units(1.5).expect("in range"));
        let floor = t.height_units(0.0).expect("in range");
        let e = CAPTURE_EMPTY;
        assert_eq!(got, vec![floor, h4, HEIGHT_WALL, e, e, e, h15, h15, h4, floor, e, e, e, e, e, e, e, e]);
        assert_eq!(got, reference(&labeled, &t, &slab, false, 6, 3).expect("in range"));
    }
}
