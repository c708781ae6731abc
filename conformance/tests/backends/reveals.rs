//! Scripted reveals and hides: sight that shows while it lasts (remembered
//! or not), the mapped state, fades, teams, hides, snapshots, and bad input.

use super::{Make, Test};
use murk_conformance::scene::{desc, fog as fog_on};
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::World;
use murk_core::{
    BlockerShape, FogSubsystem, FogTarget, InstanceDesc, Position, Profile, Reveal, RevealArea, RevealId, RevealKind, TeamMask, Texture, TextureData,
    VisionSource,
};

/// Fades and relaxes at once, remembers for good.
fn instant() -> Profile {
    Profile { fade_in_rate: 1.0e4, relax_rate: 1.0e4, ..Profile::default() }
}

fn read(fog: &mut FogSubsystem, name: &str, texture: Texture) -> Vec<u16> {
    match fog.read_texture(name, texture).unwrap().data {
        TextureData::U16(v) => v,
        other => panic!("{other:?}"),
    }
}

fn i() -> FogTarget {
    FogTarget::Instance("i".into())
}

/// A disk of radius 6 at (40, 24), well inside instance `i`.
fn disk() -> RevealArea {
    RevealArea::Shape { at: Vec2::new(40.0, 24.0), shape: BlockerShape::Circle { radius: 6.0 } }
}

fn sight(remember: bool, ticks: Option<u32>) -> Reveal {
    Reveal { area: disk(), kind: RevealKind::Sight { remember }, fade_ticks: 0, ticks }
}

/// Texel (40, 24) is the disk's centre; (10, 10) is far outside it.
const INSIDE: usize = 24 * 64 + 40;
const OUTSIDE: usize = 10 * 64 + 10;

fn ticks(fog: &mut FogSubsystem, world: &mut World, n: usize) {
    for _ in 0..n {
        fog.tick(world, 50_000).unwrap();
    }
}

pub fn a_sight_reveal_shows_while_it_lasts_and_memory_keeps_it_only_when_asked(make: &Make) {
    for remember in [false, true] {
        let mut fog = fog_on(make(), instant());
        let mut world = World::new();
        let id = fog.reveal(&i(), sight(remember, Some(3))).unwrap();
        assert_eq!(fog.reveals("i").unwrap().len(), 1);
        ticks(&mut fog, &mut world, 2);
        let shown = read(&mut fog, "i", Texture::Final);
        assert_eq!((shown[INSIDE], shown[OUTSIDE]), (65535, 0), "visible inside the disk only (remember {remember})");
        ticks(&mut fog, &mut world, 4);
        assert!(fog.reveals("i").unwrap().is_empty(), "it ended after its 3 ticks");
        assert!(fog.end_reveal(id).is_err(), "an ended reveal cannot be ended again");
        let after = read(&mut fog, "i", Texture::Final);
        let memory = read(&mut fog, "i", Texture::Memory);
        if remember {
            assert_eq!(memory[INSIDE], 65535, "memory took it in");
            assert_eq!(after[INSIDE], 32768, "explored once it ended");
        } else {
            assert_eq!((memory[INSIDE], after[INSIDE]), (0, 0), "forgotten: unexplored again");
        }
    }
}

pub fn a_map_reveal_gives_the_fourth_state_below_explored(make: &Make) {
    let mut fog = fog_on(make(), instant());
    let mut world = World::new();
    let map = Reveal { area: RevealArea::Everywhere, kind: RevealKind::Map, fade_ticks: 0, ticks: None };
    fog.reveal(&i(), map).unwrap();
    world.spawn((Position(Vec3::new(40.0, 24.0, 0.0)), VisionSource::new(8.0)));
    ticks(&mut fog, &mut world, 3);
    assert!(fog.reveals("i").unwrap().is_empty(), "a map reveal ends once taken in");
    let mapped = read(&mut fog, "i", Texture::Mapped);
    assert!(mapped.iter().all(|&v| v == 65535), "the whole map is known");
    let fin = read(&mut fog, "i", Texture::Final);
    let q = fog.shader_params("i").unwrap();
    assert_eq!(q.mapped_value, 0.25, "the mapped value is half the explored value by default");
    assert_eq!(fin[OUTSIDE], 16384, "mapped, never seen: the mapped value");
    assert!(fin[INSIDE] > 32768, "the source sees where it stands: {}", fin[INSIDE]);
    // Gone again with the source, the seen part is explored, above mapped.
    world.clear();
    ticks(&mut fog, &mut world, 3);
    let fin = read(&mut fog, "i", Texture::Final);
    assert!(fin[INSIDE] > 16384 && fin[INSIDE] <= 32768, "explored: {}", fin[INSIDE]);
    assert_eq!(fin[OUTSIDE], 16384, "still mapped");
    // With the mapped share at 0 the state is drawn as unexplored.
    fog.apply_profile("i", Profile { mapped_fraction: 0.0, ..instant() }).unwrap();
    ticks(&mut fog, &mut world, 2);
    assert_eq!(read(&mut fog, "i", Texture::Final)[OUTSIDE], 0);
}

