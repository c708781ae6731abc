//! The scenes the behaviour tests build, on any backend: the standard
//! instance `i` (64x64 texels over world `[0, 64]^2`, slab z in `[0, 10]`, one
//! texel per unit), a subsystem holding it, and worlds made from a seed.

use murk_core::fixed::hash2;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::World;
use murk_core::{
    Area, Backend, Blocker, BlockerShape, Cone, FogSubsystem, InstanceDesc, MaskAnswer, Position, Profile, QueryHandle, SightAnswer, TeamMask,
    VisionSource,
};

/// Instance `i` with `profile`.
pub fn desc(profile: Profile) -> InstanceDesc {
    InstanceDesc {
        name: "i".into(),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: 64,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile,
    }
}

/// A subsystem on `backend` holding instance `i` with `profile`.
pub fn fog(backend: Box<dyn Backend>, profile: Profile) -> FogSubsystem {
    let mut fog = FogSubsystem::new(backend);
    fog.create_instance(desc(profile)).expect("the standard instance is valid");
    fog
}

/// Polls a mask query until its readback lands (at once on the CPU, after
/// the device catches up on the GPU), without ticking.
pub fn landed(fog: &mut FogSubsystem, handle: QueryHandle) -> Vec<MaskAnswer> {
    poll_until_landed(handle, || fog.poll_mask_query(handle))
}

/// [`landed`] for a sight-line batch.
pub fn landed_lines(fog: &mut FogSubsystem, handle: QueryHandle) -> Vec<SightAnswer> {
    poll_until_landed(handle, || fog.poll_sight_lines(handle))
}

fn poll_until_landed<T>(handle: QueryHandle, mut poll: impl FnMut() -> murk_core::Result<Option<T>>) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(answers) = poll().expect("a live handle") {
            return answers;
        }
        assert!(start.elapsed().as_secs() < 60, "query {} did not land in a minute", handle.0);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// A world made from a seed: sources with cones and eye heights, blockers of
/// every shape with and without heights.
pub fn seeded_world(seed: i32) -> World {
    let mut world = World::new();
    let h = |i: i32| hash2(i, seed);
    for i in 0..(3 + h(0) % 8) as i32 {
        let mut s = VisionSource::new(4.0 + (h(10 + i) % 200) as f32 / 10.0);
        s.eye_height = (h(20 + i) % 60) as f32 / 10.0;
        s.falloff = Some((h(30 + i) % 80) as f32 / 100.0);
        if h(40 + i) % 3 == 0 {
            s.cone = Some(Cone { yaw_degrees: (h(50 + i) % 360) as f32, half_angle_degrees: 10.0 + (h(60 + i) % 160) as f32 });
        }
        let p = Vec3::new((h(70 + i) % 640) as f32 / 10.0, (h(80 + i) % 480) as f32 / 10.0, 0.0);
        world.spawn((Position(p), s));
    }
    for i in 0..(h(1) % 10) as i32 {
        let shape = match h(100 + i) % 3 {
            0 => BlockerShape::Circle { radius: 1.0 + (h(110 + i) % 40) as f32 / 10.0 },
            1 => BlockerShape::Rect {
                size: Vec2::new(2.0 + (h(120 + i) % 100) as f32 / 10.0, 1.0 + (h(130 + i) % 30) as f32 / 10.0),
                yaw_degrees: (h(140 + i) % 180) as f32,
            },
            _ => BlockerShape::Polygon { points: vec![Vec2::new(0.0, 0.0), Vec2::new(6.0, 1.0), Vec2::new(4.0, 5.0), Vec2::new(1.0, 3.5)] },
        };
        let mut b = Blocker::wall(shape);
        if h(150 + i) % 2 == 0 {
            b.height = Some((h(160 + i) % 80) as f32 / 10.0);
        }
        let p = Vec3::new((h(170 + i) % 600) as f32 / 10.0, (h(180 + i) % 440) as f32 / 10.0, 0.0);
        world.spawn((Position(p), b));
    }
    world
}
