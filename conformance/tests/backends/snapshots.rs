//! Snapshots whose checksum is right but whose body is not: every field is
//! checked against the rest before anything is replaced, and restoring never
//! touches entities the game owns.
//!
//! (Over 600 lines as one concept: every test corrupts one field of the
//! same body and checks the same promise, nothing changes.)

use super::{Make, Test};
use murk_conformance::scene::{desc, fog as fog_on, seeded_world};
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::{
    instance_textures, mip_atlas, pass_outputs, read_row, Blocker, BlockerShape, CaptureMode, FogBody, FogSubsystem, Grid, HeightCapture, HideMode,
    InstanceDesc, InstanceDims, MurkError, OcclusionBuild, Position, Profile, RayMethod, Resolution, StealthActor, StealthEvent, TeamMask, TexelKind,
    Texture, TextureBody, TextureData, TextureImage, TextureSet, TiledImage, Tracked, TransientReveal, VisionSource, TEXTURES,
};

/// Decodes a snapshot's body for editing.
fn body(bytes: &[u8]) -> FogBody {
    FogBody::decode(bytes).unwrap()
}

/// Re-encodes an edited body with a valid checksum.
fn write(body: &FogBody) -> Vec<u8> {
    body.encode().unwrap()
}

fn profile(method: RayMethod) -> Profile {
    Profile { fade_in_rate: 1.0e4, relax_rate: 1.0e4, ray_method: method, ..Profile::default() }
}

/// Two instances (`a` with Hierarchical DDA, so it has mips; `b` with the
/// distance field), a height capture, a source, and three ticks.
fn world_and_fog(make: &Make) -> (World, FogSubsystem) {
    let mut fog = FogSubsystem::new(make());
    fog.create_instance(InstanceDesc { name: "a".into(), ..desc(profile(RayMethod::HierarchicalDda)) }).unwrap();
    fog.create_instance(InstanceDesc { name: "b".into(), ..desc(profile(RayMethod::DistanceField)) }).unwrap();
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(12.0)));
    let mut cells = vec![f32::NAN; 64 * 64];
    cells[20 * 64 + 26] = 3.0;
    let mode = CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true };
    world.spawn((HeightCapture { origin: Vec2::ZERO, cell_size: 1.0, width: 64, height: 64, cells, mode, enabled: true },));
    for _ in 0..3 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    (world, fog)
}

/// Every texture a pass writes of every instance, in name order.
fn textures(fog: &mut FogSubsystem) -> Vec<TextureImage> {
    let mut out = Vec::new();
    for name in fog.instance_names() {
        for row in pass_outputs() {
            out.push(fog.read_row(&name, row).unwrap());
        }
    }
    out
}

/// Restores `bytes`, expects an error containing `needle`, and checks that
/// nothing changed.
fn rejected(make: &Make, bytes: &[u8], needle: &str) {
    let (mut world, mut fog) = world_and_fog(make);
    let before = (fog.lockstep_hash().unwrap(), fog.instance_names(), fog.tick_count(), world.len());
    let e = fog.restore(&mut world, bytes).unwrap_err();
    assert!(e.to_string().contains(needle), "`{e}` should mention `{needle}`");
    assert!(matches!(e, MurkError::InvalidValue { .. }), "{e:?}");
    assert_eq!(before, (fog.lockstep_hash().unwrap(), fog.instance_names(), fog.tick_count(), world.len()), "a rejected snapshot changes nothing");
    fog.tick(&mut world, 33_333).unwrap();
}

fn snapshot(make: &Make) -> Vec<u8> {
    let (world, mut fog) = world_and_fog(make);
    fog.snapshot(&world).unwrap()
}

/// The texture `name` of instance `instance`.
fn texture<'a>(body: &'a mut FogBody, instance: usize, name: &str) -> &'a mut TextureBody {
    body.instances[instance].textures.iter_mut().find(|t| t.name == name).unwrap()
}

pub fn the_editor_reads_and_writes_a_snapshot_unchanged(make: &Make) {
    let bytes = snapshot(make);
    assert_eq!(write(&body(&bytes)), bytes);
    let (mut world, mut fog) = world_and_fog(make);
    fog.restore(&mut world, &bytes).unwrap();
}

pub fn a_capture_of_the_wrong_length_is_named(make: &Make) {
    let mut b = body(&snapshot(make));
    b.instances[0].state.capture = Some(vec![0; 13]);
    rejected(make, &write(&b), "snapshot instance `a`.capture = 13 heights");
    b.instances[0].state.capture = Some(vec![0; 64 * 64 - 1]);
    rejected(make, &write(&b), "must hold 64x64 heights");
    let mut capture = vec![0; 64 * 64];
    capture[0] = i32::MAX;
    b.instances[0].state.capture = Some(capture);
    rejected(make, &write(&b), "snapshot instance `a`.capture[0] = 2147483647");
}

