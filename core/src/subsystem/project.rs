//! Projecting the world into an instance's texel space: sources, anti-vision
//! areas and blockers become the integer inputs of the passes, with the hashes
//! that tell the rules whether anything moved. Every world value is checked
//! here, before a tick changes any state.

use super::capture::{gather_capture, CaptureUpdate};
use super::occlusion::{circle_term, polygon_term, BuiltShapes, PolygonRef, ShapeSum};
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
    /// The occlusion input but its shapes: a build takes them from the
    /// memo's ([`BuiltShapes::lend_to`]).
    pub(super) occlusion: OcclusionInput,
    pub(super) blocker_hash: u64,
    /// The blocker projections to keep for the next tick.
    pub(super) blocker_memo: BlockerMemoUpdate,
    /// When the shapes were spliced from the last tick's: those shapes, and
    /// the rectangles of every shape taken out or put in (each shape on one
    /// side only is among them).
    pub(super) shape_changes: Option<(Arc<BuiltShapes>, Vec<TexelRect>)>,
    pub(super) capture: Option<CaptureUpdate>,
    /// The source projections to keep for the next tick.
    pub(super) source_memo: SourceMemo,
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
    let mut query = world.query::<(Entity, &Position, &Blocker)>();
    let mut blockers: Vec<(Entity, &Position, &Blocker)> = query.iter().collect();
    blockers.sort_by_key(|(e, _, _)| e.to_bits());
    let occlusion = OcclusionInput {
        width: w,
        height: h,
        build_mips: profile.ray_method.needs_mips(),
        distance_field_scale: if profile.ray_method.needs_distance_field() { profile.df_scale } else { 0 },
        ..Default::default()
    };
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
        added.push(KeptBlocker { entity: bits, position: *pos, blocker: b.clone(), shape });
    }
    gone.extend(next..memo.len());
    // The shapes in canonical order (by content, not by entity): the last
    // tick's with this tick's changes spliced in, or all of them sorted.
    let last = slot.blocker_memo.shapes_for(t, &slab, profile.z_layering);
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

    // Sources: as the blockers, each one's projection is kept with what it
    // came from, and only the sources that changed are projected.
    let source_memo = gather_sources(slot, world, &slab)?;
    let mut anti: Vec<(Entity, Position, AntiVision)> =
        world.query::<(Entity, &Position, &AntiVision)>().iter().map(|(e, p, a)| (e, *p, *a)).collect();
    anti.sort_by_key(|(e, _, _)| e.to_bits());
    let mut concealing = Vec::with_capacity(anti.len());
    for (e, pos, a) in &anti {
        if a.targets.0 & slot.desc.observed_teams.0 == 0 {
            continue;
        }
        // Projected as a source (the same checks and bounds), then marked.
        let label = format!("{}.anti_vision", entity_label(*e));
        let as_source = VisionSource { falloff: Some(a.falloff), eye_height: 0.0, ..VisionSource::new(a.radius) };
        if let Some(mut src) = project_source(&label, pos, &as_source, slot, &slab, TeamMask::ALL)? {
            src.flags |= SOURCE_ANTI;
            concealing.push(src);
        }
    }
    // Canonical order (by content, not by entity id), so the hashes and the
    // bins do not depend on how the game allocated its entities.
    concealing.sort_unstable();
    let sources = replaced(&source_memo.sorted, &[], &concealing).expect("nothing to take out");
    let mut sh = WordFold::default();
    for src in &sources {
        src.hash_into(&mut sh);
    }
    let blocker_hash = shapes.1.hash();
    let blocker_memo = BlockerMemoUpdate { under: (*t, slab, profile.z_layering), gone, added, shapes };
    Ok(Gathered { occlusion, blocker_hash, blocker_memo, shape_changes, capture, source_memo, sources, source_hash: sh.finish() })
}

/// What a source's projection depends on besides the source: the
/// instance's transform and slab, and the profile's and the instance's
/// settings that [`project_source`] reads.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SourceRules {
    transform: AreaTransform,
    slab: Slab,
    z_layering: bool,
    smooth_falloff: f32,
    eye_offset: glam::Vec3,
    see_through: bool,
    teams: TeamMask,
}

/// One source entity's inputs and their projection (`None`: it reveals
/// nothing in this instance).
#[derive(Clone, Debug)]
struct KeptSource {
    entity: u64,
    position: Position,
    source: VisionSource,
    projected: Option<SourceTexel>,
}

