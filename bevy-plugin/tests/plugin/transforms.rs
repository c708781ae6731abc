//! Blockers are read from their `GlobalTransform`: a door turning on a
//! hinge (a child of a moved, rotated parent) and a scaled, rotated
//! building occlude exactly as the same world-space shapes handed to a
//! `FogSubsystem` directly, in 2D (X/Y) and 3D (Y up) axes.

use crate::app::{desc, step, DT_US};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use murk_bevy::prelude::*;
use murk_core::{FogSubsystem, Position};
use std::time::Duration;

const TICKS: u32 = 12;

/// Where the hinge is and how far it has turned at a tick (murk's axes).
fn hinge(tick: u32) -> (Vec3, f32) {
    let at = if tick < 6 { Vec3::new(20.0, 30.0, 0.0) } else { Vec3::new(22.0, 26.0, 0.0) };
    (at, 15.0 * tick as f32)
}

/// The building's yaw and scale (ground x, ground y, up) at a tick.
fn building(tick: u32) -> (f32, Vec3) {
    if tick < 8 {
        (30.0, Vec3::new(2.0, 1.5, 2.0))
    } else {
        (-50.0, Vec3::new(1.0, 3.0, 0.5))
    }
}

const BUILDING_AT: Vec3 = Vec3::new(44.0, 40.0, 0.0);
const DOOR_OFFSET: f32 = 3.0;
const TOWER_AT: Vec3 = Vec3::new(40.0, 18.0, 0.0);
const TOWER_YAW: f32 = 70.0;

fn door() -> Blocker {
    Blocker::wall(BlockerShape::Rect { size: Vec2::new(6.0, 1.0), yaw_degrees: 0.0 })
}

/// An L-shaped footprint 1 unit tall: scaled up and down, it rises above
/// the source's eye and sinks below it.
fn footprint() -> Blocker {
    let points = [(-2.0, -1.0), (2.0, -1.0), (2.0, 0.0), (0.0, 0.0), (0.0, 1.0), (-2.0, 1.0)].map(|(x, y)| Vec2::new(x, y)).to_vec();
    Blocker { height: Some(1.0), ..Blocker::wall(BlockerShape::Polygon { points }) }
}

fn tower() -> Blocker {
    Blocker::wall(BlockerShape::Circle { radius: 2.0 })
}

fn turn(p: Vec2, degrees: f32) -> Vec2 {
    let (s, c) = degrees.to_radians().sin_cos();
    Vec2::new(p.x * c - p.y * s, p.x * s + p.y * c)
}

/// The world-space shapes of a tick, worked out by hand: (position, blocker).
fn world_shapes(tick: u32, tower_scale: Vec2) -> Vec<(Vec3, Blocker)> {
    let (at, yaw) = hinge(tick);
    let door_at = at + turn(Vec2::new(DOOR_OFFSET, 0.0), yaw).extend(0.0);
    let door = Blocker::wall(BlockerShape::Rect { size: Vec2::new(6.0, 1.0), yaw_degrees: yaw });
    let (b_yaw, b_scale) = building(tick);
    let BlockerShape::Polygon { points } = footprint().shape else { unreachable!("the footprint is a polygon") };
    let points = points.iter().map(|p| turn(*p * b_scale.truncate(), b_yaw)).collect();
    let building = Blocker { height: Some(b_scale.z), ..Blocker::wall(BlockerShape::Polygon { points }) };
    let tower = if tower_scale.x == tower_scale.y {
        Blocker::wall(BlockerShape::Circle { radius: 2.0 * tower_scale.x })
    } else {
        let points = (0..32)
            .map(|i| {
                let a = std::f32::consts::TAU * i as f32 / 32.0;
                turn(Vec2::new(2.0 * tower_scale.x * a.cos(), 2.0 * tower_scale.y * a.sin()), TOWER_YAW)
            })
            .collect();
        Blocker::wall(BlockerShape::Polygon { points })
    };
    vec![(door_at, door), (BUILDING_AT, building), (TOWER_AT, tower)]
}

/// Its eye is above the unscaled building (height 1).
fn source() -> VisionSource {
    VisionSource { eye_height: 1.5, ..VisionSource::new(30.0) }
}

