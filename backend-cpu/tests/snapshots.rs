//! Snapshots whose checksum is right but whose body is not: every field is
//! checked against the rest before anything is replaced, and restoring never
//! touches entities the game owns.

mod common;

use common::desc;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::snapshot::{frame, unframe, Reader, Writer, FOG_MAGIC};
use murk_core::{
    CaptureMode, FogSubsystem, HeightCapture, HideMode, MurkError, Position, Profile, RayMethod, StealthActor, StealthEvent, TransientReveal,
    VisionSource,
};
use murk_cpu::CpuBackend;

/// One field of a snapshot body, as written.
#[derive(Clone, Debug, PartialEq)]
enum F {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    Blob(Vec<u8>),
}

/// A snapshot body as named fields (`instances[0].capture`,
/// `instances[1].textures[3].width`, ...), in order.
struct Body(Vec<(String, F)>);

impl Body {
    fn read(bytes: &[u8]) -> Body {
        let mut r = Reader::new(unframe(FOG_MAGIC, bytes).unwrap());
        let mut out = Vec::new();
        let mut put = |name: String, f: F| out.push((name, f));
        put("tick".into(), F::U64(r.u64().unwrap()));
        put("next_query".into(), F::U64(r.u64().unwrap()));
        put("queries".into(), F::Blob(r.blob().unwrap().to_vec()));
        let n = r.u32().unwrap();
        put("instance_count".into(), F::U32(n));
        for i in 0..n {
            let p = format!("instances[{i}]");
            put(format!("{p}.desc"), F::Blob(r.blob().unwrap().to_vec()));
            for name in ["blocker_hash", "capture_signature"] {
                put(format!("{p}.{name}.some"), F::U8(r.u8().unwrap()));
                put(format!("{p}.{name}"), F::U64(r.u64().unwrap()));
            }
            let has_capture = r.u8().unwrap();
            put(format!("{p}.has_capture"), F::U8(has_capture));
            if has_capture == 1 {
                put(format!("{p}.capture"), F::Blob(r.blob().unwrap().to_vec()));
            }
            put(format!("{p}.source_hash.some"), F::U8(r.u8().unwrap()));
            put(format!("{p}.source_hash"), F::U64(r.u64().unwrap()));
            for name in ["occlusion_dirty", "capture_dirty", "settled", "has_recomputed", "has_built", "built_mips"] {
                put(format!("{p}.{name}"), F::U8(r.u8().unwrap()));
            }
            put(format!("{p}.built_df_scale"), F::U32(r.u32().unwrap()));
            put(format!("{p}.has_recomputed_profile"), F::U8(r.u8().unwrap()));
            for k in 0..5 {
                put(format!("{p}.q16[{k}]"), F::U16(r.u16().unwrap()));
            }
            put(format!("{p}.update_interval_us"), F::U64(r.u64().unwrap()));
            for k in 0..4 {
                put(format!("{p}.q32[{k}]"), F::U32(r.u32().unwrap()));
            }
            for name in ["rate_since_us", "blend_since_us", "ticks", "recaptures", "builds", "shared", "recomputes", "skipped", "epoch"] {
                put(format!("{p}.{name}"), F::U64(r.u64().unwrap()));
            }
            put(format!("{p}.flags"), F::Blob(r.blob().unwrap().to_vec()));
            let t = r.u32().unwrap();
            put(format!("{p}.texture_count"), F::U32(t));
            for k in 0..t {
                let tp = format!("{p}.textures[{k}]");
                put(format!("{tp}.name"), F::Blob(r.blob().unwrap().to_vec()));
                put(format!("{tp}.width"), F::U32(r.u32().unwrap()));
                put(format!("{tp}.height"), F::U32(r.u32().unwrap()));
                put(format!("{tp}.kind"), F::U8(r.u8().unwrap()));
                put(format!("{tp}.bytes"), F::Blob(r.blob().unwrap().to_vec()));
            }
        }
        let s = r.u32().unwrap();
        put("stealth_count".into(), F::U32(s));
        for i in 0..s {
            let p = format!("stealth[{i}]");
            put(format!("{p}.actor"), F::U64(r.u64().unwrap()));
            put(format!("{p}.last_visible"), F::U8(r.u8().unwrap()));
            put(format!("{p}.last_value"), F::U16(r.u16().unwrap()));
            put(format!("{p}.has_known"), F::U8(r.u8().unwrap()));
            for k in 0..3 {
                put(format!("{p}.known[{k}]"), F::U32(r.u32().unwrap()));
            }
            put(format!("{p}.fade"), F::U16(r.u16().unwrap()));
            put(format!("{p}.ghost.some"), F::U8(r.u8().unwrap()));
            put(format!("{p}.ghost"), F::U64(r.u64().unwrap()));
            for k in 0..3 {
                put(format!("{p}.ghost_at[{k}]"), F::U32(r.u32().unwrap()));
            }
            put(format!("{p}.has_instance"), F::U8(r.u8().unwrap()));
            put(format!("{p}.instance"), F::Blob(r.blob().unwrap().to_vec()));
        }
        put("stealth_samples".into(), F::Blob(r.blob().unwrap().to_vec()));
        let n = r.u32().unwrap();
        put("reveal_count".into(), F::U32(n));
        for i in 0..n {
            put(format!("reveals[{i}].entity"), F::U64(r.u64().unwrap()));
            put(format!("reveals[{i}].remaining"), F::U32(r.u32().unwrap()));
        }
        r.finish().unwrap();
        Body(out)
    }

