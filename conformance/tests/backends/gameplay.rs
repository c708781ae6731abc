//! Gameplay: stealth actors and ghosts, queries, anti-vision, snapshots and
//! lockstep hashes.

use super::{Make, Test};
use murk_conformance::scene::{fog as fog_on, landed, seeded_world};
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::query::MaskAnswer;
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner, TickRecord};
use murk_core::stealth::StealthEvent;
use murk_core::{
    AntiVision, Area, Blocker, BlockerShape, CaptureMode, FogSubsystem, Ghost, HeightCapture, HideMode, InstanceDesc, LandedHash, MurkError,
    Position, Profile, StealthActor, TeamMask, Texture, VisibilityPolicy, VisionSource,
};
use std::path::PathBuf;

fn scenario_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(name)
}

fn runner(make: &Make, name: &str) -> ScenarioRunner {
    let path = scenario_path(name);
    let s = Scenario::load(&path).unwrap();
    let files = ScenarioFiles::load(&s, path.parent().unwrap()).unwrap();
    ScenarioRunner::new(s, &files, make()).unwrap()
}

fn run_all(r: &mut ScenarioRunner) -> Vec<TickRecord> {
    let mut out = Vec::new();
    while !r.finished() {
        out.push(r.step().unwrap());
    }
    out
}

/// The thief walks south along x = 20.5 from y = 6.5 to 58.5, then back north
/// to 32.5, two units a tick. The guard at (50.5, 32.5) looks west through a
/// 60-degree cone; the walls at x = 30.5 cover y < 24 and y > 40. By geometry
/// the thief is in view for 19.75 < y < 43.75. The stealth state of a tick
/// is the sample taken `READBACK_LATENCY_TICKS` ticks before, where the
/// thief stood then.
pub fn infiltration_hidden_seen_ghosted_and_seen_again(make: &Make) {
    let mut r = runner(make, "infiltration.json");
    let mut timeline = Vec::new();
    let mut ghost_at = None;
    let mut last_seen_y = None;
    let mut thief = None;
    let mut walked = Vec::new();
    let lag = murk_core::READBACK_LATENCY_TICKS as usize;
    for _ in 0..45 {
        let rec = r.step().unwrap();
        let world = r.world();
        let (e, now_y) = world.query::<(Entity, &Position, &StealthActor)>().iter().map(|(e, p, _)| (e, p.0.y)).next().unwrap();
        thief = Some(e);
        walked.push(now_y);
        let Some(state) = r.fog().stealth_state(e) else {
            assert!(walked.len() <= lag, "tick {}: no stealth state after the readback latency", rec.tick);
            continue;
        };
        let (visible, y) = (state.last_visible, walked[walked.len() - 1 - lag]);
        // Away from the view edges, visibility follows the geometry exactly.
        if !(18.0..22.0).contains(&y) && !(42.0..46.0).contains(&y) {
            assert_eq!(visible, y > 19.75 && y < 43.75, "tick {}: thief at y = {y}", rec.tick);
        }
        if visible {
            last_seen_y = Some(y);
        }
        for ev in &rec.events {
            timeline.push((rec.tick, ev.event.clone()));
            if ev.event == "ghost_spawned" {
                let world = r.world();
                let ghosts: Vec<(Vec3, Ghost)> = world.query::<(&Position, &Ghost)>().iter().map(|(p, g)| (p.0, *g)).collect();
                assert_eq!(ghosts.len(), 1);
                assert_eq!(ghosts[0].1.actor, e);
                ghost_at = Some(ghosts[0].0);
                assert_eq!(ghosts[0].0.y, last_seen_y.unwrap(), "the ghost stands where the thief was last seen");
            }
        }
    }
    let kinds: Vec<&str> = timeline.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(kinds, ["revealed", "hidden", "ghost_spawned", "ghost_removed", "revealed"], "{timeline:?}");
    // Events of one transition land on the same tick, in the documented order.
    assert_eq!(timeline[1].0, timeline[2].0);
    assert_eq!(timeline[3].0, timeline[4].0);
    let ghost_y = ghost_at.unwrap().y;
    assert!(ghost_y > 40.0 && ghost_y < 44.0, "ghost at y = {ghost_y}");
    let world = r.world();
    assert_eq!(world.query::<&Ghost>().iter().count(), 0, "the ghost is gone once the thief is seen again");
    let st = r.fog().stealth_state(thief.unwrap()).unwrap().clone();
    assert!(st.last_visible && st.ghost.is_none());
    assert_eq!(st.fade, u16::MAX, "faded in over 0.2 s");
}

