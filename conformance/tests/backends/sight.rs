//! Who sees what: each observer's set of tracked entities against a brute
//! force check of its sight signal (the raw visibility; these worlds make no
//! scripted reveal), the entered/left events, snapshots and bad input.

use super::{Make, Test};
use murk_conformance::scene::{desc, seeded_world};
use murk_core::fixed::hash2;
use murk_core::glam::Vec3;
use murk_core::hecs::{Entity, World};
use murk_core::{Area, FogSubsystem, InstanceDesc, MurkError, Position, Profile, SightEvent, TeamMask, Texture, TextureData, Tracked, VisionSource};
use std::collections::{BTreeMap, BTreeSet};

/// Four observers: one team each, every team, and a coarser grid (two
/// world units a texel) over every team.
fn observers(make: &Make) -> FogSubsystem {
    let mut fog = FogSubsystem::new(make());
    let profile = Profile { fade_in_rate: 6.0, relax_rate: 4.0, ..Profile::default() };
    for (name, teams, resolution) in [
        ("all", TeamMask::ALL, 64),
        ("blue", TeamMask::of(&[1]).unwrap(), 64),
        ("coarse", TeamMask::ALL, 32),
        ("red", TeamMask::of(&[0]).unwrap(), 64),
    ] {
        fog.create_instance(InstanceDesc { name: name.into(), observed_teams: teams, resolution, ..desc(profile.clone()) }).unwrap();
    }
    fog
}

/// The seeded world with its sources split over teams 0..=2, and 40
/// tracked entities at quarter units (some outside the area).
fn world(seed: i32) -> (World, Vec<Entity>) {
    let mut world = seeded_world(seed);
    for (i, s) in world.query_mut::<&mut VisionSource>().into_iter().enumerate() {
        s.team = (i % 3) as u8;
    }
    let h = |i: i32| hash2(i, seed + 1000);
    let tracked = (0..40)
        .map(|i| {
            let p = Vec3::new((h(i) % 288) as f32 / 4.0 - 4.0, (h(100 + i) % 288) as f32 / 4.0 - 4.0, 0.0);
            let footprint = [0.0, 0.5, 1.25, 3.0][(h(200 + i) % 4) as usize];
            world.spawn((Position(p), Tracked::new(footprint)))
        })
        .collect();
    (world, tracked)
}

/// Where each tracked entity stood and its footprint, by entity bits.
type Footprints = BTreeMap<u64, (Vec3, f32)>;

/// What an observer sees by brute force: the entities with a texel of
/// their footprint (centres within the footprint, and the texel under the
/// point) at or above the cutoff in `fin`, a `side` x `side` visibility over
/// [0, 64]^2.
fn brute_force(fin: &[u16], side: u32, cutoff: u16, at: &Footprints) -> BTreeSet<u64> {
    let ts = 64.0 / side as f32;
    let mut out = BTreeSet::new();
    for (&bits, &(p, r)) in at {
        let (tx, ty) = (p.x / ts, p.y / ts);
        let mut top = 0u16;
        for y in 0..side {
            for x in 0..side {
                let (dx, dy) = ((x as f32 + 0.5) * ts - p.x, (y as f32 + 0.5) * ts - p.y);
                let under = (0.0..=side as f32).contains(&tx)
                    && (0.0..=side as f32).contains(&ty)
                    && (tx.floor() as u32).min(side - 1) == x
                    && (ty.floor() as u32).min(side - 1) == y;
                if under || dx * dx + dy * dy <= r * r {
                    top = top.max(fin[(y * side + x) as usize]);
                }
            }
        }
        if top >= cutoff {
            out.insert(bits);
        }
    }
    out
}

fn visibility(fog: &mut FogSubsystem, name: &str) -> Vec<u16> {
    match fog.read_texture(name, Texture::Visibility).unwrap().data {
        TextureData::U16(v) => v,
        other => panic!("{other:?}"),
    }
}

