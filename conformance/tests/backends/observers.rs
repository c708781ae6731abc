//! Stealth per observer: every instance judges a per-observer actor on its
//! own final mask, with its own events and its own ghost, and a ghost
//! carries the game's components as that observer last saw them.

use super::{Make, Test};
use murk_conformance::scene::{desc, seeded_world};
use murk_core::fixed::hash2;
use murk_core::glam::Vec3;
use murk_core::hecs::{Entity, World};
use murk_core::{
    FogSubsystem, Ghost, GhostObserver, HideMode, InstanceDesc, Position, Profile, StealthActor, StealthEvent, StealthState, TeamMask, VisionSource,
};
use serde::{Deserialize, Serialize};

const OBSERVERS: [(&str, u8); 2] = [("blue", 1), ("red", 0)];

fn profile() -> Profile {
    Profile { fade_in_rate: 6.0, relax_rate: 4.0, ..Profile::default() }
}

/// The seeded world with its sources on teams 0 and 1, and 12 stealth
/// actors spread over it (`per_observer`, or naming `instance`).
fn world(seed: i32, per_observer: bool, instance: Option<&str>) -> (World, Vec<Entity>) {
    let mut world = seeded_world(seed);
    for (i, s) in world.query_mut::<&mut VisionSource>().into_iter().enumerate() {
        s.team = (i % 2) as u8;
    }
    let h = |i: i32| hash2(i, seed + 7);
    let actors = (0..12)
        .map(|i| {
            let p = Vec3::new((h(i) % 640) as f32 / 10.0, (h(50 + i) % 640) as f32 / 10.0, 0.0);
            let hide_mode = if i % 2 == 0 { HideMode::FreezeWithGhost } else { HideMode::Hide };
            let actor = StealthActor { hide_mode, fade_seconds: 0.2, per_observer, instance: instance.map(String::from), ..StealthActor::default() };
            world.spawn((Position(p), actor))
        })
        .collect();
    (world, actors)
}

fn fog(make: &Make, names: &[&str]) -> FogSubsystem {
    let mut fog = FogSubsystem::new(make());
    for &(name, team) in &OBSERVERS {
        if names.contains(&name) {
            fog.create_instance(InstanceDesc { name: name.into(), observed_teams: TeamMask::of(&[team]).unwrap(), ..desc(profile()) }).unwrap();
        }
    }
    fog
}

/// An event with the ghost's id left out (ghosts are entities of each run).
fn kind(e: &StealthEvent) -> (&'static str, Entity) {
    let name = match e {
        StealthEvent::Revealed { .. } => "revealed",
        StealthEvent::Hidden { .. } => "hidden",
        StealthEvent::GhostSpawned { .. } => "ghost_spawned",
        StealthEvent::GhostRemoved { .. } => "ghost_removed",
    };
    (name, e.actor())
}

/// A state with its ghost's id left out.
fn shape(s: &StealthState) -> (bool, u16, Option<[u32; 3]>, u16, bool) {
    (s.last_visible, s.last_value, s.last_known, s.fade, s.ghost.is_some())
}

/// Property: per-observer stealth gives, for each observer, the events and
/// states of a run where the same actors have one state decided by that
/// observer's instance alone.
pub fn per_observer_stealth_equals_one_single_observer_run_per_team(make: &Make) {
    let mut transitions = 0;
    for seed in 0..3 {
        let mut both = fog(make, &["blue", "red"]);
        let (mut world, actors) = world(seed, true, None);
        let mut singles: Vec<(&str, FogSubsystem, World)> =
            OBSERVERS.iter().map(|&(name, _)| (name, fog(make, &[name]), world_of(seed, name))).collect();
        for t in 0..16 {
            for (k, e) in actors.iter().enumerate().filter(|(k, _)| (k + t) % 4 == 0) {
                let step = if k % 2 == 0 { Vec3::new(1.5, 0.5, 0.0) } else { Vec3::new(-1.0, 1.0, 0.0) };
                world.get::<&mut Position>(*e).unwrap().0 += step;
                for (_, _, w) in &mut singles {
                    w.get::<&mut Position>(*e).unwrap().0 += step;
                }
            }
            let report = both.tick(&mut world, 50_000).unwrap();
            assert!(report.events.is_empty(), "per-observer actors have no single state");
            for (name, single, w) in &mut singles {
                let want: Vec<_> = single.tick(w, 50_000).unwrap().events.iter().map(kind).collect();
                let got: Vec<_> = report.observer_events.iter().filter(|(o, _)| o == name).map(|(_, e)| kind(e)).collect();
                assert_eq!(got, want, "seed {seed} tick {t} observer {name}");
                transitions += got.len();
                for &a in &actors {
                    assert_eq!(both.stealth_state_for(a, name).map(shape), single.stealth_state(a).map(shape), "seed {seed} tick {t} {name} {a:?}");
                }
            }
        }
    }
    assert!(transitions > 10, "the actors changed state ({transitions} transitions)");
}