pub fn scripted_queries_land_in_the_tick_record(make: &Make) {
    let mut r = runner(make, "infiltration.json");
    let recs = run_all(&mut r);
    let q = &recs[20].queries[0];
    assert_eq!(q.id, "where-is-the-thief");
    assert!(matches!(&q.mask[0], MaskAnswer::Sampled { instance, value: 65535, visible: true } if instance == "guard-view"));
    assert!(matches!(&q.mask[1], MaskAnswer::Sampled { visible: false, .. }));
    assert_eq!(q.mask[2], MaskAnswer::NoInstance);
    assert_eq!(q.immediate.as_deref(), Some(&[true, false, false][..]));
}

pub fn snapshot_and_resume_continue_byte_identically(make: &Make) {
    let full = run_all(&mut runner(make, "infiltration.json"));
    for at in [4u32, 18, 30] {
        {
            let mut r = runner(make, "infiltration.json");
            while r.ticks_done() <= at {
                r.step().unwrap();
            }
            let bytes = r.snapshot(&scenario_path("")).unwrap();
            let mut resumed = ScenarioRunner::resume(&bytes, make()).unwrap();
            assert_eq!(resumed.ticks_done(), at + 1);
            let rest = run_all(&mut resumed);
            assert_eq!(&full[at as usize + 1..], &rest[..], "resumed after tick {at}");
        }
    }
    // The outpost scenario has a map, moving blockers, two instances and events.
    let full = run_all(&mut runner(make, "outpost.json"));
    let mut r = runner(make, "outpost.json");
    for _ in 0..22 {
        r.step().unwrap();
    }
    let bytes = r.snapshot(&scenario_path("")).unwrap();
    let mut resumed = ScenarioRunner::resume(&bytes, make()).unwrap();
    assert_eq!(&full[22..], &run_all(&mut resumed)[..]);
}

pub fn damaged_snapshots_are_errors_and_leave_the_state_alone(make: &Make) {
    let mut r = runner(make, "infiltration.json");
    for _ in 0..25 {
        r.step().unwrap();
    }
    let world_snapshot = r.fog().lockstep_hash().unwrap();
    let mut fog_bytes = Vec::new();
    {
        let world = std::mem::take(r.world());
        fog_bytes.extend(r.fog().snapshot(&world).unwrap());
        *r.world() = world;
    }
    let mut damaged = Vec::new();
    damaged.push(fog_bytes[..fog_bytes.len() / 2].to_vec());
    let mut flipped = fog_bytes.clone();
    flipped[100] ^= 0x40;
    damaged.push(flipped);
    let mut version = fog_bytes.clone();
    version[8] = murk_core::snapshot::VERSION as u8 + 1;
    damaged.push(version);
    damaged.push(b"not a snapshot at all, just some bytes".to_vec());
    for bad in damaged {
        let mut world = std::mem::take(r.world());
        let e = r.fog().restore(&mut world, &bad).unwrap_err();
        *r.world() = world;
        assert!(matches!(e, MurkError::Parse { .. } | MurkError::SnapshotVersion { .. }), "{e}");
        assert_eq!(r.fog().lockstep_hash().unwrap(), world_snapshot, "a rejected snapshot changes nothing");
    }
    // The good one restores into the same subsystem and changes nothing either.
    let mut world = std::mem::take(r.world());
    r.fog().restore(&mut world, &fog_bytes).unwrap();
    *r.world() = world;
    assert_eq!(r.fog().lockstep_hash().unwrap(), world_snapshot);
    r.step().unwrap();
}

