//! A rectangle of texels, half open: what a local occlusion update names
//! as changed, what a tile of a rollback state covers, and the blocks a
//! CPU pass marks.

/// A rectangle of a texture's texels (an instance's internal texels unless
/// said otherwise): columns `x0..x1`, rows `y0..y1` (half open; empty when
/// either range is).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TexelRect {
    /// First column.
    pub x0: u32,
    /// First row.
    pub y0: u32,
    /// One past the last column.
    pub x1: u32,
    /// One past the last row.
    pub y1: u32,
}

impl TexelRect {
    /// The whole `width x height` grid.
    pub fn grid(width: u32, height: u32) -> Self {
        Self { x0: 0, y0: 0, x1: width, y1: height }
    }

    /// Columns held (0 when empty).
    pub fn width(&self) -> u32 {
        self.x1.saturating_sub(self.x0)
    }

    /// Rows held (0 when empty).
    pub fn height(&self) -> u32 {
        self.y1.saturating_sub(self.y0)
    }

    /// Whether it holds no texel.
    pub fn is_empty(&self) -> bool {
        self.x0 >= self.x1 || self.y0 >= self.y1
    }

    /// Texels held.
    pub fn area(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            u64::from(self.width()) * u64::from(self.height())
        }
    }

    /// The smallest rectangle holding both (either may be empty).
    pub fn union(&self, other: &Self) -> Self {
        match (self.is_empty(), other.is_empty()) {
            (true, _) => *other,
            (_, true) => *self,
            _ => Self { x0: self.x0.min(other.x0), y0: self.y0.min(other.y0), x1: self.x1.max(other.x1), y1: self.y1.max(other.y1) },
        }
    }

    /// Whether the two share a texel.
    pub fn meets(&self, other: &Self) -> bool {
        self.x0.max(other.x0) < self.x1.min(other.x1) && self.y0.max(other.y0) < self.y1.min(other.y1)
    }

    /// Grown by `by` texels on every side, clipped to a `width x height` grid.
    pub fn widened(&self, by: u32, width: u32, height: u32) -> Self {
        Self { x0: self.x0.saturating_sub(by), y0: self.y0.saturating_sub(by), x1: (self.x1 + by).min(width), y1: (self.y1 + by).min(height) }
    }

    /// Merges rectangles that meet or touch into their union until none
    /// do; empty ones are dropped. The result covers every texel of the
    /// input and is sorted.
    pub fn merged(rects: &[TexelRect]) -> Vec<TexelRect> {
        let mut out: Vec<TexelRect> = rects.iter().copied().filter(|r| !r.is_empty()).collect();
        loop {
            let mut joined = false;
            let mut i = 0;
            while i < out.len() {
                let mut j = i + 1;
                while j < out.len() {
                    let (a, b) = (out[i], out[j]);
                    // Touching counts: a union of two adjacent rectangles
                    // costs no more than both.
                    if a.x0.max(b.x0) <= a.x1.min(b.x1) && a.y0.max(b.y0) <= a.y1.min(b.y1) {
                        out[i] = a.union(&b);
                        out.swap_remove(j);
                        joined = true;
                    } else {
                        j += 1;
                    }
                }
                i += 1;
            }
            if !joined {
                break;
            }
        }
        out.sort_unstable_by_key(|r| (r.y0, r.x0, r.y1, r.x1));
        out
    }
}