pub fn two_instances_with_one_name_are_named(make: &Make) {
    let mut b = body(&snapshot(make));
    b.instances[1].desc.name = "a".into();
    rejected(make, &write(&b), "snapshot.instances.name = a: is used by two instances");
}

pub fn missing_or_misshapen_textures_are_named(make: &Make) {
    // No textures at all.
    let mut b = body(&snapshot(make));
    b.instances[0].textures.clear();
    rejected(make, &write(&b), "snapshot instance `a`.textures");
    // The memory texture missing.
    let mut b = body(&snapshot(make));
    b.instances[0].textures.retain(|t| t.name != "memory");
    rejected(make, &write(&b), "must be exactly coverage, height, mip1");
    // A mip of the wrong size (the data size follows, so it decodes).
    let mut b = body(&snapshot(make));
    *texture(&mut b, 0, "mip1") = TextureBody { name: "mip1".into(), width: 16, height: 16, kind: 0, bytes: vec![0; 256] };
    rejected(make, &write(&b), "snapshot instance `a`.textures.mip1 = 16x16 of 256 u8 texels: must be 32x32 of u8");
    // A texture whose bytes do not fill its size.
    let mut b = body(&snapshot(make));
    texture(&mut b, 0, "final").bytes.pop();
    let e = write(&b);
    let (mut world, mut fog) = world_and_fog(make);
    assert!(fog.restore(&mut world, &e).unwrap_err().to_string().contains("texture `final` holds 8191 bytes, 64x64 needs 8192"));
    // A distance field of the wrong size.
    let mut b = body(&snapshot(make));
    *texture(&mut b, 1, "distance_field") = TextureBody { name: "distance_field".into(), width: 1, height: 1, kind: 3, bytes: vec![0; 4] };
    rejected(make, &write(&b), "snapshot instance `b`.textures.distance_field = 1x1");
    // Mips where the build made none.
    let mut b = body(&snapshot(make));
    b.instances[0].state.built_for.as_mut().unwrap().mips = false;
    rejected(make, &write(&b), "snapshot instance `a`.textures");
    // A distance-field scale the profile cannot have.
    let mut b = body(&snapshot(make));
    b.instances[1].state.built_for.as_mut().unwrap().distance_field_scale = 3;
    rejected(make, &write(&b), "snapshot instance `b`.built_for.distance_field_scale = 3: must be 0, 1, 2 or 4");
    // Coverage out of range.
    let mut b = body(&snapshot(make));
    texture(&mut b, 0, "coverage").bytes[5] = 7;
    rejected(make, &write(&b), "snapshot instance `a`.textures.coverage[5] = 7");
}

pub fn query_handles_and_stealth_states_must_agree_with_the_rest(make: &Make) {
    let (mut world, mut fog) = world_and_fog(make);
    let h = fog.submit_mask_query(&[Vec3::new(20.5, 20.5, 0.0)], None).unwrap();
    let bytes = fog.snapshot(&world).unwrap();
    let mut b = body(&bytes);
    b.next_query = h.0;
    rejected(make, &write(&b), "snapshot.queries = 0: is a pending handle at or past the next handle 0");
    // The good snapshot still restores.
    fog.restore(&mut world, &bytes).unwrap();
}

/// A world where actor `spy` was seen, then hid: murk spawned a ghost.
fn ghosted(make: &Make) -> (World, FogSubsystem, Entity, Entity) {
    let mut fog = fog_on(make(), profile(RayMethod::Dda));
    let mut world = World::new();
    let spy = world.spawn((Position(Vec3::new(40.5, 40.5, 0.0)), StealthActor { hide_mode: HideMode::FreezeWithGhost, ..StealthActor::default() }));
    let lamp = world.spawn((Position(Vec3::new(40.5, 40.5, 0.0)), VisionSource::new(8.0)));
    fog.tick(&mut world, 50_000).unwrap();
    fog.tick(&mut world, 50_000).unwrap();
    world.despawn(lamp).unwrap();
    let mut ghost = None;
    for _ in 0..4 {
        for e in fog.tick(&mut world, 50_000).unwrap().events {
            if let StealthEvent::GhostSpawned { ghost: g, .. } = e {
                ghost = Some(g);
            }
        }
    }
    (world, fog, spy, ghost.expect("a ghost was spawned"))
}

