//! Projecting the world into an instance's texel space: sources, anti-vision
//! areas and blockers become the integer inputs of the passes, with the hashes
//! that tell the rules whether anything moved. Every world value is checked
//! here, before a tick changes any state.

use super::capture::{gather_capture, CaptureUpdate};
use super::occlusion::BuiltShapes;
use super::{entity_label, Slot};
use crate::backend::TexelRect;
use crate::components::{AntiVision, Blocker, BlockerShape, Position, TeamMask, VisionSource};
use crate::error::{finite, MurkError, Result};
use crate::fixed::{HEIGHT_WALL, MAX_RADIUS_TEXELS, TEXEL_ONE, UNIT_ONE};
use crate::frame::{CircleTexel, OcclusionInput, SourceTexel, SOURCE_ANTI, SOURCE_HAS_CONE, SOURCE_SEE_THROUGH};
use crate::hash::WordFold;
use crate::raster::{circle_rect, polygon_rect};
use crate::transform::{sin_cos_degrees, AreaTransform};
use crate::zlayer::Slab;
use hecs::{Entity, World};
use std::sync::Arc;

/// What one instance needs from the world this tick, gathered before any state changes.
pub(super) struct Gathered {
    pub(super) occlusion: OcclusionInput,
    pub(super) blocker_hash: u64,
    /// The blocker projections to keep for the next tick.
    pub(super) blocker_memo: BlockerMemoUpdate,
    /// When the shapes were merged from the last tick's: those shapes, and
    /// the rectangles of every shape taken out or put in (each shape on one
    /// side only is among them).
    pub(super) shape_changes: Option<(Arc<BuiltShapes>, Vec<TexelRect>)>,
    pub(super) capture: Option<CaptureUpdate>,
    pub(super) sources: Vec<SourceTexel>,
    pub(super) source_hash: u64,
}

