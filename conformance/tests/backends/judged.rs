//! The sight sets against an independent judge (`murk_conformance::judge`),
//! which works out from the sources, walls, anti-vision and reveals alone
//! what each observer's teams see: over units that walk, a door opened and
//! closed, a building placed, a reveal made and ended, a hide, anti-vision
//! and per-observer stealth actors; and over random profiles, whose
//! presentation settings (explored and mapped values, memory, cutoff, blur,
//! fade and relax rates) must neither let a hidden entity in nor keep a
//! seen one out past the fixed latency.

use super::{Make, Test};
use murk_conformance::judge::{Disc, Scene};
use murk_core::fixed::hash2;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::{
    AntiVision, Area, Blocker, BlockerShape, FogSubsystem, FogTarget, HideMode, InstanceDesc, Position, Profile, RayMethod, Reveal, RevealArea,
    RevealId, RevealKind, StealthActor, TeamMask, Tracked, VisionSource,
};
use std::collections::{BTreeMap, BTreeSet};

/// Tracked entities by bits: where each stands and its footprint.
type Tracks = BTreeMap<u64, (Vec2, f32)>;

/// The observers: each team alone, and both together.
const OBSERVERS: [(&str, &[u8]); 3] = [("allies", &[0, 1]), ("blue", &[1]), ("red", &[0])];

/// A 64 x 64 grid of one unit a texel, with a slab of one height unit a
/// world unit from 0 (what the judge reads).
fn fog(make: &Make, profile: &Profile) -> FogSubsystem {
    let mut fog = FogSubsystem::new(make());
    for (name, teams) in OBSERVERS {
        let area = Area { center: Vec3::new(32.0, 32.0, 128.0), extents: Vec3::new(64.0, 64.0, 256.0), yaw_degrees: 0.0 };
        let desc =
            InstanceDesc { name: name.into(), area, resolution: 64, lod: 0, observed_teams: TeamMask::of(teams).unwrap(), profile: profile.clone() };
        fog.create_instance(desc).unwrap();
    }
    fog
}

fn eye(radius: f32, eye_height: f32, team: u8) -> VisionSource {
    VisionSource { falloff: Some(0.0), eye_height, team, ..VisionSource::new(radius) }
}

fn wall(x0: f32, y0: f32, x1: f32, y1: f32, height: Option<f32>) -> (Position, Blocker) {
    let shape = BlockerShape::Rect { size: Vec2::new(x1 - x0, y1 - y0), yaw_degrees: 0.0 };
    (Position(Vec3::new((x0 + x1) / 2.0, (y0 + y1) / 2.0, 0.0)), Blocker { height, ..Blocker::wall(shape) })
}

/// The test world: a long wall with a door, two low walls, a watchtower,
/// anti-vision against blue, and 24 tracked units of both teams (some of
/// them sources, four of them per-observer stealth actors), on eighths.
struct Game {
    world: World,
    units: Vec<Entity>,
    door: Option<Entity>,
    reveal: Option<(RevealId, Disc)>,
    stealthy: BTreeSet<u64>,
}

impl Game {
    fn new(seed: i32) -> Self {
        let mut world = World::new();
        world.spawn(wall(30.0, 0.0, 32.0, 28.0, None));
        world.spawn(wall(30.0, 34.0, 32.0, 64.0, None));
        world.spawn(wall(8.0, 44.0, 28.0, 45.0, Some(3.0)));
        world.spawn((Position(Vec3::new(10.5, 54.5, 0.0)), eye(20.0, 8.0, 0)));
        world.spawn((Position(Vec3::new(48.0, 40.0, 0.0)), AntiVision { radius: 6.0, falloff: 0.0, targets: TeamMask::of(&[1]).unwrap(), layer: 0 }));
        let door = Some(world.spawn(wall(30.0, 28.0, 32.0, 34.0, None)));
        let h = |i: i32| hash2(i, seed);
        let (mut units, mut stealthy) = (Vec::new(), BTreeSet::new());
        for i in 0..24 {
            let at = Vec3::new((h(i) % 480) as f32 / 8.0 + 2.0, (h(100 + i) % 480) as f32 / 8.0 + 2.0, 0.0);
            let footprint = [0.0, 0.5, 1.25, 2.0][(h(200 + i) % 4) as usize];
            let e = world.spawn((Position(at), Tracked::new(footprint)));
            if i % 3 != 2 {
                world.insert_one(e, eye([9.0, 12.0, 6.5][(h(300 + i) % 3) as usize], 1.0, (i % 2) as u8)).unwrap();
            }
            if i % 6 == 1 {
                let actor =
                    StealthActor { per_observer: true, hide_mode: HideMode::FreezeWithGhost, cutoff_override: 0.9, ..StealthActor::default() };
                world.insert_one(e, actor).unwrap();
                stealthy.insert(e.to_bits().get());
            }
            units.push(e);
        }
        // A second low wall with a red eye low before it and blue units
        // walking right behind it, hidden from it.
        world.spawn(wall(40.0, 54.0, 60.0, 55.0, Some(3.0)));
        world.spawn((Position(Vec3::new(50.5, 60.5, 0.0)), eye(12.0, 1.0, 0)));
        for x in [43.125, 48.625, 54.375] {
            units.push(world.spawn((Position(Vec3::new(x, 52.375, 0.0)), Tracked::new(0.5), eye(4.0, 1.0, 1))));
            units.push(world.spawn((Position(Vec3::new(x + 1.0, 57.125, 0.0)), Tracked::new(0.0))));
        }
        Self { world, units, door, reveal: None, stealthy }
    }

