//! Sight lines on every backend: a line agrees with the visibility a lone
//! source at its start gives at its end, every backend and thread count
//! traces the same lights, a pending batch survives a snapshot, and bad
//! lines are named errors that change nothing.

use super::properties::{config, coord, eighths, fog_for, method, spawn_world, u16s, world_with, GenWorld, IDENTITY};
use super::{Make, Test};
use murk_conformance::scene::landed_lines;
use murk_core::glam::Vec3;
use murk_core::hecs::World;
use murk_core::{Backend, FogSubsystem, Position, Profile, SightLine, Texture, VisionSource, MAX_SIGHT_LINES};
use murk_cpu::CpuBackend;
use proptest::prelude::*;

/// The world point at the centre of texel `(x, y)` of a generated world's
/// instance (one unit per texel, centred on the origin).
fn centre(g: &GenWorld, x: u32, y: u32) -> Vec3 {
    Vec3::new(x as f32 - g.width as f32 / 2.0 + 0.5, y as f32 - g.rows as f32 / 2.0 + 0.5, 0.0)
}

/// Lines from `from` (eye `eye` above it) to the centre of every texel, row
/// by row.
fn lines_to_every_texel(g: &GenWorld, from: Vec3, eye: f32) -> Vec<SightLine> {
    (0..g.rows).flat_map(|y| (0..g.width).map(move |x| (x, y))).map(|(x, y)| SightLine { from, to: centre(g, x, y), eye_height: eye }).collect()
}

/// The generated world's blockers with a lone source at `from`, reaching
/// every texel at full strength, ticked once on `make`'s backend.
fn lone_source(make: &Make, g: &GenWorld, from: Vec3, eye: f32) -> FogSubsystem {
    let mut fog = fog_for(make, g, IDENTITY);
    let mut world = World::new();
    spawn_world(g, IDENTITY, &mut world);
    let mut source = VisionSource::new(2.0 * (g.width + g.rows) as f32);
    source.falloff = Some(0.0);
    source.eye_height = eye;
    world.spawn((Position(from), source));
    fog.tick(&mut world, 50_000).unwrap();
    fog
}

pub fn a_sight_line_agrees_with_a_lone_source(make: &Make) {
    let strategy = world_with(false, method().boxed()).prop_flat_map(|g| {
        let (w, h) = (g.width, g.rows);
        (Just(g), coord(w / 2), coord(h / 2), 0u32..48)
    });
    proptest!(config(), |((g, fx, fy, eye_tenths) in strategy)| {
        // No source of its own, no blur and no lit wall faces: the raw
        // visibility of the lone source is its ray's light at every texel.
        let g = GenWorld { sources: Vec::new(), blur_radius: 0, reveal_walls: false, ..g };
        let (from, eye) = (Vec3::new(eighths(fx), eighths(fy), 0.0), eye_tenths as f32 / 10.0);
        let mut fog = lone_source(make, &g, from, eye);
        let visibility = fog.read_texture("i", Texture::Visibility).unwrap();
        let lines = lines_to_every_texel(&g, from, eye);
        let answers = fog.sight_lines_now("i", &lines).unwrap();
        let lights: Vec<u16> = answers.iter().map(|a| a.light).collect();
        prop_assert_eq!(&lights[..], u16s(&visibility), "the lights of lines from the source are its visibility");
        let cutoff = murk_core::fixed::unit_to_mask(f64::from(Profile::default().visibility_cutoff));
        prop_assert!(answers.iter().all(|a| a.visible == (a.light >= cutoff)));
        // The reference backend traces the same lights.
        let reference = || -> Box<dyn Backend> { Box::new(CpuBackend::new(1).unwrap()) };
        let mut cpu = lone_source(&reference, &g, from, eye);
        prop_assert_eq!(cpu.sight_lines_now("i", &lines).unwrap(), answers);
    });
}

