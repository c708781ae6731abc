//! The world every snapshot seed is taken from, and the seed inputs of
//! each target: real inputs the mutations start from, in the form the
//! targets mutate (containers with their bodies uncompressed).

use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::snapshot::{unframe, FOG_MAGIC};
use murk_core::{
    Area, Blocker, BlockerShape, FogBody, FogSubsystem, FogTarget, InstanceDesc, Position, Profile, RayMethod, Reveal, RevealArea, RevealKind,
    StealthActor, TeamMask, VisionSource, MEMORY_MAGIC,
};
use murk_cpu::CpuBackend;

/// A small world every snapshot seed is taken from: two instances (one with
/// mips, one with a distance field), a capture, sources, a blocker, a stealth
/// actor with a ghost, a transient reveal and a pending query.
pub fn seed_world() -> (World, FogSubsystem) {
    let mut fog = FogSubsystem::new(Box::new(CpuBackend::new(1).expect("pool")));
    for (name, method) in [("a", RayMethod::HierarchicalDda), ("b", RayMethod::DistanceField)] {
        let profile = Profile { ray_method: method, fade_in_rate: 20.0, relax_rate: 20.0, ..Profile::default() };
        let area = Area { center: Vec3::new(8.0, 8.0, 5.0), extents: Vec3::new(16.0, 16.0, 10.0), yaw_degrees: 0.0 };
        fog.create_instance(InstanceDesc { name: name.into(), area, resolution: 16, lod: 0, observed_teams: TeamMask::ALL, profile }).expect("valid");
    }
    let mut world = World::new();
    let mut cells = vec![f32::NAN; 16 * 16];
    cells[5 * 16 + 9] = 2.0;
    let mode = murk_core::CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true };
    world.spawn((murk_core::HeightCapture { origin: Vec2::ZERO, cell_size: 1.0, width: 16, height: 16, cells, mode, enabled: true },));
    world.spawn((Position(Vec3::new(4.5, 4.5, 0.0)), VisionSource::new(5.0)));
    world.spawn((Position(Vec3::new(9.0, 9.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 1.0 })));
    let actor = StealthActor { hide_mode: murk_core::HideMode::FreezeWithGhost, ..StealthActor::default() };
    world.spawn((Position(Vec3::new(12.5, 12.5, 0.0)), actor));
    let lamp = world.spawn((Position(Vec3::new(12.5, 12.5, 0.0)), VisionSource::new(3.0)));
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).expect("valid");
    }
    world.despawn(lamp).expect("spawned");
    world.spawn((Position(Vec3::new(2.5, 12.5, 0.0)), VisionSource::new(2.0), murk_core::TransientReveal { remaining_ticks: 5 }));
    let scan = Reveal {
        area: RevealArea::Shape { at: Vec2::new(11.0, 4.0), shape: BlockerShape::Circle { radius: 3.0 } },
        kind: RevealKind::Sight { remember: true },
        fade_ticks: 6,
        ticks: Some(20),
    };
    fog.reveal(&FogTarget::Team(0), scan).expect("valid");
    let map = Reveal { area: RevealArea::Everywhere, kind: RevealKind::Map, fade_ticks: 9, ticks: None };
    fog.reveal(&FogTarget::Instance("b".into()), map).expect("valid");
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).expect("valid");
    }
    fog.submit_mask_query(&[Vec3::new(4.5, 4.5, 0.0), Vec3::new(100.0, 0.0, 0.0)], None).expect("valid");
    (world, fog)
}

/// A snapshot in the form the snapshot target mutates: the container with
/// the body uncompressed in place of the payload and no valid checksum (the
/// target frames the body itself).
pub fn raw_snapshot(snapshot: &[u8]) -> Vec<u8> {
    raw_container(FOG_MAGIC, snapshot)
}

