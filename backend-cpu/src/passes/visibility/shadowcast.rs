//! A CPU shortcut for the Step Scan, DDA and Hierarchical DDA ray methods:
//! exact shadowcasting, O(r²) per source instead of a march per texel. It
//! changes no result (the march stays the definition; tests compare both on
//! random worlds and the conformance corpus holds the bytes).
//!
//! The DDA ray from the source texel's centre to a target's centre is
//! blocked by a covered texel whose square's interior it crosses, or by an
//! exact corner crossing whose two side texels both block. When every
//! covered texel near a source rises above its eye, every such texel blocks
//! every target at or below the eye (`(top - eye) * n > rise * k` holds with
//! `top > eye >= target`). So for those targets "blocked" is a question of
//! directions only: is the slope of the target's centre inside the open
//! slope interval of some covered square nearer than it, or equal to the
//! slope of a pinched corner? Per octant, columns are swept outward with the
//! blocked set held as exact rational intervals and points, which answers
//! every target of a column in one merge pass. The sweep yields one bit per
//! texel of the source's window, "some covered texel lies on the ray": clear
//! means visible for every target; set means blocked for a target at or
//! below the eye. A raised target (a wall or tree top) asks the bits of the
//! class of covers at least as high as it (one sweep per distinct top while
//! there are few), and is marched only where lower covers could block it.
//!
//! What a texel's answer reads is local: the sweep of octant `o` reads only
//! the texels of its triangle and the row beside it, and each texel is
//! answered from the octants of its quadrant, so a window whose occlusion
//! changed in a rectangle is swept again only in the quadrants that read it
//! ([`octants_reading`]).
//!
//! Step Scan visits, at each step `k < n` along the major axis toward the
//! octant target `(n, m)`, the texel of row `round(k m / n)` (halves away
//! from the axis). A covered texel `(j, i)` is visited exactly when the
//! target's slope lies in the half-open `[(2i - 1) / 2j, (2i + 1) / 2j)`,
//! and only for targets beyond column `j`: the same sweep with half-open
//! intervals and no corners. Every texel it visits lies nearer than the
//! target (`k < n`), so the height rules below hold for it as for DDA.
//!
//! (Over 600 lines as one concept: the sweep, its exact interval
//! arithmetic and the raised-target classes answer one question, which
//! texels a source's rays reach, and are tested only together.)

use super::occlusion::Occlusion;
use murk_core::fixed::MAX_RADIUS_TEXELS;
use murk_core::{RayMethod, SourceTexel, TexelRect};

/// The largest half side of a window: every radius core accepts is swept,
/// so no source falls back to a march per texel for its size (a radius of
/// 4095 texels holds about 17 MB of bits per cover class while its window
/// is built).
const MAX_HALF: i32 = MAX_RADIUS_TEXELS + 2;

/// The per-source answer: for each class (covered texels at least as high
/// as one of the distinct tops), per octant and column `j`, one bit per row
/// `i` (`0 <= i <= j`): some texel of the class lies on the ray to that texel.
#[derive(Clone, Debug)]
pub struct RayBits {
    sx: i32,
    sy: i32,
    half: i32,
    words: usize,
    /// `(class top, bits)`, ascending; the first class is every covered texel.
    layers: Vec<(i32, Vec<u64>)>,
    /// Every distinct top has its class (else raised targets are marched).
    complete: bool,
    /// The rays are Step Scan's (no corners), else DDA's.
    step_scan: bool,
}

/// The eight octants: texel = source + j * (a, c) + i * (b, d), `0 <= i <= j`.
const OCTANTS: [(i32, i32, i32, i32); 8] =
    [(1, 0, 0, 1), (0, 1, 1, 0), (0, -1, 1, 0), (-1, 0, 0, 1), (-1, 0, 0, -1), (0, -1, -1, 0), (0, 1, -1, 0), (1, 0, 0, -1)];

