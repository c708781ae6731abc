//! Sensor layers on every backend: a radar instance (layer 1, seeing
//! through walls) takes only radar sources and radar jammers; the sight
//! instance of the same team is unchanged by them; what the radar senses
//! and sight does not are blips, positions only, the same on every backend.

use super::{Make, Test};
use murk_conformance::scene::desc;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::{
    AntiVision, Backend, Blocker, BlockerShape, FogSubsystem, InstanceDesc, Position, Profile, TeamMask, Texture, Tracked, VisionSource,
};
use murk_cpu::CpuBackend;

fn team0() -> TeamMask {
    TeamMask::of(&[0]).unwrap()
}

/// Sight instance `i` and radar instance `radar` (layer 1, through walls,
/// blips up to 2 units off), both of team 0.
fn fog(make: &Make) -> FogSubsystem {
    let mut fog = FogSubsystem::new(make());
    let quick = Profile { fade_in_rate: 1000.0, relax_rate: 1000.0, ..Profile::default() };
    fog.create_instance(InstanceDesc { observed_teams: team0(), ..desc(quick.clone()) }).unwrap();
    let radar = Profile { layer: 1, see_through: true, blip_error: 2.0, ..quick };
    fog.create_instance(InstanceDesc { name: "radar".into(), observed_teams: team0(), ..desc(radar) }).unwrap();
    fog
}

/// A wall down the middle; team 0 watches from the west, with sight and
/// with radar; three units: west (in sight), east (radar only) and east
/// under a radar jammer.
fn world(with_radar: bool) -> (World, [Entity; 3]) {
    let mut world = World::new();
    world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(2.0, 64.0), yaw_degrees: 0.0 })));
    world.spawn((Position(Vec3::new(10.5, 32.5, 0.0)), VisionSource::new(45.0)));
    if with_radar {
        world.spawn((Position(Vec3::new(10.5, 32.5, 0.0)), VisionSource { layer: 1, ..VisionSource::new(50.0) }));
        world.spawn((Position(Vec3::new(54.5, 8.5, 0.0)), VisionSource { layer: 1, ..VisionSource::new(6.0) }));
        world.spawn((Position(Vec3::new(50.5, 50.5, 0.0)), AntiVision { radius: 6.0, falloff: 0.0, targets: team0(), layer: 1 }));
    }
    let west = world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), Tracked::new(0.5)));
    let east = world.spawn((Position(Vec3::new(48.5, 30.5, 0.0)), Tracked::new(0.5)));
    let jammed = world.spawn((Position(Vec3::new(50.5, 50.5, 0.0)), Tracked::new(0.5)));
    (world, [west, east, jammed])
}

fn run(make: &Make, with_radar: bool) -> (FogSubsystem, World, [Entity; 3]) {
    let mut fog = fog(make);
    let (mut world, units) = world(with_radar);
    for _ in 0..5 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    (fog, world, units)
}

