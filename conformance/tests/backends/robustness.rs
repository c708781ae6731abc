//! Hostile and extreme input: huge coordinates and times, counters near
//! their limits. Each case is a named error or a saturated value, never a
//! wrapped one (these tests run with overflow checks, where a wrap panics).

use super::{Make, Test};
use murk_conformance::scene::{fog as fog_on, landed};
use murk_core::glam::Vec3;
use murk_core::hecs::World;
use murk_core::FogBody;
use murk_core::{instance_textures, InstanceDims, MurkError, Position, Profile, TeamMask, Texture, TextureSet, VisionSource};

pub fn the_immediate_query_rejects_coordinates_its_integers_cannot_hold(make: &Make) {
    let fog = fog_on(make(), Profile::default());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(-4.0e16, 0.0, 0.0)), VisionSource::new(1.0)));
    let e = fog.query_immediate(&world, Vec3::new(4.0e16, 0.0, 0.0), TeamMask::ALL).unwrap_err().to_string();
    assert!(e.contains("point.x = 40000000000000000") && e.contains("overflow"), "{e}");
    // Far, but inside the bound: an exact answer.
    let mut world = World::new();
    world.spawn((Position(Vec3::new(-1.0e16, 0.0, 0.0)), VisionSource::new(1.0)));
    assert!(!fog.query_immediate(&world, Vec3::new(1.0e16, 0.0, 0.0), TeamMask::ALL).unwrap());
    assert!(fog.query_immediate(&world, Vec3::new(-1.0e16, 0.0, 0.0), TeamMask::ALL).unwrap());
    // A source beyond the bound is named.
    let mut world = World::new();
    let e = world.spawn((Position(Vec3::new(f32::MAX, 0.0, 0.0)), VisionSource::new(1.0)));
    let err = fog.query_immediate(&world, Vec3::ZERO, TeamMask::ALL).unwrap_err().to_string();
    assert!(err.contains(&format!("entity {}.position.x", e.id())), "{err}");
    // A huge radius, too.
    let mut world = World::new();
    world.spawn((Position(Vec3::ZERO), VisionSource::new(1.0e30)));
    assert!(fog
        .query_immediate(&world, Vec3::ZERO, TeamMask::ALL)
        .unwrap_err()
        .to_string()
        .contains("source.radius = 1000000000000000000000000000000"));
}

pub fn rate_steps_saturate_for_any_elapsed_time(make: &Make) {
    let mut fog = fog_on(make(), Profile { fade_in_rate: 1.0e4, relax_rate: 1.0e4, forget_rate: 1.0e4, ..Profile::default() });
    let world = World::new();
    // 7.82 hours at 655 350 000 units per second passes 2^64 in a 64-bit product.
    for elapsed in [10_000_000u64, 28_150_000_000, 30_000_000_000, u64::MAX] {
        let (_, input) = fog.frame_inputs("i", &world, elapsed).unwrap();
        assert_eq!((input.fade_in_step, input.relax_step, input.forget_step), (u32::MAX, u32::MAX, u32::MAX), "elapsed {elapsed} µs");
    }
    // Through ticks: a long frozen stretch, then the fog moves again.
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(10.0)));
    fog.tick(&mut world, 33_333).unwrap();
    fog.apply_profile("i", Profile { freeze_state: true, fade_in_rate: 1.0e4, relax_rate: 1.0e4, ..Profile::default() }).unwrap();
    for _ in 0..7 {
        fog.tick(&mut world, u32::MAX).unwrap();
    }
    fog.apply_profile("i", Profile { fade_in_rate: 1.0e4, relax_rate: 1.0e4, ..Profile::default() }).unwrap();
    fog.tick(&mut world, 33_333).unwrap();
    fog.tick(&mut world, 33_333).unwrap();
    let final_mask = fog.final_mask("i").unwrap();
    assert_eq!(final_mask[20 * 64 + 20], 65535);
}