pub fn restoring_never_despawns_a_game_entity_that_reused_a_ghost_id(make: &Make) {
    let (mut world, mut fog, spy, ghost) = ghosted(make);
    let bytes = fog.snapshot(&world).unwrap();
    // The game removes the ghost and spawns a unit, which gets the ghost's index.
    world.despawn(ghost).unwrap();
    let unit = world.spawn((Position(Vec3::new(1.0, 2.0, 0.0)), TransientReveal { remaining_ticks: 99 }));
    assert_eq!(unit.id(), ghost.id(), "hecs reuses the index");
    fog.restore(&mut world, &bytes).unwrap();
    assert!(world.contains(unit), "the game's unit survives the restore");
    assert_eq!(world.get::<&Position>(unit).unwrap().0, Vec3::new(1.0, 2.0, 0.0));
    assert_eq!(world.get::<&TransientReveal>(unit).unwrap().remaining_ticks, 99, "and is not touched");
    let new_ghost = fog.stealth_state(spy).unwrap().ghost.unwrap();
    assert_ne!(new_ghost, unit);
    assert_eq!(world.get::<&murk_core::Ghost>(new_ghost).unwrap().actor, spy, "the ghost is a new entity");
    // Without a conflict the ghost keeps its id.
    let (mut world, mut fog, spy, ghost) = ghosted(make);
    let bytes = fog.snapshot(&world).unwrap();
    world.despawn(ghost).unwrap();
    fog.restore(&mut world, &bytes).unwrap();
    assert_eq!(fog.stealth_state(spy).unwrap().ghost, Some(ghost));
    assert!(world.get::<&murk_core::Ghost>(ghost).is_ok());
}

pub fn a_ghost_shared_by_two_states_is_named(make: &Make) {
    let (mut world, mut fog, _spy, _ghost) = ghosted(make);
    let bytes = fog.snapshot(&world).unwrap();
    let mut b = body(&bytes);
    b.stealth[0].state.ghost = Entity::from_bits(b.stealth[0].actor);
    let e = fog.restore(&mut world, &write(&b)).unwrap_err().to_string();
    assert!(e.contains("ghost") && e.contains("shared with another ghost or actor"), "{e}");
    let mut b = body(&bytes);
    b.stealth[0].state.instance = Some("nowhere".into());
    let e = fog.restore(&mut world, &write(&b)).unwrap_err().to_string();
    assert!(e.contains("instance = nowhere: names no instance"), "{e}");
    let mut b = body(&bytes);
    b.stealth[0].state.last_known = Some([f32::NAN.to_bits(), 0, 0]);
    let e = fog.restore(&mut world, &write(&b)).unwrap_err().to_string();
    assert!(e.contains("last_known") && e.contains("must be finite numbers"), "{e}");
}

pub fn a_ghost_id_in_the_billions_is_not_allocated_up_to(make: &Make) {
    // Found by the snapshot fuzz target: spawn_at(3 000 000 000) made hecs
    // allocate 24 GiB and abort.
    let (mut world, mut fog, spy, _ghost) = ghosted(make);
    let mut b = body(&fog.snapshot(&world).unwrap());
    b.stealth[0].state.ghost = Entity::from_bits((1 << 32) | 3_000_000_000);
    fog.restore(&mut world, &write(&b)).unwrap();
    let ghost = fog.stealth_state(spy).unwrap().ghost.unwrap();
    assert!(ghost.id() < 1000, "a new entity: {ghost:?}");
    assert_eq!(world.get::<&murk_core::Ghost>(ghost).unwrap().actor, spy);
}

/// A rollback's in-memory state: loaded back after more ticks, the state
/// and its continuation are those of the snapshot of the same moment.
pub fn a_saved_state_loads_back_as_its_snapshot_restores(make: &Make) {
    let (mut world, mut fog) = world_and_fog(make);
    let state = fog.save_state(&world).unwrap();
    let bytes = fog.snapshot(&world).unwrap();
    let hash = fog.lockstep_hash().unwrap();
    let mut later = Vec::new();
    for _ in 0..3 {
        fog.tick(&mut world, 33_333).unwrap();
        later.push(fog.lockstep_hash().unwrap());
    }
    for _ in 0..2 {
        fog.load_state(&mut world, &state).unwrap();
        assert_eq!(fog.lockstep_hash().unwrap(), hash, "loaded twice, the same state");
        let again: Vec<u64> = (0..3).map(|_| fog.tick(&mut world, 33_333).and_then(|_| fog.lockstep_hash()).unwrap()).collect();
        assert_eq!(again, later, "and the same ticks after it");
    }
    fog.restore(&mut world, &bytes).unwrap();
    assert_eq!(fog.lockstep_hash().unwrap(), hash, "as the snapshot restores");
}

