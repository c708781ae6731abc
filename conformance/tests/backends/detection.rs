//! Cloaked stealth actors and detectors on every backend: a cloaked actor
//! in plain sight stays hidden until a detector of an observed team
//! detects it, in range through walls or only with a clear sight line, per
//! observer; a snapshot taken while the detectors' lines are in flight
//! goes on as the original.

use super::{Make, Test};
use murk_conformance::scene::fog;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::{Blocker, BlockerShape, Detection, FogSubsystem, Position, Profile, StealthActor, StealthEvent, TeamMask, VisionSource};

/// A wall across the middle (x 31..33, y 17..47), a wide team-0 source that
/// sees the west side, a cloaked actor and a plain one there.
fn scene(make: &Make) -> (FogSubsystem, World, Entity, Entity) {
    let fog = fog(make(), Profile { fade_in_rate: 1000.0, relax_rate: 1000.0, ..Profile::default() });
    let mut world = World::new();
    world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(2.0, 30.0), yaw_degrees: 0.0 })));
    world.spawn((Position(Vec3::new(10.5, 32.5, 0.0)), VisionSource::new(30.0)));
    let cloaked = world.spawn((Position(Vec3::new(20.5, 32.5, 0.0)), StealthActor { cloaked: true, ..StealthActor::default() }));
    let plain = world.spawn((Position(Vec3::new(20.5, 28.5, 0.0)), StealthActor::default()));
    (fog, world, cloaked, plain)
}

fn detector(detects: Detection, radius: f32, team: u8) -> VisionSource {
    VisionSource { detects, team, ..VisionSource::new(radius) }
}

/// Ticks long enough for the samples' latency, then the actor's state.
fn settled(fog: &mut FogSubsystem, world: &mut World, actor: Entity) -> bool {
    for _ in 0..4 {
        fog.tick(world, 50_000).unwrap();
    }
    fog.stealth_state(actor).expect("a state").last_visible
}

pub fn a_cloaked_actor_shows_only_to_detectors(make: &Make) {
    let (mut fog, mut world, cloaked, plain) = scene(make);
    assert!(!settled(&mut fog, &mut world, cloaked), "in plain sight, but cloaked and no detector");
    assert!(fog.stealth_state(plain).unwrap().last_visible, "the plain actor beside it is seen");
    // In range, through walls: from the far side of the wall.
    let d = world.spawn((Position(Vec3::new(40.5, 32.5, 0.0)), detector(Detection::InRange, 24.0, 0)));
    assert!(settled(&mut fog, &mut world, cloaked), "a detector in range detects through the wall");
    // Out of its range.
    world.get::<&mut Position>(d).unwrap().0 = Vec3::new(60.5, 32.5, 0.0);
    assert!(!settled(&mut fog, &mut world, cloaked), "out of range");
    // In sight: the wall stands between, then the detector walks round it.
    world.get::<&mut Position>(d).unwrap().0 = Vec3::new(40.5, 32.5, 0.0);
    *world.get::<&mut VisionSource>(d).unwrap() = detector(Detection::InSight, 30.0, 0);
    assert!(!settled(&mut fog, &mut world, cloaked), "in range, but the wall hides the actor from the detector");
    world.get::<&mut VisionSource>(d).unwrap().see_through = true;
    assert!(settled(&mut fog, &mut world, cloaked), "a detector that sees through walls needs no line");
    world.get::<&mut VisionSource>(d).unwrap().see_through = false;
    assert!(!settled(&mut fog, &mut world, cloaked), "hidden again");
    world.get::<&mut Position>(d).unwrap().0 = Vec3::new(30.5, 56.5, 0.0);
    assert!(settled(&mut fog, &mut world, cloaked), "in range and in sight past the wall's end");
    // A detector of a team the instance does not observe detects nothing
    // for it (the wide source stays in team 0, so the fog still shows the
    // actor's place).
    *world.get::<&mut VisionSource>(d).unwrap() = detector(Detection::InSight, 30.0, 1);
    fog.set_observed_teams("i", TeamMask::of(&[0]).unwrap()).unwrap();
    assert!(!settled(&mut fog, &mut world, cloaked), "another team's detector");
    fog.set_observed_teams("i", TeamMask::ALL).unwrap();
    assert!(settled(&mut fog, &mut world, cloaked), "observed again");
}