fn fog_64(make: &Make, profile: Profile) -> FogSubsystem {
    let mut fog = FogSubsystem::new(make());
    for (name, z, teams) in [("ground", 5.0, TeamMask::of(&[0]).unwrap()), ("upper", 15.0, TeamMask::of(&[1]).unwrap())] {
        fog.create_instance(InstanceDesc {
            name: name.into(),
            area: Area { center: Vec3::new(32.0, 32.0, z), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
            resolution: 64,
            lod: 0,
            observed_teams: teams,
            profile: profile.clone(),
        })
        .unwrap();
    }
    fog
}

fn instant() -> Profile {
    Profile { blur_iterations: 0, fade_in_rate: 1.0e4, relax_rate: 1.0e4, ..Profile::default() }
}

pub fn mask_queries_pick_the_closest_instance_in_z_and_poll_once(make: &Make) {
    let mut fog = fog_64(make, instant());
    let mut world = World::new();
    let mut s = VisionSource::new(10.0);
    s.falloff = Some(0.0);
    world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), s));
    fog.tick(&mut world, 50_000).unwrap();
    let pts = [Vec3::new(20.5, 20.5, 1.0), Vec3::new(20.5, 20.5, 14.0), Vec3::new(-3.0, 20.0, 0.0), Vec3::new(25.5, 20.5, 2.0)];
    let h = fog.submit_mask_query(&pts, None).unwrap();
    let a = landed(&mut fog, h);
    assert_eq!(a[0], MaskAnswer::Sampled { instance: "ground".into(), value: 65535, visible: true });
    // The upper instance observes team 1 only: nothing seen there.
    assert_eq!(a[1], MaskAnswer::Sampled { instance: "upper".into(), value: 0, visible: false });
    assert_eq!(a[2], MaskAnswer::NoInstance);
    assert_eq!(fog.poll_mask_query(h), Err(MurkError::UnknownQuery(h.0)), "a handle delivers once");
    // A cutoff override changes the flag, not the value.
    let strict = fog.mask_query_now(&pts[..1], Some(1.0)).unwrap();
    assert_eq!(strict[0], MaskAnswer::Sampled { instance: "ground".into(), value: 65535, visible: true });
    let e = fog.mask_query_now(&[Vec3::new(f32::NAN, 0.0, 0.0)], None).unwrap_err();
    assert!(e.to_string().contains("points[0].x = NaN"), "{e}");
    assert!(fog.mask_query_now(&pts, Some(1.5)).unwrap_err().to_string().contains("cutoff_override = 1.5"));
}

pub fn the_immediate_query_ignores_walls_but_respects_radius_cone_and_team(make: &Make) {
    let mut world = World::new();
    let mut s = VisionSource::new(10.0);
    s.cone = Some(murk_core::Cone { yaw_degrees: 0.0, half_angle_degrees: 45.0 });
    s.team = 2;
    world.spawn((Position(Vec3::new(0.0, 0.0, 0.0)), s));
    world.spawn((Position(Vec3::new(3.0, 0.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 1.0 })));
    let fog = fog_64(make, instant());
    let t2 = TeamMask::of(&[2]).unwrap();
    assert!(fog.query_immediate(&world, Vec3::new(6.0, 0.0, 0.0), t2).unwrap(), "walls do not matter");
    assert!(fog.query_immediate(&world, Vec3::new(6.0, 5.9, 0.0), t2).unwrap(), "inside the 45-degree edge");
    assert!(!fog.query_immediate(&world, Vec3::new(6.0, 6.1, 0.0), t2).unwrap(), "outside the cone");
    assert!(!fog.query_immediate(&world, Vec3::new(10.5, 0.0, 0.0), t2).unwrap(), "outside the radius");
    assert!(!fog.query_immediate(&world, Vec3::new(6.0, 0.0, 0.0), TeamMask::of(&[1]).unwrap()).unwrap(), "another team");
}