/// States saved every tick, as a rollback game saves them, hold the bytes
/// of their moment although a save shares what no tick wrote since the one
/// before: over ticks where a source walks, a wall comes, the captured
/// heights change and nothing moves, each state loads back to every texture
/// and to the lockstep hash read when it was saved. A save shares the
/// captured heights with the one before unless the tick changed them, and
/// where a backend versions its textures (the CPU) every tile of a texture
/// that the tick did not write; a backend that keeps a state's textures on
/// its device (the GPU) holds none of them in host memory.
pub fn states_saved_each_tick_share_what_no_tick_wrote(make: &Make) {
    let (mut world, mut fog) = world_and_fog(make);
    let source = world.query::<(Entity, &VisionSource)>().iter().map(|(e, _)| e).next().unwrap();
    let capture = world.query::<(Entity, &HeightCapture)>().iter().map(|(e, _)| e).next().unwrap();
    // Two saves with no tick between share every texture where the backend
    // versions them (the CPU), and only the captured heights where not.
    let (all, shared) = fog.save_state(&world).unwrap().texture_bytes(&fog.save_state(&world).unwrap());
    // Two instances' captured heights, 64x64 of i32: all a state holds in
    // host memory where its textures stay on the device.
    let capture_bytes = 2 * 64 * 64 * 4;
    let on_device = all == capture_bytes && shared == all;
    let versioned = !on_device && shared == all;
    // Two instances' eight 16-bit masks, all at 64x64.
    let mask_bytes = 2 * 8 * 64 * 64 * 2;
    let (mut saved, mut shares, mut snapshots) = (Vec::new(), Vec::new(), Vec::new());
    for t in 0..9 {
        match t {
            0..=2 => world.get::<&mut Position>(source).unwrap().0.x += 1.5,
            3 => {
                world
                    .spawn((Position(Vec3::new(30.0, 24.0, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(2.0, 9.0), yaw_degrees: 0.0 })));
            }
            4 => {
                world.get::<&mut HeightCapture>(capture).unwrap().cells[22 * 64 + 18] = 5.0;
                fog.mark_capture_dirty();
            }
            _ => {}
        }
        fog.tick(&mut world, 33_333).unwrap();
        let state = fog.save_state(&world).unwrap();
        if let Some((_, before)) = saved.last() {
            let (all, shared) = state.texture_bytes(before);
            let ok = match t {
                // Only the heights are in host memory, shared but after
                // the tick that changed them.
                _ if on_device => all == capture_bytes && shared == if t == 4 { 0 } else { capture_bytes },
                // The masks moved; the occlusion and the capture did not.
                1..=2 => 0 < shared && shared < all,
                // The wall: the capture is shared, the occlusion is not.
                3 if versioned => 0 < shared && shared < shares[1],
                3 => shared == shares[1],
                // The heights: neither the capture nor the occlusion is;
                // mask tiles the edit did not reach are, where versioned.
                4 if versioned => 0 < shared && shared <= mask_bytes,
                4 => shared == 0,
                // Settled: everything is, where the backend versions them.
                7..=8 if versioned => shared == all,
                7..=8 => shared == shares[0],
                _ => true,
            };
            assert!(ok, "tick {t}: {shared} of {all} bytes shared (shared before: {shares:?})");
            shares.push(shared);
        }
        saved.push((textures(&mut fog), state));
        snapshots.push(fog.snapshot(&world).unwrap());
    }
    let hashes: Vec<u64> = saved
        .iter()
        .map(|(_, state)| {
            fog.load_state(&mut world, state).unwrap();
            fog.lockstep_hash().unwrap()
        })
        .collect();
    for (t, (want, state)) in saved.iter().enumerate().rev() {
        fog.load_state(&mut world, state).unwrap();
        assert_eq!(fog.lockstep_hash().unwrap(), hashes[t], "tick {t}: loaded twice, one hash");
        // The whole state, the captured heights among it, is the one saved.
        assert!(fog.snapshot(&world).unwrap() == snapshots[t], "tick {t}: the snapshot after the load differs from the one at the save");
        for (k, (got, want)) in textures(&mut fog).iter().zip(want).enumerate() {
            assert!(got == want, "tick {t}: instance {}, texture {} differs at {:?}", k / 11, k % 11, got.first_difference(want));
        }
    }
    // A rollback to tick 2, then tick 3 again (the source stands where it
    // stood then, the wall comes, the heights are not read again): a state
    // keeps the blockers its occlusion was built from, so the wall updates
    // the loaded occlusion where it stands, and the tick is tick 3's.
    fog.load_state(&mut world, &saved[2].1).unwrap();
    let report = fog.tick(&mut world, 33_333).unwrap();
    assert!(report.instances.values().all(|o| o.occlusion_built && o.occlusion_local), "the wall after a load is a local update");
    for (k, (got, want)) in textures(&mut fog).iter().zip(&saved[3].0).enumerate() {
        assert!(got == want, "tick 3 again: instance {}, texture {} differs at {:?}", k / 11, k % 11, got.first_difference(want));
    }
}

