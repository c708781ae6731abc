//! The terrain an instance stands on: the heights a capture redid in a
//! tick ([`CaptureHeights`]) and, over them and the last capture, the
//! height under any texel ([`Terrain`]), which a profile's
//! `eyes_on_terrain` stands the eyes on.

/// Heights of a redone capture.
pub(crate) enum CaptureHeights {
    /// Every texel of the grid.
    Whole(Vec<i32>),
    /// The rows from `first` on (every texel of each), redone over the
    /// rectangles a game marked dirty.
    Rows {
        /// The first row.
        first: u32,
        /// The rows' heights.
        texels: Vec<i32>,
    },
}

/// The captured heights an instance stands on this tick (height units,
/// row-major over its internal grid): the last capture, with the rows or
/// the grid this tick's capture redid over it. What a profile's
/// `eyes_on_terrain` stands the eyes on.
#[derive(Clone, Copy)]
pub(crate) struct Terrain<'a> {
    pub(crate) width: u32,
    pub(crate) height: u32,
    /// The capture the instance holds (`None`: none yet).
    pub(crate) last: Option<&'a [i32]>,
    /// What this tick's capture redid, if it redid anything.
    pub(crate) redone: Option<&'a CaptureHeights>,
}

impl Terrain<'_> {
    /// The height at texel `(x, y)`, when the grid holds it and a capture
    /// covers it.
    pub(crate) fn at(&self, x: i64, y: i64) -> Option<i32> {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return None;
        }
        let (w, x, y) = (self.width as usize, x as usize, y as usize);
        match self.redone {
            Some(CaptureHeights::Whole(all)) => all.get(y * w + x).copied(),
            Some(CaptureHeights::Rows { first, texels }) if y >= *first as usize && (y - *first as usize) * w + x < texels.len() => {
                Some(texels[(y - *first as usize) * w + x])
            }
            _ => self.last.and_then(|all| all.get(y * w + x).copied()),
        }
    }
}