pub(super) fn gather(slot: &Slot, world: &World) -> Result<Gathered> {
    let profile = &slot.desc.profile;
    let t = &slot.transform;
    let slab = Slab::logical(&slot.desc.area, profile.z_layering_area_scale);
    let (w, h) = (slot.dims.width, slot.dims.height);

    let capture = gather_capture(slot, world, &slab)?;

    // Blockers: each one's projection is kept with what it came from, so
    // a tick projects (and checks) only the blockers that changed.
    let memo = slot.blocker_memo.kept_for(t, &slab, profile.z_layering);
    let mut query = world.query::<(&Position, &Blocker)>();
    let mut blockers: Vec<(Entity, &Position, &Blocker)> = query.iter().map(|(e, (p, b))| (e, p, b)).collect();
    blockers.sort_by_key(|(e, _, _)| e.to_bits());
    let mut occlusion = OcclusionInput {
        width: w,
        height: h,
        build_mips: profile.ray_method.needs_mips(),
        distance_field_scale: if profile.ray_method.needs_distance_field() { profile.df_scale } else { 0 },
        ..Default::default()
    };
    let mut entries: Vec<MemoEntry> = Vec::with_capacity(blockers.len());
    let mut next = 0;
    for &(e, pos, b) in &blockers {
        let bits = e.to_bits().get();
        while memo.get(next).is_some_and(|k| k.entity < bits) {
            next += 1;
        }
        // Equal inputs project alike (a zero's sign cannot move a texel).
        if memo.get(next).is_some_and(|k| k.entity == bits && k.position == *pos && k.blocker == *b) {
            entries.push(MemoEntry::Kept(next));
            continue;
        }
        let label = entity_label(e);
        let z = finite(|| format!("{label}.position.z"), pos.0.z)?;
        let x = finite(|| format!("{label}.position.x"), pos.0.x)?;
        let y = finite(|| format!("{label}.position.y"), pos.0.y)?;
        // What is wrong for every instance; lengths and heights are then
        // measured in this instance's units.
        b.check(&label)?;
        let height = b.height.map(f64::from);
        let shape = if profile.z_layering && b.use_height_layer && !slab.holds_column(z, height) {
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
        entries.push(MemoEntry::New(KeptBlocker { entity: bits, position: *pos, blocker: b.clone(), shape }));
    }
    // The shapes in canonical order (by content, not by entity): the last
    // tick's with this tick's changes merged in, or all of them sorted.
    let last = slot.blocker_memo.shapes_for(t, &slab, profile.z_layering);
    let (w, h) = (occlusion.width, occlusion.height);
    let mut shape_changes = None;
    let shapes = match last.map(|(shapes, hash)| (shapes, *hash, merged_shapes(shapes, memo, &entries, w, h))) {
        Some((shapes, hash, Merge::Unchanged)) => (Arc::clone(shapes), hash),
        Some((last, _, Merge::Merged(merged, rects))) => {
            shape_changes = Some((Arc::clone(last), rects));
            let hash = merged.hash();
            (Arc::new(merged), hash)
        }
        _ => {
            let sorted = sorted_shapes(&entries, memo);
            let hash = sorted.hash();
            (Arc::new(sorted), hash)
        }
    };
    occlusion.circles.clone_from(&shapes.0.circles);
    occlusion.polygons.clone_from(&shapes.0.polygons);
    occlusion.vertices.clone_from(&shapes.0.vertices);

    // Sources.
    let mut sources_in: Vec<(Entity, Position, VisionSource)> =
        world.query::<(&Position, &VisionSource)>().iter().map(|(e, (p, s))| (e, *p, *s)).collect();
    sources_in.sort_by_key(|(e, _, _)| e.to_bits());
    let mut sources = Vec::with_capacity(sources_in.len());
    for (e, pos, s) in &sources_in {
        let label = entity_label(*e);
        let s = slot.desc.profile.source_in_instance(s);
        if let Some(src) = project_source(&label, pos, &s, slot, &slab, slot.desc.observed_teams)? {
            sources.push(src);
        }
    }
    let mut anti: Vec<(Entity, Position, AntiVision)> = world.query::<(&Position, &AntiVision)>().iter().map(|(e, (p, a))| (e, *p, *a)).collect();
    anti.sort_by_key(|(e, _, _)| e.to_bits());
    for (e, pos, a) in &anti {
        if a.targets.0 & slot.desc.observed_teams.0 == 0 {
            continue;
        }
        // Projected as a source (the same checks and bounds), then marked.
        let label = format!("{}.anti_vision", entity_label(*e));
        let as_source = VisionSource { falloff: Some(a.falloff), eye_height: 0.0, ..VisionSource::new(a.radius) };
        if let Some(mut src) = project_source(&label, pos, &as_source, slot, &slab, TeamMask::ALL)? {
            src.flags |= SOURCE_ANTI;
            sources.push(src);
        }
    }
    // Canonical order (by content, not by entity id), so the hashes and the
    // bins do not depend on how the game allocated its entities.
    sources.sort_unstable();
    let mut sh = WordFold::default();
    for src in &sources {
        src.hash_into(&mut sh);
    }
    let blocker_hash = shapes.1;
    let blocker_memo = BlockerMemoUpdate { under: (*t, slab, profile.z_layering), entries, shapes };
    Ok(Gathered { occlusion, blocker_hash, blocker_memo, shape_changes, capture, sources, source_hash: sh.finish() })
}

/// The projections of the kept blockers `memo` no entry keeps (changed or
/// gone), and those of the new entries.
fn memo_changes<'a>(memo: &'a [KeptBlocker], entries: &'a [MemoEntry]) -> (Vec<&'a Projected>, Vec<&'a Projected>) {
    let mut kept = vec![false; memo.len()];
    let mut added = Vec::new();
    for entry in entries {
        match entry {
            MemoEntry::Kept(i) => kept[*i] = true,
            MemoEntry::New(k) => added.push(&k.shape),
        }
    }
    let removed = memo.iter().zip(&kept).filter(|(_, &k)| !k).map(|(m, _)| &m.shape).collect();
    (removed, added)
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

/// Every shape of this tick's blockers, sorted.
fn sorted_shapes(entries: &[MemoEntry], memo: &[KeptBlocker]) -> BuiltShapes {
    let (circles, polygons) = split_sorted(entries.iter().map(|entry| match entry {
        MemoEntry::Kept(i) => &memo[*i].shape,
        MemoEntry::New(k) => &k.shape,
    }));
    let mut shapes = BuiltShapes { circles, ..BuiltShapes::default() };
    for (vertices, top) in polygons {
        shapes.push_polygon(vertices, top);
    }
    shapes
}

/// A polygon's vertices and top.
type PolygonRef<'a> = (&'a [[i32; 2]], i32);

