//! Projecting blockers into an instance's texel space: each blocker's
//! shape becomes a circle or a clipped polygon in Q3 texels with its top
//! in height units. A memo keeps each blocker's projection with what it
//! came from, so a tick projects (and checks) only the blockers that
//! changed, and keeps the shapes in canonical order with the sum of their
//! hash terms, so the blocker hash and the rectangles of a local occlusion
//! update follow from the shapes that changed.

use super::naming::entity_label;
use super::occlusion::{circle_term, polygon_term, BuiltShapes, PolygonRef, ShapeSum};
use crate::backend::TexelRect;
use crate::components::{Blocker, BlockerShape, Position};
use crate::error::{finite, Result};
use crate::fixed::{HEIGHT_WALL, TEXEL_ONE};
use crate::frame::CircleTexel;
use crate::raster::{circle_rect, polygon_rect};
use crate::transform::{sin_cos_degrees, AreaTransform};
use crate::zlayer::Slab;
use hecs::{Entity, World};
use std::sync::Arc;

/// This tick's blockers, projected.
pub(crate) struct GatheredBlockers {
    /// The blocker hash: the finished sum of the shapes' terms.
    pub(crate) hash: u64,
    /// The projections to keep for the next tick.
    pub(crate) memo: BlockerMemoUpdate,
    /// When the shapes were spliced from the last tick's: those shapes, and
    /// the rectangles of every shape taken out or put in (each shape on one
    /// side only is among them).
    pub(crate) changes: Option<(Arc<BuiltShapes>, Vec<TexelRect>)>,
}

/// The blockers of `world` projected into the grid of `t` (internal
/// texels) under `slab`, keeping the projections of `memo` whose inputs
/// did not change.
pub(crate) fn gather_blockers(
    memo_before: &BlockerMemo,
    t: &AreaTransform,
    slab: &Slab,
    z_layering: bool,
    world: &World,
) -> Result<GatheredBlockers> {
    let (w, h) = (t.width(), t.height());
    let memo = memo_before.kept_for(t, slab, z_layering);
    let mut query = world.query::<(Entity, &Position, &Blocker)>();
    let mut blockers: Vec<(Entity, &Position, &Blocker)> = query.iter().collect();
    blockers.sort_by_key(|(e, _, _)| e.to_bits());
    // The kept projections no blocker keeps (changed or gone), by index,
    // and the new ones, both in entity order.
    let (mut gone, mut added) = (Vec::new(), Vec::new());
    let mut next = 0;
    for &(e, pos, b) in &blockers {
        let bits = e.to_bits().get();
        while memo.get(next).is_some_and(|k| k.entity < bits) {
            gone.push(next);
            next += 1;
        }
        if memo.get(next).is_some_and(|k| k.entity == bits) {
            // Equal inputs project alike (a zero's sign cannot move a texel).
            if memo[next].position == *pos && memo[next].blocker == *b {
                next += 1;
                continue;
            }
            gone.push(next);
            next += 1;
        }
        let label = entity_label(e);
        let z = finite(|| format!("{label}.position.z"), pos.0.z)?;
        let x = finite(|| format!("{label}.position.x"), pos.0.x)?;
        let y = finite(|| format!("{label}.position.y"), pos.0.y)?;
        // What is wrong for every instance; lengths and heights are then
        // measured in this instance's units.
        b.check(&label)?;
        let height = b.height.map(f64::from);
        let shape = if z_layering && b.use_height_layer && !slab.holds_column(z, height) {
            Projected::Nothing
        } else {
            let top = match height {
                None => HEIGHT_WALL,
                Some(v) => t.height_q(|| format!("{label}.blocker.height"), z + v)?,
            };
            let (mut circles, mut polygons) = (Vec::new(), Vec::new());
            project_shape(t, (x, y), &b.shape, top, &format!("{label}.blocker.shape"), &mut circles, &mut polygons)?;
            match (circles.pop(), polygons.pop()) {
                (Some(c), _) => Projected::Circle(c),
                (None, Some((vertices, top))) => Projected::Polygon(vertices, top),
                (None, None) => Projected::Nothing,
            }
        };
        added.push(KeptBlocker { entity: bits, position: *pos, blocker: b.clone(), shape });
    }
    gone.extend(next..memo.len());
    // The shapes in canonical order (by content, not by entity): the last
    // tick's with this tick's changes spliced in, or all of them sorted.
    let last = memo_before.shapes_for(t, slab, z_layering);
    let removed: Vec<&Projected> = gone.iter().map(|&i| &memo[i].shape).collect();
    let mut shape_changes = None;
    let shapes = match last {
        Some((shapes, sum)) if removed.is_empty() && added.is_empty() => (Arc::clone(shapes), *sum),
        Some((last, sum)) => match merged_shapes(last, *sum, &removed, added.iter().map(|k| &k.shape), w, h) {
            Some((merged, sum, rects)) => {
                shape_changes = Some((Arc::clone(last), rects));
                (Arc::new(merged), sum)
            }
            None => sorted_shapes(standing(memo, &gone, &added)),
        },
        None => sorted_shapes(standing(memo, &gone, &added)),
    };
    let hash = shapes.1.hash();
    Ok(GatheredBlockers { hash, memo: BlockerMemoUpdate { under: (*t, *slab, z_layering), gone, added, shapes }, changes: shape_changes })
}

