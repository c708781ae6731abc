//! Mirroring Bevy entities into murk's `hecs` world, incrementally: only
//! entities spawned, changed or despawned since the last fixed tick cost
//! work. Despawns go first, then spawns in entity order, so the mirror's
//! ids (which stealth events and the lockstep hash carry) depend only on
//! what the game did, never on query order.
//!
//! Everything is read from the entity's [`GlobalTransform`], made current
//! for this tick by Bevy's own transform propagation, which the plugin runs
//! in `FixedUpdate` just before the mirror: a child of a moved parent moves,
//! and a blocker's rotation about the up axis and its scale reach its shape
//! (see [`world_blocker`]).

use crate::components::{FogAntiVision, FogBlocker, FogCapture, FogGhost, FogGhostObserver, FogReveal, FogStealth, FogTracked, FogVision};
use crate::error::FogError;
use crate::set::MurkSet;
use bevy::prelude::*;
use bevy::transform::systems::{mark_dirty_trees, propagate_parent_transforms, sync_simple_transforms, StaticTransformOptimizations};
use murk_core::{
    AntiVision, Blocker, BlockerShape, CaptureMode, Ghost, GhostObserver, HeightCapture, MurkError, Pose, Position, StealthActor, Tracked,
    TransientReveal, VisionSource,
};
use std::collections::{BTreeSet, HashMap};

/// How Bevy's axes map onto murk's, whose ground is the X/Y plane with Z
/// up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FogAxes {
    /// 2D games: murk's axes are Bevy's (X right, Y up on screen).
    #[default]
    XY,
    /// 3D games with Y up: murk (x, y, z) = Bevy (x, -z, y), so the ground
    /// is Bevy's X/Z plane seen from above with -Z as murk's +Y.
    YUp,
}

impl FogAxes {
    /// A Bevy point in murk's coordinates.
    pub fn to_murk(self, v: Vec3) -> Vec3 {
        match self {
            FogAxes::XY => v,
            FogAxes::YUp => Vec3::new(v.x, -v.z, v.y),
        }
    }

    /// A murk point in Bevy's coordinates.
    pub fn to_bevy(self, v: Vec3) -> Vec3 {
        match self {
            FogAxes::XY => v,
            FogAxes::YUp => Vec3::new(v.x, v.z, -v.y),
        }
    }

    /// Heading in murk's ground plane (degrees counter-clockwise from +X)
    /// of a rotation's local +X axis.
    pub fn heading_degrees(self, rotation: Quat) -> f32 {
        let d = self.to_murk(rotation * Vec3::X);
        d.y.atan2(d.x).to_degrees()
    }

    /// A Bevy scale in murk's axes: (ground x, ground y, up).
    pub fn scale_to_murk(self, scale: Vec3) -> Vec3 {
        match self {
            FogAxes::XY => scale,
            FogAxes::YUp => Vec3::new(scale.x, scale.z, scale.y),
        }
    }
}

/// Points on the outline of a circle scaled unevenly (an ellipse), which
/// murk occludes as a polygon.
const ELLIPSE_POINTS: usize = 32;

/// A blocker as the world sees it, given its entity's global scale and
/// rotation (in Bevy's axes): the shape is scaled along the entity's local
/// ground axes, then turned by the heading of its rotation about the up
/// axis; its height is scaled by the up scale.
///
/// - a rectangle keeps its centre, its size is scaled and its yaw turned;
/// - a polygon's points are scaled and turned about the entity's position;
/// - a circle stays a circle when both ground scales have the same
///   magnitude (its radius scaled by it; turning a circle changes nothing),
///   and becomes a 32-point polygon on the ellipse otherwise.
///
/// Negative scales (mirroring) flip polygons; rectangles and circles are
/// symmetric and only take the magnitude.
pub fn world_blocker(axes: FogAxes, blocker: &Blocker, scale: Vec3, rotation: Quat) -> Blocker {
    let s = axes.scale_to_murk(scale);
    let heading = axes.heading_degrees(rotation);
    let (sin, cos) = heading.to_radians().sin_cos();
    let turn = |p: Vec2| Vec2::new(p.x * cos - p.y * sin, p.x * sin + p.y * cos);
    let shape = match &blocker.shape {
        BlockerShape::Circle { radius } if s.x.abs() == s.y.abs() => BlockerShape::Circle { radius: radius * s.x.abs() },
        BlockerShape::Circle { radius } => BlockerShape::Polygon {
            points: (0..ELLIPSE_POINTS)
                .map(|i| {
                    let a = std::f32::consts::TAU * i as f32 / ELLIPSE_POINTS as f32;
                    turn(Vec2::new(radius * s.x.abs() * a.cos(), radius * s.y.abs() * a.sin()))
                })
                .collect(),
        },
        BlockerShape::Rect { size, yaw_degrees } => {
            BlockerShape::Rect { size: Vec2::new(size.x * s.x.abs(), size.y * s.y.abs()), yaw_degrees: yaw_degrees + heading }
        }
        BlockerShape::Polygon { points } => BlockerShape::Polygon { points: points.iter().map(|p| turn(Vec2::new(p.x * s.x, p.y * s.y))).collect() },
    };
    Blocker { shape, height: blocker.height.map(|h| h * s.z.abs()), ..blocker.clone() }
}