pub fn anti_vision_hides_an_area_from_the_teams_it_targets(make: &Make) {
    let mut fog = fog_64(make, instant());
    // Both instances at ground level, one per team.
    fog.set_area("upper", Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 }).unwrap();
    fog.set_observed_teams("upper", TeamMask::ALL).unwrap();
    let mut world = World::new();
    for team in [0, 1] {
        let mut s = VisionSource::new(20.0);
        s.falloff = Some(0.0);
        s.team = team;
        world.spawn((Position(Vec3::new(32.5, 32.5, 0.0)), s));
    }
    world.spawn((Position(Vec3::new(40.5, 32.5, 0.0)), AntiVision { radius: 4.0, falloff: 0.0, targets: TeamMask::of(&[0]).unwrap(), layer: 0 }));
    fog.tick(&mut world, 50_000).unwrap();
    let vis = |fog: &mut FogSubsystem, name: &str| match fog.read_texture(name, Texture::Visibility).unwrap().data {
        murk_core::TextureData::U16(v) => v,
        _ => unreachable!(),
    };
    let (g, u) = (vis(&mut fog, "ground"), vis(&mut fog, "upper"));
    assert_eq!(g[32 * 64 + 40], 0, "hidden from team 0");
    assert_eq!(g[32 * 64 + 32], 65535, "outside the smoke");
    assert_eq!(u[32 * 64 + 40], 0, "an instance observing team 0 among others is also targeted");
    fog.set_observed_teams("upper", TeamMask::of(&[1]).unwrap()).unwrap();
    fog.tick(&mut world, 50_000).unwrap();
    assert_eq!(vis(&mut fog, "upper")[32 * 64 + 40], 65535, "team 1 sees through team 0's smoke");
}

/// A free-for-all of 64 players: 64 instances, each observing its own
/// team, and one source per team in its own column; each instance sees
/// only its team's column, the top teams (32..=63) as the first. A team id
/// of 64 is an error naming it.
pub fn sixty_four_teams_each_see_only_their_own(make: &Make) {
    let mut fog = FogSubsystem::new(make());
    let area = Area { center: Vec3::new(64.0, 4.0, 5.0), extents: Vec3::new(128.0, 8.0, 10.0), yaw_degrees: 0.0 };
    for team in 0..TeamMask::TEAMS {
        let observed_teams = TeamMask::of(&[team]).unwrap();
        fog.create_instance(InstanceDesc { name: format!("p{team:02}"), area, resolution: 128, lod: 0, observed_teams, profile: instant() }).unwrap();
    }
    let mut world = World::new();
    for team in 0..TeamMask::TEAMS {
        let mut s = VisionSource::new(0.9);
        (s.falloff, s.team) = (Some(0.0), team);
        world.spawn((Position(Vec3::new(1.5 + 2.0 * f32::from(team), 4.5, 0.0)), s));
    }
    fog.tick(&mut world, 50_000).unwrap();
    for team in [0u8, 1, 31, 32, 47, 63] {
        let murk_core::TextureData::U16(v) = fog.read_texture(&format!("p{team:02}"), Texture::Visibility).unwrap().data else { unreachable!() };
        let lit: Vec<usize> = (0..128).filter(|&x| v[4 * 128 + x] > 0).collect();
        assert_eq!(lit, vec![2 * usize::from(team) + 1], "team {team} sees its own column only");
    }
    let mut s = VisionSource::new(1.0);
    s.team = 64;
    let e = world.spawn((Position(Vec3::new(3.0, 4.0, 0.0)), s));
    let err = fog.tick(&mut world, 50_000).unwrap_err().to_string();
    assert!(err.contains("source.team = 64") && err.contains("0..=63"), "{err}");
    world.despawn(e).unwrap();
    assert!(TeamMask::of(&[3, 64]).unwrap_err().to_string().contains("teams[1] = 64"));
}