/// A container of `magic` murk wrote, with its body uncompressed in place of
/// the payload and no valid checksum: the form the fuzz targets mutate.
pub fn raw_container(magic: &[u8; 8], snapshot: &[u8]) -> Vec<u8> {
    let body = unframe(magic, snapshot).expect("a container murk wrote");
    let mut out = snapshot[..28].to_vec();
    out[12..20].copy_from_slice(&(body.len() as u64).to_le_bytes());
    out[20..28].copy_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&[0; 8]);
    out
}

/// The seed inputs of a fuzz target.
pub fn seeds(name: &str, repo: &std::path::Path) -> Vec<Vec<u8>> {
    let files = |dir: &str, ext: &str| -> Vec<Vec<u8>> {
        let mut paths: Vec<_> = std::fs::read_dir(repo.join(dir))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_str().is_some_and(|s| s.ends_with(ext))).collect())
            .unwrap_or_default();
        paths.sort();
        paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
    };
    match name {
        "snapshot" => {
            let (world, mut fog) = seed_world();
            let snapshot = fog.snapshot(&world).expect("snapshots");
            vec![raw_snapshot(&snapshot), snapshot]
        }
        "memory" => {
            let (_, mut fog) = seed_world();
            // "a"'s own memory reaches the import; "b"'s is another
            // instance's, refused by `import_memory` but taken as a map.
            let own = fog.export_memory("a").expect("exports");
            let other = fog.export_memory("b").expect("exports");
            vec![raw_container(MEMORY_MAGIC, &own), own, other]
        }
        "profile" => {
            let mut s = files("scenarios", ".toml");
            s.push(serde_json::to_vec(&Profile::default()).expect("serializes"));
            s.push(br#"{"ray_method": "distance_field", "df_scale": 2, "soft_shadows": true, "fade_in_rate": 0, "update_rate": 0.5}"#.to_vec());
            s
        }
        "scenario" => {
            let mut s = files("scenarios", ".json");
            s.extend(files("conformance/cases", ".json").into_iter().take(12));
            for case in ["reveal-sight-fade", "reveal-map-hide"] {
                s.extend(std::fs::read(repo.join(format!("conformance/cases/{case}.json"))));
            }
            s
        }
        "api" | "reveal" => vec![Vec::new()],
        "map" => vec![b"type octile\nheight 2\nwidth 3\nmap\n.T@\nGWS\n".to_vec()],
        _ => Vec::new(),
    }
}

/// The checked-in inputs of the snapshot target (by file name under
/// `conformance/fuzz/regressions/snapshot/`) as this build makes them: the
/// snapshot of [`seed_world`] with the one field that found each bug set
/// as the fuzzer had set it, in the form the target mutates
/// ([`raw_snapshot`]). A change of the snapshot format remakes them, so
/// that they reach the checks behind the decoder again.
pub fn snapshot_regressions() -> Vec<(&'static str, Vec<u8>)> {
    let (world, mut fog) = seed_world();
    let body = FogBody::decode(&fog.snapshot(&world).expect("snapshots")).expect("murk wrote it");
    // Restoring a ghost id of about 3 000 000 000 with `spawn_at` made hecs
    // allocate 24 GiB.
    let mut ghost = body.clone();
    let stealth = ghost.stealth.iter_mut().find(|s| s.state.ghost.is_some()).expect("the seed world's actor left a ghost");
    stealth.state.ghost = Entity::from_bits((1 << 32) | 3_000_000_000);
    // The byte count of a texture of u32::MAX x u32::MAX texels wrapped in
    // 64 bits.
    let mut texture = body;
    let coverage = texture.instances[0].textures.iter_mut().find(|t| t.name == "coverage").expect("every instance has coverage");
    (coverage.width, coverage.height) = (u32::MAX, u32::MAX);
    [("ghost-id-in-the-billions.bin", ghost), ("texture-byte-count-overflow.bin", texture)]
        .into_iter()
        .map(|(name, body)| (name, raw_snapshot(&body.encode().expect("encodes"))))
        .collect()
}