/// Loading a state into the running instances (in place) continues, texture
/// by texture and tick by tick, exactly as restoring the same moment into a
/// fresh subsystem: once with a wall placed after the save (the instance
/// then holds another occlusion than the one loaded) and once with nothing
/// but walkers (its occlusion and source windows stay), on every ray method
/// that keeps windows and on the distance field.
pub fn a_state_loaded_in_place_continues_as_a_fresh_restore(make: &Make) {
    // The world at tick `t`: three walkers, a fourth that steps once
    // between ticks 2 and 3 (after a load it stands where the instance last
    // saw it, though the loaded masks saw it elsewhere), and from tick 5 to
    // 6 a wall.
    let place = |world: &mut World, walkers: &[Entity], wall: &mut Option<Entity>, t: u32| {
        for (k, &e) in walkers.iter().enumerate() {
            let x = if k == 3 {
                if t <= 2 {
                    44.0
                } else {
                    50.0
                }
            } else {
                14.0 + 4.0 * k as f32 + 0.6 * (t % 7) as f32
            };
            world.get::<&mut Position>(e).unwrap().0 = Vec3::new(x, 20.0 + 9.0 * k as f32, 0.0);
        }
        let want = (5..=6).contains(&t);
        match (*wall, want) {
            (None, true) => {
                *wall = Some(world.spawn((
                    Position(Vec3::new(30.0, 30.0, 0.0)),
                    Blocker::wall(BlockerShape::Rect { size: Vec2::new(2.0, 14.0), yaw_degrees: 0.0 }),
                )))
            }
            (Some(e), false) => {
                world.despawn(e).unwrap();
                *wall = None;
            }
            _ => {}
        }
    };
    let methods = [RayMethod::Dda, RayMethod::StepScan, RayMethod::DistanceField];
    let mut fog = FogSubsystem::new(make());
    for (k, method) in methods.into_iter().enumerate() {
        // Slow fades and forgetting: masks still moving where sight stands.
        let slow = Profile { fade_in_rate: 3.0, relax_rate: 2.0, forget_rate: 0.5, ray_method: method, ..Profile::default() };
        fog.create_instance(InstanceDesc { name: format!("i{k}"), ..desc(slow) }).unwrap();
    }
    let mut world = World::new();
    let walkers: Vec<Entity> = (0..4).map(|_| world.spawn((Position(Vec3::ZERO), VisionSource::new(12.0)))).collect();
    // Standing sources, so that a tick updates the kept windows rather than
    // combining them all anew.
    for k in 0..10 {
        world.spawn((Position(Vec3::new(6.0 + 5.5 * k as f32, 56.0 - 3.0 * (k % 3) as f32, 0.0)), VisionSource::new(7.0)));
    }
    let mut wall = None;
    for t in 0..3 {
        place(&mut world, &walkers, &mut wall, t);
        fog.tick(&mut world, 33_333).unwrap();
    }
    // Saved after tick 2, both ways.
    let state = fog.save_state(&world).unwrap();
    let bytes = fog.snapshot(&world).unwrap();
    let mut fresh = FogSubsystem::new(make());
    fresh.restore(&mut world, &bytes).unwrap();
    let mut want = Vec::new();
    for t in 3..8 {
        place(&mut world, &walkers, &mut wall, t);
        fresh.tick(&mut world, 33_333).unwrap();
        want.push(textures(&mut fresh));
    }
    // Round 1 runs to tick 6 (the instances hold the wall when they load
    // the state from before it); round 2 to tick 4, before the wall.
    for (round, last) in [(1, 7), (2, 5)] {
        for t in 3..last {
            place(&mut world, &walkers, &mut wall, t);
            fog.tick(&mut world, 33_333).unwrap();
        }
        fog.load_state(&mut world, &state).unwrap();
        for (i, t) in (3..8).enumerate() {
            place(&mut world, &walkers, &mut wall, t);
            fog.tick(&mut world, 33_333).unwrap();
            for (k, (got, want)) in textures(&mut fog).iter().zip(&want[i]).enumerate() {
                assert!(got == want, "round {round}, tick {t}: instance {}, texture {} differs at {:?}", k / 11, k % 11, got.first_difference(want));
            }
        }
    }
}

