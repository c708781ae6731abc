//! The recompute rules, transient reveals, and bad input.

use super::{Make, Test};
use murk_conformance::scene::{desc, fog as fog_on};
use murk_core::glam::{Quat, Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_core::{
    pass_outputs, Blocker, BlockerShape, CaptureMode, FogSubsystem, HeightCapture, MurkError, Pose, Position, Profile, Texture, TransientReveal,
    VisionSource,
};

fn fast() -> Profile {
    Profile { fade_in_rate: 1.0e4, relax_rate: 1.0e4, ..Profile::default() }
}

pub fn a_static_scene_skips_recomputes_once_settled(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    world.spawn((Position(Vec3::new(25.0, 20.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 1.5 })));
    for _ in 0..10 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    let s = fog.stats("i").unwrap();
    assert_eq!(s.occlusion_builds, 1);
    // Tick 0 recomputes and tick 1 finds nothing left to change; the rules
    // learn each result two ticks later (the readback latency), so tick 2
    // still recomputes (tick 0 changed the masks), tick 3 learns that tick 1
    // changed nothing, and the rest skip.
    assert_eq!(murk_core::READBACK_LATENCY_TICKS, 2);
    assert_eq!(s.recomputes, 3, "{s:?}");
    assert_eq!(s.skipped_recomputes, 7);
}

pub fn slow_fades_keep_recomputing_until_settled(make: &Make) {
    let mut fog = fog_on(make(), Profile { fade_in_rate: 1.0, ..Profile::default() });
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    for _ in 0..10 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    assert_eq!(fog.stats("i").unwrap().recomputes, 10);
}

pub fn a_fade_over_a_static_scene_keeps_visibility_and_gives_the_same_bytes(make: &Make) {
    // One subsystem follows the rules; the other is invalidated every tick,
    // so it recomputes everything. While the fade runs, the first keeps
    // visibility and blur (nothing they read changed) and must still match.
    let (mut kept, mut full) =
        (fog_on(make(), Profile { fade_in_rate: 1.0, ..Profile::default() }), fog_on(make(), Profile { fade_in_rate: 1.0, ..Profile::default() }));
    let mut world = World::new();
    let src = world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    let wall = world.spawn((Position(Vec3::new(25.0, 20.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 1.5 })));
    let mut reused = Vec::new();
    for tick in 0..12 {
        match tick {
            5 => world.get::<&mut Position>(src).unwrap().0.x = 21.0,
            8 => world.get::<&mut Position>(wall).unwrap().0.y = 22.0,
            10 => kept.apply_profile("i", Profile { fade_in_rate: 1.0, blur_radius: 2, ..Profile::default() }).unwrap(),
            _ => {}
        }
        if tick == 10 {
            full.apply_profile("i", Profile { fade_in_rate: 1.0, blur_radius: 2, ..Profile::default() }).unwrap();
        }
        full.invalidate("i").unwrap();
        let r = kept.tick(&mut world, 33_333).unwrap();
        let f = full.tick(&mut world, 33_333).unwrap();
        assert!(r.instances["i"].recomputed && !f.instances["i"].visibility_reused);
        reused.push(r.instances["i"].visibility_reused);
        for row in pass_outputs() {
            assert_eq!(kept.read_row("i", row).unwrap(), full.read_row("i", row).unwrap(), "tick {tick}, texture {}", row.name);
        }
    }
    // Kept except on the first tick, after the source moved (5), the wall
    // moved (8) and the blur changed (10).
    let expected: Vec<bool> = (0..12).map(|t| ![0, 5, 8, 10].contains(&t)).collect();
    assert_eq!(reused, expected);
}

pub fn moving_a_blocker_rebuilds_occlusion_and_moving_a_source_does_not(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    let src = world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    let wall = world.spawn((Position(Vec3::new(25.0, 20.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 1.5 })));
    fog.tick(&mut world, 33_333).unwrap();
    world.get::<&mut Position>(src).unwrap().0.x = 21.0;
    let r = fog.tick(&mut world, 33_333).unwrap();
    assert!(r.instances["i"].recomputed && !r.instances["i"].occlusion_built);
    world.get::<&mut Position>(wall).unwrap().0.y = 22.0;
    let r = fog.tick(&mut world, 33_333).unwrap();
    assert!(r.instances["i"].recomputed && r.instances["i"].occlusion_built);
    world.despawn(wall).unwrap();
    let r = fog.tick(&mut world, 33_333).unwrap();
    assert!(r.instances["i"].occlusion_built, "removing a blocker dirties occlusion");
    assert_eq!(fog.stats("i").unwrap().occlusion_builds, 3);
}

fn capture(mode: CaptureMode) -> HeightCapture {
    let mut cells = vec![f32::NAN; 64 * 64];
    cells[20 * 64 + 30] = 3.0;
    HeightCapture { origin: Vec2::ZERO, cell_size: 1.0, width: 64, height: 64, cells, mode, enabled: true }
}

pub fn show_only_capture_recaptures_only_when_a_member_moves(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    let member = world.spawn((Position(Vec3::new(30.0, 20.0, 0.0)),));
    world.spawn((capture(CaptureMode::ShowOnly { members: vec![member], update_only_if_transform_changed: true }),));
    for _ in 0..5 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    assert_eq!(fog.stats("i").unwrap().recaptures, 1);
    world.get::<&mut Position>(member).unwrap().0.x = 31.0;
    let r = fog.tick(&mut world, 33_333).unwrap();
    // Recaptured; the heights came out the same, so nothing is rebuilt.
    assert!(!r.instances["i"].occlusion_built);
    assert_eq!(fog.stats("i").unwrap().recaptures, 2);
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.stats("i").unwrap().recaptures, 2);
    fog.mark_capture_dirty();
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.stats("i").unwrap().recaptures, 3);
    let cov = fog.read_texture("i", Texture::Coverage).unwrap().bytes();
    assert_eq!(cov[20 * 64 + 30], 1);
    // Turning or scaling a member recaptures as moving it does.
    let pose = Pose { rotation: Quat::IDENTITY, scale: Vec3::ONE };
    world.insert_one(member, pose).unwrap();
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.stats("i").unwrap().recaptures, 4, "a pose given");
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.stats("i").unwrap().recaptures, 4, "nothing changed");
    world.get::<&mut Pose>(member).unwrap().rotation = Quat::from_rotation_z(0.5);
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.stats("i").unwrap().recaptures, 5, "turned");
    world.get::<&mut Pose>(member).unwrap().scale = Vec3::new(2.0, 1.0, 1.0);
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.stats("i").unwrap().recaptures, 6, "scaled");
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.stats("i").unwrap().recaptures, 6);
}