impl RayBits {
    /// Whether the DDA ray from the source (eye height `eye`) to the target
    /// `(x, y)` at height `target` is blocked, where the windows settle it;
    /// `None` where the march must decide:
    /// * no covered texel on the ray: visible;
    /// * a target at or below the eye: blocked (every cover rises above it);
    /// * a raised target: a cover at least as high as the target on the
    ///   ray blocks it when it is nearer (off the diagonals always so; on
    ///   them the last corner before the target is at the target's own
    ///   distance, see `RayBits::blocked_diagonal`), and lower covers
    ///   cannot block when even at distance 1 they stay under the line to
    ///   the target.
    pub fn blocked(&self, occ: &Occlusion, x: i32, y: i32, target: i32, eye: i32) -> Option<bool> {
        if self.layers.is_empty() {
            // Nothing is covered anywhere.
            return Some(false);
        }
        if !self.bit(0, x, y)? {
            return Some(false);
        }
        if i64::from(target) <= i64::from(eye) {
            return Some(true);
        }
        self.blocked_raised(occ, x, y, target, eye)
    }

    /// [`RayBits::blocked`] for a target above the eye (`target > eye`)
    /// inside the window whose ray holds a cover of the first class: the
    /// same answer without asking the first class again.
    pub fn blocked_raised(&self, occ: &Occlusion, x: i32, y: i32, target: i32, eye: i32) -> Option<bool> {
        if !self.complete {
            return None;
        }
        let rise = i64::from(target) - i64::from(eye);
        // Lower covers: the tallest of them must stay under the line at distance 1.
        let taller = self.layers.partition_point(|&(top, _)| top < target);
        if let Some(&(lower, _)) = taller.checked_sub(1).and_then(|k| self.layers.get(k)) {
            if (i64::from(lower) - i64::from(eye)) * i64::from(self.half) > rise {
                return None;
            }
        }
        if (x - self.sx).abs() == (y - self.sy).abs() {
            return self.blocked_diagonal(occ, x, y, taller, target);
        }
        match self.layers.get(taller) {
            Some(_) => self.bit(taller, x, y),
            None => Some(false),
        }
    }

    /// [`RayBits::blocked_raised`] for a target on a diagonal of the source
    /// texel, `n` texels out, whose lower covers cannot block (`taller`:
    /// the first class at least as high as the target). The ray runs along
    /// the diagonal: it passes the texel before the target on it (`p`, at
    /// distance `n - 1`), the ray to `p` before that, and for DDA the last
    /// corner, whose two side texels are at the target's own distance `n`,
    /// where only a cover higher than the target blocks. Blocked when a
    /// cover of the taller classes lies on the ray to `p`, or is `p`
    /// (both nearer than the target: a cover as high blocks), or when both
    /// sides of the last corner rise above the target.
    fn blocked_diagonal(&self, occ: &Occlusion, x: i32, y: i32, taller: usize, target: i32) -> Option<bool> {
        let (dx, dy) = (x - self.sx, y - self.sy);
        let (step_x, step_y) = (dx.signum(), dy.signum());
        if dx == 0 {
            // The source's own texel.
            return None;
        }
        if !self.step_scan && occ.top_at(x - step_x, y) > target && occ.top_at(x, y - step_y) > target {
            return Some(true);
        }
        let (px, py) = (x - step_x, y - step_y);
        if (px, py) == (self.sx, self.sy) || taller == self.layers.len() {
            // Nothing nearer on the ray, or no cover as high as the target.
            return Some(false);
        }
        Some(occ.top_at(px, py) >= target || self.bit(taller, px, py)?)
    }

    fn bit(&self, layer: usize, x: i32, y: i32) -> Option<bool> {
        let (dx, dy) = (x - self.sx, y - self.sy);
        let (ax, ay) = (dx.abs(), dy.abs());
        if ax > self.half || ay > self.half {
            return None;
        }
        // The octant that holds the texel (on a boundary any holding octant
        // gives the same answer; this picks the one listed first).
        let (octant, j, i) = if ax >= ay {
            (
                match (dx >= 0, dy >= 0) {
                    (true, true) => 0,
                    (true, false) => 7,
                    (false, true) => 3,
                    (false, false) => 4,
                },
                ax,
                ay,
            )
        } else {
            (
                match (dx >= 0, dy >= 0) {
                    (true, true) => 1,
                    (false, true) => 2,
                    (true, false) => 6,
                    (false, false) => 5,
                },
                ay,
                ax,
            )
        };
        let base = (octant * (self.half as usize + 1) + j as usize) * self.words;
        Some(self.layers[layer].1[base + (i as usize >> 6)] >> (i & 63) & 1 != 0)
    }