/// A rollback game loads any of its last states and simulates again from
/// there: states saved every tick over a 160x160 grid (five by five save
/// tiles; one instance at full resolution, one upscaled from half), with
/// walkers in some tiles, a wall that comes and goes and slow fades, are
/// loaded back in a scrambled order, each to the textures it was saved with,
/// and the ticks run again after each load give the textures of the first
/// run, also after a portable snapshot was restored in between. Where a
/// backend versions its tiles (the CPU), a save after a walking tick shares
/// the mask tiles no walker reached.
pub fn rollbacks_load_any_state_and_replay_its_ticks(make: &Make) {
    let area = murk_core::Area { center: Vec3::new(80.0, 80.0, 5.0), extents: Vec3::new(160.0, 160.0, 10.0), yaw_degrees: 0.0 };
    let slow = Profile { fade_in_rate: 3.0, relax_rate: 2.0, forget_rate: 0.5, ..Profile::default() };
    let mut fog = FogSubsystem::new(make());
    for (name, lod) in [("full", 0), ("half", 1)] {
        fog.create_instance(InstanceDesc { name: name.into(), area, resolution: 160, lod, ..desc(slow.clone()) }).unwrap();
    }
    let mut world = World::new();
    let walkers: Vec<Entity> = (0..3).map(|_| world.spawn((Position(Vec3::ZERO), VisionSource::new(10.0)))).collect();
    for k in 0..6 {
        world.spawn((Position(Vec3::new(20.0 + 24.0 * k as f32, 140.0, 0.0)), VisionSource::new(8.0)));
    }
    let mut wall = None;
    // The world at tick `t`: walkers pacing in three corners, a wall from
    // tick 6 to tick 9.
    let mut place = |world: &mut World, t: u32| {
        for (k, &e) in walkers.iter().enumerate() {
            let x = 20.0 + 50.0 * k as f32 + 0.8 * (t % 9) as f32;
            world.get::<&mut Position>(e).unwrap().0 = Vec3::new(x, 20.0 + 30.0 * k as f32, 0.0);
        }
        match (wall, (6..=9).contains(&t)) {
            (None, true) => {
                let shape = BlockerShape::Rect { size: Vec2::new(2.0, 12.0), yaw_degrees: 0.0 };
                wall = Some(world.spawn((Position(Vec3::new(60.0, 90.0, 0.0)), Blocker::wall(shape))));
            }
            (Some(e), false) => {
                world.despawn(e).unwrap();
                wall = None;
            }
            _ => {}
        }
    };
    let (all, shared) = fog.save_state(&world).unwrap().texture_bytes(&fog.save_state(&world).unwrap());
    let versioned = shared == all;
    // Five 16-bit masks at 160x160 and three at the output size, per instance.
    let mask_bytes = 2 * (5 * 160 * 160 + 3 * 160 * 160 + 5 * 80 * 80 + 3 * 160 * 160);
    let ticks = 14;
    let (mut states, mut seen, mut early) = (Vec::new(), Vec::new(), Vec::new());
    for t in 0..ticks {
        place(&mut world, t);
        fog.tick(&mut world, 33_333).unwrap();
        let state = fog.save_state(&world).unwrap();
        if let Some(before) = states.last() {
            let (all, shared) = state.texture_bytes(before);
            if versioned && !(6..=10).contains(&t) {
                assert!(all - shared < mask_bytes, "tick {t}: {shared} of {all} bytes shared, no mask tile among them");
            }
        }
        states.push(state);
        seen.push((textures(&mut fog), fog.lockstep_hash().unwrap()));
        if t == 3 {
            early = fog.snapshot(&world).unwrap();
        }
    }
    // Load a state, check it, and run two to four ticks again from it,
    // saving each (the new states stand in for the old).
    let mut pick = 7u32;
    for round in 0..12 {
        pick = pick.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let from = (pick >> 8) % ticks;
        fog.load_state(&mut world, &states[from as usize]).unwrap();
        let (want, hash) = &seen[from as usize];
        assert_eq!(fog.lockstep_hash().unwrap(), *hash, "round {round}: state of tick {from}");
        for (k, (got, want)) in textures(&mut fog).iter().zip(want).enumerate() {
            assert!(got == want, "round {round}, state of tick {from}: texture {k} differs at {:?}", got.first_difference(want));
        }
        for t in from + 1..(from + 2 + (pick >> 16) % 3).min(ticks) {
            place(&mut world, t);
            fog.tick(&mut world, 33_333).unwrap();
            states[t as usize] = fog.save_state(&world).unwrap();
            let (want, hash) = &seen[t as usize];
            assert_eq!(fog.lockstep_hash().unwrap(), *hash, "round {round}: tick {t} again");
            for (k, (got, want)) in textures(&mut fog).iter().zip(want).enumerate() {
                assert!(got == want, "round {round}, tick {t} again: texture {k} differs at {:?}", got.first_difference(want));
            }
        }
    }
    // A portable snapshot of tick 3 restored between two loads of the last
    // state: the second load copies back what the restore replaced.
    let last = ticks as usize - 1;
    for restore_between in [false, true] {
        if restore_between {
            fog.restore(&mut world, &early).unwrap();
        }
        fog.load_state(&mut world, &states[last]).unwrap();
        for (k, (got, want)) in textures(&mut fog).iter().zip(&seen[last].0).enumerate() {
            assert!(got == want, "last state, restore between {restore_between}: texture {k} differs at {:?}", got.first_difference(want));
        }
    }
}

