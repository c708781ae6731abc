//! The explored count on every backend: after ticks that explore and
//! forget, loads, restores, imported memory and a moved area, it equals a
//! count over the memory mask.

use super::{Make, Test};
use murk_conformance::scene::{desc, fog};
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::{Area, Blocker, BlockerShape, FogSubsystem, Position, Profile, Texture, TextureData, VisionSource};

/// The texels of the instance's memory above 0, counted from the mask.
fn counted(fog: &mut FogSubsystem) -> u64 {
    match fog.read_texture("i", Texture::Memory).unwrap().data {
        TextureData::U16(memory) => memory.iter().filter(|&&m| m > 0).count() as u64,
        other => panic!("memory holds {other:?}"),
    }
}

fn check(fog: &mut FogSubsystem, when: &str) {
    let explored = fog.explored("i").unwrap();
    assert_eq!(explored.texels, counted(fog), "{when}");
    assert_eq!(explored.of, 64 * 64, "{when}");
    assert!((0.0..=1.0).contains(&explored.fraction()), "{when}");
}

/// Three scouts walking across the standard instance, their memory fading
/// behind them, past a wall.
fn walk(fog: &mut FogSubsystem, world: &mut World, scouts: &[Entity], tick: u32) {
    for (i, &e) in scouts.iter().enumerate() {
        let x = 4.5 + ((tick * (2 + i as u32)) % 56) as f32;
        world.get::<&mut Position>(e).unwrap().0 = Vec3::new(x, 8.5 + 20.0 * i as f32, 0.0);
    }
    fog.tick(world, 50_000).unwrap();
}

pub fn the_explored_count_is_a_count_over_the_memory_mask(make: &Make) {
    let profile = Profile { forget_rate: 3.0, fade_in_rate: 40.0, ..Profile::default() };
    let mut fog = fog(make(), profile.clone());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(32.0, 30.0, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(20.0, 2.0), yaw_degrees: 0.0 })));
    let scouts: Vec<Entity> = (0..3).map(|_| world.spawn((Position(Vec3::ZERO), VisionSource::new(6.0)))).collect();
    check(&mut fog, "before any tick");
    let mut saved = None;
    for tick in 0..40 {
        walk(&mut fog, &mut world, &scouts, tick);
        // Asked on most ticks, not all: a count recounts what changed
        // since it was last asked, however many ticks ago.
        if tick % 3 != 1 {
            check(&mut fog, &format!("tick {tick}"));
        }
        match tick {
            10 => saved = Some(fog.save_state(&world).unwrap()),
            20 => {
                fog.load_state(&mut world, saved.as_ref().unwrap()).unwrap();
                check(&mut fog, "after a load");
            }
            25 => {
                let bytes = fog.snapshot(&world).unwrap();
                walk(&mut fog, &mut world, &scouts, tick);
                fog.restore(&mut world, &bytes).unwrap();
                check(&mut fog, "after a restore");
            }
            30 => {
                let blob = fog.export_memory("i").unwrap();
                walk(&mut fog, &mut world, &scouts, tick);
                fog.import_memory("i", &blob).unwrap();
                check(&mut fog, "after an import");
            }
            35 => {
                let area = Area { center: Vec3::new(40.0, 32.0, 5.0), ..desc(profile.clone()).area };
                fog.set_area("i", area).unwrap();
                check(&mut fog, "after the area moved");
            }
            _ => {}
        }
    }
    assert!(fog.explored("i").unwrap().texels > 0, "the scouts explored something");
    assert!(fog.explored("nope").unwrap_err().to_string().contains("nope"));
}

/// The count without waiting: asked, it lands (at once on the CPU, a few
/// polls later on a device), equal to the waited count of the same memory;
/// a count asked and then dropped by a load leaves no readback behind; an
/// unknown instance is named. (That no poll waits is counted in the GPU
/// suite, on a device of its own: this suite's tests share theirs.)
pub fn the_explored_count_lands_when_polled(make: &Make) {
    let mut fog = fog(make(), Profile { fade_in_rate: 40.0, ..Profile::default() });
    let mut world = World::new();
    let scouts: Vec<Entity> = (0..3).map(|_| world.spawn((Position(Vec3::ZERO), VisionSource::new(6.0)))).collect();
    let landed = |fog: &mut FogSubsystem| {
        for _ in 0..2000 {
            if let Some(e) = fog.poll_explored("i").unwrap() {
                return e;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("the explored count did not land in 2 s");
    };
    for tick in 0..12 {
        walk(&mut fog, &mut world, &scouts, tick);
        if tick % 4 == 3 {
            let polled = landed(&mut fog);
            assert_eq!(polled, fog.explored("i").unwrap(), "tick {tick}");
            assert!(polled.texels > 0, "tick {tick}: the scouts explored something");
        }
    }
    let held = fog.readbacks_held();
    let state = fog.save_state(&world).unwrap();
    walk(&mut fog, &mut world, &scouts, 12);
    // Asked, then dropped by the load before it is polled again.
    let _ = fog.poll_explored("i").unwrap();
    fog.load_state(&mut world, &state).unwrap();
    assert_eq!(landed(&mut fog), fog.explored("i").unwrap(), "after a load");
    drop(state);
    walk(&mut fog, &mut world, &scouts, 13);
    walk(&mut fog, &mut world, &scouts, 14);
    assert!(fog.readbacks_held() <= held, "{} readbacks held, {held} before", fog.readbacks_held());
    assert!(fog.poll_explored("nope").unwrap_err().to_string().contains("nope"));
}

pub const TESTS: &[Test] = &[
    ("the_explored_count_is_a_count_over_the_memory_mask", the_explored_count_is_a_count_over_the_memory_mask),
    ("the_explored_count_lands_when_polled", the_explored_count_lands_when_polled),
];