/// High ground: a height map with a cliff 30 high over its west end (x
/// below 10) and a ridge 4 high across the low ground (x 20 to 21). A unit
/// at the cliff's edge (its position at Z 0, as a game over a height map
/// keeps it) sees the low ground past the ridge only in the instance whose
/// profile puts eyes on the terrain, but not the texel right behind the
/// ridge, in its shadow; a unit on the low ground sees nothing past the
/// ridge in either.
pub fn eyes_on_terrain_see_from_the_high_ground(make: &Make) {
    let mut fog = FogSubsystem::new(make());
    let area = Area { center: Vec3::new(32.0, 4.0, 20.0), extents: Vec3::new(64.0, 8.0, 40.0), yaw_degrees: 0.0 };
    for (name, eyes_on_terrain) in [("flat", false), ("terrain", true)] {
        let profile = Profile { eyes_on_terrain, reveal_walls: false, ..instant() };
        fog.create_instance(InstanceDesc { name: name.into(), area, resolution: 64, lod: 0, observed_teams: TeamMask::ALL, profile }).unwrap();
    }
    let mut world = World::new();
    let cells: Vec<f32> = (0..64 * 8)
        .map(|i| match i % 64 {
            0..=9 => 30.0,
            20 => 4.0,
            _ => 0.0,
        })
        .collect();
    let capture = HeightCapture { origin: Vec2::ZERO, cell_size: 1.0, width: 64, height: 8, cells, mode: CaptureMode::FullScene, enabled: true };
    world.spawn((capture,));
    let eye = |world: &mut World, x: f32| {
        let mut s = VisionSource::new(40.0);
        s.falloff = Some(0.0);
        world.spawn((Position(Vec3::new(x, 4.5, 0.0)), s))
    };
    let high = eye(&mut world, 9.5);
    fog.tick(&mut world, 50_000).unwrap();
    let seen = |fog: &mut FogSubsystem, name: &str| -> Vec<usize> {
        let murk_core::TextureData::U16(v) = fog.read_texture(name, Texture::Visibility).unwrap().data else { unreachable!() };
        (21..64).filter(|&x| v[4 * 64 + x] > 0).collect()
    };
    assert!(seen(&mut fog, "flat").is_empty(), "an eye 1.5 above Z 0 sees nothing past the ridge");
    let from_the_cliff = seen(&mut fog, "terrain");
    assert!((25..=45).all(|x| from_the_cliff.contains(&x)), "the eye on the cliff top sees past the ridge: {from_the_cliff:?}");
    assert!(!from_the_cliff.contains(&21), "the ridge's shadow: {from_the_cliff:?}");
    world.despawn(high).unwrap();
    eye(&mut world, 15.5);
    fog.tick(&mut world, 50_000).unwrap();
    for name in ["flat", "terrain"] {
        assert!(seen(&mut fog, name).is_empty(), "{name}: from the low ground the ridge hides what lies past it");
    }
}

/// One tick and the ticks of the readback latency after it, with the events
/// of all of them: the stealth update of the first tick's masks.
fn step(fog: &mut FogSubsystem, world: &mut World) -> murk_core::TickReport {
    let mut report = fog.tick(world, 50_000).unwrap();
    for _ in 0..murk_core::READBACK_LATENCY_TICKS {
        report.events.extend(fog.tick(world, 50_000).unwrap().events);
    }
    report
}