pub fn radar_senses_through_walls_and_jammers_cancel_it(make: &Make) {
    let (mut fog, world, [west, east, jammed]) = run(make, true);
    assert_eq!(fog.visible_to("i").unwrap(), vec![west], "sight sees the west unit only");
    // Only sight instances answer for a point and count as observers.
    assert_eq!(fog.locate(Vec3::new(48.5, 30.5, 0.0)).map(|(n, _)| n), Some("i".to_string()));
    assert_eq!(fog.observers_of(east).unwrap(), Vec::<String>::new(), "radar's sense is no one's sight");
    assert_eq!(fog.observers_of(west).unwrap(), vec!["i".to_string()]);
    assert_eq!(fog.visible_to("radar").unwrap(), vec![west, east], "radar sees through the wall, not under the jammer");
    let blips = fog.blips(&world, "radar").unwrap();
    assert_eq!(blips.len(), 1, "the east unit is a blip: {blips:?}");
    let (at, unit) = (blips[0].position, world.get::<&Position>(east).unwrap().0);
    assert!((at.x - unit.x).abs() <= 2.0 && (at.y - unit.y).abs() <= 2.0 && at != unit, "{at} near {unit}");
    assert!(!fog.visible_to("radar").unwrap().contains(&jammed));
    assert!(fog.blips(&world, "i").unwrap_err().to_string().contains("layer 0"), "a sight instance has no blips");
    // The immediate query is sight only: the small radar's ground is no one's sight.
    assert!(!fog.query_immediate(&world, Vec3::new(55.0, 9.0, 0.0), team0()).unwrap());
    // The radar's masks are there for shaders, like any instance's.
    assert!(fog.final_mask("radar").unwrap().iter().any(|&v| v > 0));
    // Every backend puts the blips in the same places.
    let reference = || -> Box<dyn Backend> { Box::new(CpuBackend::new(1).unwrap()) };
    let (cpu, cpu_world, _) = run(&reference, true);
    assert_eq!(cpu.blips(&cpu_world, "radar").unwrap(), blips);
}

pub fn other_layers_leave_sight_alone(make: &Make) {
    let (mut with, _, [west, ..]) = run(make, true);
    let (mut without, _, [west_too, ..]) = run(make, false);
    for texture in [Texture::Visibility, Texture::Final] {
        assert_eq!(with.read_texture("i", texture).unwrap(), without.read_texture("i", texture).unwrap(), "{texture:?}");
    }
    // The same unit in sight (its entity id differs: the worlds differ).
    assert_eq!(with.visible_to("i").unwrap(), vec![west]);
    assert_eq!(without.visible_to("i").unwrap(), vec![west_too]);
    // With no radar source the radar instance sees nothing.
    assert!(without.final_mask("radar").unwrap().iter().all(|&v| v == 0));
}

pub fn a_bad_jammer_is_named_and_changes_nothing(make: &Make) {
    let (mut fog, mut world, _) = run(make, true);
    let before = (fog.final_mask("radar").unwrap(), fog.final_mask("i").unwrap(), fog.tick_count());
    let bad = world.spawn((Position(Vec3::new(40.5, 40.5, 0.0)), AntiVision { radius: -2.0, falloff: 0.0, targets: team0(), layer: 1 }));
    let error = fog.tick(&mut world, 50_000).unwrap_err().to_string();
    assert!(error.contains("anti_vision") && error.contains("radius") && error.contains("-2"), "{error}");
    assert_eq!((fog.final_mask("radar").unwrap(), fog.final_mask("i").unwrap(), fog.tick_count()), before, "nothing changed");
    world.despawn(bad).unwrap();
    fog.tick(&mut world, 50_000).unwrap();
}

pub fn a_layer_takes_only_the_domains_it_senses(make: &Make) {
    let mut fog = fog(make);
    // A second radar over the same ground that senses aircraft only.
    let air = Profile { layer: 1, see_through: true, domains: 2, ..fog.instance("radar").unwrap().profile.clone() };
    fog.create_instance(InstanceDesc { name: "air-radar".into(), observed_teams: team0(), ..desc(air) }).unwrap();
    let ground_only = Profile { domains: Tracked::GROUND, ..fog.instance("radar").unwrap().profile.clone() };
    fog.apply_profile("radar", ground_only).unwrap();
    let (mut world, [west, east, _]) = world(true);
    let plane = world.spawn((Position(Vec3::new(48.5, 40.5, 0.0)), Tracked { footprint: 0.5, domains: 2 }));
    for _ in 0..5 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    assert_eq!(fog.visible_to("radar").unwrap(), vec![west, east], "the ground radar does not take the aircraft");
    assert_eq!(fog.visible_to("air-radar").unwrap(), vec![plane], "the air radar takes only the aircraft");
    assert_eq!(fog.blips(&world, "air-radar").unwrap().len(), 1, "the aircraft is the air radar's blip");
    assert_eq!(fog.blips(&world, "radar").unwrap().len(), 1, "the east unit is the ground radar's");
}