/// murk's mirror of the game's entities: the `hecs` world the subsystem
/// ticks, and the maps between the two worlds' entities.
#[derive(Resource)]
pub struct FogMirror {
    /// How positions are mapped.
    pub axes: FogAxes,
    pub(crate) world: hecs::World,
    to_hecs: HashMap<Entity, hecs::Entity>,
    to_bevy: HashMap<hecs::Entity, Entity>,
    pub(crate) ghosts: HashMap<hecs::Entity, Entity>,
    /// Removals seen by [`remember_removals`] between fixed ticks: Bevy
    /// keeps removal messages for two frames, and at a high frame rate
    /// several frames pass between two fixed ticks.
    removed: Vec<Entity>,
    /// Mirrors removed before this tick, with the Bevy entity each stood
    /// for: the tick's events about them (a unit that died leaves every
    /// sight set) still name it. Cleared after the tick.
    pub(crate) departed: HashMap<hecs::Entity, Entity>,
}

impl FogMirror {
    pub(crate) fn new(axes: FogAxes) -> Self {
        Self {
            axes,
            world: hecs::World::new(),
            to_hecs: HashMap::new(),
            to_bevy: HashMap::new(),
            ghosts: HashMap::new(),
            removed: Vec::new(),
            departed: HashMap::new(),
        }
    }

    /// murk's world, as the subsystem sees it.
    pub fn world(&self) -> &hecs::World {
        &self.world
    }

    /// The mirror of a Bevy entity.
    pub fn hecs_entity(&self, entity: Entity) -> Option<hecs::Entity> {
        self.to_hecs.get(&entity).copied()
    }

    /// The Bevy entity a mirror stands for.
    pub fn bevy_entity(&self, entity: hecs::Entity) -> Option<Entity> {
        self.to_bevy.get(&entity).copied()
    }

    /// [`Self::bevy_entity`], or the Bevy entity a mirror removed before
    /// this tick stood for.
    pub(crate) fn bevy_entity_or_departed(&self, entity: hecs::Entity) -> Option<Entity> {
        self.bevy_entity(entity).or_else(|| self.departed.get(&entity).copied())
    }

    /// How many entities are mirrored.
    pub fn len(&self) -> usize {
        self.to_hecs.len()
    }

    /// Whether nothing is mirrored.
    pub fn is_empty(&self) -> bool {
        self.to_hecs.is_empty()
    }
}

/// The murk components of one Bevy entity, as `hecs` components.
struct Mirrored {
    position: Position,
    vision: Option<VisionSource>,
    blocker: Option<Blocker>,
    capture: Option<(HeightCapture, Vec<Entity>)>,
    stealth: Option<StealthActor>,
    anti: Option<AntiVision>,
    reveal: Option<TransientReveal>,
    tracked: Option<Tracked>,
    /// The rotation and scale of a capture member (murk recaptures when they change).
    pose: Option<Pose>,
}

type MurkParts<'a> = (
    Entity,
    &'a GlobalTransform,
    Option<&'a FogVision>,
    Option<&'a FogBlocker>,
    Option<&'a FogCapture>,
    Option<&'a FogStealth>,
    Option<&'a FogAntiVision>,
    Option<&'a FogReveal>,
    Option<&'a FogTracked>,
);

/// Entities with at least one murk component.
type AnyMurk = Or<(With<FogVision>, With<FogBlocker>, With<FogCapture>, With<FogStealth>, With<FogAntiVision>, With<FogReveal>, With<FogTracked>)>;

/// Those of them whose position or murk components changed (or that were
/// just spawned).
type ChangedMurk = (
    AnyMurk,
    Or<(
        Changed<GlobalTransform>,
        Changed<FogVision>,
        Changed<FogBlocker>,
        Changed<FogCapture>,
        Changed<FogStealth>,
        Changed<FogAntiVision>,
        Changed<FogReveal>,
        Changed<FogTracked>,
    )>,
);