pub fn policies_hide_mode_and_the_explored_cutoff(make: &Make) {
    let mut fog = fog_64(make, Profile { explored_value: 0.5, visibility_cutoff: 0.75, ..instant() });
    let mut world = World::new();
    let mut s = VisionSource::new(6.0);
    s.falloff = Some(0.0);
    let eye = world.spawn((Position(Vec3::new(10.5, 10.5, 0.0)), s));
    let fog_driven = world.spawn((Position(Vec3::new(11.5, 10.5, 0.0)), StealthActor { hide_mode: HideMode::Hide, ..StealthActor::default() }));
    let always =
        world.spawn((Position(Vec3::new(50.5, 50.5, 0.0)), StealthActor { policy: VisibilityPolicy::AlwaysVisible, ..StealthActor::default() }));
    let never =
        world.spawn((Position(Vec3::new(10.5, 11.5, 0.0)), StealthActor { policy: VisibilityPolicy::AlwaysHidden, ..StealthActor::default() }));
    let lenient = world.spawn((Position(Vec3::new(11.5, 11.5, 0.0)), StealthActor { cutoff_override: 0.4, ..StealthActor::default() }));
    let r = step(&mut fog, &mut world);
    let revealed: Vec<_> = r.events.iter().filter_map(|e| if let StealthEvent::Revealed { actor } = e { Some(*actor) } else { None }).collect();
    assert_eq!(revealed, vec![fog_driven, always, lenient]);
    // The eye leaves: the area is now only explored (0.5), below the cutoff.
    world.despawn(eye).unwrap();
    let r = step(&mut fog, &mut world);
    let st = fog.stealth_state(fog_driven).unwrap();
    assert_eq!(st.last_value, 32768, "remembered at the explored value");
    assert!(!st.last_visible, "remembered areas do not count as visible");
    assert!(fog.stealth_state(lenient).unwrap().last_visible, "a cutoff override below the explored value sees it");
    assert!(fog.stealth_state(always).unwrap().last_visible && !fog.stealth_state(never).unwrap().last_visible);
    assert_eq!(r.events, vec![StealthEvent::Hidden { actor: fog_driven }], "Hide mode spawns no ghost");
    // A despawned actor with a ghost takes the ghost along.
    let ghosted =
        world.spawn((Position(Vec3::new(60.5, 60.5, 0.0)), StealthActor { hide_mode: HideMode::FreezeWithGhost, ..StealthActor::default() }));
    let lamp = world.spawn((Position(Vec3::new(60.5, 60.5, 0.0)), s));
    step(&mut fog, &mut world);
    world.despawn(lamp).unwrap();
    let r = step(&mut fog, &mut world);
    let ghost = match r.events.as_slice() {
        [StealthEvent::Hidden { .. }, StealthEvent::GhostSpawned { ghost, .. }] => *ghost,
        other => panic!("{other:?}"),
    };
    world.despawn(ghosted).unwrap();
    // An actor that is gone loses its ghost at once, not after the latency.
    let r = fog.tick(&mut world, 50_000).unwrap();
    assert_eq!(r.events, vec![StealthEvent::GhostRemoved { actor: ghosted, ghost }]);
    assert!(!world.contains(ghost));
}

/// Every test of this suite, by name.
/// Hashing every tick delivers, in the report of tick `n`, the lockstep hash
/// of the state after tick `n - 2`: the value `lockstep_hash` gave then on a
/// twin subsystem that hashes on demand, also across a snapshot and
/// restore. Hashing changes nothing else.
pub fn every_tick_hash_is_the_lockstep_hash_two_ticks_late(make: &Make) {
    let profile = Profile { fade_in_rate: 6.0, relax_rate: 6.0, ..Profile::default() };
    let mut fogs = [fog_on(make(), profile.clone()), fog_on(make(), profile)];
    fogs[0].set_hash_every_tick(true);
    assert!(fogs[0].hashes_every_tick() && !fogs[1].hashes_every_tick());
    let mut worlds = [seeded_world(5), seeded_world(5)];
    for world in &mut worlds {
        world.spawn((Position(Vec3::new(30.5, 30.5, 0.0)), StealthActor { hide_mode: HideMode::Hide, ..StealthActor::default() }));
    }
    let mut twin_hashes = Vec::new();
    for tick in 0u64..12 {
        if tick == 6 {
            // Hashes in flight travel in a snapshot and land on the same ticks.
            let bytes = fogs[0].snapshot(&worlds[0]).unwrap();
            let mut restored = FogSubsystem::new(make());
            restored.set_hash_every_tick(true);
            restored.restore(&mut worlds[0], &bytes).unwrap();
            fogs[0] = restored;
        }
        let mut reports = Vec::new();
        for (fog, world) in fogs.iter_mut().zip(&mut worlds) {
            for (p, _) in world.query_mut::<(&mut Position, &VisionSource)>() {
                p.0.x = (p.0.x + 1.5) % 64.0;
            }
            reports.push(fog.tick(world, 33_333).unwrap());
        }
        assert_eq!(reports[1].lockstep, None, "tick {tick}: no hash without asking");
        twin_hashes.push(fogs[1].lockstep_hash().unwrap());
        let want = tick.checked_sub(2).map(|n| LandedHash { ticks: n + 1, hash: twin_hashes[n as usize] });
        assert_eq!(reports[0].lockstep, want, "tick {tick}");
        assert_eq!(reports[0].events, reports[1].events, "tick {tick}");
        assert_eq!(fogs[0].lockstep_hash().unwrap(), twin_hashes[tick as usize], "tick {tick}: the same state");
    }
    // Turned off, nothing more lands.
    fogs[0].set_hash_every_tick(false);
    assert_eq!(fogs[0].tick(&mut worlds[0], 33_333).unwrap().lockstep, None);
}