/// One sight instance (`snap_sources` as asked) ticked over a source of
/// falloff 0.5 at `source` and a jammer at `jammer`, team 0, beside a wall.
fn snapped(make: &Make, snap_sources: bool, source: Vec2, jammer: Vec2) -> (FogSubsystem, World, Entity) {
    let quick = Profile { fade_in_rate: 1000.0, relax_rate: 1000.0, snap_sources, ..Profile::default() };
    let mut fog = FogSubsystem::new(make());
    fog.create_instance(InstanceDesc { observed_teams: team0(), ..desc(quick) }).unwrap();
    let mut world = World::new();
    world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(2.0, 40.0), yaw_degrees: 0.0 })));
    let eye = world.spawn((Position(source.extend(0.0)), VisionSource { falloff: Some(0.5), ..VisionSource::new(30.0) }));
    world.spawn((Position(jammer.extend(0.0)), AntiVision { radius: 7.0, falloff: 0.5, targets: team0(), layer: 0 }));
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    (fog, world, eye)
}

pub fn snapped_sources_stand_on_their_texels_centres(make: &Make) {
    let (off, centre) = (Vec2::new(20.2, 24.9), Vec2::new(20.5, 24.5));
    let (jammer_off, jammer_centre) = (Vec2::new(14.8, 30.1), Vec2::new(14.5, 30.5));
    let (mut fog, mut world, eye) = snapped(make, true, off, jammer_off);
    let (mut at_centre, _, _) = snapped(make, false, centre, jammer_centre);
    let (mut unsnapped, _, _) = snapped(make, false, off, jammer_off);
    let visibility = |f: &mut FogSubsystem| f.read_texture("i", Texture::Visibility).unwrap();
    assert_eq!(visibility(&mut fog), visibility(&mut at_centre), "a snapped source and jammer reveal as if at their texels' centres");
    assert_eq!(fog.final_mask("i").unwrap(), at_centre.final_mask("i").unwrap());
    assert_ne!(visibility(&mut fog), visibility(&mut unsnapped), "off the centre, the falloffs differ unsnapped");
    // Within its texel, a move changes nothing and recomputes no visibility.
    world.get::<&mut Position>(eye).unwrap().0.x = 20.9;
    let before = visibility(&mut fog);
    let report = fog.tick(&mut world, 50_000).unwrap();
    let tick = &report.instances["i"];
    assert!(!tick.recomputed || tick.visibility_reused, "a move within the texel recomputed the visibility: {tick:?}");
    assert_eq!(visibility(&mut fog), before);
    // Across a texel's edge, it moves a whole texel.
    world.get::<&mut Position>(eye).unwrap().0.x = 21.1;
    fog.tick(&mut world, 50_000).unwrap();
    let (mut next, _, _) = snapped(make, false, Vec2::new(21.5, 24.5), jammer_centre);
    assert_eq!(visibility(&mut fog), visibility(&mut next), "one texel east");
    // The same bytes as the reference backend.
    let reference = || -> Box<dyn Backend> { Box::new(CpuBackend::new(1).unwrap()) };
    let (mut cpu, _, _) = snapped(&reference, true, off, jammer_off);
    assert_eq!(visibility(&mut cpu), visibility(&mut at_centre));
}

pub const TESTS: &[Test] = &[
    ("a_layer_takes_only_the_domains_it_senses", a_layer_takes_only_the_domains_it_senses),
    ("a_bad_jammer_is_named_and_changes_nothing", a_bad_jammer_is_named_and_changes_nothing),
    ("radar_senses_through_walls_and_jammers_cancel_it", radar_senses_through_walls_and_jammers_cancel_it),
    ("other_layers_leave_sight_alone", other_layers_leave_sight_alone),
    ("snapped_sources_stand_on_their_texels_centres", snapped_sources_stand_on_their_texels_centres),
];