    /// The first class's bit ("some covered texel lies on the ray") for
    /// every texel of the box `x0.., y0..` of `width` by `rows` texels (all
    /// inside the window), as bit rows of `width.div_ceil(64)` words: what
    /// [`RayBits::blocked`] reads first, laid out for a whole window at
    /// once. Each texel comes from the octant `RayBits::bit` picks for it;
    /// octant columns along grid rows are copied as runs of bits. Empty when
    /// nothing is covered (every ray is clear).
    /// Only the octants of `octants` are read (the texels of the others
    /// are left clear).
    pub fn first_class(&self, x0: i32, y0: i32, width: usize, rows: usize, octants: u8) -> Vec<u64> {
        let Some((_, layer)) = self.layers.first() else {
            return Vec::new();
        };
        let words = width.div_ceil(64);
        let mut out = vec![0u64; words * rows];
        let (x1, y1) = (x0 + width as i32, y0 + rows as i32);
        // The rows i of column j whose texel `start + i * step` lies in `lo..hi`.
        let span = |start: i32, step: i32, lo: i32, hi: i32| -> (i32, i32) {
            if step > 0 {
                (lo - start, hi - 1 - start)
            } else {
                (start - (hi - 1), start - lo)
            }
        };
        for (o, &(a, b, c, d)) in OCTANTS.iter().enumerate().filter(|(o, _)| octants >> o & 1 != 0) {
            // The texels `bit` gives to this octant: rows i >= i_min (a
            // negative offset along the row axis is the neighbour octant's
            // at i = 0), and for octants along grid rows (|dy| > |dx|) the
            // diagonal i = j belongs to the octant along grid columns.
            let along_rows = b != 0;
            let i_min = if along_rows { i32::from(b < 0) } else { i32::from(d < 0) };
            let j_min = i32::from(a < 0 || c < 0);
            for j in j_min..=self.half {
                let base = (o * (self.half as usize + 1) + j as usize) * self.words;
                let column = &layer[base..base + self.words];
                let (cx, cy) = (self.sx + a * j, self.sy + c * j);
                let (first, last) = if along_rows {
                    if cy < y0 || cy >= y1 {
                        continue;
                    }
                    span(cx, b, x0, x1)
                } else {
                    if cx < x0 || cx >= x1 {
                        continue;
                    }
                    span(cy, d, y0, y1)
                };
                let (first, last) = (first.max(i_min), last.min(if along_rows { j - 1 } else { j }));
                if first > last {
                    continue;
                }
                let len = (last - first + 1) as usize;
                if along_rows {
                    // The run's leftmost texel in the box (the source may lie outside it).
                    let at = (if b > 0 { cx + first } else { cx - last } - x0) as usize;
                    let row = &mut out[(cy - y0) as usize * words..][..words];
                    copy_bits(column, first as usize, len, b < 0, row, at);
                } else {
                    // One texel per grid row: only the set bits are placed.
                    let bit = (cx - x0) as usize;
                    for_each_set_bit(column, first as usize, len, |i| {
                        let y = cy + d * i as i32;
                        out[(y - y0) as usize * words + bit / 64] |= 1 << (bit % 64);
                    });
                }
            }
        }
        out
    }