/// What merging a tick's changes into the last sorted shapes gave.
#[derive(Debug)]
enum Merge {
    /// No blocker changed: the last shapes hold.
    Unchanged,
    /// The new shapes, and the rectangles of every shape taken out or put in.
    Merged(BuiltShapes, Vec<TexelRect>),
    /// A projection to take out is not among the last shapes: they do not
    /// belong together (the caller sorts anew).
    Apart,
}

/// The last tick's sorted shapes `last` with this tick's changes: the
/// projections of the blockers that changed or went taken out, those of
/// the new ones merged in, in one walk, with the rectangles on a
/// `width x height` grid of every shape taken out or put in.
fn merged_shapes(last: &BuiltShapes, memo: &[KeptBlocker], entries: &[MemoEntry], width: u32, height: u32) -> Merge {
    let (removed, added) = memo_changes(memo, entries);
    if removed.is_empty() && added.is_empty() {
        return Merge::Unchanged;
    }
    let (gone_circles, gone_polygons) = split_sorted(removed);
    let (new_circles, new_polygons) = split_sorted(added);
    let circles = gone_circles.iter().chain(&new_circles).filter_map(|c| circle_rect(c, width, height));
    let polygons = gone_polygons.iter().chain(&new_polygons).filter_map(|(v, _)| polygon_rect(v, width, height));
    let rects = circles.chain(polygons).collect();
    let mut shapes = BuiltShapes::default();
    if !merge_sorted(last.circles.iter().copied(), &gone_circles, &new_circles, |c| shapes.circles.push(c)) {
        return Merge::Apart;
    }
    let old_polygons = last.polygons.iter().map(|p| (&last.vertices[p.first as usize..(p.first + p.count) as usize], p.height));
    let mut polygons = Vec::with_capacity(last.polygons.len() + new_polygons.len());
    if !merge_sorted(old_polygons, &gone_polygons, &new_polygons, |p| polygons.push(p)) {
        return Merge::Apart;
    }
    shapes.vertices.reserve(last.vertices.len());
    for (vertices, top) in polygons {
        shapes.push_polygon(vertices, top);
    }
    Merge::Merged(shapes, rects)
}

/// Walks the sorted `old` less the sorted `removed` (each taken out once)
/// with the sorted `added` merged in, giving each item in order to `emit`;
/// `false` when an item of `removed` is not in `old`.
fn merge_sorted<K: Ord + Copy>(old: impl Iterator<Item = K>, removed: &[K], added: &[K], mut emit: impl FnMut(K)) -> bool {
    let (mut removed, mut added) = (removed.iter().copied().peekable(), added.iter().copied().peekable());
    for item in old {
        while let Some(new) = added.next_if(|new| *new < item) {
            emit(new);
        }
        match removed.peek() {
            Some(gone) if *gone == item => {
                removed.next();
                continue;
            }
            Some(gone) if *gone < item => return false,
            _ => emit(item),
        }
    }
    added.for_each(emit);
    removed.peek().is_none()
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
    /// The shapes of the kept projections in canonical order, and their
    /// hash.
    shapes: Option<(Arc<BuiltShapes>, u64)>,
}