    /// What happens before tick `t`: units walk, the door opens and closes,
    /// a building goes up, red's scan comes and goes, blue forgets an area,
    /// a unit dies and another comes.
    fn step(&mut self, fog: &mut FogSubsystem, t: usize) {
        for (k, e) in self.units.iter().enumerate() {
            if let Ok(mut p) = self.world.get::<&mut Position>(*e) {
                let dir = if (k + t / 12).is_multiple_of(2) { 0.375 } else { -0.375 };
                p.0.x = (p.0.x + dir).clamp(1.0, 63.0);
                if k % 4 == 0 {
                    p.0.y = (p.0.y + 0.25).min(63.0);
                }
            }
        }
        match t {
            8 => {
                self.world.despawn(self.door.take().expect("the door stands")).unwrap();
            }
            14 => {
                let disc = Disc { at: Vec2::new(52.0, 52.0), radius: 5.0 };
                let scan = Reveal {
                    area: RevealArea::Shape { at: disc.at, shape: BlockerShape::Circle { radius: disc.radius } },
                    kind: RevealKind::Sight { remember: true },
                    fade_ticks: 0,
                    ticks: None,
                };
                self.reveal = Some((fog.reveal(&FogTarget::Team(0), scan).unwrap(), disc));
            }
            20 => {
                self.world.spawn(wall(44.0, 10.0, 50.0, 16.0, None));
            }
            24 => {
                let area = RevealArea::Shape { at: Vec2::new(20.0, 20.0), shape: BlockerShape::Circle { radius: 10.0 } };
                fog.hide(&FogTarget::Team(1), &area).unwrap();
            }
            28 => {
                self.door = Some(self.world.spawn(wall(30.0, 28.0, 32.0, 34.0, None)));
                fog.end_reveal(self.reveal.take().expect("the scan runs").0).unwrap();
            }
            33 => {
                let gone = self.units.remove(5);
                self.world.despawn(gone).unwrap();
            }
            35 => {
                let e = self.world.spawn((Position(Vec3::new(40.125, 30.375, 0.0)), Tracked::new(1.0)));
                self.units.push(e);
            }
            _ => {}
        }
    }

    /// The judge's scene of the world as it is now, with red's scan.
    fn scene(&self, reveal_walls: bool) -> Scene {
        let mut scene = Scene::of_world(&self.world, 64, 64);
        scene.reveal_walls = reveal_walls;
        scene.reveals.extend(self.reveal.map(|(_, disc)| (TeamMask::of(&[0]).unwrap(), disc)));
        scene
    }

    /// Every tracked entity, with where it stands and its footprint.
    fn tracked(&self) -> Tracks {
        self.world.query::<(Entity, &Position, &Tracked)>().iter().map(|(e, p, tr)| (e.to_bits().get(), (p.0.truncate(), tr.footprint))).collect()
    }
}

/// Runs `ticks` ticks of the game under `profile` and checks every
/// observer's set after every tick against the judge: the entities still
/// tracked that the judge saw two ticks before, less the stealth actors
/// hidden from that observer. Returns how many (tick, observer, entity)
/// were seen and how many were not.
fn judged_run(make: &Make, profile: &Profile, seed: i32, ticks: usize) -> (usize, usize) {
    let mut fog = fog(make, profile);
    let mut game = Game::new(seed);
    let mut history: Vec<(Scene, Tracks)> = Vec::new();
    let (mut seen, mut unseen) = (0, 0);
    for t in 0..ticks {
        game.step(&mut fog, t);
        history.push((game.scene(profile.reveal_walls), game.tracked()));
        fog.tick(&mut game.world, 50_000).unwrap_or_else(|e| panic!("tick {t}: {e}"));
        let now = game.tracked();
        for (name, teams) in OBSERVERS {
            let got: BTreeSet<u64> = fog.visible_to(name).unwrap().iter().map(|e| e.to_bits().get()).collect();
            let mut want = BTreeSet::new();
            if t >= 2 {
                let (scene, then) = &history[t - 2];
                for (&bits, &(at, footprint)) in then.iter().filter(|(b, _)| now.contains_key(b)) {
                    if !scene.sees(TeamMask::of(teams).unwrap(), at, footprint) {
                        unseen += 1;
                        continue;
                    }
                    seen += 1;
                    let entity = Entity::from_bits(bits).unwrap();
                    let hidden = game.stealthy.contains(&bits) && fog.stealth_state_for(entity, name).is_some_and(|s| !s.last_visible);
                    if !hidden {
                        want.insert(bits);
                    }
                }
            }
            assert_eq!(got, want, "seed {seed} tick {t} observer {name} under {profile:?}: set against the judge");
        }
    }
    (seen, unseen)
}