    /// Sweeps the window of `s` for the rays of `method`, or `None` when the
    /// shortcut does not apply: a method other than Step Scan, DDA and
    /// Hierarchical DDA, a covered texel in the window at or below the eye,
    /// or a window too large.
    /// Only the octants of `octants` are swept (the others answer as if
    /// nothing were covered there).
    pub fn build(s: &SourceTexel, occ: &Occlusion, method: RayMethod, octants: u8) -> Option<Self> {
        let step_scan = step_scan(method)?;
        let half = (s.radius >> 3) + 2;
        if half > MAX_HALF {
            return None;
        }
        let (sx, sy) = (s.x >> 3, s.y >> 3);
        let reach = TexelRect {
            x0: (sx - half).max(0) as u32,
            y0: (sy - half).max(0) as u32,
            x1: (sx + half + 1).max(0) as u32,
            y1: (sy + half + 1).max(0) as u32,
        };
        if low_cover(occ, s.eye, &reach) {
            return None;
        }
        // Column bit sets hold rows 0..=j+1 (the pinch test reads row j+1).
        let words = (half as usize + 2).div_ceil(64);
        let layers = occ
            .accel
            .classes
            .iter()
            .zip(&occ.accel.classes_by_column)
            .map(|((top, class), by_column)| (*top, sweep_class(class, by_column, occ, (sx, sy, half, words), step_scan, octants)))
            .collect();
        Some(Self { sx, sy, half, words, layers, complete: occ.accel.classes_complete, step_scan })
    }
}

/// Every octant, as bits (octant `o` is bit `o`).
pub const ALL_OCTANTS: u8 = u8::MAX;

/// The octants whose sweep from the source texel `(sx, sy)` over the
/// window of half side `half` reads a texel of `r`, as bits: octant `o`
/// reads the texels `source + j (a, c) + i (b, d)` with `0 <= j <= half`
/// and `0 <= i <= j + 1` (the pinch test reads row `j + 1`). A texel's
/// answer (its octant's bits, its height, the march to it) depends only on
/// the texels its octant reads.
pub fn octants_reading(sx: i32, sy: i32, half: i32, r: &TexelRect) -> u8 {
    let (sx, sy) = (i64::from(sx), i64::from(sy));
    let (dx, dy) = ((i64::from(r.x0) - sx, i64::from(r.x1) - 1 - sx), (i64::from(r.y0) - sy, i64::from(r.y1) - 1 - sy));
    // `p dx + q dy` over the rectangle (one of `p`, `q` is 0, the other 1 or -1).
    let range = |p: i32, q: i32| {
        let (lo, hi) = if p != 0 { (i64::from(p) * dx.0, i64::from(p) * dx.1) } else { (i64::from(q) * dy.0, i64::from(q) * dy.1) };
        (lo.min(hi), lo.max(hi))
    };
    let mut octants = 0;
    for (o, &(a, b, c, d)) in OCTANTS.iter().enumerate() {
        // The rectangle in the octant's coordinates: j = a dx + c dy, i = b dx + d dy.
        let ((j0, j1), (i0, i1)) = (range(a, c), range(b, d));
        let last = j1.min(i64::from(half));
        if j0.max(0) <= last && i1 >= 0 && i0 <= last + 1 {
            octants |= 1 << o;
        }
    }
    octants
}

/// The quadrants around a source texel, as the octant pairs [`RayBits`]
/// answers each texel from: `(octants, right, down)`, the texels with
/// `dx >= 0` (`right`) or `dx < 0`, and `dy >= 0` (`down`) or `dy < 0`.
pub const QUADRANTS: [(u8, bool, bool); 4] =
    [(0b0000_0011, true, true), (0b0000_1100, false, true), (0b0011_0000, false, false), (0b1100_0000, true, false)];

/// Whether the rays of `method` are Step Scan's (`Some(true)`) or DDA's
/// (`Some(false)`, Hierarchical DDA's too), or not swept (`None`).
fn step_scan(method: RayMethod) -> Option<bool> {
    match method {
        RayMethod::StepScan => Some(true),
        RayMethod::Dda | RayMethod::HierarchicalDda => Some(false),
        RayMethod::None | RayMethod::DistanceField => None,
    }
}

/// Whether a covered texel of `r` (clipped to the grid) is at or below `eye`
/// (the shortcut then does not apply to a window holding it).
fn low_cover(occ: &Occlusion, eye: i32, r: &TexelRect) -> bool {
    if occ.accel.lowest_top > eye {
        return false;
    }
    let w = occ.width as usize;
    let (x1, y1) = ((r.x1 as usize).min(w), (r.y1 as usize).min(occ.height as usize));
    let x0 = (r.x0 as usize).min(x1);
    (r.y0 as usize..y1).any(|y| occ.accel.tops[y * w + x0..y * w + x1].iter().any(|&top| top != i32::MIN && top <= eye))
}