pub fn a_fade_rises_linearly_over_its_ticks(make: &Make) {
    let mut fog = fog_on(make(), instant());
    let mut world = World::new();
    fog.reveal(&i(), Reveal { fade_ticks: 4, ..sight(false, None) }).unwrap();
    let mut seen = Vec::new();
    for _ in 0..6 {
        fog.tick(&mut world, 50_000).unwrap();
        seen.push(read(&mut fog, "i", Texture::Compose)[INSIDE]);
    }
    assert_eq!(seen, [16383, 32767, 49151, 65535, 65535, 65535]);
}

pub fn team_reveals_reach_every_instance_observing_the_team(make: &Make) {
    let mut fog = FogSubsystem::new(make());
    for (name, teams) in [("red", [0u8].as_slice()), ("blue", &[1]), ("allies", &[0, 1])] {
        fog.create_instance(InstanceDesc { name: name.into(), observed_teams: TeamMask::of(teams).unwrap(), ..desc(instant()) }).unwrap();
    }
    let mut world = World::new();
    let id = fog.reveal(&FogTarget::Team(0), sight(false, None)).unwrap();
    ticks(&mut fog, &mut world, 2);
    for (name, lit) in [("red", true), ("blue", false), ("allies", true)] {
        assert_eq!(read(&mut fog, name, Texture::Final)[INSIDE] == 65535, lit, "{name}");
    }
    fog.end_reveal(id).unwrap();
    ticks(&mut fog, &mut world, 2);
    assert!(["red", "allies"].iter().all(|n| fog.reveals(n).unwrap().is_empty()), "ended on every instance");
    assert_eq!(read(&mut fog, "red", Texture::Final)[INSIDE], 0);
}

pub fn hide_forgets_an_area_and_hide_all_ends_every_reveal(make: &Make) {
    let mut fog = fog_on(make(), instant());
    let mut world = World::new();
    fog.reveal(&i(), Reveal { area: RevealArea::Everywhere, kind: RevealKind::Map, fade_ticks: 0, ticks: None }).unwrap();
    let s = world.spawn((Position(Vec3::new(40.0, 24.0, 0.0)), VisionSource::new(8.0)));
    ticks(&mut fog, &mut world, 2);
    world.despawn(s).unwrap();
    ticks(&mut fog, &mut world, 2);
    let explored = read(&mut fog, "i", Texture::Final)[INSIDE];
    assert!(explored > 16384 && explored <= 32768, "explored: {explored}");
    fog.hide(&i(), &disk()).unwrap();
    let (memory, mapped) = (read(&mut fog, "i", Texture::Memory), read(&mut fog, "i", Texture::Mapped));
    assert_eq!((memory[INSIDE], mapped[INSIDE], mapped[OUTSIDE]), (0, 0, 65535), "forgotten inside the disk only");
    ticks(&mut fog, &mut world, 2);
    let fin = read(&mut fog, "i", Texture::Final);
    assert_eq!((fin[INSIDE], fin[OUTSIDE]), (0, 16384));
    fog.reveal_all(&i()).unwrap();
    ticks(&mut fog, &mut world, 2);
    assert!(read(&mut fog, "i", Texture::Final).iter().all(|&v| v == 65535), "reveal all");
    fog.hide_all(&i()).unwrap();
    assert!(fog.reveals("i").unwrap().is_empty());
    ticks(&mut fog, &mut world, 2);
    let fin = read(&mut fog, "i", Texture::Final);
    assert!(fin.iter().all(|&v| v == 0), "hide all: nothing known, nothing seen");
}

pub fn reveals_travel_in_snapshots(make: &Make) {
    let run = |cut: Option<usize>| {
        let mut fog = fog_on(make(), Profile { fade_in_rate: 3.0, relax_rate: 2.0, ..Profile::default() });
        let mut world = World::new();
        fog.reveal(&i(), Reveal { fade_ticks: 5, ..sight(true, Some(7)) }).unwrap();
        fog.reveal(&i(), Reveal { area: disk(), kind: RevealKind::Map, fade_ticks: 4, ticks: None }).unwrap();
        let mut hashes = Vec::new();
        for t in 0..10 {
            if Some(t) == cut {
                let bytes = fog.snapshot(&world).unwrap();
                let mut other = FogSubsystem::new(make());
                other.restore(&mut world, &bytes).unwrap();
                assert_eq!(other.reveals("i").unwrap(), fog.reveals("i").unwrap());
                fog = other;
            }
            fog.tick(&mut world, 50_000).unwrap();
            hashes.push(fog.lockstep_hash().unwrap());
        }
        // Ids go on from the restored counter.
        (hashes, fog.reveal_all(&i()).unwrap())
    };
    let straight = run(None);
    for cut in [1, 3, 6] {
        assert_eq!(run(Some(cut)), straight, "restored at tick {cut}");
    }
    assert_eq!(straight.1, RevealId(2));
}