/// A disabled capture counts as absent: its heights leave the occlusion,
/// and come back when it is enabled again.
pub fn a_disabled_capture_leaves_the_occlusion_until_enabled(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    let c = world.spawn((capture(CaptureMode::FullScene),));
    let covered = |fog: &mut FogSubsystem| fog.read_texture("i", Texture::Coverage).unwrap().bytes()[20 * 64 + 30];
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(covered(&mut fog), 1);
    world.get::<&mut HeightCapture>(c).unwrap().enabled = false;
    let r = fog.tick(&mut world, 33_333).unwrap();
    assert!(r.instances["i"].occlusion_built);
    assert_eq!(covered(&mut fog), 0, "disabled: as if absent");
    let recaptures = fog.stats("i").unwrap().recaptures;
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.stats("i").unwrap().recaptures, recaptures, "a disabled capture is not resampled");
    world.get::<&mut HeightCapture>(c).unwrap().enabled = true;
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(covered(&mut fog), 1, "enabled again");
}

pub fn full_scene_capture_recaptures_every_recompute(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    world.spawn((capture(CaptureMode::FullScene),));
    for _ in 0..4 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    let s = fog.stats("i").unwrap();
    // Resampled every tick; the heights never changed, so the occlusion
    // was built once.
    assert_eq!((s.recaptures, s.occlusion_builds), (4, 1));
    // A cell that rises shows on the next recapture, rebuilt where it is.
    let c = world.query::<(Entity, &HeightCapture)>().iter().next().map(|(e, _)| e).unwrap();
    world.get::<&mut HeightCapture>(c).unwrap().cells[40 * 64 + 10] = 2.0;
    let r = fog.tick(&mut world, 33_333).unwrap();
    assert!(r.instances["i"].occlusion_built && r.instances["i"].occlusion_local);
    assert_eq!(fog.read_texture("i", Texture::Coverage).unwrap().bytes()[40 * 64 + 10], 1);
    assert_eq!(fog.stats("i").unwrap().occlusion_builds, 2);
}