/// Sweeps the octants of `octants` of one class (`class` row by row,
/// `by_column` column by column) over the window `(sx, sy, half, words)`
/// outward, for Step Scan's rays or DDA's (the octants laid out one after
/// the other; those not swept are clear).
fn sweep_class(
    class: &[u64],
    by_column: &[u64],
    occ: &Occlusion,
    (sx, sy, half, words): (i32, i32, i32, usize),
    step_scan: bool,
    octants: u8,
) -> Vec<u64> {
    let mut out = vec![0u64; 8 * (half as usize + 1) * words];
    let rows = Lines { bits: class, count: occ.height as i32, words: occ.accel.words_per_row, length: occ.width as i32 };
    let columns = Lines { bits: by_column, count: occ.width as i32, words: occ.accel.words_per_column, length: occ.height as i32 };
    let mut sweep = Sweep { step_scan, ..Sweep::default() };
    let (mut prev, mut col) = (vec![0u64; words], vec![0u64; words]);
    for (o, &(a, b, c, d)) in OCTANTS.iter().enumerate().filter(|(o, _)| octants >> o & 1 != 0) {
        sweep.intervals.clear();
        sweep.points.clear();
        // Column j of the octant is a run of one grid row (b != 0) or of one
        // grid column (b == 0), starting at the source's own row or column;
        // rows 0..=j + 1 are read (the pinch test reads row j + 1).
        let read = |bits: &mut [u64], j: i32| {
            if b != 0 {
                rows.read(bits, sy + c * j, sx + a * j, b, j + 2);
            } else {
                columns.read(bits, sx + a * j, sy + c * j, d, j + 2);
            }
        };
        read(&mut prev, 0);
        for j in 1..=half {
            read(&mut col, j);
            // Corners at x = j - 0.5: sides (j, p) and (j - 1, p + 1), p < j
            // (a Step Scan ray visits texels, never corners).
            for (k, (&now, &before)) in col.iter().zip(&prev).enumerate().filter(|_| !step_scan) {
                let shifted = before >> 1 | prev.get(k + 1).map_or(0, |n| n << 63);
                let mut pinched = now & shifted;
                while pinched != 0 {
                    let p = (k * 64 + pinched.trailing_zeros() as usize) as i32;
                    pinched &= pinched - 1;
                    if p < j {
                        sweep.pinch(Slope(i64::from(2 * p + 1), i64::from(2 * j - 1)));
                    }
                }
            }
            let base = (o * (half as usize + 1) + j as usize) * words;
            sweep.mark(j, &mut out[base..base + words]);
            sweep.add_column(j, &col);
            if sweep.shades_octant() {
                // The whole octant is in shadow from here on.
                for rest in j + 1..=half {
                    let base = (o * (half as usize + 1) + rest as usize) * words;
                    set_range(&mut out[base..base + words], 0, rest as usize);
                }
                break;
            }
            std::mem::swap(&mut prev, &mut col);
        }
    }
    out
}

/// A class bit set read as lines (grid rows, or grid columns when
/// transposed): `count` lines of `length` bits, `words` words each.
struct Lines<'a> {
    bits: &'a [u64],
    count: i32,
    words: usize,
    length: i32,
}

