//! Local occlusion updates: which texels of an instance's occlusion a tick's
//! blocker and capture changes can reach, so the backend rebuilds those
//! rather than the whole grid.
//!
//! The shapes of the last build are kept beside the instance (in texel
//! space, as the backend got them). A tick's shapes are the last tick's
//! with the few that changed spliced in ([`BuiltShapes::spliced`]), and the
//! shapes taken out and put in add the texels they may cover; when the
//! build was made from other shapes (after a load), the two are compared as
//! sorted lists (both are in canonical order) and each shape on one side
//! only adds its texels. A recapture adds the box of the texels whose
//! captured height changed.

use crate::backend::TexelRect;
use crate::frame::{CircleTexel, OcclusionInput, PolygonTexel};
use crate::hash::{fmix, WordFold};
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
    /// Adds a polygon after the others.
    pub(crate) fn push_polygon(&mut self, vertices: &[[i32; 2]], top: i32) {
        let first = self.vertices.len() as u32;
        self.polygons.push(PolygonTexel { first, count: vertices.len() as u32, height: top, pad: 0 });
        self.vertices.extend_from_slice(vertices);
    }

    /// The sum of the shapes' terms ([`circle_term`], [`polygon_term`]):
    /// what [`ShapeSum::hash`] finishes into the blocker hash.
    pub(crate) fn sum(&self) -> ShapeSum {
        let mut sum = ShapeSum::default();
        for c in &self.circles {
            sum.add(circle_term(c));
        }
        for p in &self.polygons {
            sum.add(polygon_term(self.polygon(p), p.height));
        }
        sum
    }

    /// A polygon's vertices.
    pub(crate) fn polygon(&self, p: &PolygonTexel) -> &[[i32; 2]] {
        &self.vertices[p.first as usize..(p.first + p.count) as usize]
    }

    /// The shapes as `input`'s (its other fields are left as they are).
    pub(crate) fn lend_to(&self, input: &mut OcclusionInput) {
        input.circles.clone_from(&self.circles);
        input.polygons.clone_from(&self.polygons);
        input.vertices.clone_from(&self.vertices);
    }

    /// The rectangles on a `w x h` grid of every shape in exactly one of
    /// `self` and `new` (a shape that moved, changed or vanished adds where
    /// it was and where it is), onto `out`.
    pub(crate) fn changes(&self, new: &BuiltShapes, w: u32, h: u32, out: &mut Vec<TexelRect>) {
        differ(&self.circles, &new.circles, Ord::cmp, |c| circle_rect(c, w, h), out);
        // Both lists are sorted by vertices, then top (how `gather` orders them).
        let polygons: Vec<PolygonRef> = self.polygons.iter().map(|p| (self.polygon(p), p.height)).collect();
        let next: Vec<PolygonRef> = new.polygons.iter().map(|p| (new.polygon(p), p.height)).collect();
        differ(&polygons, &next, Ord::cmp, |(v, _)| polygon_rect(v, w, h), out);
    }

    /// These shapes less the sorted `gone` (each taken out once) with the
    /// sorted `put` merged in, in order: runs of kept shapes are copied
    /// whole. `None` when a shape of `gone` is not among them.
    pub(crate) fn spliced(&self, gone: (&[CircleTexel], &[PolygonRef]), put: (&[CircleTexel], &[PolygonRef])) -> Option<BuiltShapes> {
        let mut out = BuiltShapes::default();
        out.circles.reserve(self.circles.len() + put.0.len());
        let circles = splice(
            self.circles.len(),
            |i| self.circles[i],
            gone.0,
            put.0,
            &mut out,
            |out, run| {
                out.circles.extend_from_slice(&self.circles[run]);
            },
            |out, c| out.circles.push(c),
        );
        out.polygons.reserve(self.polygons.len() + put.1.len());
        out.vertices.reserve(self.vertices.len());
        let at = |i: usize| {
            let p = &self.polygons[i];
            (self.polygon(p), p.height)
        };
        let polygons = splice(
            self.polygons.len(),
            at,
            gone.1,
            put.1,
            &mut out,
            |out, run| {
                // A run's vertices lie together, in its order.
                let Some(first) = self.polygons.get(run.start).filter(|_| !run.is_empty()) else { return };
                let last = &self.polygons[run.end - 1];
                let (from, to) = (first.first, out.vertices.len() as u32);
                out.vertices.extend_from_slice(&self.vertices[from as usize..(last.first + last.count) as usize]);
                out.polygons.extend(self.polygons[run].iter().map(|p| PolygonTexel { first: p.first - from + to, ..*p }));
            },
            |out, (vertices, top)| out.push_polygon(vertices, top),
        );
        (circles && polygons).then_some(out)
    }
}