pub fn bad_reveals_and_hides_are_named_and_change_nothing(make: &Make) {
    let mut fog = fog_on(make(), instant());
    let mut world = World::new();
    fog.reveal(&i(), sight(true, Some(2))).unwrap();
    ticks(&mut fog, &mut world, 1);
    let before = (fog.lockstep_hash().unwrap(), fog.reveals("i").unwrap().to_vec());
    let shaped = |at: Vec2, shape: BlockerShape| Reveal { area: RevealArea::Shape { at, shape }, ..sight(false, None) };
    let cases: Vec<(Reveal, FogTarget, &str)> = vec![
        (shaped(Vec2::new(f32::NAN, 0.0), BlockerShape::Circle { radius: 2.0 }), i(), "reveal.area.at.x = NaN"),
        (shaped(Vec2::ZERO, BlockerShape::Circle { radius: -2.0 }), i(), "reveal.area.shape.circle.radius = -2"),
        (shaped(Vec2::ZERO, BlockerShape::Circle { radius: 1.0e30 }), i(), "too long"),
        (shaped(Vec2::ZERO, BlockerShape::Rect { size: Vec2::new(0.0, 1.0), yaw_degrees: 0.0 }), i(), "reveal.area.shape.rect.size = 0"),
        (shaped(Vec2::ZERO, BlockerShape::Polygon { points: vec![Vec2::ZERO, Vec2::X] }), i(), "needs at least 3 points"),
        (sight(false, Some(0)), i(), "reveal.ticks = 0"),
        (Reveal { kind: RevealKind::Map, ..sight(false, Some(3)) }, i(), "applies to sight reveals only"),
        (sight(false, None), FogTarget::Instance("nowhere".into()), "nowhere"),
        (sight(false, None), FogTarget::Team(40), "target.team = 40"),
        (sight(false, None), FogTarget::Team(3), "observed by no instance"),
    ];
    // Team 3 is observed by no instance once `i` observes team 0 only.
    fog.set_observed_teams("i", TeamMask::of(&[0]).unwrap()).unwrap();
    for (reveal, target, needle) in cases {
        let e = fog.reveal(&target, reveal).unwrap_err().to_string();
        assert!(e.contains(needle), "`{e}` should name `{needle}`");
    }
    let e = fog.hide(&i(), &RevealArea::Shape { at: Vec2::new(0.0, f32::INFINITY), shape: BlockerShape::Circle { radius: 1.0 } }).unwrap_err();
    assert!(e.to_string().contains("hide.area.at.y = inf"), "{e}");
    assert!(fog.hide(&FogTarget::Team(3), &RevealArea::Everywhere).is_err());
    assert!(fog.end_reveal(RevealId(99)).unwrap_err().to_string().contains("reveal id = 99"));
    fog.set_observed_teams("i", TeamMask::ALL).unwrap();
    assert_eq!((fog.lockstep_hash().unwrap(), fog.reveals("i").unwrap().to_vec()), before, "nothing changed");
}

/// Every test of this suite, by name.
pub const TESTS: &[Test] = &[
    (
        "a_sight_reveal_shows_while_it_lasts_and_memory_keeps_it_only_when_asked",
        a_sight_reveal_shows_while_it_lasts_and_memory_keeps_it_only_when_asked,
    ),
    ("a_map_reveal_gives_the_fourth_state_below_explored", a_map_reveal_gives_the_fourth_state_below_explored),
    ("a_fade_rises_linearly_over_its_ticks", a_fade_rises_linearly_over_its_ticks),
    ("team_reveals_reach_every_instance_observing_the_team", team_reveals_reach_every_instance_observing_the_team),
    ("hide_forgets_an_area_and_hide_all_ends_every_reveal", hide_forgets_an_area_and_hide_all_ends_every_reveal),
    ("reveals_travel_in_snapshots", reveals_travel_in_snapshots),
    ("bad_reveals_and_hides_are_named_and_change_nothing", bad_reveals_and_hides_are_named_and_change_nothing),
];