impl Lines<'_> {
    /// 64 bits of `line` from bit `from` on (bits outside the line are 0).
    fn word_at(&self, line: &[u64], from: i64) -> u64 {
        if from >= i64::from(self.length) || from <= -64 {
            return 0;
        }
        let (k, shift) = (from.div_euclid(64), from.rem_euclid(64) as u32);
        let at = |i: i64| if i >= 0 && (i as usize) < self.words { line[i as usize] } else { 0 };
        let low = at(k) >> shift;
        if shift == 0 {
            low
        } else {
            low | at(k + 1) << (64 - shift)
        }
    }

    /// Fills `out` with bits `i = 0..len` of line `line` taken at
    /// `start + step * i` (`step` is 1 or -1); bits past `len` are 0.
    fn read(&self, out: &mut [u64], line: i32, start: i32, step: i32, len: i32) {
        if line < 0 || line >= self.count {
            out.fill(0);
            return;
        }
        let bits = &self.bits[line as usize * self.words..][..self.words];
        for (k, word) in out.iter_mut().enumerate() {
            let offset = 64 * k as i64;
            if offset >= i64::from(len) {
                *word = 0;
                continue;
            }
            *word = if step > 0 {
                self.word_at(bits, i64::from(start) + offset)
            } else {
                // Bits start - offset - 63 ..= start - offset, reversed.
                self.word_at(bits, i64::from(start) - offset - 63).reverse_bits()
            };
            let left = i64::from(len) - offset;
            if left < 64 {
                *word &= (1u64 << left) - 1;
            }
        }
    }
}

/// `n <= 64` bits of `bits` from bit `from` on, in the low bits.
pub(super) fn bits_at(bits: &[u64], from: usize, n: usize) -> u64 {
    let (k, shift) = (from / 64, from % 64);
    let mut v = bits[k] >> shift;
    if shift != 0 && k + 1 < bits.len() {
        v |= bits[k + 1] << (64 - shift);
    }
    if n < 64 {
        v & ((1u64 << n) - 1)
    } else {
        v
    }
}

/// Ors bits `from..from + len` of `src` into `dst` from bit `at` on, in
/// order, or `reversed` (bit `from + len - 1` first).
fn copy_bits(src: &[u64], from: usize, len: usize, reversed: bool, dst: &mut [u64], at: usize) {
    for t in (0..len).step_by(64) {
        let n = (len - t).min(64);
        let v = if reversed { bits_at(src, from + len - t - n, n).reverse_bits() >> (64 - n) } else { bits_at(src, from + t, n) };
        let (k, shift) = ((at + t) / 64, (at + t) % 64);
        dst[k] |= v << shift;
        if shift != 0 && shift + n > 64 {
            dst[k + 1] |= v >> (64 - shift);
        }
    }
}

/// Calls `f` with every set bit `i` of `bits` in `from..from + len`.
fn for_each_set_bit(bits: &[u64], from: usize, len: usize, mut f: impl FnMut(usize)) {
    for t in (0..len).step_by(64) {
        let n = (len - t).min(64);
        let mut v = bits_at(bits, from + t, n);
        while v != 0 {
            f(from + t + v.trailing_zeros() as usize);
            v &= v - 1;
        }
    }
}

/// Sets bits `lo..=hi` of a bit set.
fn set_range(bits: &mut [u64], lo: usize, hi: usize) {
    for (k, word) in bits.iter_mut().enumerate().take(hi / 64 + 1).skip(lo / 64) {
        let from = if k == lo / 64 { lo % 64 } else { 0 };
        let to = if k == hi / 64 { hi % 64 } else { 63 };
        *word |= (u64::MAX >> (63 - to)) & (u64::MAX << from);
    }
}

/// A rational `n / d` with `d > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slope(i64, i64);

impl Slope {
    fn lt(self, o: Slope) -> bool {
        self.0 * o.1 < o.0 * self.1
    }
}

/// The blocked directions of one octant so far: disjoint intervals sorted
/// by their low end, and pinched corner slopes outside them, sorted. For
/// DDA the intervals are open (touching ends stay apart: the shared slope
/// is not blocked); for Step Scan (`step_scan`) they hold their low end and
/// not their high end (touching ones merge), and there are no corners.
#[derive(Default)]
struct Sweep {
    step_scan: bool,
    intervals: Vec<(Slope, Slope)>,
    points: Vec<Slope>,
}

impl Sweep {
    /// Whether every slope of the octant (`0..=1`) is blocked from here on.
    fn shades_octant(&self) -> bool {
        self.intervals.first().is_some_and(|&(lo, hi)| if self.step_scan { !Slope(0, 1).lt(lo) } else { lo.lt(Slope(0, 1)) } && Slope(1, 1).lt(hi))
    }