    fn get(&mut self, name: &str) -> &mut F {
        &mut self.0.iter_mut().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no field {name}")).1
    }

    /// Removes the fields whose names start with `prefix`.
    fn remove(&mut self, prefix: &str) {
        self.0.retain(|(n, _)| !n.starts_with(prefix));
    }

    /// Re-encodes the body with a valid checksum.
    fn write(&self) -> Vec<u8> {
        let mut w = Writer::default();
        for (_, f) in &self.0 {
            match f {
                F::U8(v) => w.u8(*v),
                F::U16(v) => w.u16(*v),
                F::U32(v) => w.u32(*v),
                F::U64(v) => w.u64(*v),
                F::Blob(v) => w.blob(v),
            }
        }
        frame(FOG_MAGIC, &w.bytes)
    }
}

fn profile(method: RayMethod) -> Profile {
    Profile { fade_in_rate: 1.0e4, relax_rate: 1.0e4, ray_method: method, ..Profile::default() }
}

/// Two instances (`a` with Hierarchical DDA, so it has mips; `b` with the
/// distance field), a height capture, a source, and three ticks.
fn world_and_fog() -> (World, FogSubsystem) {
    let mut fog = FogSubsystem::new(Box::new(CpuBackend::new(2).unwrap()));
    fog.create_instance(murk_core::InstanceDesc { name: "a".into(), ..desc(profile(RayMethod::HierarchicalDda)) }).unwrap();
    fog.create_instance(murk_core::InstanceDesc { name: "b".into(), ..desc(profile(RayMethod::DistanceField)) }).unwrap();
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(12.0)));
    let mut cells = vec![f32::NAN; 64 * 64];
    cells[20 * 64 + 26] = 3.0;
    let mode = CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true };
    world.spawn((HeightCapture { origin: Vec2::ZERO, cell_size: 1.0, width: 64, height: 64, cells, mode },));
    for _ in 0..3 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    (world, fog)
}

/// Restores `bytes`, expects an error containing `needle`, and checks that
/// nothing changed.
fn rejected(bytes: &[u8], needle: &str) {
    let (mut world, mut fog) = world_and_fog();
    let before = (fog.lockstep_hash().unwrap(), fog.instance_names(), fog.tick_count(), world.len());
    let e = fog.restore(&mut world, bytes).unwrap_err();
    assert!(e.to_string().contains(needle), "`{e}` should mention `{needle}`");
    assert!(matches!(e, MurkError::InvalidValue { .. }), "{e:?}");
    assert_eq!(before, (fog.lockstep_hash().unwrap(), fog.instance_names(), fog.tick_count(), world.len()), "a rejected snapshot changes nothing");
    fog.tick(&mut world, 33_333).unwrap();
}