/// One blocker of a tick: its kept projection (an index into the memo), or
/// a new one.
pub(super) enum MemoEntry {
    Kept(usize),
    New(KeptBlocker),
}

/// What a tick's gather leaves for the memo.
pub(super) struct BlockerMemoUpdate {
    under: (AreaTransform, Slab, bool),
    entries: Vec<MemoEntry>,
    shapes: (Arc<BuiltShapes>, u64),
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

    /// The kept projections' sorted shapes and their hash, under the same
    /// conditions as [`Self::kept_for`].
    fn shapes_for(&self, t: &AreaTransform, slab: &Slab, z_layering: bool) -> Option<&(Arc<BuiltShapes>, u64)> {
        self.shapes.as_ref().filter(|_| self.made_under(t, slab, z_layering))
    }

    /// The shapes of the projections kept last, sorted.
    pub(super) fn shapes(&self) -> Option<Arc<BuiltShapes>> {
        self.shapes.as_ref().map(|(shapes, _)| Arc::clone(shapes))
    }

    /// Keeps this tick's projections (moved, not copied) and forgets the
    /// blockers gone.
    pub(super) fn commit(&mut self, update: BlockerMemoUpdate) {
        let valid = self.under == Some(update.under);
        let mut old: Vec<Option<KeptBlocker>> = std::mem::take(&mut self.kept).into_iter().map(Some).collect();
        self.kept = update
            .entries
            .into_iter()
            .filter_map(|e| match e {
                MemoEntry::Kept(i) if valid => old.get_mut(i).and_then(Option::take),
                MemoEntry::Kept(_) => None,
                MemoEntry::New(k) => Some(k),
            })
            .collect();
        self.under = Some(update.under);
        self.shapes = Some(update.shapes);
    }
}

/// Projects one source into texel space; `None` when it does not take part
/// (other team, outside the slab, or too far to touch the grid).
pub(super) fn project_source(
    label: &(impl std::fmt::Display + ?Sized),
    pos: &Position,
    s: &VisionSource,
    slot: &Slot,
    slab: &Slab,
    teams: TeamMask,
) -> Result<Option<SourceTexel>> {
    let t = &slot.transform;
    let profile = &slot.desc.profile;
    finite(|| format!("{label}.position.x"), pos.0.x)?;
    finite(|| format!("{label}.position.y"), pos.0.y)?;
    let z = finite(|| format!("{label}.position.z"), pos.0.z)?;
    // What is wrong for every instance (`VisionSource::check`); a radius
    // too long for this instance's texels is judged only if the source can
    // touch it.
    s.check(label)?;
    let (x, y) = s.eye_ground(pos.0);
    let radius_q = t.length_q(|| format!("{label}.source.radius"), s.radius);
    let falloff = s.falloff.map_or(f64::from(profile.smooth_falloff), f64::from);
    let eye_offset = f64::from(s.eye_height) + f64::from(s.eye_offset.z);
    let cone = s.cone.map(|c| (f64::from(c.yaw_degrees), f64::from(c.half_angle_degrees)));
    let mut strength = u32::from(u16::MAX);
    if let Some(layer) = s.height_layer {
        let extent = f64::from(layer.vertical_extent);
        if profile.z_layering {
            match slab.source_strength(z, extent) {
                None => return Ok(None),
                Some(f) => strength = u32::from(f),
            }
        }
    }
    if !teams.contains(s.team) {
        return Ok(None);
    }
    let (tx, ty) = t.world_to_texel(x, y);
    let rt = match &radius_q {
        Ok(r) => f64::from(*r) / f64::from(TEXEL_ONE),
        Err(_) => f64::from(s.radius) / t.texel_size(),
    };
    if tx + rt < 0.0 || ty + rt < 0.0 || tx - rt > f64::from(t.width()) || ty - rt > f64::from(t.height()) {
        return Ok(None);
    }
    let radius = radius_q?;
    if radius > MAX_RADIUS_TEXELS * TEXEL_ONE {
        let exact = f64::from(s.radius) / t.texel_size();
        return Err(MurkError::invalid(
            format!("{label}.source.radius"),
            s.radius,
            format!(
                "is {exact} texels at this instance's resolution, {} after rounding to 1/{TEXEL_ONE} texel; at most {MAX_RADIUS_TEXELS}",
                f64::from(radius) / f64::from(TEXEL_ONE)
            ),
        ));
    }
    let [qx, qy] = AreaTransform::texel_q(tx, ty);
    let eye = t.height_q(|| format!("{label}.source.eye_height"), z + eye_offset)?;
    let inner = radius - (f64::from(radius) * falloff).round() as i32;
    let mut src = SourceTexel { x: qx, y: qy, radius, inner_radius: inner, eye, strength, ..Default::default() };
    if let Some((yaw, half)) = cone {
        if half < 180.0 {
            let (s, c) = sin_cos_degrees(yaw);
            let (dx, dy) = t.direction_to_texel(c, s);
            let unit = f64::from(UNIT_ONE);
            src.cone_x = (dx * unit).round() as i32;
            src.cone_y = (dy * unit).round() as i32;
            src.cone_cos = (sin_cos_degrees(half).1 * unit).round() as i32;
            src.flags |= SOURCE_HAS_CONE;
        }
    }
    if s.see_through {
        src.flags |= SOURCE_SEE_THROUGH;
    }
    Ok(Some(src))
}