fn parts(axes: FogAxes, members: &BTreeSet<Entity>, (e, t, vision, blocker, capture, stealth, anti, reveal, tracked): MurkParts<'_>) -> Mirrored {
    let (scale, rotation, translation) = t.to_scale_rotation_translation();
    let vision = vision.map(|v| {
        let mut s = v.source;
        if v.cone_follows_rotation {
            if let Some(cone) = s.cone.as_mut() {
                cone.yaw_degrees += axes.heading_degrees(rotation);
            }
        }
        s
    });
    Mirrored {
        position: Position(axes.to_murk(translation)),
        vision,
        blocker: blocker.map(|b| world_blocker(axes, &b.0, scale, rotation)),
        capture: capture.map(|c| (c.capture.clone(), c.members.clone())),
        stealth: stealth.map(|s| s.0.clone()),
        anti: anti.map(|a| a.0),
        reveal: reveal.map(|r| r.0),
        tracked: tracked.map(|t| t.0),
        // Bevy's own rotation and scale: murk only compares them.
        pose: members.contains(&e).then_some(Pose { rotation, scale }),
    }
}

/// Writes one component of a mirror, leaving it alone when it already
/// holds that value (Bevy's propagation in `PostUpdate` marks the global
/// transforms of last tick's movers changed a second time).
fn set<T: hecs::Component + PartialEq>(world: &mut hecs::World, e: hecs::Entity, value: Option<T>) {
    match value {
        Some(v) => {
            if world.get::<&T>(e).is_ok_and(|old| *old == v) {
                return;
            }
            // The entity exists: it was just looked up or spawned.
            let _ = world.insert_one(e, v);
        }
        None => {
            let _ = world.remove_one::<T>(e);
        }
    }
}

/// In the `hecs` world, the mirror's capture members name mirrors.
fn capture_for(mirror: &FogMirror, owner: Entity, capture: HeightCapture, members: &[Entity]) -> std::result::Result<HeightCapture, MurkError> {
    let mut capture = capture;
    if let CaptureMode::ShowOnly { members: m, .. } = &mut capture.mode {
        m.clear();
        for (i, b) in members.iter().enumerate() {
            let h = mirror
                .hecs_entity(*b)
                .ok_or_else(|| MurkError::invalid(format!("entity {owner}: FogCapture.members[{i}]"), b, "is not an entity with a murk component"))?;
            m.push(h);
        }
    }
    Ok(capture)
}

/// Brings the mirror up to date with the Bevy entities that changed (the
/// system of [`MurkSet::Mirror`]; public so benches can time it alone).
pub fn mirror_entities(
    mut mirror: ResMut<FogMirror>,
    changed: Query<MurkParts, ChangedMurk>,
    all: Query<MurkParts, AnyMurk>,
    mut removed: RemovedMurk,
    captures: Query<&FogCapture>,
    mut errors: MessageWriter<FogError>,
) {
    let axes = mirror.axes;
    let members: BTreeSet<Entity> = captures.iter().flat_map(|c| c.members.iter().copied()).collect();
    // Entities that lost a murk component: gone, or to be written again.
    // This frame's and the last one's removals are read here, older ones
    // were kept by `remember_removals`.
    let mut touched: Vec<Entity> = removed.drain();
    touched.append(&mut mirror.removed);
    touched.sort_unstable();
    touched.dedup();
    let mut gone: Vec<Entity> = touched.iter().copied().filter(|e| !all.contains(*e) && mirror.to_hecs.contains_key(e)).collect();
    gone.sort_unstable();
    for e in gone {
        if let Some(h) = mirror.to_hecs.remove(&e) {
            mirror.to_bevy.remove(&h);
            mirror.departed.insert(h, e);
            let _ = mirror.world.despawn(h);
        }
    }
    let mut updates: Vec<(Entity, Mirrored)> = changed.iter().map(|p| (p.0, parts(axes, &members, p))).collect();
    for e in touched {
        if !updates.iter().any(|(u, _)| *u == e) {
            if let Ok(p) = all.get(e) {
                updates.push((e, parts(axes, &members, p)));
            }
        }
    }
    updates.sort_unstable_by_key(|(e, _)| *e);
    // Spawns first, in entity order, so capture members can name them.
    for (e, m) in &updates {
        if !mirror.to_hecs.contains_key(e) {
            let h = mirror.world.spawn((m.position,));
            mirror.to_hecs.insert(*e, h);
            mirror.to_bevy.insert(h, *e);
        }
    }
    for (e, m) in updates {
        let h = mirror.to_hecs[&e];
        let capture = match m.capture {
            Some((c, members)) => match capture_for(&mirror, e, c, &members) {
                Ok(c) => Some(c),
                Err(err) => {
                    errors.write(FogError::from(err));
                    None
                }
            },
            None => None,
        };
        let w = &mut mirror.world;
        set(w, h, Some(m.position));
        set(w, h, m.vision);
        set(w, h, m.blocker);
        set(w, h, capture);
        set(w, h, m.stealth);
        set(w, h, m.anti);
        set(w, h, m.reveal);
        set(w, h, m.tracked);
        set(w, h, m.pose);
    }
}