/// The projections of an instance's vision sources, by entity, under the
/// rules they were made with, and all of them in canonical order.
#[derive(Clone, Debug, Default)]
pub(crate) struct SourceMemo {
    under: Option<SourceRules>,
    kept: Vec<KeptSource>,
    sorted: Vec<SourceTexel>,
}

/// This tick's vision sources projected, keeping the last tick's
/// projections made under the same rules ([`project_changed`]).
fn gather_sources(slot: &Slot, world: &World, slab: &Slab) -> Result<SourceMemo> {
    let profile = &slot.desc.profile;
    let under = SourceRules {
        transform: slot.transform,
        slab: *slab,
        z_layering: profile.z_layering,
        smooth_falloff: profile.smooth_falloff,
        eye_offset: profile.eye_offset,
        see_through: profile.see_through,
        teams: slot.desc.observed_teams,
    };
    let last = Some(&slot.source_memo).filter(|m| m.under == Some(under));
    let mut sources_in: Vec<(Entity, Position, VisionSource)> =
        world.query::<(Entity, &Position, &VisionSource)>().iter().map(|(e, p, s)| (e, *p, *s)).collect();
    sources_in.sort_by_key(|(e, _, _)| e.to_bits());
    let project = |e: Entity, pos: &Position, s: &VisionSource| {
        project_source(&entity_label(e), pos, &profile.source_in_instance(s), slot, slab, slot.desc.observed_teams)
    };
    Ok(SourceMemo { under: Some(under), ..project_changed(last, &sources_in, project)? })
}

/// The projections of `sources` (in entity order): a source whose entity,
/// position and component equal those `last` kept keeps its projection,
/// the others go through `project`; the canonical order is the kept one
/// with the projections that left taken out and the new ones merged in
/// (all of them sorted when nothing was kept). The rules are left unset.
fn project_changed(
    last: Option<&SourceMemo>,
    sources: &[(Entity, Position, VisionSource)],
    mut project: impl FnMut(Entity, &Position, &VisionSource) -> Result<Option<SourceTexel>>,
) -> Result<SourceMemo> {
    let (before, before_sorted) = last.map_or((&[][..], &[][..]), |m| (&m.kept[..], &m.sorted[..]));
    let (mut kept, mut left, mut came) = (Vec::with_capacity(sources.len()), Vec::new(), Vec::new());
    let mut next = 0;
    for (e, pos, s) in sources {
        let bits = e.to_bits().get();
        while before.get(next).is_some_and(|k| k.entity < bits) {
            left.extend(before[next].projected);
            next += 1;
        }
        if let Some(k) = before.get(next).filter(|k| k.entity == bits) {
            next += 1;
            // Equal inputs project alike (a zero's sign cannot move a texel).
            if k.position == *pos && k.source == *s {
                kept.push(k.clone());
                continue;
            }
            left.extend(k.projected);
        }
        let projected = project(*e, pos, s)?;
        came.extend(projected);
        kept.push(KeptSource { entity: bits, position: *pos, source: *s, projected });
    }
    left.extend(before[next..].iter().filter_map(|k| k.projected));
    left.sort_unstable();
    came.sort_unstable();
    let sorted = match replaced(before_sorted, &left, &came) {
        Some(sorted) => sorted,
        None => {
            let mut all: Vec<SourceTexel> = kept.iter().filter_map(|k| k.projected).collect();
            all.sort_unstable();
            all
        }
    };
    Ok(SourceMemo { under: None, kept, sorted })
}