/// Property: in random worlds with several teams and instances, each
/// observer's set after tick t is the brute-force check of its visibility
/// after tick t - 2 (the fixed readback latency) over the footprints of
/// that tick, for the entities still tracked; the events are the
/// differences of the sets, left before entered.
pub fn each_observers_set_is_the_brute_force_check_of_its_visibility(make: &Make) {
    let names = ["all", "blue", "coarse", "red"];
    let mut nonempty = 0;
    for seed in 0..4 {
        let mut fog = observers(make);
        let (mut world, tracked) = world(seed);
        let cutoff = fog.instance("all").unwrap().profile.visibility_cutoff;
        let cutoff = murk_core::fixed::unit_to_mask(f64::from(cutoff));
        let mut history: Vec<(BTreeMap<&str, Vec<u16>>, Footprints)> = Vec::new();
        let mut sets: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
        for t in 0..10usize {
            // Some entities walk, one goes, one comes.
            for (k, e) in tracked.iter().enumerate().filter(|(k, _)| (k + t) % 3 == 0) {
                if let Ok(mut p) = world.get::<&mut Position>(*e) {
                    p.0.x += if k % 2 == 0 { 0.75 } else { -0.5 };
                }
            }
            if t == 5 {
                world.despawn(tracked[7]).unwrap();
            }
            if t == 6 {
                world.spawn((Position(Vec3::new(20.25, 30.5, 0.0)), Tracked::new(2.0)));
            }
            let at: Footprints =
                world.query::<(Entity, &Position, &Tracked)>().iter().map(|(e, p, tr)| (e.to_bits().get(), (p.0, tr.footprint))).collect();
            let report = fog.tick(&mut world, 50_000).unwrap();
            history.push((names.iter().map(|&n| (n, visibility(&mut fog, n))).collect(), at.clone()));
            let mut events = Vec::new();
            for &name in &names {
                let got: BTreeSet<u64> = fog.visible_to(name).unwrap().iter().map(|e| e.to_bits().get()).collect();
                let want = if t >= 2 {
                    let (finals, then) = &history[t - 2];
                    let still: Footprints = then.iter().filter(|(b, _)| at.contains_key(b)).map(|(b, v)| (*b, *v)).collect();
                    brute_force(&finals[name], if name == "coarse" { 32 } else { 64 }, cutoff, &still)
                } else {
                    BTreeSet::new()
                };
                assert_eq!(got, want, "seed {seed} tick {t} observer {name}");
                nonempty += usize::from(!got.is_empty());
                let old = sets.remove(name).unwrap_or_default();
                let entity = |b: &u64| Entity::from_bits(*b).unwrap();
                events.extend(old.difference(&got).map(|b| SightEvent::Left { observer: name.into(), entity: entity(b) }));
                events.extend(got.difference(&old).map(|b| SightEvent::Entered { observer: name.into(), entity: entity(b) }));
                for b in &got {
                    let e = entity(b);
                    assert!(fog.sees(name, e).unwrap() && fog.observers_of(e).unwrap().contains(&name.to_string()));
                }
                sets.insert(name, got);
            }
            assert_eq!(report.sight, events, "seed {seed} tick {t}: the events are the changes of the sets");
        }
        assert_ne!(sets["red"], sets["blue"], "seed {seed}: two teams see different things");
    }
    assert!(nonempty > 40, "the sets are not all empty ({nonempty})");
}