/// The scene on a `FogSubsystem`, given the world-space shapes; the final
/// mask of each tick.
fn direct(shapes: impl Fn(u32) -> Vec<(Vec3, Blocker)>) -> Vec<Vec<u16>> {
    let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(1).unwrap()));
    fog.create_instance(desc()).unwrap();
    let mut world = hecs::World::new();
    world.spawn((Position(Vec3::new(32.5, 32.5, 0.0)), source()));
    let blockers: Vec<hecs::Entity> = shapes(0).into_iter().map(|(p, b)| world.spawn((Position(p), b))).collect();
    (0..TICKS)
        .map(|tick| {
            for (e, (p, b)) in blockers.iter().zip(shapes(tick)) {
                world.insert(*e, (Position(p), b)).unwrap();
            }
            fog.tick(&mut world, DT_US).unwrap();
            fog.final_mask("ground").unwrap()
        })
        .collect()
}

/// A rotation about the up axis, and a scale given in murk's axes (ground
/// x, ground y, up), as Bevy transforms in `axes`.
fn turned(axes: FogAxes, at: Vec3, yaw: f32, scale: Vec3) -> Transform {
    let (rotation, scale) = match axes {
        FogAxes::XY => (Quat::from_rotation_z(yaw.to_radians()), scale),
        FogAxes::YUp => (Quat::from_rotation_y(yaw.to_radians()), Vec3::new(scale.x, scale.z, scale.y)),
    };
    Transform { translation: axes.to_bevy(at), rotation, scale }
}

/// The scene in a Bevy app: the door is the child of a hinge that moves
/// and turns, the building turns and is rescaled, the tower is scaled.
fn in_app(axes: FogAxes, tower_scale: Vec2) -> Vec<Vec<u16>> {
    let mut app = App::new();
    let dt = Duration::from_micros(u64::from(DT_US));
    app.add_plugins(MinimalPlugins)
        .insert_resource(Time::<Fixed>::from_duration(dt))
        .insert_resource(TimeUpdateStrategy::ManualDuration(dt))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu).axes(axes).instance(FogInstance::new(desc())));
    let world = app.world_mut();
    world
        .spawn((Transform::from_translation(axes.to_bevy(Vec3::new(32.5, 32.5, 0.0))), FogVision { source: source(), cone_follows_rotation: false }));
    let (at, yaw) = hinge(0);
    let hinge_e = world.spawn(turned(axes, at, yaw, Vec3::ONE)).id();
    world.spawn((ChildOf(hinge_e), Transform::from_translation(axes.to_bevy(Vec3::new(DOOR_OFFSET, 0.0, 0.0))), FogBlocker(door())));
    let (b_yaw, b_scale) = building(0);
    let building_e = world.spawn((turned(axes, BUILDING_AT, b_yaw, b_scale), FogBlocker(footprint()))).id();
    world.spawn((turned(axes, TOWER_AT, TOWER_YAW, tower_scale.extend(1.0)), FogBlocker(tower())));
    (0..TICKS)
        .map(|tick| {
            let (at, yaw) = hinge(tick);
            let (b_yaw, b_scale) = building(tick);
            let world = app.world_mut();
            *world.get_mut::<Transform>(hinge_e).unwrap() = turned(axes, at, yaw, Vec3::ONE);
            *world.get_mut::<Transform>(building_e).unwrap() = turned(axes, BUILDING_AT, b_yaw, b_scale);
            step(&mut app);
            app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().final_mask("ground").unwrap()
        })
        .collect()
}

fn check(axes: FogAxes, tower_scale: Vec2) {
    let expected = direct(|tick| world_shapes(tick, tower_scale));
    let got = in_app(axes, tower_scale);
    assert_eq!(expected.len(), got.len());
    for (tick, (e, g)) in expected.iter().zip(&got).enumerate() {
        if let Some(i) = e.iter().zip(g).position(|(a, b)| a != b) {
            panic!("{axes:?}, tick {tick}: first differing texel {i} ({}, {}): direct {} app {}", i % 64, i / 64, e[i], g[i]);
        }
    }
    // The comparison sees the transforms: the unturned, unscaled shapes
    // (what reading the local translation alone gave) occlude otherwise.
    let local = direct(|tick| {
        let (at, _) = hinge(tick);
        vec![(at + Vec3::new(DOOR_OFFSET, 0.0, 0.0), door()), (BUILDING_AT, footprint()), (TOWER_AT, tower())]
    });
    let differ = local.iter().zip(&expected).filter(|(l, e)| l != e).count();
    assert!(differ >= TICKS as usize - 1, "{axes:?}: the turned and scaled shapes change the mask on {differ} of {TICKS} ticks");
}