/// Projects a shape at world `(x, y)` into the instance's texel space, as a
/// circle or clipped polygons of top `top`; `field` names the shape in
/// errors. Shapes that cannot touch the grid add nothing.
pub(super) fn project_shape(
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
    use crate::components::BlockerShape;
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
        /// The last tick's sorted shapes with a tick's changes merged in
        /// are the shapes of sorting the tick's blockers anew, with their
        /// hash; the rectangles given cover every shape on one side only.
        #[test]
        fn merged_shapes_equal_the_sorted_ones(
            old in prop::collection::vec(any::<(u8, u8, u8)>(), 0..30),
            keep in prop::collection::vec(any::<bool>(), 30),
            new in prop::collection::vec(any::<(u8, u8, u8)>(), 0..8),
        ) {
            let memo: Vec<KeptBlocker> = old.into_iter().enumerate().map(|(i, s)| kept((i as u64, s))).collect();
            let last = sorted_shapes(&(0..memo.len()).map(MemoEntry::Kept).collect::<Vec<_>>(), &memo);
            let mut entries: Vec<MemoEntry> = (0..memo.len()).filter(|&i| keep[i]).map(MemoEntry::Kept).collect();
            entries.extend(new.into_iter().enumerate().map(|(i, s)| MemoEntry::New(kept((100 + i as u64, s)))));
            let want = sorted_shapes(&entries, &memo);
            let input = OcclusionInput { width: 4, height: 4, circles: want.circles.clone(), polygons: want.polygons.clone(), vertices: want.vertices.clone(), ..OcclusionInput::default() };
            let mut differ = Vec::new();
            last.changes(&input, &mut differ);
            match merged_shapes(&last, &memo, &entries, 4, 4) {
                Merge::Unchanged => {
                    prop_assert_eq!(&last, &want);
                    prop_assert!(differ.is_empty());
                }
                Merge::Merged(merged, rects) => {
                    prop_assert_eq!(&merged, &want);
                    prop_assert_eq!(merged.hash(), want.hash());
                    for r in &differ {
                        prop_assert!(rects.contains(r), "{:?} not among {:?}", r, rects);
                    }
                }
                Merge::Apart => prop_assert!(false, "the memo's shapes are the last sorted ones"),
            }
            // Merged into shapes that do not hold what it takes out: none.
            let gone = memo.iter().enumerate().any(|(i, m)| !keep[i] && !matches!(m.shape, Projected::Nothing));
            prop_assert_eq!(matches!(merged_shapes(&BuiltShapes::default(), &memo, &entries, 4, 4), Merge::Apart), gone);
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