/// The projections of this tick's blockers: those of `memo` not `gone`,
/// and those `added`.
fn standing<'a>(memo: &'a [KeptBlocker], gone: &'a [usize], added: &'a [KeptBlocker]) -> impl Iterator<Item = &'a Projected> {
    let kept = memo.iter().enumerate().filter(|(i, _)| gone.binary_search(i).is_err());
    kept.map(|(_, k)| &k.shape).chain(added.iter().map(|k| &k.shape))
}

/// A list of projections as the circles and the polygons (vertices and
/// top) among them, each sorted.
fn split_sorted<'a>(shapes: impl IntoIterator<Item = &'a Projected>) -> (Vec<CircleTexel>, Vec<PolygonRef<'a>>) {
    let (mut circles, mut polygons) = (Vec::new(), Vec::new());
    for shape in shapes {
        match shape {
            Projected::Nothing => {}
            Projected::Circle(c) => circles.push(*c),
            Projected::Polygon(v, top) => polygons.push((&v[..], *top)),
        }
    }
    circles.sort_unstable();
    polygons.sort_unstable();
    (circles, polygons)
}

/// `shapes` sorted, and the sum of their terms.
fn sorted_shapes<'a>(shapes: impl IntoIterator<Item = &'a Projected>) -> (Arc<BuiltShapes>, ShapeSum) {
    let (circles, polygons) = split_sorted(shapes);
    let mut sorted = BuiltShapes { circles, ..BuiltShapes::default() };
    for (vertices, top) in polygons {
        sorted.push_polygon(vertices, top);
    }
    let sum = sorted.sum();
    (Arc::new(sorted), sum)
}

/// The last tick's sorted shapes `last` (whose terms sum to `sum`) less
/// the projections `removed` with those `added` spliced in, the sum of
/// their terms, and the rectangles on a `width x height` grid of every
/// shape taken out or put in; `None` when a projection to take out is not
/// among `last` (they do not belong together: the caller sorts anew).
fn merged_shapes<'a>(
    last: &BuiltShapes,
    mut sum: ShapeSum,
    removed: &[&'a Projected],
    added: impl IntoIterator<Item = &'a Projected>,
    width: u32,
    height: u32,
) -> Option<(BuiltShapes, ShapeSum, Vec<TexelRect>)> {
    let (gone_circles, gone_polygons) = split_sorted(removed.iter().copied());
    let (new_circles, new_polygons) = split_sorted(added);
    let merged = last.spliced((&gone_circles, &gone_polygons), (&new_circles, &new_polygons))?;
    let mut rects = Vec::new();
    for (c, put) in gone_circles.iter().map(|c| (c, false)).chain(new_circles.iter().map(|c| (c, true))) {
        rects.extend(circle_rect(c, width, height));
        if put {
            sum.add(circle_term(c))
        } else {
            sum.sub(circle_term(c))
        }
    }
    for (&(v, top), put) in gone_polygons.iter().map(|p| (p, false)).chain(new_polygons.iter().map(|p| (p, true))) {
        rects.extend(polygon_rect(v, width, height));
        if put {
            sum.add(polygon_term(v, top))
        } else {
            sum.sub(polygon_term(v, top))
        }
    }
    Some((merged, sum, rects))
}

/// A blocker's projection into one instance, kept with the inputs it came
/// from (its entity, position and component).
#[derive(Clone, Debug)]
pub(crate) struct KeptBlocker {
    entity: u64,
    position: Position,
    blocker: Blocker,
    shape: Projected,
}

/// What a blocker projects to.
#[derive(Clone, Debug)]
enum Projected {
    /// Nothing on the grid (off it, or outside the slab).
    Nothing,
    Circle(CircleTexel),
    /// Vertices (Q3 texels) and top.
    Polygon(Vec<[i32; 2]>, i32),
}