/// The removal readers of every murk component.
#[derive(bevy::ecs::system::SystemParam)]
pub struct RemovedMurk<'w, 's> {
    vision: RemovedComponents<'w, 's, FogVision>,
    blocker: RemovedComponents<'w, 's, FogBlocker>,
    capture: RemovedComponents<'w, 's, FogCapture>,
    stealth: RemovedComponents<'w, 's, FogStealth>,
    anti: RemovedComponents<'w, 's, FogAntiVision>,
    reveal: RemovedComponents<'w, 's, FogReveal>,
    tracked: RemovedComponents<'w, 's, FogTracked>,
}

impl RemovedMurk<'_, '_> {
    fn drain(&mut self) -> Vec<Entity> {
        let mut out: Vec<Entity> = self.vision.read().collect();
        out.extend(self.blocker.read());
        out.extend(self.capture.read());
        out.extend(self.stealth.read());
        out.extend(self.anti.read());
        out.extend(self.reveal.read());
        out.extend(self.tracked.read());
        out
    }
}

/// Keeps the removals of every frame until the next fixed tick reads them.
pub(crate) fn remember_removals(mut mirror: ResMut<FogMirror>, mut removed: RemovedMurk) {
    let seen = removed.drain();
    if !seen.is_empty() {
        mirror.removed.extend(seen);
    }
}

/// After a tick: transient reveals murk ended are despawned, the others
/// show murk's countdown; ghosts follow murk's (hidden actors and their
/// fades: `crate::fade`).
pub(crate) fn publish_entities(
    mut commands: Commands,
    mut mirror: ResMut<FogMirror>,
    mut reveals: Query<(Entity, &mut FogReveal)>,
    mut ghost_transforms: Query<&mut Transform, With<FogGhost>>,
) {
    let axes = mirror.axes;
    for (e, mut reveal) in &mut reveals {
        let Some(h) = mirror.hecs_entity(e) else { continue };
        let countdown = mirror.world.get::<&TransientReveal>(h).ok().map(|r| *r);
        match countdown {
            Some(r) => reveal.bypass_change_detection().0 = r,
            None if !mirror.world.contains(h) => {
                mirror.to_hecs.remove(&e);
                mirror.to_bevy.remove(&h);
                commands.entity(e).despawn();
            }
            None => {}
        }
    }
    // Ghosts: one Bevy entity per murk ghost.
    let murk_ghosts: Vec<(hecs::Entity, hecs::Entity, Vec3, Option<String>)> = mirror
        .world
        .query::<(hecs::Entity, &Ghost, &Position, Option<&GhostObserver>)>()
        .iter()
        .map(|(g, ghost, p, observer)| (g, ghost.actor, p.0, observer.map(|o| o.0.clone())))
        .collect();
    let alive: std::collections::HashSet<hecs::Entity> = murk_ghosts.iter().map(|(g, _, _, _)| *g).collect();
    let stale: Vec<hecs::Entity> = mirror.ghosts.keys().copied().filter(|g| !alive.contains(g)).collect();
    for g in stale {
        if let Some(e) = mirror.ghosts.remove(&g) {
            commands.entity(e).despawn();
        }
    }
    for (g, actor, p, observer) in murk_ghosts {
        let at = Transform::from_translation(axes.to_bevy(p));
        match mirror.ghosts.get(&g) {
            Some(e) => {
                if let Ok(mut t) = ghost_transforms.get_mut(*e) {
                    t.translation = at.translation;
                }
            }
            None => {
                let Some(actor) = mirror.bevy_entity(actor) else { continue };
                let mut ghost = commands.spawn((FogGhost { actor }, at));
                if let Some(o) = observer {
                    ghost.insert(FogGhostObserver(o));
                }
                let e = ghost.id();
                mirror.ghosts.insert(g, e);
            }
        }
    }
}

pub(crate) fn build(app: &mut App) {
    // Bevy propagates transforms in `PostUpdate`, after the fixed ticks of
    // the frame: propagating here too gives the mirror this tick's global
    // transforms (and works in apps without `TransformPlugin`).
    app.init_resource::<StaticTransformOptimizations>()
        .add_systems(
            FixedUpdate,
            (
                (mark_dirty_trees, propagate_parent_transforms, sync_simple_transforms).chain().in_set(MurkSet::Mirror).before(mirror_entities),
                mirror_entities.in_set(MurkSet::Mirror),
                publish_entities.in_set(MurkSet::Publish),
            ),
        )
        .add_systems(Last, remember_removals);
}