    /// Marks the rows `i` of column `j` whose slope `i / j` is blocked.
    fn mark(&self, j: i32, bits: &mut [u64]) {
        let j64 = i64::from(j);
        for &(lo, hi) in &self.intervals {
            // lo < i / j < hi: i > lo * j and i < hi * j (for Step Scan
            // lo <= i / j: i >= lo * j).
            let first = if self.step_scan { -((-lo.0 * j64).div_euclid(lo.1)) } else { (lo.0 * j64).div_euclid(lo.1) + 1 };
            let last = -((-hi.0 * j64).div_euclid(hi.1)) - 1;
            let (first, last) = (first.max(0), last.min(j64));
            if first <= last {
                set_range(bits, first as usize, last as usize);
            }
        }
        for &p in &self.points {
            if (p.0 * j64) % p.1 == 0 {
                let i = p.0 * j64 / p.1;
                if (0..=j64).contains(&i) {
                    bits[i as usize >> 6] |= 1 << (i & 63);
                }
            }
        }
    }

    /// Adds the covered squares of column `j` (rows `0..=j`): a run of rows
    /// `i0..=i1` blocks the open slopes `((2 i0 - 1) / (2 j + 1), (2 i1 + 1) / (2 j - 1))`
    /// of DDA's rays, or Step Scan's `[(2 i0 - 1) / 2 j, (2 i1 + 1) / 2 j)`.
    fn add_column(&mut self, j: i32, col: &[u64]) {
        // Runs of set bits, found a word at a time.
        let next = |from: i32, set: bool| -> i32 {
            let mut k = from as usize / 64;
            let pick = |w: u64| if set { w } else { !w };
            let mut word = col.get(k).map_or(if set { 0 } else { u64::MAX }, |&w| pick(w)) & (u64::MAX << (from % 64));
            while word == 0 {
                k += 1;
                if k >= col.len() {
                    return (k * 64) as i32;
                }
                word = pick(col[k]);
            }
            (k * 64) as i32 + word.trailing_zeros() as i32
        };
        let mut i = next(0, true);
        while i <= j {
            let i0 = i;
            let i1 = (next(i0, false) - 1).min(j);
            let (below, above) = if self.step_scan { (2 * j, 2 * j) } else { (2 * j + 1, 2 * j - 1) };
            self.insert(Slope(i64::from(2 * i0 - 1), i64::from(below)), Slope(i64::from(2 * i1 + 1), i64::from(above)));
            i = next(i1 + 1, true);
        }
    }

    fn insert(&mut self, mut lo: Slope, mut hi: Slope) {
        // The intervals are disjoint and sorted, so those that overlap the
        // new one are a run: from the first that ends after `lo` to the
        // last that starts before `hi` (for Step Scan's half-open ones,
        // touching counts). They merge into one.
        let touch = self.step_scan;
        let first = self.intervals.partition_point(|&(_, b)| if touch { b.lt(lo) } else { !lo.lt(b) });
        let last = self.intervals.partition_point(|&(a, _)| if touch { !hi.lt(a) } else { a.lt(hi) });
        if first < last {
            let (a, b) = (self.intervals[first].0, self.intervals[last - 1].1);
            if a.lt(lo) {
                lo = a;
            }
            if hi.lt(b) {
                hi = b;
            }
            self.intervals[first] = (lo, hi);
            self.intervals.drain(first + 1..last);
        } else {
            self.intervals.insert(first, (lo, hi));
        }
        // Points now inside an interval are redundant (points are sorted).
        let from = self.points.partition_point(|p| !lo.lt(*p));
        let to = self.points.partition_point(|p| p.lt(hi));
        if from < to {
            self.points.drain(from..to);
        }
    }

    /// A pinched corner blocks its exact slope (kept unless an interval
    /// already covers it: only the last interval starting below it can).
    fn pinch(&mut self, s: Slope) {
        let before = self.intervals.partition_point(|&(lo, _)| lo.lt(s));
        if before > 0 && s.lt(self.intervals[before - 1].1) {
            return;
        }
        let at = self.points.partition_point(|q| q.lt(s));
        if self.points.get(at).is_none_or(|q| s.lt(*q)) {
            self.points.insert(at, s);
        }
    }
}