/// A terrain edit marked dirty over a rectangle is resampled there only
/// and rebuilt locally; a rectangle that is not finite, is inverted or
/// meets no grid is refused and marks nothing.
pub fn a_capture_rectangle_marked_dirty_is_rebuilt_there(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    let c = world.spawn((capture(CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true }),));
    fog.tick(&mut world, 33_333).unwrap();
    let covered = |fog: &mut FogSubsystem, i: usize| fog.read_texture("i", Texture::Coverage).unwrap().bytes()[i];
    assert_eq!(covered(&mut fog, 20 * 64 + 30), 1);
    // Two edits; only the first is marked.
    {
        let mut cap = world.get::<&mut HeightCapture>(c).unwrap();
        cap.cells[20 * 64 + 30] = f32::NAN;
        cap.cells[50 * 64 + 50] = 1.0;
    }
    for (min, max, field) in [
        (Vec2::new(f32::NAN, 0.0), Vec2::new(1.0, 1.0), "capture rectangle min.x"),
        (Vec2::new(5.0, 5.0), Vec2::new(4.0, 6.0), "capture rectangle max.x"),
        (Vec2::new(500.0, 500.0), Vec2::new(510.0, 510.0), "capture rectangle"),
    ] {
        let e = fog.mark_capture_dirty_in(min, max).unwrap_err();
        assert!(e.to_string().contains(field), "{e}");
    }
    let r = fog.tick(&mut world, 33_333).unwrap();
    assert!(!r.instances["i"].occlusion_built, "a refused mark marks nothing");
    fog.mark_capture_dirty_in(Vec2::new(29.5, 19.5), Vec2::new(31.0, 21.0)).unwrap();
    let r = fog.tick(&mut world, 33_333).unwrap();
    assert!(r.instances["i"].occlusion_local);
    assert_eq!(covered(&mut fog, 20 * 64 + 30), 0, "the marked edit");
    assert_eq!(covered(&mut fog, 50 * 64 + 50), 0, "the unmarked edit is not seen yet");
    fog.mark_capture_dirty();
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(covered(&mut fog, 50 * 64 + 50), 1, "a whole recapture sees it");
}

pub fn transient_reveals_expire_after_their_ticks(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    let flare = world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(5.0), TransientReveal { remaining_ticks: 2 }));
    fog.tick(&mut world, 33_333).unwrap();
    fog.tick(&mut world, 33_333).unwrap();
    assert!(!world.contains(flare));
    let vis = fog.read_texture("i", Texture::Visibility).unwrap().bytes();
    assert!(vis.iter().any(|&b| b != 0), "revealed while alive");
    fog.tick(&mut world, 33_333).unwrap();
    assert!(fog.read_texture("i", Texture::Visibility).unwrap().bytes().iter().all(|&b| b == 0));
}

fn rejects<R>(make: &Make, world_edit: impl FnOnce(&mut World) -> R, needle: &str) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    for _ in 0..3 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    let before: Vec<_> = pass_outputs().map(|row| fog.read_row("i", row).unwrap()).collect();
    let stats = fog.stats("i").unwrap();
    world_edit(&mut world);
    let e = fog.tick(&mut world, 33_333).unwrap_err();
    assert!(e.to_string().contains(needle), "`{e}` should mention `{needle}`");
    let after: Vec<_> = pass_outputs().map(|row| fog.read_row("i", row).unwrap()).collect();
    assert_eq!(before, after, "a rejected tick changes no texture");
    assert_eq!(stats, fog.stats("i").unwrap());
}