fn snapshot() -> Vec<u8> {
    let (world, mut fog) = world_and_fog();
    fog.snapshot(&world).unwrap()
}

fn texture_index(body: &mut Body, instance: usize, name: &str) -> usize {
    (0..).find(|k| *body.get(&format!("instances[{instance}].textures[{k}].name")) == F::Blob(name.as_bytes().to_vec())).unwrap()
}

#[test]
fn the_editor_reads_and_writes_a_snapshot_unchanged() {
    let bytes = snapshot();
    assert_eq!(Body::read(&bytes).write(), bytes);
    let (mut world, mut fog) = world_and_fog();
    fog.restore(&mut world, &bytes).unwrap();
}

#[test]
fn a_capture_of_the_wrong_length_is_named() {
    let mut body = Body::read(&snapshot());
    *body.get("instances[0].capture") = F::Blob(vec![0; 13]);
    rejected(&body.write(), "snapshot instance `a`.capture = 13 bytes");
    let mut body = Body::read(&snapshot());
    *body.get("instances[0].capture") = F::Blob(vec![0; 64 * 64 * 4 - 4]);
    rejected(&body.write(), "must hold 64x64 heights");
    let mut body = Body::read(&snapshot());
    let mut capture = vec![0u8; 64 * 64 * 4];
    capture[..4].copy_from_slice(&i32::MAX.to_le_bytes());
    *body.get("instances[0].capture") = F::Blob(capture);
    rejected(&body.write(), "snapshot instance `a`.capture[0] = 2147483647");
}

#[test]
fn two_instances_with_one_name_are_named() {
    let mut body = Body::read(&snapshot());
    let F::Blob(desc) = body.get("instances[1].desc").clone() else { panic!() };
    let renamed = String::from_utf8(desc).unwrap().replacen("\"name\":\"b\"", "\"name\":\"a\"", 1);
    *body.get("instances[1].desc") = F::Blob(renamed.into_bytes());
    rejected(&body.write(), "snapshot.instances.name = a: is used by two instances");
}

#[test]
fn missing_or_misshapen_textures_are_named() {
    // No textures at all.
    let mut body = Body::read(&snapshot());
    body.remove("instances[0].textures[");
    *body.get("instances[0].texture_count") = F::U32(0);
    rejected(&body.write(), "snapshot instance `a`.textures");
    // The memory texture missing.
    let mut body = Body::read(&snapshot());
    let k = texture_index(&mut body, 0, "memory");
    body.remove(&format!("instances[0].textures[{k}]."));
    let F::U32(n) = *body.get("instances[0].texture_count") else { panic!() };
    *body.get("instances[0].texture_count") = F::U32(n - 1);
    rejected(&body.write(), "must be exactly coverage, height, mip1");
    // A mip of the wrong size (the data size follows, so the reader accepts it).
    let mut body = Body::read(&snapshot());
    let k = texture_index(&mut body, 0, "mip1");
    *body.get(&format!("instances[0].textures[{k}].width")) = F::U32(16);
    *body.get(&format!("instances[0].textures[{k}].height")) = F::U32(16);
    *body.get(&format!("instances[0].textures[{k}].bytes")) = F::Blob(vec![0; 256]);
    rejected(&body.write(), "snapshot instance `a`.textures.mip1 = 16x16 of type 0: must be 32x32");
    // A distance field of the wrong size.
    let mut body = Body::read(&snapshot());
    let k = texture_index(&mut body, 1, "distance_field");
    *body.get(&format!("instances[1].textures[{k}].width")) = F::U32(1);
    *body.get(&format!("instances[1].textures[{k}].height")) = F::U32(1);
    *body.get(&format!("instances[1].textures[{k}].bytes")) = F::Blob(vec![0; 4]);
    rejected(&body.write(), "snapshot instance `b`.textures.distance_field = 1x1");
    // Mips where the build made none.
    let mut body = Body::read(&snapshot());
    *body.get("instances[0].built_mips") = F::U8(0);
    rejected(&body.write(), "snapshot instance `a`.textures");
    // Coverage out of range.
    let mut body = Body::read(&snapshot());
    let k = texture_index(&mut body, 0, "coverage");
    let F::Blob(mut cov) = body.get(&format!("instances[0].textures[{k}].bytes")).clone() else { panic!() };
    cov[5] = 7;
    *body.get(&format!("instances[0].textures[{k}].bytes")) = F::Blob(cov);
    rejected(&body.write(), "snapshot instance `a`.textures.coverage[5] = 7");
}