pub fn cloaked_actors_are_detected_per_observer(make: &Make) {
    let (mut fog, mut world, _, _) = scene(make);
    // Two observers over the same ground: "i" (team 0) and "red" (team 1),
    // each with a wide source; only red has a detector.
    fog.set_observed_teams("i", TeamMask::of(&[0]).unwrap()).unwrap();
    let red = murk_core::InstanceDesc { name: "red".into(), observed_teams: TeamMask::of(&[1]).unwrap(), ..fog.instance("i").unwrap().clone() };
    fog.create_instance(red).unwrap();
    world.spawn((Position(Vec3::new(10.5, 36.5, 0.0)), VisionSource { team: 1, ..VisionSource::new(30.0) }));
    world.spawn((Position(Vec3::new(14.5, 40.5, 0.0)), detector(Detection::InSight, 16.0, 1)));
    let spy = world.spawn((Position(Vec3::new(20.5, 36.5, 0.0)), StealthActor { cloaked: true, per_observer: true, ..StealthActor::default() }));
    // A radar instance of red's (another sensor layer) is no observer of actors.
    let radar = murk_core::InstanceDesc {
        name: "a-radar".into(),
        profile: Profile { layer: 1, see_through: true, ..fog.instance("red").unwrap().profile.clone() },
        ..fog.instance("red").unwrap().clone()
    };
    fog.create_instance(radar).unwrap();
    let mut revealed_to = Vec::new();
    for _ in 0..5 {
        let report = fog.tick(&mut world, 50_000).unwrap();
        for (observer, event) in report.observer_events {
            if matches!(event, StealthEvent::Revealed { actor } if actor == spy) {
                revealed_to.push(observer);
            }
        }
    }
    assert_eq!(revealed_to, vec!["red".to_string()], "revealed to red, whose detector sees it, and to no one else");
    assert!(!fog.stealth_state_for(spy, "i").unwrap().last_visible);
    assert!(fog.stealth_state_for(spy, "a-radar").is_none(), "other layers judge no actor");
    assert!(fog.stealth_state_for(spy, "red").unwrap().last_visible);
}

pub fn detection_lines_in_flight_survive_a_snapshot(make: &Make) {
    let (mut fog, mut world, cloaked, _) = scene(make);
    let d = world.spawn((Position(Vec3::new(30.5, 56.5, 0.0)), detector(Detection::InSight, 30.0, 0)));
    fog.tick(&mut world, 50_000).unwrap();
    // Taken with the detectors' lines of this tick and the last in flight.
    let bytes = fog.snapshot(&world).unwrap();
    let mut copy = FogSubsystem::new(make());
    copy.restore(&mut world, &bytes).unwrap();
    for tick in 0..6 {
        if tick == 2 {
            world.get::<&mut Position>(d).unwrap().0 = Vec3::new(40.5, 32.5, 0.0);
        }
        fog.tick(&mut world, 50_000).unwrap();
        copy.tick(&mut world, 50_000).unwrap();
        assert_eq!(fog.stealth_state(cloaked), copy.stealth_state(cloaked), "tick {tick}");
        assert_eq!(fog.lockstep_hash().unwrap(), copy.lockstep_hash().unwrap(), "tick {tick}");
    }
    assert!(!fog.stealth_state(cloaked).unwrap().last_visible, "the detector went behind the wall");
}

/// With `snap_sources`, a detector's range is measured from the centre of
/// the texel under its eye, where the instance stands it: a detector just
/// out of range where it stands is in range from its texel's centre.
pub fn a_snapped_detector_measures_from_its_texel_centre(make: &Make) {
    for snap_sources in [false, true] {
        let (mut fog, mut world, cloaked, _) = scene(make);
        let profile = Profile { snap_sources, ..fog.instance("i").unwrap().profile.clone() };
        fog.apply_profile("i", profile).unwrap();
        // 10.45 units from the actor; its texel's centre, 10.0.
        world.spawn((Position(Vec3::new(30.95, 32.5, 0.0)), detector(Detection::InRange, 10.2, 0)));
        assert_eq!(settled(&mut fog, &mut world, cloaked), snap_sources, "snap_sources {snap_sources}");
    }
}

pub const TESTS: &[Test] = &[
    ("a_cloaked_actor_shows_only_to_detectors", a_cloaked_actor_shows_only_to_detectors),
    ("cloaked_actors_are_detected_per_observer", cloaked_actors_are_detected_per_observer),
    ("detection_lines_in_flight_survive_a_snapshot", detection_lines_in_flight_survive_a_snapshot),
    ("a_snapped_detector_measures_from_its_texel_centre", a_snapped_detector_measures_from_its_texel_centre),
];