pub fn bad_world_input_is_an_error_naming_the_field_and_loses_nothing(make: &Make) {
    rejects(make, |w| w.spawn((Position(Vec3::new(f32::NAN, 1.0, 0.0)), VisionSource::new(3.0))), "position.x = NaN");
    rejects(make, |w| w.spawn((Position(Vec3::new(1.0, f32::INFINITY, 0.0)), VisionSource::new(3.0))), "position.y = inf");
    rejects(make, |w| w.spawn((Position(Vec3::new(1.0, 1.0, 0.0)), VisionSource::new(-3.0))), "source.radius = -3");
    rejects(make, |w| w.spawn((Position(Vec3::new(1.0, 1.0, 0.0)), VisionSource::new(5000.0))), "source.radius = 5000");
    rejects(
        make,
        |w| {
            let mut s = VisionSource::new(3.0);
            s.falloff = Some(1.5);
            w.spawn((Position(Vec3::new(1.0, 1.0, 0.0)), s))
        },
        "source.falloff = 1.5",
    );
    rejects(make, |w| w.spawn((Position(Vec3::new(1.0, 1.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: f32::NAN }))), "circle.radius = NaN");
    rejects(
        make,
        |w| w.spawn((Position(Vec3::new(1.0, 1.0, 0.0)), Blocker::wall(BlockerShape::Polygon { points: vec![Vec2::ZERO, Vec2::X] }))),
        "polygon.points = 2",
    );
    rejects(
        make,
        |w| {
            let ghost = w.spawn((Position(Vec3::ZERO),));
            w.despawn(ghost).unwrap();
            w.spawn((capture(CaptureMode::ShowOnly { members: vec![ghost], update_only_if_transform_changed: true }),));
        },
        "unknown entity",
    );
}

pub fn bad_instances_and_profiles_are_errors_naming_the_field(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut d = desc(fast());
    d.name = "zero".into();
    d.area.extents.x = 0.0;
    assert!(fog.create_instance(d).unwrap_err().to_string().contains("area.extents.x = 0"));
    let mut d = desc(fast());
    d.name = "huge".into();
    d.resolution = 100_000;
    assert!(fog.create_instance(d).unwrap_err().to_string().contains("resolution = 100000"));
    assert_eq!(fog.create_instance(desc(fast())).unwrap_err(), MurkError::DuplicateInstance("i".into()));
    assert_eq!(fog.apply_profile("nope", fast()).unwrap_err(), MurkError::UnknownInstance("nope".into()));
    assert_eq!(fog.destroy_instance("nope").unwrap_err(), MurkError::UnknownInstance("nope".into()));
    let e = fog.apply_profile("i", Profile { blur_sigma: -1.0, ..fast() }).unwrap_err();
    assert!(e.to_string().contains("profile.blur_sigma = -1"), "{e}");
    assert_eq!(fog.instance("i").unwrap().profile, fast(), "a rejected profile leaves the old one");
    assert!(fog.expand_area_to_include("i", Vec3::new(f32::NAN, 0.0, 0.0)).unwrap_err().to_string().contains("point.x = NaN"));
    assert_eq!(fog.instance_names(), vec!["i".to_string()]);
}