#[test]
fn a_turning_door_and_a_scaled_turned_building_occlude_as_their_world_shapes() {
    check(FogAxes::XY, Vec2::splat(1.5));
}

#[test]
fn the_same_in_y_up_axes_with_an_unevenly_scaled_tower() {
    check(FogAxes::YUp, Vec2::new(2.0, 0.75));
}

/// A headless app on the CPU with the standard instance, one tick per frame.
fn cpu_app() -> App {
    let mut app = App::new();
    let dt = Duration::from_micros(u64::from(DT_US));
    app.add_plugins(MinimalPlugins)
        .insert_resource(Time::<Fixed>::from_duration(dt))
        .insert_resource(TimeUpdateStrategy::ManualDuration(dt))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(desc())));
    app
}

#[test]
fn a_child_blocker_follows_its_parent_within_the_tick() {
    let mut app = cpu_app();
    let parent = app.world_mut().spawn(Transform::from_xyz(10.0, 10.0, 0.0)).id();
    let child = app.world_mut().spawn((ChildOf(parent), Transform::from_xyz(2.0, 0.0, 0.0), FogBlocker(tower()))).id();
    step(&mut app);
    let mirrored = |app: &App| {
        let mirror = app.world().resource::<FogMirror>();
        let h = mirror.hecs_entity(child).expect("the child is mirrored");
        mirror.world().get::<&Position>(h).unwrap().0
    };
    assert_eq!(mirrored(&app), Vec3::new(12.0, 10.0, 0.0));
    // Only the parent moves; the child's own transform is untouched.
    app.world_mut().get_mut::<Transform>(parent).unwrap().translation = Vec3::new(30.0, 20.0, 0.0);
    step(&mut app);
    assert_eq!(mirrored(&app), Vec3::new(32.0, 20.0, 0.0), "the tick after the parent moved, murk has the child where it is now");
}

/// A `ShowOnly` capture recaptures when a member turns or is scaled, not
/// only when it moves: the mirror hands murk the members' rotation and scale.
#[test]
fn a_capture_recaptures_when_a_member_turns_or_is_scaled() {
    let mut app = cpu_app();
    app.world_mut().spawn((Transform::from_xyz(20.0, 20.0, 0.0), FogVision::new(10.0)));
    let member = app.world_mut().spawn((Transform::from_xyz(30.0, 20.0, 0.0), FogBlocker(tower()))).id();
    let mut cells = vec![f32::NAN; 64 * 64];
    cells[20 * 64 + 30] = 3.0;
    let mode = murk_core::CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true };
    let capture = murk_core::HeightCapture { origin: Vec2::ZERO, cell_size: 1.0, width: 64, height: 64, cells, mode, enabled: true };
    app.world_mut().spawn((Transform::default(), FogCapture { capture, members: vec![member] }));
    let recaptures = |app: &mut App| app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().stats("ground").unwrap().recaptures;
    for _ in 0..3 {
        step(&mut app);
    }
    let settled = recaptures(&mut app);
    step(&mut app);
    assert_eq!(recaptures(&mut app), settled, "nothing changed, nothing recaptured");
    app.world_mut().get_mut::<Transform>(member).unwrap().rotation = Quat::from_rotation_z(0.7);
    step(&mut app);
    assert_eq!(recaptures(&mut app), settled + 1, "the member turned");
    step(&mut app);
    assert_eq!(recaptures(&mut app), settled + 1);
    app.world_mut().get_mut::<Transform>(member).unwrap().scale = Vec3::new(2.0, 1.0, 1.0);
    step(&mut app);
    assert_eq!(recaptures(&mut app), settled + 2, "the member was scaled");
}