pub fn a_pending_batch_survives_a_snapshot(make: &Make) {
    let mut fog = murk_conformance::scene::fog(make(), Profile::default());
    let mut world = World::new();
    world.spawn((
        Position(Vec3::new(32.0, 20.0, 0.0)),
        murk_core::Blocker::wall(murk_core::BlockerShape::Rect { size: murk_core::glam::Vec2::new(16.0, 2.0), yaw_degrees: 0.0 }),
    ));
    fog.tick(&mut world, 50_000).unwrap();
    let lines: Vec<SightLine> =
        (0..64).map(|x| SightLine { from: Vec3::new(32.5, 5.5, 0.0), to: Vec3::new(x as f32 + 0.5, 40.5, 0.0), eye_height: 1.0 }).collect();
    let handle = fog.submit_sight_lines("i", &lines).unwrap();
    let bytes = fog.snapshot(&world).unwrap();
    let mut restored = FogSubsystem::new(make());
    restored.restore(&mut world, &bytes).unwrap();
    let want = landed_lines(&mut fog, handle);
    assert_eq!(landed_lines(&mut restored, handle), want, "the restored batch answers as the original");
    // The wall (x in 24..40, y in 19..21) hides the far side straight
    // ahead, not past its ends.
    assert!(!want[32].visible && want[32].light == 0, "{:?}", want[32]);
    assert!(want[0].visible && want[63].visible, "{:?} {:?}", want[0], want[63]);
    assert!(fog.poll_sight_lines(handle).is_err(), "a delivered handle is unknown");
}

pub fn bad_sight_lines_are_named_and_change_nothing(make: &Make) {
    let mut fog = murk_conformance::scene::fog(make(), Profile::default());
    let mut world = World::new();
    let line = SightLine { from: Vec3::new(10.5, 10.5, 0.0), to: Vec3::new(50.5, 30.5, 0.0), eye_height: 1.0 };
    let error = fog.submit_sight_lines("i", &[line]).unwrap_err().to_string();
    assert!(error.contains("no occlusion built yet"), "{error}");
    fog.tick(&mut world, 50_000).unwrap();
    let first = fog.submit_sight_lines("i", &[line]).unwrap();
    let cases: Vec<(Vec<SightLine>, &str)> = vec![
        (vec![line, SightLine { from: Vec3::new(f32::NAN, 0.0, 0.0), ..line }], "lines[1].from.x"),
        (vec![SightLine { to: Vec3::new(70.0, 3.0, 0.0), ..line }], "lines[0].to"),
        (vec![SightLine { from: Vec3::new(-0.5, 3.0, 0.0), ..line }], "lines[0].from"),
        (vec![SightLine { to: Vec3::new(3.0, 3.0, f32::INFINITY), ..line }], "lines[0].to.z"),
        (vec![SightLine { eye_height: f32::NAN, ..line }], "lines[0].eye_height"),
        (vec![SightLine { eye_height: 1.0e9, ..line }], "lines[0].eye_height"),
    ];
    for (lines, field) in cases {
        let error = fog.submit_sight_lines("i", &lines).unwrap_err().to_string();
        assert!(error.contains(field), "{field}: {error}");
    }
    let error = fog.submit_sight_lines("nope", &[line]).unwrap_err().to_string();
    assert!(error.contains("nope"), "{error}");
    let error = fog.submit_sight_lines("i", &vec![line; MAX_SIGHT_LINES + 1]).unwrap_err().to_string();
    assert!(error.contains("lines") && error.contains(&(MAX_SIGHT_LINES + 1).to_string()), "{error}");
    // A handle of the other kind is refused and stays pending.
    let error = fog.poll_mask_query(first).unwrap_err().to_string();
    assert!(error.contains("sight-line batch"), "{error}");
    let mask = fog.submit_mask_query(&[Vec3::new(10.5, 10.5, 0.0)], None).unwrap();
    assert_eq!(mask.0, first.0 + 1, "no refused batch took a handle");
    let error = fog.poll_sight_lines(mask).unwrap_err().to_string();
    assert!(error.contains("mask query"), "{error}");
    assert_eq!(landed_lines(&mut fog, first).len(), 1);
    assert!(murk_conformance::scene::landed(&mut fog, mask).len() == 1);
}

pub const TESTS: &[Test] = &[
    ("a_sight_line_agrees_with_a_lone_source", a_sight_line_agrees_with_a_lone_source),
    ("a_pending_batch_survives_a_snapshot", a_pending_batch_survives_a_snapshot),
    ("bad_sight_lines_are_named_and_change_nothing", bad_sight_lines_are_named_and_change_nothing),
];
