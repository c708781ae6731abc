//! Local occlusion updates: which texels of an instance's occlusion a tick's
//! blocker and capture changes can reach, so the backend rebuilds those
//! rather than the whole grid.
//!
//! The shapes of the last build are kept beside the instance (in texel
//! space, as the backend got them); a tick's shapes are compared with them
//! as sorted lists (both are in canonical order), and each shape on one side
//! only adds the texels it may cover. A recapture adds the box of the
//! texels whose captured height changed.

use crate::backend::TexelRect;
use crate::frame::{CircleTexel, OcclusionInput, PolygonTexel};
use crate::hash::WordFold;
use crate::raster::{circle_rect, polygon_rect};
use std::cmp::Ordering;

/// Past this share of the grid (in texels, over every changed rectangle),
/// a full build is cheaper than the local one's bookkeeping.
const LOCAL_SHARE: u64 = 4;

/// More changed rectangles than this after merging: a full build.
const MAX_RECTS: usize = 64;

/// The blockers an occlusion was last built from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BuiltShapes {
    pub(crate) circles: Vec<CircleTexel>,
    pub(crate) polygons: Vec<PolygonTexel>,
    pub(crate) vertices: Vec<[i32; 2]>,
}

impl BuiltShapes {
    /// The shapes of `input` (its capture is kept by the instance's state).
    #[cfg(test)]
    pub(crate) fn of(input: &OcclusionInput) -> Self {
        Self { circles: input.circles.clone(), polygons: input.polygons.clone(), vertices: input.vertices.clone() }
    }

    /// Adds a polygon after the others.
    pub(crate) fn push_polygon(&mut self, vertices: &[[i32; 2]], top: i32) {
        let first = self.vertices.len() as u32;
        self.polygons.push(PolygonTexel { first, count: vertices.len() as u32, height: top, pad: 0 });
        self.vertices.extend_from_slice(vertices);
    }

    /// The hash of the shapes in their order: each circle and polygon after
    /// a word of its kind (and a polygon's length).
    pub(crate) fn hash(&self) -> u64 {
        let mut fold = WordFold::default();
        for c in &self.circles {
            fold.word(0);
            fold.pair(c.x as u32, c.y as u32);
            fold.pair(c.radius as u32, c.height as u32);
        }
        for p in &self.polygons {
            fold.pair(1, p.count);
            for q in &self.vertices[p.first as usize..(p.first + p.count) as usize] {
                fold.pair(q[0] as u32, q[1] as u32);
            }
            fold.pair(p.height as u32, 0);
        }
        fold.finish()
    }

    /// The rectangles of every shape in exactly one of `self` and `new`
    /// (a shape that moved, changed or vanished adds where it was and where
    /// it is), onto `out`.
    pub(crate) fn changes(&self, new: &OcclusionInput, out: &mut Vec<TexelRect>) {
        let (w, h) = (new.width, new.height);
        differ(&self.circles, &new.circles, Ord::cmp, |c| circle_rect(c, w, h), out);
        let old_shape = |p: &PolygonTexel| (&self.vertices[p.first as usize..(p.first + p.count) as usize], p.height);
        let new_shape = |p: &PolygonTexel| (&new.vertices[p.first as usize..(p.first + p.count) as usize], p.height);
        // Both lists are sorted by vertices, then top (how `gather` orders them).
        let polygons: Vec<(&[[i32; 2]], i32)> = self.polygons.iter().map(old_shape).collect();
        let next: Vec<(&[[i32; 2]], i32)> = new.polygons.iter().map(new_shape).collect();
        differ(&polygons, &next, Ord::cmp, |(v, _)| polygon_rect(v, w, h), out);
    }
}

/// The rectangles (by `rect`) of the items in one sorted list only.
fn differ<T>(old: &[T], new: &[T], cmp: impl Fn(&T, &T) -> Ordering, rect: impl Fn(&T) -> Option<TexelRect>, out: &mut Vec<TexelRect>) {
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let order = match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) => cmp(a, b),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
            Ordering::Less => {
                out.extend(rect(&old[i]));
                i += 1;
            }
            Ordering::Greater => {
                out.extend(rect(&new[j]));
                j += 1;
            }
        }
    }
}

/// The box of the texels whose captured heights differ (`None`: none do).
pub(crate) fn capture_change(old: &[i32], new: &[i32], width: u32) -> Option<TexelRect> {
    let w = width as usize;
    let mut rect = TexelRect::default();
    for (y, (a, b)) in old.chunks(w).zip(new.chunks(w)).enumerate() {
        if a == b {
            continue;
        }
        let first = a.iter().zip(b).position(|(p, q)| p != q).expect("the rows differ");
        let last = a.iter().zip(b).rposition(|(p, q)| p != q).expect("the rows differ");
        rect = rect.union(&TexelRect { x0: first as u32, y0: y as u32, x1: last as u32 + 1, y1: y as u32 + 1 });
    }
    (!rect.is_empty()).then_some(rect)
}

/// The changed rectangles, merged, when a local update is worth it over a
/// `width x height` grid; `None` when a full build is cheaper.
pub(crate) fn local_plan(rects: &[TexelRect], width: u32, height: u32) -> Option<Vec<TexelRect>> {
    let merged = TexelRect::merged(rects);
    let area: u64 = merged.iter().map(TexelRect::area).sum();
    (merged.len() <= MAX_RECTS && area * LOCAL_SHARE <= u64::from(width) * u64::from(height)).then_some(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circle(x: i32, y: i32, radius: i32) -> CircleTexel {
        CircleTexel { x, y, radius, height: 7 }
    }

    #[test]
    fn shapes_on_one_side_only_are_changes() {
        let input = |circles: Vec<CircleTexel>| OcclusionInput { width: 64, height: 64, circles, ..OcclusionInput::default() };
        let built = BuiltShapes::of(&input(vec![circle(80, 80, 16), circle(300, 300, 8)]));
        let mut out = Vec::new();
        built.changes(&input(vec![circle(80, 80, 16), circle(300, 300, 8)]), &mut out);
        assert!(out.is_empty(), "{out:?}");
        // The second circle moved: where it was and where it is.
        built.changes(&input(vec![circle(80, 80, 16), circle(400, 300, 8)]), &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.iter().any(|r| r.x0 <= 37 && r.x1 > 37) && out.iter().any(|r| r.x0 <= 49 && r.x1 > 49), "{out:?}");
    }

    #[test]
    fn a_capture_change_is_the_box_of_the_texels_that_differ() {
        let old = vec![0i32; 8 * 4];
        let mut new = old.clone();
        assert_eq!(capture_change(&old, &new, 8), None);
        new[8 + 2] = 5;
        new[3 * 8 + 6] = 1;
        assert_eq!(capture_change(&old, &new, 8), Some(TexelRect { x0: 2, y0: 1, x1: 7, y1: 4 }));
    }

    #[test]
    fn a_large_change_asks_for_a_full_build() {
        let small = [TexelRect { x0: 0, y0: 0, x1: 4, y1: 4 }, TexelRect { x0: 4, y0: 0, x1: 8, y1: 4 }];
        assert_eq!(local_plan(&small, 64, 64), Some(vec![TexelRect { x0: 0, y0: 0, x1: 8, y1: 4 }]));
        assert_eq!(local_plan(&[TexelRect::grid(40, 40)], 64, 64), None);
    }
}