/// Under the default profile (hard-edged sources), every set on every
/// tick is the judge's, and the world shows both sides of the rule.
pub fn every_set_is_the_independent_judges(make: &Make) {
    let (seen, unseen) = judged_run(make, &Profile::default(), 1, 44);
    assert!(seen > 300 && unseen > 300, "the world shows both sides: {seen} seen, {unseen} not");
}

/// A random profile: every presentation setting that could lift or hold
/// back the final mask, drawn from `seed`.
fn random_profile(seed: i32) -> Profile {
    let h = |i: i32| hash2(i, 7000 + seed);
    let unit = |i: i32| [0.0, 1.0, (h(i) % 1001) as f32 / 1000.0][(h(i + 50) % 3) as usize];
    Profile {
        explored_value: unit(1),
        mapped_fraction: unit(2),
        show_memory_alpha: unit(3),
        show_memory: h(4) % 4 != 0,
        visibility_cutoff: unit(5),
        smooth_falloff: unit(6),
        blur_radius: h(7) % 6,
        blur_iterations: h(8) % 4,
        blur_sigma: 0.5 + (h(9) % 40) as f32 / 10.0,
        fade_in_rate: [0.05, 1.0, 8.0, 1000.0][(h(10) % 4) as usize],
        relax_rate: [0.05, 0.5, 2.0, 1000.0][(h(11) % 4) as usize],
        forget_rate: [0.0, 0.5, 100.0][(h(12) % 3) as usize],
        reveal_walls: h(13) % 2 == 0,
        ray_method: [RayMethod::Dda, RayMethod::HierarchicalDda][(h(14) % 2) as usize],
        ..Profile::default()
    }
}

/// Property: under random profiles no set holds an entity the judge did
/// not see two ticks before, and none misses one it saw (so no setting
/// keeps a seen entity out past the latency); a cadence is refused by name
/// while entities are tracked, changing nothing; a frozen observer sees
/// nothing.
pub fn no_profile_lifts_a_hidden_entity_into_a_set(make: &Make) {
    for seed in 0..6 {
        judged_run(make, &random_profile(seed), seed, 24);
    }
    // A cadence would judge a stale visibility: refused, nothing changed.
    let mut fog = fog(make, &Profile::default());
    let mut game = Game::new(2);
    for _ in 0..4 {
        fog.tick(&mut game.world, 50_000).unwrap();
    }
    let hash = fog.lockstep_hash().unwrap();
    let mut slow = fog.instance("blue").unwrap().profile.clone();
    slow.update_rate = 0.5;
    fog.apply_profile("blue", slow).unwrap();
    let e = fog.tick(&mut game.world, 50_000).unwrap_err().to_string();
    assert!(e.contains("instance `blue`: profile.update_rate = 0.5"), "{e}");
    assert_eq!(fog.lockstep_hash().unwrap(), hash, "the refused tick changed nothing");
    // Frozen: the observer judges nothing, so its set empties.
    let mut frozen = fog.instance("blue").unwrap().profile.clone();
    (frozen.update_rate, frozen.freeze_state) = (0.0, true);
    fog.apply_profile("blue", frozen).unwrap();
    for _ in 0..3 {
        fog.tick(&mut game.world, 50_000).unwrap();
    }
    assert!(fog.visible_to("blue").unwrap().is_empty(), "a frozen observer sees nothing");
    assert!(!fog.visible_to("red").unwrap().is_empty(), "the others go on");
    // Every observer frozen or disabled: no instance judges, and every set
    // still empties.
    for name in ["allies", "red"] {
        let mut off = fog.instance(name).unwrap().profile.clone();
        if name == "red" {
            off.enabled = false;
        } else {
            off.freeze_state = true;
        }
        fog.apply_profile(name, off).unwrap();
    }
    for _ in 0..3 {
        fog.tick(&mut game.world, 50_000).unwrap();
    }
    for (name, _) in OBSERVERS {
        assert!(fog.visible_to(name).unwrap().is_empty(), "{name} judges nothing and sees nothing");
    }
}

pub const TESTS: &[Test] = &[
    ("every_set_is_the_independent_judges", every_set_is_the_independent_judges),
    ("no_profile_lifts_a_hidden_entity_into_a_set", no_profile_lifts_a_hidden_entity_into_a_set),
];