pub fn malformed_scenarios_are_errors_with_position_or_field(make: &Make) {
    let e = Scenario::parse("{\"name\": \"x\", \"ticks\": 3,\n \"instances\": [}", "json", "bad.json").unwrap_err();
    assert!(e.to_string().contains("bad.json") && e.to_string().contains("line 2"), "{e}");
    let e = Scenario::parse("(name: \"x\", ticks: 1, instances: [], bogus: 3)", "ron", "bad.ron").unwrap_err();
    assert!(e.to_string().contains("bogus"), "{e}");
    let base = r#"{"name": "x", "ticks": 2, "instances": [{"name": "i", "area": {"center": [0,0,0], "extents": [10,10,10]}, "resolution": 16}],
                   "sources": [{"id": "a", "position": [0,0,0], "source": {"radius": 3}}], "events": EVENTS}"#;
    let run = |events: &str| {
        let s = Scenario::parse(&base.replace("EVENTS", events), "json", "s.json").unwrap();
        ScenarioRunner::new(s, &ScenarioFiles::default(), make()).err().map(|e| e.to_string())
    };
    assert_eq!(run("[]"), None);
    let e = run(r#"[{"tick": 1, "action": {"move": {"id": "zz", "position": [0,0,0]}}}]"#).unwrap();
    assert!(e.contains("events[0].action.id = zz"), "{e}");
    let e = run(r#"[{"tick": 1, "action": {"toggle": {"instance": "j", "setting": "freeze_state", "value": true}}}]"#).unwrap();
    assert!(e.contains("events[0].action.instance = j"), "{e}");
    let s = Scenario::parse(&base.replace("EVENTS", "[]").replace("\"radius\": 3", "\"radius\": -3"), "json", "s.json").unwrap();
    let e = ScenarioRunner::new(s, &ScenarioFiles::default(), make()).err().unwrap();
    assert!(e.to_string().contains("sources[0].source.radius = -3"), "{e}");
    let s = Scenario::parse(&base.replace("EVENTS", "[]").replace("\"resolution\": 16", "\"resolution\": 9000"), "json", "s.json").unwrap();
    let e = ScenarioRunner::new(s, &ScenarioFiles::default(), make()).err().unwrap();
    assert!(e.to_string().contains("instances[0].resolution = 9000"), "{e}");
}

pub fn shader_params_carry_the_material_block(make: &Make) {
    let mut fog = fog_on(make(), Profile { z_layering: true, z_layering_area_scale: 3.0, visibility_cutoff: 0.6, ..fast() });
    let p = fog.shader_params("i").unwrap();
    assert_eq!(p.center, [32.0, 32.0, 5.0]);
    assert_eq!(p.size, [64.0, 64.0, 10.0], "the visual slab, not widened by the area scale");
    assert_eq!((p.enabled, p.use_z_layering, p.visibility_cutoff), (1.0, 1.0, 0.6));
    fog.apply_profile("i", Profile { show_fog: false, ..fast() }).unwrap();
    let p = fog.shader_params("i").unwrap();
    assert_eq!((p.enabled, p.use_z_layering), (0.0, 0.0));
    assert_eq!(size_of::<murk_core::ShaderParams>(), 48);
    assert!(fog.shader_params("nope").is_err());
}

/// The composed mask at texel (20, 20), where the tests put their source.
fn composed_at_source(fog: &mut FogSubsystem) -> u16 {
    match fog.read_texture("i", Texture::Compose).unwrap().data {
        murk_core::TextureData::U16(v) => v[20 * 64 + 20],
        other => panic!("composed mask has type {other:?}"),
    }
}

pub fn a_pause_before_the_first_fade_does_not_freeze_it(make: &Make) {
    for pause_dt in [0, 1] {
        let mut fog = fog_on(make(), Profile::default());
        let mut world = World::new();
        world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(10.0)));
        fog.tick(&mut world, pause_dt).unwrap();
        fog.tick(&mut world, pause_dt).unwrap();
        for _ in 0..30 {
            fog.tick(&mut world, 33_333).unwrap();
        }
        assert_eq!(composed_at_source(&mut fog), 65535, "pause with dt = {pause_dt} µs");
    }
}

pub fn a_pause_mid_fade_does_not_freeze_it(make: &Make) {
    for pause_dt in [0, 1] {
        let mut fog = fog_on(make(), Profile { fade_in_rate: 1.0, ..Profile::default() });
        let mut world = World::new();
        world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(10.0)));
        for _ in 0..5 {
            fog.tick(&mut world, 33_333).unwrap();
        }
        // The first paused tick still spends the time of the tick before it.
        fog.tick(&mut world, pause_dt).unwrap();
        let before = composed_at_source(&mut fog);
        assert!(before > 0 && before < 65535, "mid-fade: {before}");
        for _ in 0..10 {
            fog.tick(&mut world, pause_dt).unwrap();
        }
        assert_eq!(composed_at_source(&mut fog), before, "a pause does not move the fade");
        for _ in 0..60 {
            fog.tick(&mut world, 33_333).unwrap();
        }
        assert_eq!(composed_at_source(&mut fog), 65535, "pause with dt = {pause_dt} µs");
        // Once the fade is done the instance settles again.
        let skipped = fog.stats("i").unwrap().skipped_recomputes;
        fog.tick(&mut world, 33_333).unwrap();
        fog.tick(&mut world, 33_333).unwrap();
        assert!(fog.stats("i").unwrap().skipped_recomputes > skipped);
    }
}