/// The state hash of an instance whose sides are not multiples of a leaf
/// (16), with an output grid of its own size, is the definition of
/// `murk_core::hash` over the masks read back: asked for on some ticks and
/// not others, so that a hash kept between asks must follow every tick's
/// changes, walkers and a blocker that appears.
pub fn the_state_hash_is_the_definition_over_the_masks_read_back(make: &Make) {
    use murk_core::hash::{state_hash, texture_hash_reference};
    let profile = Profile { fade_in_rate: 6.0, relax_rate: 6.0, ..Profile::default() };
    let mut fog = FogSubsystem::new(make());
    let desc = InstanceDesc {
        name: "odd".into(),
        area: Area { center: Vec3::new(32.0, 30.0, 5.0), extents: Vec3::new(70.0, 41.0, 10.0), yaw_degrees: 0.0 },
        resolution: 70,
        lod: 1,
        observed_teams: TeamMask::ALL,
        profile,
    };
    fog.create_instance(desc).unwrap();
    let mut world = seeded_world(7);
    let mut sizes = Vec::new();
    for tick in 0..14 {
        for (p, _) in world.query_mut::<(&mut Position, &VisionSource)>() {
            p.0.x = (p.0.x + 1.5) % 64.0;
        }
        if tick == 5 {
            world.spawn((Position(Vec3::new(20.5, 28.5, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(3.0, 3.0), yaw_degrees: 0.0 })));
        }
        fog.tick(&mut world, 33_333).unwrap();
        if tick % 3 == 1 {
            continue;
        }
        let want = [Texture::Final, Texture::Memory, Texture::Mapped, Texture::Compose].map(|texture| {
            let image = fog.read_texture("odd", texture).unwrap();
            let murk_core::TextureData::U16(texels) = image.data else { panic!("{texture:?} is a 16-bit mask") };
            sizes.push((image.width, image.height));
            texture_hash_reference(image.width, image.height, &texels)
        });
        assert_eq!(fog.state_hash("odd").unwrap(), state_hash(want), "tick {tick}");
    }
    assert!(sizes.iter().all(|(w, h)| w % 16 != 0 || h % 16 != 0), "sides off the leaf grid: {sizes:?}");
    assert!(sizes.iter().any(|&s| s != sizes[0]), "an output grid of its own size: {sizes:?}");
}

pub const TESTS: &[Test] = &[
    ("eyes_on_terrain_see_from_the_high_ground", eyes_on_terrain_see_from_the_high_ground),
    ("sixty_four_teams_each_see_only_their_own", sixty_four_teams_each_see_only_their_own),
    ("the_state_hash_is_the_definition_over_the_masks_read_back", the_state_hash_is_the_definition_over_the_masks_read_back),
    ("every_tick_hash_is_the_lockstep_hash_two_ticks_late", every_tick_hash_is_the_lockstep_hash_two_ticks_late),
    ("infiltration_hidden_seen_ghosted_and_seen_again", infiltration_hidden_seen_ghosted_and_seen_again),
    ("scripted_queries_land_in_the_tick_record", scripted_queries_land_in_the_tick_record),
    ("snapshot_and_resume_continue_byte_identically", snapshot_and_resume_continue_byte_identically),
    ("damaged_snapshots_are_errors_and_leave_the_state_alone", damaged_snapshots_are_errors_and_leave_the_state_alone),
    ("mask_queries_pick_the_closest_instance_in_z_and_poll_once", mask_queries_pick_the_closest_instance_in_z_and_poll_once),
    ("the_immediate_query_ignores_walls_but_respects_radius_cone_and_team", the_immediate_query_ignores_walls_but_respects_radius_cone_and_team),
    ("anti_vision_hides_an_area_from_the_teams_it_targets", anti_vision_hides_an_area_from_the_teams_it_targets),
    ("policies_hide_mode_and_the_explored_cutoff", policies_hide_mode_and_the_explored_cutoff),
];