/// `sorted` less the items of `gone`, with the items of `came` merged in
/// (all three ascending; each item of `gone` takes out one equal item), in
/// one pass; `None` when an item of `gone` is not there.
fn replaced(sorted: &[SourceTexel], gone: &[SourceTexel], came: &[SourceTexel]) -> Option<Vec<SourceTexel>> {
    let mut out = Vec::with_capacity((sorted.len() + came.len()).saturating_sub(gone.len()));
    let (mut gone, mut came) = (gone.iter().peekable(), came.iter().peekable());
    for s in sorted {
        if gone.next_if_eq(&s).is_some() {
            continue;
        }
        while let Some(c) = came.next_if(|c| *c < s) {
            out.push(*c);
        }
        out.push(*s);
    }
    out.extend(came);
    gone.peek().is_none().then_some(out)
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
pub(super) struct BlockerMemoUpdate {
    under: (AreaTransform, Slab, bool),
    /// The indices of the kept projections no blocker keeps, rising.
    gone: Vec<usize>,
    /// The new projections, in entity order.
    added: Vec<KeptBlocker>,
    shapes: (Arc<BuiltShapes>, ShapeSum),
}

impl BlockerMemoUpdate {
    /// This tick's shapes in canonical order.
    pub(super) fn shapes(&self) -> &Arc<BuiltShapes> {
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
    pub(super) fn commit(&mut self, update: BlockerMemoUpdate) {
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
    use std::collections::BTreeMap;

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

    proptest! {
        /// Tick after tick of sources that stand, move, change, leave and
        /// come (their projections often equal, some projecting to
        /// nothing), the kept projections give the canonical order of
        /// projecting every source anew, and only the sources whose inputs
        /// changed (or are new) are projected; a projection that fails
        /// fails the tick.
        #[test]
        fn kept_source_projections_equal_projecting_every_source(
            first in prop::collection::vec((any::<bool>(), 0u8..6, 0u8..3), 0..24),
            ticks in prop::collection::vec(prop::collection::vec((0u8..30, 0u8..5, 0u8..6, 0u8..3), 0..10), 1..6),
        ) {
            // A source's projection depends on its position and radius only:
            // x of 0..6 and a radius of 0..3 make repeats; x = 5 projects
            // to nothing, radius 0 fails.
            fn project(calls: &mut usize) -> impl FnMut(Entity, &Position, &VisionSource) -> Result<Option<SourceTexel>> + '_ {
                move |_, pos, s| {
                    *calls += 1;
                    if s.radius == 0.0 {
                        return Err(MurkError::invalid("radius", 0.0, "must be positive"));
                    }
                    Ok((pos.0.x != 5.0).then_some(SourceTexel { x: pos.0.x as i32, y: 3, radius: s.radius as i32, ..Default::default() }))
                }
            }
            let source = |x: u8, r: u8| (Position(glam::Vec3::new(f32::from(x), 0.0, 0.0)), VisionSource::new(f32::from(r + 1)));
            // Entity bits 1, 3, 5, ... (generation 1 and an odd index).
            let entity = |i: u64| Entity::from_bits(1 << 32 | i).expect("a valid entity");
            let mut world: BTreeMap<u64, (Position, VisionSource)> = BTreeMap::new();
            for (i, &(on, x, r)) in first.iter().enumerate() {
                if on {
                    world.insert(2 * i as u64 + 1, source(x, r));
                }
            }
            let mut memo: Option<SourceMemo> = None;
            for changes in ticks {
                let before = world.clone();
                // Op 0: leave; 1: move; 2: change the radius (to 0 fails
                // now and then); 3-4: come (or move back).
                for (e, op, x, r) in changes {
                    let id = 2 * u64::from(e) + 1;
                    match op {
                        0 => drop(world.remove(&id)),
                        1 => drop(world.get_mut(&id).map(|v| v.0 = source(x, 0).0)),
                        2 => drop(world.get_mut(&id).map(|v| v.1.radius = f32::from(r % 3))),
                        _ => drop(world.insert(id, source(x, r))),
                    }
                }
                let sources: Vec<(Entity, Position, VisionSource)> = world.iter().map(|(&i, &(p, s))| (entity(i), p, s)).collect();
                let (mut with_memo, mut anew) = (0, 0);
                let got = project_changed(memo.as_ref(), &sources, project(&mut with_memo));
                let want = project_changed(None, &sources, project(&mut anew));
                match (got, want) {
                    (Ok(got), Ok(want)) => {
                        let mut all: Vec<SourceTexel> = sources.iter().filter(|(_, p, _)| p.0.x != 5.0).map(|(_, p, s)| SourceTexel { x: p.0.x as i32, y: 3, radius: s.radius as i32, ..Default::default() }).collect();
                        all.sort_unstable();
                        prop_assert_eq!(&got.sorted, &all);
                        prop_assert_eq!(&want.sorted, &all);
                        // Projected: the sources not kept with equal inputs.
                        let kept = memo.as_ref().map_or(&[][..], |m| &m.kept[..]);
                        let changed = sources.iter().filter(|(e, p, s)| !kept.iter().any(|k| k.entity == e.to_bits().get() && k.position == *p && k.source == *s)).count();
                        prop_assert_eq!(with_memo, changed);
                        memo = Some(got);
                    }
                    (Err(_), Err(_)) => {
                        // The failing tick changes nothing: the world goes
                        // back and the memo stays.
                        world = before;
                    }
                    (got, want) => prop_assert!(false, "with the memo {:?}, anew {:?}", got.is_ok(), want.is_ok()),
                }
            }
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