#[test]
fn query_handles_and_stealth_states_must_agree_with_the_rest() {
    let (mut world, mut fog) = world_and_fog();
    let h = fog.submit_mask_query(&[Vec3::new(20.5, 20.5, 0.0)], None).unwrap();
    let bytes = fog.snapshot(&world).unwrap();
    let mut body = Body::read(&bytes);
    *body.get("next_query") = F::U64(h.0);
    rejected(&body.write(), "snapshot.queries = 0: is a pending handle at or past the next handle 0");
    // The good snapshot still restores.
    fog.restore(&mut world, &bytes).unwrap();
}

/// A world where actor `spy` was seen, then hid: murk spawned a ghost.
fn ghosted() -> (World, FogSubsystem, Entity, Entity) {
    let mut fog = common::fog(profile(RayMethod::Dda));
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

#[test]
fn restoring_never_despawns_a_game_entity_that_reused_a_ghost_id() {
    let (mut world, mut fog, spy, ghost) = ghosted();
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
    let (mut world, mut fog, spy, ghost) = ghosted();
    let bytes = fog.snapshot(&world).unwrap();
    world.despawn(ghost).unwrap();
    fog.restore(&mut world, &bytes).unwrap();
    assert_eq!(fog.stealth_state(spy).unwrap().ghost, Some(ghost));
    assert!(world.get::<&murk_core::Ghost>(ghost).is_ok());
}

#[test]
fn a_ghost_shared_by_two_states_is_named() {
    let (mut world, mut fog, _spy, _ghost) = ghosted();
    let bytes = fog.snapshot(&world).unwrap();
    let mut body = Body::read(&bytes);
    let F::U64(actor) = *body.get("stealth[0].actor") else { panic!() };
    *body.get("stealth[0].ghost") = F::U64(actor);
    let e = fog.restore(&mut world, &body.write()).unwrap_err().to_string();
    assert!(e.contains("ghost") && e.contains("shared with another ghost or actor"), "{e}");
    let mut body = Body::read(&bytes);
    *body.get("stealth[0].instance") = F::Blob(b"nowhere".to_vec());
    let e = fog.restore(&mut world, &body.write()).unwrap_err().to_string();
    assert!(e.contains("instance = nowhere: names no instance"), "{e}");
}

#[test]
fn a_ghost_id_in_the_billions_is_not_allocated_up_to() {
    // Found by the snapshot fuzz target: spawn_at(3 000 000 000) made hecs
    // allocate 24 GiB and abort.
    let (mut world, mut fog, spy, _ghost) = ghosted();
    let mut body = Body::read(&fog.snapshot(&world).unwrap());
    *body.get("stealth[0].ghost") = F::U64((1 << 32) | 3_000_000_000);
    fog.restore(&mut world, &body.write()).unwrap();
    let ghost = fog.stealth_state(spy).unwrap().ghost.unwrap();
    assert!(ghost.id() < 1000, "a new entity: {ghost:?}");
    assert_eq!(world.get::<&murk_core::Ghost>(ghost).unwrap().actor, spy);
}