/// A snapshot with its tick and next query handle replaced.
fn with_counters(bytes: &[u8], tick: u64, next_query: u64) -> Vec<u8> {
    let mut body = FogBody::decode(bytes).unwrap();
    (body.tick, body.next_query) = (tick, next_query);
    body.encode().unwrap()
}

pub fn counters_at_their_limits_saturate_or_refuse(make: &Make) {
    let mut fog = fog_on(make(), Profile::default());
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(10.0)));
    fog.tick(&mut world, 33_333).unwrap();
    let snap = fog.snapshot(&world).unwrap();
    fog.restore(&mut world, &with_counters(&snap, u64::MAX, u64::MAX)).unwrap();
    fog.tick(&mut world, 33_333).unwrap();
    assert_eq!(fog.tick_count(), u64::MAX, "the tick counter saturates");
    let e = fog.submit_mask_query(&[Vec3::new(20.5, 20.5, 0.0)], None).unwrap_err().to_string();
    assert!(e.contains("query handle = 18446744073709551615"), "{e}");
    // The last handle below u64::MAX still works, once.
    fog.restore(&mut world, &with_counters(&snap, 7, u64::MAX - 1)).unwrap();
    let h = fog.submit_mask_query(&[Vec3::new(20.5, 20.5, 0.0)], None).unwrap();
    assert_eq!(h.0, u64::MAX - 1);
    landed(&mut fog, h);
    assert!(fog.submit_mask_query(&[Vec3::ZERO], None).is_err());
}

/// Every test of this suite, by name.
/// A key no instance has and a ticket never given out are typed errors,
/// named by the backend, on every backend.
pub fn unknown_keys_and_tickets_are_typed_errors(make: &Make) {
    let mut backend = make();
    let name = backend.name();
    let kind = name.split('[').next().unwrap_or_default().to_string();
    assert_eq!(backend.poll_samples(99, false), Err(MurkError::UnknownTicket { backend: kind.clone(), what: "sample", ticket: 99 }), "{name}");
    let e = backend.blend(7, 0).unwrap_err();
    assert_eq!(e, MurkError::UnknownKey { backend: kind.clone(), key: 7 }, "{name}");
    assert_eq!(e.to_string(), format!("backend {kind}: no instance with key 7"));
    // The caller's key, whatever key space the backend keeps inside.
    let unknown = MurkError::UnknownKey { backend: kind, key: 7 };
    assert_eq!(backend.read_texture(7, Texture::Final).unwrap_err(), unknown, "{name}");
    assert_eq!(backend.read_texture(7, Texture::Memory).unwrap_err(), unknown, "{name}");
    // A set that fits an instance of key 0, written to key 7.
    let dims = InstanceDims { width: 4, height: 4, out_width: 8, out_height: 8 };
    backend.create_instance(0, dims).unwrap();
    let textures = instance_textures(dims, None).into_iter().map(|s| (s.texture, backend.read_texture(0, s.texture).unwrap())).collect();
    let set = TextureSet::new(dims, None, textures, "key 0").unwrap();
    backend.write_textures(0, &set).unwrap();
    assert_eq!(backend.write_textures(7, &set).unwrap_err(), unknown, "{name}");
    // A pyramid level that was not built is named.
    let e = backend.read_texture(0, Texture::Mip(1)).unwrap_err().to_string();
    assert!(e.contains("mip level 1 is not built (0 levels are)"), "{name}: {e}");
}

pub const TESTS: &[Test] = &[
    ("unknown_keys_and_tickets_are_typed_errors", unknown_keys_and_tickets_are_typed_errors),
    ("the_immediate_query_rejects_coordinates_its_integers_cannot_hold", the_immediate_query_rejects_coordinates_its_integers_cannot_hold),
    ("rate_steps_saturate_for_any_elapsed_time", rate_steps_saturate_for_any_elapsed_time),
    ("counters_at_their_limits_saturate_or_refuse", counters_at_their_limits_saturate_or_refuse),
];