/// The kept projections of an instance's blockers, by entity, under the
/// transform, slab and Z-layering setting they were made with.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockerMemo {
    under: Option<(AreaTransform, Slab, bool)>,
    kept: Vec<KeptBlocker>,
    /// The shapes of the kept projections in canonical order, and the sum
    /// of their terms.
    shapes: Option<(Arc<BuiltShapes>, ShapeSum)>,
}

/// What a tick's gather leaves for the memo.
pub(crate) struct BlockerMemoUpdate {
    under: (AreaTransform, Slab, bool),
    /// The indices of the kept projections no blocker keeps, rising.
    gone: Vec<usize>,
    /// The new projections, in entity order.
    added: Vec<KeptBlocker>,
    shapes: (Arc<BuiltShapes>, ShapeSum),
}

impl BlockerMemoUpdate {
    /// This tick's shapes in canonical order.
    pub(crate) fn shapes(&self) -> &Arc<BuiltShapes> {
        &self.shapes.0
    }
}

impl BlockerMemo {
    /// Whether the kept projections were made under `t`, `slab` and
    /// `z_layering`.
    fn made_under(&self, t: &AreaTransform, slab: &Slab, z_layering: bool) -> bool {
        self.under == Some((*t, *slab, z_layering))
    }

    /// The kept projections, when they were made under `t`, `slab` and
    /// `z_layering` (none otherwise).
    fn kept_for(&self, t: &AreaTransform, slab: &Slab, z_layering: bool) -> &[KeptBlocker] {
        if self.made_under(t, slab, z_layering) {
            &self.kept
        } else {
            &[]
        }
    }

    /// The kept projections' sorted shapes and the sum of their terms,
    /// under the same conditions as [`Self::kept_for`].
    fn shapes_for(&self, t: &AreaTransform, slab: &Slab, z_layering: bool) -> Option<&(Arc<BuiltShapes>, ShapeSum)> {
        self.shapes.as_ref().filter(|_| self.made_under(t, slab, z_layering))
    }

    /// Keeps this tick's projections (moved, not copied) and forgets the
    /// blockers gone.
    pub(crate) fn commit(&mut self, update: BlockerMemoUpdate) {
        if self.under != Some(update.under) {
            // The gather kept nothing (and took nothing out).
            self.kept.clear();
        }
        let BlockerMemoUpdate { under, gone, added, shapes } = update;
        let appended = added.first().is_none_or(|a| self.kept.last().is_none_or(|k| k.entity < a.entity));
        if gone.is_empty() && appended {
            self.kept.extend(added);
        } else {
            let mut gone = gone.into_iter().peekable();
            let mut added = added.into_iter().peekable();
            let old = std::mem::take(&mut self.kept);
            self.kept.reserve(old.len() + added.len());
            for (i, k) in old.into_iter().enumerate() {
                if gone.next_if_eq(&i).is_some() {
                    continue;
                }
                while let Some(a) = added.next_if(|a| a.entity < k.entity) {
                    self.kept.push(a);
                }
                self.kept.push(k);
            }
            self.kept.extend(added);
        }
        self.under = Some(under);
        self.shapes = Some(shapes);
    }
}

/// Projects a shape at world `(x, y)` into the instance's texel space, as a
/// circle or clipped polygons of top `top`; `field` names the shape in
/// errors. Shapes that cannot touch the grid add nothing.
pub(crate) fn project_shape(
    t: &AreaTransform,
    (x, y): (f64, f64),
    shape: &BlockerShape,
    top: i32,
    field: &str,
    circles: &mut Vec<CircleTexel>,
    polygons: &mut Vec<(Vec<[i32; 2]>, i32)>,
) -> Result<()> {
    let (w, h) = (t.width(), t.height());
    match shape {
        BlockerShape::Circle { radius } => {
            let r = t.length_q(|| format!("{field}.circle.radius"), *radius)?;
            let (tx, ty) = t.world_to_texel(x, y);
            let rt = f64::from(r) / f64::from(TEXEL_ONE);
            if tx + rt < 0.0 || ty + rt < 0.0 || tx - rt > f64::from(w) || ty - rt > f64::from(h) {
                return Ok(());
            }
            let [cx, cy] = AreaTransform::texel_q(tx, ty);
            circles.push(CircleTexel { x: cx, y: cy, radius: r, height: top });
        }
        BlockerShape::Rect { size, yaw_degrees } => {
            let (sx, sy, yaw) = (f64::from(size.x), f64::from(size.y), f64::from(*yaw_degrees));
            let (s, c) = sin_cos_degrees(yaw);
            let corners: Vec<(f64, f64)> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                .iter()
                .map(|(u, v)| {
                    let (lx, ly) = (u * sx / 2.0, v * sy / 2.0);
                    t.world_to_texel(x + lx * c - ly * s, y + lx * s + ly * c)
                })
                .collect();
            push_polygon(polygons, &corners, top, w, h);
        }
        BlockerShape::Polygon { points } => {
            let corners: Vec<(f64, f64)> = points.iter().map(|p| t.world_to_texel(x + f64::from(p.x), y + f64::from(p.y))).collect();
            push_polygon(polygons, &corners, top, w, h);
        }
    }
    Ok(())
}