/// A rollback game loads a state every frame: readbacks in flight when a
/// load drops them (sight batches, stealth samples, mask queries) are
/// forgotten, so what the backend holds stays bounded over thousands of
/// (save, query, tick, load) cycles with tracked units and stealth actors;
/// after each load the sight sets and the next query handle are the
/// state's.
pub fn loads_leave_no_readback_behind(make: &Make) {
    let mut fog = FogSubsystem::new(make());
    fog.create_instance(desc(Profile::default())).unwrap();
    fog.create_instance(InstanceDesc { name: "j".into(), observed_teams: TeamMask::of(&[0]).unwrap(), ..desc(Profile::default()) }).unwrap();
    let mut world = seeded_world(5);
    for i in 0..40 {
        let at = Vec3::new(1.5 + (i % 8) as f32 * 7.0, 2.5 + (i / 8) as f32 * 11.0, 0.0);
        let e = world.spawn((Position(at), Tracked::new(1.0)));
        if i % 5 == 0 {
            world.insert_one(e, StealthActor { per_observer: true, ..StealthActor::default() }).unwrap();
        }
    }
    for _ in 0..4 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    let cycles = if fog.backend_name().starts_with("gpu") { 300 } else { 2000 };
    let mut held = Vec::new();
    let points = [Vec3::new(10.0, 10.0, 0.0), Vec3::new(40.0, 30.0, 0.0)];
    let sets = |fog: &FogSubsystem| -> Vec<Vec<Entity>> { fog.instance_names().iter().map(|n| fog.visible_to(n).unwrap()).collect() };
    assert!(sets(&fog).iter().any(|s| !s.is_empty()), "some tracked unit is in sight");
    for cycle in 0..cycles {
        let (state, saved_sets) = (fog.save_state(&world).unwrap(), sets(&fog));
        let handle = fog.submit_mask_query(&points, None).unwrap();
        // A unit walks and one leaves, so the sets after the tick differ.
        let walker = world.query_mut::<(Entity, &mut Position, &Tracked)>().into_iter().next().map(|(e, p, _)| {
            p.0.x += 9.0;
            e
        });
        fog.tick(&mut world, 50_000).unwrap();
        fog.load_state(&mut world, &state).unwrap();
        if let Some(e) = walker {
            world.get::<&mut Position>(e).unwrap().0.x -= 9.0;
        }
        assert_eq!(sets(&fog), saved_sets, "cycle {cycle}: the sight sets after a load are the state's");
        if cycle % 100 == 0 {
            assert_eq!(fog.submit_mask_query(&points, None).unwrap(), handle, "cycle {cycle}: the next query handle is the state's");
            fog.load_state(&mut world, &state).unwrap();
        }
        if cycle == 10 || cycle + 1 == cycles {
            held.push(fog.readbacks_held());
        }
    }
    assert_eq!(held[0], held[1], "readbacks held after 10 cycles and after {cycles}");
    assert!(held[1] <= 8, "{} readbacks held", held[1]);
}

/// A state puts back its instances, as a restore does: an instance created
/// after the save is destroyed by the load, one destroyed after it is made
/// again, and the state after the load is the saved one (a rollback past
/// `create_instance` or `destroy_instance`).
pub fn a_state_puts_back_its_instances(make: &Make) {
    let mut fog = FogSubsystem::new(make());
    fog.create_instance(desc(Profile::default())).unwrap();
    let mut world = seeded_world(9);
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    let one = fog.save_state(&world).unwrap();
    let one_hash = fog.lockstep_hash().unwrap();
    let names = fog.instance_names();
    fog.create_instance(InstanceDesc { name: "late".into(), observed_teams: TeamMask::of(&[0]).unwrap(), ..desc(Profile::default()) }).unwrap();
    fog.tick(&mut world, 50_000).unwrap();
    let two = fog.save_state(&world).unwrap();
    let two_hash = fog.lockstep_hash().unwrap();
    fog.load_state(&mut world, &one).unwrap();
    assert_eq!(fog.instance_names(), names, "the instance created after the save is gone");
    assert_eq!(fog.lockstep_hash().unwrap(), one_hash);
    fog.load_state(&mut world, &two).unwrap();
    assert!(fog.instance_names().contains(&"late".to_string()), "the instance of the state is made again");
    assert_eq!(fog.lockstep_hash().unwrap(), two_hash);
    fog.destroy_instance("late").unwrap();
    fog.load_state(&mut world, &two).unwrap();
    assert_eq!(fog.lockstep_hash().unwrap(), two_hash, "a destroyed instance comes back as it was saved");
}