fn far_fine_instance() -> murk_core::InstanceDesc {
    murk_core::InstanceDesc {
        name: "far".into(),
        area: murk_core::Area { center: Vec3::new(10_000.0, 10_000.0, 5.0), extents: Vec3::new(8.0, 8.0, 10.0), yaw_degrees: 0.0 },
        resolution: 2048,
        ..desc(Profile::default())
    }
}

pub fn a_far_fine_instance_does_not_judge_sources_it_cannot_see(make: &Make) {
    let mut fog = fog_on(make(), fast());
    fog.create_instance(far_fine_instance()).unwrap();
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(20.0)));
    for _ in 0..3 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    // A source that does reach the far instance is judged there, and the
    // error names that instance; nothing was changed by the failed tick.
    let before = fog.state_hash("i").unwrap();
    let e = world.spawn((Position(Vec3::new(10_000.0, 10_000.0, 0.0)), VisionSource::new(20.0)));
    let err = fog.tick(&mut world, 33_333).unwrap_err().to_string();
    assert!(err.contains(&format!("instance `far`: entity {}.source.radius = 20", e.id())), "{err}");
    assert!(err.contains("5120 texels"), "{err}");
    assert_eq!(fog.state_hash("i").unwrap(), before);
}

pub fn degenerate_areas_are_rejected_at_creation_naming_the_instance(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut d = desc(Profile::default());
    d.name = "tiny".into();
    d.area.extents = Vec3::new(1e-30, 1e-30, 10.0);
    let err = fog.create_instance(d.clone()).unwrap_err().to_string();
    assert!(err.contains("instance `tiny`.area.extents.x = 0.000000000000000000000000000001"), "{err}");
    d.area.extents = Vec3::new(64.0, 64.0, 1e-30);
    let err = fog.create_instance(d.clone()).unwrap_err().to_string();
    assert!(err.contains("instance `tiny`.area.extents.z"), "{err}");
    // set_area refuses it too and keeps the old area.
    let mut area = fog.instance("i").unwrap().area;
    area.extents = Vec3::new(1e-30, 1e-30, 10.0);
    let err = fog.set_area("i", area).unwrap_err().to_string();
    assert!(err.contains("instance `i`.area.extents.x"), "{err}");
    assert_eq!(fog.instance("i").unwrap().area.extents.x, 64.0);
    assert_eq!(fog.instance_names(), vec!["i".to_string()]);
}

pub fn a_radius_rejected_after_rounding_says_what_was_rounded(make: &Make) {
    let mut fog = fog_on(make(), fast());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(4095.0625)));
    let err = fog.tick(&mut world, 33_333).unwrap_err().to_string();
    assert!(err.contains("is 4095.0625 texels"), "{err}");
    assert!(err.contains("4095.125 after rounding to 1/8 texel; at most 4095"), "{err}");
}

const SCENARIO: &str = r#"{"name": "x", "ticks": TICKS, "instances": [{"name": "i", "area": {"center": [0,0,0], "extents": [10,10,10]}, "resolution": 16}],
    "sources": [{"id": "a", "position": [0,0,0], "source": {"radius": 3}}, {"id": "late", "position": [1,1,0], "source": {"radius": 2}, "spawn_tick": SPAWN}],
    "blockers": [{"id": "wall", "position": [2,2,0], "blocker": {"shape": {"circle": {"radius": 1}}}, "spawn_tick": 1 DESPAWN}],
    "events": EVENTS}"#;