fn push_polygon(polygons: &mut Vec<(Vec<[i32; 2]>, i32)>, corners: &[(f64, f64)], top: i32, w: u32, h: u32) {
    // Polygons are clipped to the grid widened by a margin on every side, not
    // to the grid itself: a clipped vertex is rounded to the 1/8-texel grid,
    // which tilts its edge, and a texel centre on the outline could then fall
    // in or out depending on the direction the world is turned. Vertices of
    // ordinary blockers lie within the margin and are never moved. The margin
    // keeps every cross product of the rasterizers below 2^31 (the GPU's are
    // 32-bit): (grid + 2 margin) texels of 8 steps, squared.
    let margin = f64::from(POLYGON_SPAN_TEXELS.saturating_sub(w.max(h)) / 2);
    let (lo_x, lo_y, hi_x, hi_y) = (-margin, -margin, f64::from(w) + margin, f64::from(h) + margin);
    let clipped = clip_to_rect(corners, (lo_x, lo_y), (hi_x, hi_y));
    if clipped.len() >= 3 {
        // Clipped vertices lie in the rectangle; with huge input coordinates
        // the interpolation can round far outside it (found by the API fuzz
        // target: a vertex at i32::MIN overflowed the rasterizer). Holding
        // them to the rectangle restores what exact arithmetic gives; for
        // ordinary coordinates it changes nothing (the error is far below
        // the 1/8-texel grid).
        polygons.push((clipped.iter().map(|&(x, y)| AreaTransform::texel_q(x.clamp(lo_x, hi_x), y.clamp(lo_y, hi_y))).collect(), top));
    }
}

/// The widest span, in texels, that polygon vertices may cover (grid and
/// margins): `(span * 8)^2` stays below 2^31.
const POLYGON_SPAN_TEXELS: u32 = 5792;