/// A polygon's vertices and top.
pub(crate) type PolygonRef<'a> = (&'a [[i32; 2]], i32);

/// Walks the `len` sorted items of a list (item `i` is `at(i)`) less the
/// sorted `gone` (each taken out once) with the sorted `put` merged in:
/// `copy` gets each run of items kept (as a range of the list) and `add`
/// each item put, in order. False when an item of `gone` is not in the list.
fn splice<K: Ord + Copy, S>(
    len: usize,
    at: impl Fn(usize) -> K,
    gone: &[K],
    put: &[K],
    out: &mut S,
    mut copy: impl FnMut(&mut S, std::ops::Range<usize>),
    mut add: impl FnMut(&mut S, K),
) -> bool {
    let (mut g, mut p, mut cursor) = (0, 0, 0);
    loop {
        // The next change in order (an item taken out and an equal one put
        // in give the same list either way).
        let (item, taking) = match (gone.get(g), put.get(p)) {
            (None, None) => break,
            (Some(&x), Some(&y)) if x <= y => (x, true),
            (Some(&x), None) => (x, true),
            (_, Some(&y)) => (y, false),
        };
        // The first item at or after the cursor that is not below `item`.
        let (mut lo, mut hi) = (cursor, len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if at(mid) < item {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        copy(out, cursor..lo);
        cursor = lo;
        if taking {
            if lo == len || at(lo) != item {
                return false;
            }
            cursor += 1;
            g += 1;
        } else {
            add(out, item);
            p += 1;
        }
    }
    copy(out, cursor..len);
    true
}

/// The running sum (wrapping) of the terms of a set of shapes: the blocker
/// hash is a function of the shapes whatever their order, kept up to date
/// by adding the terms of the shapes put in and taking out those of the
/// shapes gone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ShapeSum(u64);

impl ShapeSum {
    /// Counts a shape in.
    pub(crate) fn add(&mut self, term: u64) {
        self.0 = self.0.wrapping_add(term);
    }

    /// Counts a shape out.
    pub(crate) fn sub(&mut self, term: u64) {
        self.0 = self.0.wrapping_sub(term);
    }

    /// The blocker hash of the shapes counted in.
    pub(crate) fn hash(self) -> u64 {
        fmix(self.0)
    }
}

/// A circle's term of the blocker hash: a word fold of a word 0, then its
/// centre, radius and top as pairs of 32-bit values.
pub(crate) fn circle_term(c: &CircleTexel) -> u64 {
    let mut fold = WordFold::default();
    fold.word(0);
    fold.pair(c.x as u32, c.y as u32);
    fold.pair(c.radius as u32, c.height as u32);
    fold.finish()
}

/// A polygon's term of the blocker hash: a word fold of 1 paired with its
/// vertex count, each vertex as a pair, then its top paired with 0.
pub(crate) fn polygon_term(vertices: &[[i32; 2]], top: i32) -> u64 {
    let mut fold = WordFold::default();
    fold.pair(1, vertices.len() as u32);
    for q in vertices {
        fold.pair(q[0] as u32, q[1] as u32);
    }
    fold.pair(top as u32, 0);
    fold.finish()
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
        let shapes = |circles: Vec<CircleTexel>| BuiltShapes { circles, ..BuiltShapes::default() };
        let built = shapes(vec![circle(80, 80, 16), circle(300, 300, 8)]);
        let mut out = Vec::new();
        built.changes(&shapes(vec![circle(80, 80, 16), circle(300, 300, 8)]), 64, 64, &mut out);
        assert!(out.is_empty(), "{out:?}");
        // The second circle moved: where it was and where it is.
        built.changes(&shapes(vec![circle(80, 80, 16), circle(400, 300, 8)]), 64, 64, &mut out);
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