fn scenario_error(make: &Make, ticks: &str, spawn: &str, despawn: &str, events: &str, edit: impl Fn(&mut Scenario)) -> Option<String> {
    let text = SCENARIO.replace("TICKS", ticks).replace("DESPAWN", despawn).replace("SPAWN", spawn).replace("EVENTS", events);
    let mut s = Scenario::parse(&text, "json", "s.json").unwrap();
    edit(&mut s);
    ScenarioRunner::new(s, &ScenarioFiles::default(), make()).err().map(|e| e.to_string())
}

pub fn a_scenario_is_checked_whole_before_tick_0(make: &Make) {
    assert_eq!(scenario_error(make, "5", "3", "", "[]", |_| {}), None);
    // A bad source that spawns late fails before the first tick.
    let e = scenario_error(make, "200000", "199999", "", "[]", |s| s.sources[1].component.falloff = Some(2.0)).unwrap();
    assert!(e.contains("sources[1].source.falloff = 2"), "{e}");
    let e = scenario_error(make, "5", "3", "", "[]", |s| s.sources[1].component.team = 64).unwrap();
    assert!(e.contains("sources[1].source.team = 64"), "{e}");
    let e = scenario_error(make, "5", "3", "", "[]", |s| s.blockers[0].component.shape = BlockerShape::Polygon { points: vec![] }).unwrap();
    assert!(e.contains("blockers[0].blocker.shape.polygon.points = 0"), "{e}");
    let e = scenario_error(make, "0", "0", "", "[]", |_| {}).unwrap();
    assert!(e.contains("ticks = 0"), "{e}");
    let e = scenario_error(make, "5", "5", "", "[]", |_| {}).unwrap();
    assert!(e.contains("sources[1].spawn_tick = 5") && e.contains("never spawn"), "{e}");
    let e = scenario_error(make, "5", "3", ", \"despawn_tick\": 1", "[]", |_| {}).unwrap();
    assert!(e.contains("blockers[0].despawn_tick = 1") && e.contains("despawn before spawn"), "{e}");
    let e = scenario_error(make, "5", "3", "", r#"[{"tick": 5, "action": "mark_capture_dirty"}]"#, |_| {}).unwrap();
    assert!(e.contains("events[0].tick = 5") && e.contains("after the last tick (4)"), "{e}");
    let e = scenario_error(make, "5", "3", "", r#"[{"tick": 2, "action": {"despawn": {"id": "late"}}}]"#, |_| {}).unwrap();
    assert!(e.contains("events[0].tick = 2") && e.contains("before it spawns at tick 3"), "{e}");
    // Events are checked as create_instance checks an instance: a bad area,
    // texels too small, a target height beyond the slab.
    let set_area = |extents: &str| {
        format!(r#"[{{"tick": 2, "action": {{"set_area": {{"instance": "i", "area": {{"center": [0,0,0], "extents": {extents}}}}}}}}}]"#)
    };
    for (events, needle) in [
        (set_area("[10,0,10]"), "events[0].action.area.extents.y = 0"),
        (set_area("[1e-30,1e-30,10]"), "events[0].action.area.extents.x"),
        (
            r#"[{"tick": 2, "action": {"set_profile": {"instance": "i", "profile": {"target_height": 1e5}}}}]"#.to_string(),
            "events[0].action.profile.target_height",
        ),
    ] {
        let e = scenario_error(make, "5", "3", "", &events, |_| {}).unwrap();
        assert!(e.contains(needle), "{e}");
    }
}

pub fn a_radius_too_long_for_an_instance_is_found_before_tick_0_naming_the_file_entry(make: &Make) {
    let text = SCENARIO.replace("TICKS", "300000").replace("DESPAWN", "").replace("SPAWN", "299999").replace("EVENTS", "[]");
    let mut s = Scenario::parse(&text, "json", "s.json").unwrap();
    s.sources[1].component.radius = 5000.0;
    let e = ScenarioRunner::new(s, &ScenarioFiles::default(), make()).err().unwrap().to_string();
    assert!(e.contains("instance `i`: sources[1] (id `late`).source.radius = 5000"), "{e}");
}

pub fn scenario_tick_errors_name_the_file_entry_not_the_entity_number(make: &Make) {
    // A source that passes through the instance between two far waypoints
    // is judged when it gets there; the error names the file's entry.
    let text = SCENARIO.replace("TICKS", "3").replace("DESPAWN", "").replace("SPAWN", "1").replace("EVENTS", "[]");
    let mut s = Scenario::parse(&text, "json", "s.json").unwrap();
    s.sources[0].component.radius = 5000.0;
    s.sources[0].position = Vec3::new(-100_000.0, 0.0, 0.0);
    s.sources[0].motion = murk_core::scenario::Motion { waypoints: vec![Vec3::new(100_000.0, 0.0, 0.0)], speed: 3.0e6, looped: false };
    let mut runner = ScenarioRunner::new(s, &ScenarioFiles::default(), make()).unwrap();
    runner.step().unwrap();
    let e = runner.step().unwrap_err().to_string();
    assert!(e.contains("instance `i`: sources[0] (id `a`).source.radius = 5000"), "{e}");
    assert!(!e.contains("entity "), "{e}");
}

/// Every test of this suite, by name.
pub const TESTS: &[Test] = &[
    ("a_static_scene_skips_recomputes_once_settled", a_static_scene_skips_recomputes_once_settled),
    ("slow_fades_keep_recomputing_until_settled", slow_fades_keep_recomputing_until_settled),
    ("a_fade_over_a_static_scene_keeps_visibility_and_gives_the_same_bytes", a_fade_over_a_static_scene_keeps_visibility_and_gives_the_same_bytes),
    ("moving_a_blocker_rebuilds_occlusion_and_moving_a_source_does_not", moving_a_blocker_rebuilds_occlusion_and_moving_a_source_does_not),
    ("show_only_capture_recaptures_only_when_a_member_moves", show_only_capture_recaptures_only_when_a_member_moves),
    ("a_disabled_capture_leaves_the_occlusion_until_enabled", a_disabled_capture_leaves_the_occlusion_until_enabled),
    ("full_scene_capture_recaptures_every_recompute", full_scene_capture_recaptures_every_recompute),
    ("a_capture_rectangle_marked_dirty_is_rebuilt_there", a_capture_rectangle_marked_dirty_is_rebuilt_there),
    ("transient_reveals_expire_after_their_ticks", transient_reveals_expire_after_their_ticks),
    ("bad_world_input_is_an_error_naming_the_field_and_loses_nothing", bad_world_input_is_an_error_naming_the_field_and_loses_nothing),
    ("bad_instances_and_profiles_are_errors_naming_the_field", bad_instances_and_profiles_are_errors_naming_the_field),
    ("malformed_scenarios_are_errors_with_position_or_field", malformed_scenarios_are_errors_with_position_or_field),
    ("shader_params_carry_the_material_block", shader_params_carry_the_material_block),
    ("a_pause_before_the_first_fade_does_not_freeze_it", a_pause_before_the_first_fade_does_not_freeze_it),
    ("a_pause_mid_fade_does_not_freeze_it", a_pause_mid_fade_does_not_freeze_it),
    ("a_far_fine_instance_does_not_judge_sources_it_cannot_see", a_far_fine_instance_does_not_judge_sources_it_cannot_see),
    ("degenerate_areas_are_rejected_at_creation_naming_the_instance", degenerate_areas_are_rejected_at_creation_naming_the_instance),
    ("a_radius_rejected_after_rounding_says_what_was_rounded", a_radius_rejected_after_rounding_says_what_was_rounded),
    ("a_scenario_is_checked_whole_before_tick_0", a_scenario_is_checked_whole_before_tick_0),
    (
        "a_radius_too_long_for_an_instance_is_found_before_tick_0_naming_the_file_entry",
        a_radius_too_long_for_an_instance_is_found_before_tick_0_naming_the_file_entry,
    ),
    ("scenario_tick_errors_name_the_file_entry_not_the_entity_number", scenario_tick_errors_name_the_file_entry_not_the_entity_number),
];