fn world_of(seed: i32, instance: &str) -> World {
    world(seed, false, Some(instance)).0
}

/// A component of the game a ghost should carry as last seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Health(u32);

pub fn each_observer_has_its_own_ghost_carrying_the_last_seen_payload(make: &Make) {
    let mut fog = fog(make, &["blue", "red"]);
    fog.register_ghost_payload::<Health>("health").unwrap();
    assert!(fog.register_ghost_payload::<Health>("health").unwrap_err().to_string().contains("registered already"));
    let mut world = World::new();
    let actor = StealthActor { hide_mode: HideMode::FreezeWithGhost, per_observer: true, ..StealthActor::default() };
    let spy = world.spawn((Position(Vec3::new(30.5, 30.5, 0.0)), actor.clone(), Health(100)));
    // Red's scout sees the spy; blue has nobody there.
    let scout = world.spawn((Position(Vec3::new(26.5, 30.5, 0.0)), VisionSource { team: 0, ..VisionSource::new(10.0) }));
    for _ in 0..8 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    assert!(fog.stealth_state_for(spy, "red").unwrap().last_visible);
    assert!(!fog.stealth_state_for(spy, "blue").unwrap().last_visible);
    // The scout leaves, and the spy goes out of red's sight as the fog
    // closes: it is hurt once more while red still sees it.
    world.despawn(scout).unwrap();
    world.get::<&mut Health>(spy).unwrap().0 = 80;
    let mut spawned = Vec::new();
    for _ in 0..8 {
        let report = fog.tick(&mut world, 50_000).unwrap();
        spawned.extend(report.observer_events.iter().filter(|(_, e)| matches!(e, StealthEvent::GhostSpawned { .. })).cloned());
    }
    assert_eq!(spawned.len(), 1, "one ghost, red's: {spawned:?}");
    let (observer, StealthEvent::GhostSpawned { ghost, .. }) = &spawned[0] else { unreachable!() };
    assert_eq!(observer, "red");
    let ghost = *ghost;
    assert_eq!(*world.get::<&Health>(ghost).unwrap(), Health(80), "the ghost shows the health red last saw");
    assert_eq!(world.get::<&GhostObserver>(ghost).unwrap().0, "red");
    assert_eq!(world.get::<&Ghost>(ghost).unwrap().actor, spy);
    world.get::<&mut Health>(spy).unwrap().0 = 10;
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    assert_eq!(*world.get::<&Health>(ghost).unwrap(), Health(80), "and keeps it while the spy is hidden, hurt to 10");
    // A snapshot keeps the ghost and its payload; a subsystem that did not
    // register the payload refuses it by name.
    let bytes = fog.snapshot(&world).unwrap();
    let mut other = fog_with(make);
    other.register_ghost_payload::<Health>("health").unwrap();
    let mut copy = World::new();
    copy.spawn_at(spy, (Position(Vec3::new(30.5, 30.5, 0.0)), actor.clone(), Health(10)));
    other.restore(&mut copy, &bytes).unwrap();
    let restored = other.stealth_state_for(spy, "red").unwrap().ghost.unwrap();
    assert_eq!(*copy.get::<&Health>(restored).unwrap(), Health(80));
    assert_eq!(other.lockstep_hash().unwrap(), fog.lockstep_hash().unwrap());
    let mut bare = fog_with(make);
    let e = bare.restore(&mut World::new(), &bytes).unwrap_err().to_string();
    assert!(e.contains("payload = health: is a component the game did not register"), "{e}");
    // Seen again by red: the ghost goes and the payload is the one seen now.
    world.spawn((Position(Vec3::new(26.5, 30.5, 0.0)), VisionSource { team: 0, ..VisionSource::new(10.0) }));
    for _ in 0..8 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    assert!(world.get::<&Ghost>(ghost).is_err(), "the ghost is gone");
    assert_eq!(fog.stealth_state_for(spy, "red").unwrap().payload, vec![("health".to_string(), postcard_health(10))]);
    // Per observer and a named instance exclude each other.
    world.insert_one(spy, StealthActor { instance: Some("red".into()), ..actor }).unwrap();
    let e = fog.tick(&mut world, 50_000).unwrap_err().to_string();
    assert!(e.contains("stealth.instance = red: cannot be set with per_observer"), "{e}");
}

fn fog_with(make: &Make) -> FogSubsystem {
    fog(make, &["blue", "red"])
}

/// The bytes murk keeps for `Health(v)`: postcard's varint of `v`.
fn postcard_health(v: u8) -> Vec<u8> {
    assert!(v < 128, "one varint byte");
    vec![v]
}

/// Every test of this suite, by name.
pub const TESTS: &[Test] = &[
    ("per_observer_stealth_equals_one_single_observer_run_per_team", per_observer_stealth_equals_one_single_observer_run_per_team),
    ("each_observer_has_its_own_ghost_carrying_the_last_seen_payload", each_observer_has_its_own_ghost_carrying_the_last_seen_payload),
];