/// Every texture of the table, written into a backend as a set, reads back
/// as it was written: one by one, in tiles, and whole by table row (the
/// pyramid's levels side by side). Each backend keeps each texture, every
/// pyramid level and the distance field included, apart.
pub fn every_texture_of_the_table_reads_back_as_it_was_written(make: &Make) {
    let mut backend = make();
    let name = backend.name();
    // Odd sizes: tiles and pyramid levels cut at the edges.
    let dims = InstanceDims { width: 37, height: 21, out_width: 74, out_height: 42 };
    let build = Some(OcclusionBuild { mips: true, distance_field_scale: 2 });
    backend.create_instance(3, dims).unwrap();
    let specs = instance_textures(dims, build);
    assert!(TEXTURES.iter().all(|row| specs.iter().any(|s| std::ptr::eq(s.texture.row(), row))), "the set holds every row");
    // Each texture its own values, within the occlusion's ranges.
    let written: Vec<(Texture, TextureImage)> = specs
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let n = (s.width * s.height) as usize;
            let data = match s.texture.kind() {
                TexelKind::U8 => TextureData::U8((0..n).map(|i| u8::from((i * 7 + k) % 3 == 0)).collect()),
                TexelKind::U16 => TextureData::U16((0..n).map(|i| (i * 131 + k * 4099) as u16).collect()),
                TexelKind::I32 => TextureData::I32((0..n).map(|i| (i * 37 % 2001) as i32 - 1000).collect()),
                TexelKind::U32 => TextureData::U32((0..n).map(|i| (i * 7919 + k) as u32).collect()),
            };
            (s.texture, TextureImage { width: s.width, height: s.height, data })
        })
        .collect();
    backend.write_textures(3, &TextureSet::new(dims, build, written.clone(), "set").unwrap()).unwrap();
    for (texture, want) in &written {
        let got = backend.read_texture(3, *texture).unwrap();
        assert!(got == *want, "{name}: texture `{}` differs first at {:?}", texture.name(), got.first_difference(want));
    }
    let asks: Vec<(Texture, Option<&TiledImage>)> = written.iter().map(|(t, _)| (*t, None)).collect();
    for ((texture, want), tiles) in written.iter().zip(backend.save_tiles(3, &asks).unwrap()) {
        let got = tiles.expect("without a base every texture comes in tiles").to_image();
        assert!(got == *want, "{name}: the tiles of `{}` differ first at {:?}", texture.name(), got.first_difference(want));
    }
    let levels: Vec<Grid<u8>> = written.iter().filter(|(t, _)| matches!(t, Texture::Mip(_))).map(|(_, img)| Grid::from_image(img).unwrap()).collect();
    for row in pass_outputs() {
        let want = match row.resolution {
            Resolution::Pyramid => mip_atlas(dims.width, dims.height, &levels),
            _ => written.iter().find(|(t, _)| *t == row.texture).map(|(_, img)| img.clone()).unwrap(),
        };
        let got = read_row(&mut *backend, 3, dims, build, row).unwrap();
        assert!(got == want, "{name}: row `{}` differs first at {:?}", row.name, got.first_difference(&want));
    }
}

/// Every test of this suite, by name.
pub const TESTS: &[Test] = &[
    ("every_texture_of_the_table_reads_back_as_it_was_written", every_texture_of_the_table_reads_back_as_it_was_written),
    ("loads_leave_no_readback_behind", loads_leave_no_readback_behind),
    ("a_state_puts_back_its_instances", a_state_puts_back_its_instances),
    ("a_saved_state_loads_back_as_its_snapshot_restores", a_saved_state_loads_back_as_its_snapshot_restores),
    ("states_saved_each_tick_share_what_no_tick_wrote", states_saved_each_tick_share_what_no_tick_wrote),
    ("a_state_loaded_in_place_continues_as_a_fresh_restore", a_state_loaded_in_place_continues_as_a_fresh_restore),
    ("rollbacks_load_any_state_and_replay_its_ticks", rollbacks_load_any_state_and_replay_its_ticks),
    ("the_editor_reads_and_writes_a_snapshot_unchanged", the_editor_reads_and_writes_a_snapshot_unchanged),
    ("a_capture_of_the_wrong_length_is_named", a_capture_of_the_wrong_length_is_named),
    ("two_instances_with_one_name_are_named", two_instances_with_one_name_are_named),
    ("missing_or_misshapen_textures_are_named", missing_or_misshapen_textures_are_named),
    ("query_handles_and_stealth_states_must_agree_with_the_rest", query_handles_and_stealth_states_must_agree_with_the_rest),
    ("restoring_never_despawns_a_game_entity_that_reused_a_ghost_id", restoring_never_despawns_a_game_entity_that_reused_a_ghost_id),
    ("a_ghost_shared_by_two_states_is_named", a_ghost_shared_by_two_states_is_named),
    ("a_ghost_id_in_the_billions_is_not_allocated_up_to", a_ghost_id_in_the_billions_is_not_allocated_up_to),
];