/// Sutherland-Hodgman clip of a polygon to the rectangle from `lo` to `hi`
/// (texel units), which holds the grid with a margin: it keeps the vertex
/// values small enough for 32-bit cross products.
fn clip_to_rect(poly: &[(f64, f64)], lo: (f64, f64), hi: (f64, f64)) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = poly.to_vec();
    let planes: [(usize, f64, bool); 4] = [(0, lo.0, true), (0, hi.0, false), (1, lo.1, true), (1, hi.1, false)];
    for (axis, bound, keep_above) in planes {
        let input = std::mem::take(&mut out);
        if input.is_empty() {
            break;
        }
        let coord = |p: (f64, f64)| if axis == 0 { p.0 } else { p.1 };
        let inside = |p: (f64, f64)| {
            if keep_above {
                coord(p) >= bound
            } else {
                coord(p) <= bound
            }
        };
        for i in 0..input.len() {
            let cur = input[i];
            let prev = input[(i + input.len() - 1) % input.len()];
            let (ci, pi) = (inside(cur), inside(prev));
            if ci != pi {
                let s = (bound - coord(prev)) / (coord(cur) - coord(prev));
                out.push((prev.0 + (cur.0 - prev.0) * s, prev.1 + (cur.1 - prev.1) * s));
            }
            if ci {
                out.push(cur);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A kept blocker of entity `entity` projected to a small shape picked
    /// by `seed` (often equal to another: the lists hold repeats).
    fn kept((entity, seed): (u64, (u8, u8, u8))) -> KeptBlocker {
        let (a, b) = (i32::from(seed.1 % 3), i32::from(seed.2 % 3));
        let shape = match seed.0 % 3 {
            0 => Projected::Nothing,
            1 => Projected::Circle(CircleTexel { x: 8 * a, y: 8 * b, radius: 16, height: a }),
            _ => Projected::Polygon(vec![[8 * a, 0], [16, 8 * b], [24, 24]], b),
        };
        KeptBlocker { entity, position: Position(glam::Vec3::ZERO), blocker: Blocker::wall(BlockerShape::Circle { radius: 1.0 }), shape }
    }

    proptest! {
        /// The last tick's sorted shapes with a tick's changes spliced in
        /// are the shapes of sorting the tick's blockers anew, with the
        /// same sum of terms; the rectangles given cover every shape on
        /// one side only; the memo keeps the tick's blockers in entity order.
        #[test]
        fn merged_shapes_equal_the_sorted_ones(
            old in prop::collection::vec(any::<(u8, u8, u8)>(), 0..30),
            keep in prop::collection::vec(any::<bool>(), 30),
            new in prop::collection::vec((any::<u8>(), any::<(u8, u8, u8)>()), 0..8),
        ) {
            // Entities 0, 4, 8, ...; the new ones fall between and after them.
            let memo: Vec<KeptBlocker> = old.into_iter().enumerate().map(|(i, s)| kept((4 * i as u64, s))).collect();
            let (last, sum) = sorted_shapes(memo.iter().map(|k| &k.shape));
            let gone: Vec<usize> = (0..memo.len()).filter(|&i| !keep[i]).collect();
            let mut added: Vec<KeptBlocker> = new.into_iter().map(|(e, s)| kept((4 * u64::from(e % 40) + 1 + u64::from(e) / 40 % 3, s))).collect();
            added.sort_by_key(|k| k.entity);
            added.dedup_by_key(|k| k.entity);
            let (want, want_sum) = sorted_shapes(standing(&memo, &gone, &added));
            prop_assert_eq!(want_sum, want.sum());
            let mut differ = Vec::new();
            last.changes(&want, 4, 4, &mut differ);
            let removed: Vec<&Projected> = gone.iter().map(|&i| &memo[i].shape).collect();
            let (merged, merged_sum, rects) = merged_shapes(&last, sum, &removed, added.iter().map(|k| &k.shape), 4, 4).expect("the memo's shapes are the last sorted ones");
            prop_assert_eq!(&merged, &*want);
            prop_assert_eq!(merged_sum, want_sum);
            for r in &differ {
                prop_assert!(rects.contains(r), "{:?} not among {:?}", r, rects);
            }
            // Taken out of shapes that do not hold them: none.
            let taken = removed.iter().any(|m| !matches!(m, Projected::Nothing));
            prop_assert_eq!(merged_shapes(&BuiltShapes::default(), ShapeSum::default(), &removed, added.iter().map(|k| &k.shape), 4, 4).is_none(), taken);
            // The memo after the commit: the blockers kept and added, by entity.
            let under = (AreaTransform::new(&crate::transform::Area { center: glam::Vec3::ZERO, extents: glam::Vec3::splat(4.0), yaw_degrees: 0.0 }, 4, 4), Slab { bottom: 0.0, top: 1.0 }, false);
            let mut kept_memo = BlockerMemo { under: Some(under), kept: memo.clone(), shapes: Some((Arc::clone(&last), sum)) };
            let mut want_entities: Vec<u64> = memo.iter().enumerate().filter(|(i, _)| keep[*i]).map(|(_, k)| k.entity).chain(added.iter().map(|k| k.entity)).collect();
            want_entities.sort_unstable();
            kept_memo.commit(BlockerMemoUpdate { under, gone, added, shapes: (Arc::new(merged), merged_sum) });
            prop_assert_eq!(kept_memo.kept.iter().map(|k| k.entity).collect::<Vec<_>>(), want_entities);
        }
    }

    #[test]
    fn clipped_polygons_stay_on_the_grid_whatever_the_rounding() {
        // Found by the API fuzz target: clipping these corners to 16 x 488
        // texels rounded one vertex to x = -1.9e17, which the rasterizer's
        // bounding box arithmetic could not hold.
        let corners = [
            (963.359148033707, 899.9674911036683),
            (1.2749275191354807e31, -5.850116401778902e30),
            (520.1740535044701, 1078.3677369657385),
            (-1.6469866951122186e34, -3.589310923265844e34),
            (4.123468260409916e35, 8.986356546019871e35),
        ];
        let mut polygons = Vec::new();
        push_polygon(&mut polygons, &corners, 0, 16, 488);
        assert_eq!(polygons.len(), 1);
        // Within the grid widened by its margin: (5792 - 488) / 2 texels.
        let m = ((POLYGON_SPAN_TEXELS - 488) / 2) as i32 * TEXEL_ONE;
        for v in &polygons[0].0 {
            assert!((-m..=16 * TEXEL_ONE + m).contains(&v[0]) && (-m..=488 * TEXEL_ONE + m).contains(&v[1]), "{v:?}");
        }
    }
}