pub fn sight_travels_in_snapshots_and_bad_input_is_named(make: &Make) {
    let run = |cut: Option<usize>| {
        let mut fog = observers(make);
        let (mut world, _) = world(3);
        let mut out = Vec::new();
        for t in 0..8 {
            if Some(t) == cut {
                let bytes = fog.snapshot(&world).unwrap();
                let mut other = FogSubsystem::new(make());
                other.restore(&mut world, &bytes).unwrap();
                fog = other;
            }
            let report = fog.tick(&mut world, 50_000).unwrap();
            out.push((report.sight, fog.lockstep_hash().unwrap(), fog.visible_to("red").unwrap()));
        }
        out
    };
    let straight = run(None);
    assert!(straight.iter().any(|(events, _, _)| !events.is_empty()));
    // Rolled back in place: a state saved after tick 2 and loaded into the
    // same subsystem after tick 5 goes on as tick 3 went.
    {
        let mut fog = observers(make);
        let (mut world, _) = world(3);
        let mut saved = None;
        for t in 0..6 {
            fog.tick(&mut world, 50_000).unwrap();
            if t == 2 {
                saved = Some(fog.save_state(&world).unwrap());
            }
        }
        fog.load_state(&mut world, &saved.expect("saved at tick 2")).unwrap();
        for (t, want) in straight.iter().enumerate().skip(3) {
            let report = fog.tick(&mut world, 50_000).unwrap();
            assert_eq!(&(report.sight, fog.lockstep_hash().unwrap(), fog.visible_to("red").unwrap()), want, "tick {t} after the load");
        }
    }
    // A snapshot whose sight state disagrees with the rest is refused by name.
    {
        let mut fog = observers(make);
        let (mut world, _) = world(3);
        for _ in 0..8 {
            fog.tick(&mut world, 50_000).unwrap();
        }
        let bytes = fog.snapshot(&world).unwrap();
        let body = murk_core::FogBody::decode(&bytes).unwrap();
        assert!(!body.sight.is_empty() && !body.sight_samples.is_empty(), "the snapshot holds sets and samples in flight");
        let hash = fog.lockstep_hash().unwrap();
        let mut bad = body.clone();
        let (_, set) = bad.sight.pop_first().unwrap();
        bad.sight.insert("nowhere".into(), set);
        let mut bad2 = body.clone();
        bad2.sight.values_mut().next().unwrap().push(u64::MAX);
        let mut bad3 = body.clone();
        bad3.sight_samples[0].groups[0].first = u32::MAX;
        let mut bad4 = body.clone();
        bad4.tracked.reverse();
        let mut bad5 = body.clone();
        let group = &mut bad5.sight_samples[0].groups[0];
        assert!(group.entities.len() >= 2, "a group with two entities");
        group.entities = group.entities.iter().rev().copied().collect();
        let mut bad6 = body.clone();
        bad6.sight_samples[0].groups[0].cutoff = 0;
        let mut bad7 = body.clone();
        let groups = &mut bad7.sight_samples[0].groups;
        groups.push(groups[0].clone());
        for (b, needle) in [
            (bad, "snapshot.sight = nowhere"),
            (bad2, "is not a tracked entity"),
            (bad3, "sight_samples[0].groups[0]"),
            (bad4, "snapshot.tracked"),
            (bad5, "sight_samples[0].groups[0].entities"),
            (bad6, "sight_samples[0].groups[0].cutoff = 0"),
            (bad7, "must come after the group before it"),
        ] {
            let e = fog.restore(&mut world, &b.encode().unwrap()).unwrap_err().to_string();
            assert!(e.contains(needle), "`{e}` should name `{needle}`");
        }
        assert_eq!(fog.lockstep_hash().unwrap(), hash, "rejected snapshots changed nothing");
    }
    for cut in [1, 2, 5] {
        assert_eq!(run(Some(cut)), straight, "restored before tick {cut}");
    }
    // Bad input: named, and the tick changes nothing.
    let mut fog = observers(make);
    let (mut world, tracked) = world(3);
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    let hash = fog.lockstep_hash().unwrap();
    for (footprint, needle) in [(f32::NAN, "tracked.footprint = NaN"), (-1.0, "tracked.footprint = -1"), (65.0, "at most 64")] {
        let bad = world.spawn((Position(Vec3::new(10.0, 10.0, 0.0)), Tracked::new(footprint)));
        let e = fog.tick(&mut world, 50_000).unwrap_err().to_string();
        assert!(e.contains(needle), "`{e}` should name `{needle}`");
        world.despawn(bad).unwrap();
    }
    let bad = world.spawn((Position(Vec3::new(f32::INFINITY, 10.0, 0.0)), Tracked::new(1.0)));
    assert!(fog.tick(&mut world, 50_000).unwrap_err().to_string().contains("position.x = inf"));
    world.despawn(bad).unwrap();
    assert_eq!(fog.lockstep_hash().unwrap(), hash, "rejected ticks changed nothing");
    assert!(matches!(fog.visible_to("nowhere"), Err(MurkError::UnknownInstance(_))));
    assert!(fog.sees("nowhere", tracked[0]).is_err());
    let stranger = world.spawn((Position(Vec3::ZERO),));
    assert!(fog.sees("red", stranger).unwrap_err().to_string().contains("was not tracked"));
    assert!(fog.observers_of(stranger).is_err());
    // More observers than the bound.
    for i in 0..murk_core::MAX_OBSERVERS {
        let area = Area { center: Vec3::new(4.0, 4.0, 5.0), extents: Vec3::new(8.0, 8.0, 10.0), yaw_degrees: 0.0 };
        fog.create_instance(InstanceDesc { name: format!("extra{i:02}"), area, resolution: 8, ..desc(Profile::default()) }).unwrap();
    }
    let e = fog.tick(&mut world, 50_000).unwrap_err().to_string();
    let (observers, bound) = (murk_core::MAX_OBSERVERS + 4, murk_core::MAX_OBSERVERS);
    assert!(e.contains(&format!("observers = {observers}")) && e.contains(&format!("at most {bound}")), "{e}");
}

/// Every test of this suite, by name.
pub const TESTS: &[Test] = &[
    ("each_observers_set_is_the_brute_force_check_of_its_visibility", each_observers_set_is_the_brute_force_check_of_its_visibility),
    ("sight_travels_in_snapshots_and_bad_input_is_named", sight_travels_in_snapshots_and_bad_input_is_named),
];
