//! Area changes: explored memory and the fade state follow the world when
//! the profile asks for resampling; the old texel-space rule otherwise.

use super::{Make, Test};
use murk_conformance::scene::fog as fog_on;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::World;
use murk_core::{
    Area, BlockerShape, CaptureMode, FogSubsystem, FogTarget, HeightCapture, MemoryBody, Position, Profile, Reveal, RevealArea, RevealKind, Texture,
    TextureData, VisionSource, MEMORY_MAGIC,
};

fn resampling() -> Profile {
    Profile { fade_in_rate: 20.0, relax_rate: 20.0, resample_on_area_change: true, ..Profile::default() }
}

fn mask(fog: &mut FogSubsystem, texture: Texture) -> (u32, u32, Vec<u16>) {
    let img = fog.read_texture("i", texture).unwrap();
    match img.data {
        TextureData::U16(v) => (img.width, img.height, v),
        other => panic!("{other:?}"),
    }
}

/// Instance `i` over [0, 64]^2 after a source explored around (20.5, 20.5)
/// and then left.
fn explored(make: &Make, profile: Profile) -> (World, FogSubsystem) {
    let mut fog = fog_on(make(), profile);
    let mut world = World::new();
    let s = world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(10.0)));
    for _ in 0..6 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    world.despawn(s).unwrap();
    fog.tick(&mut world, 50_000).unwrap();
    (world, fog)
}

const MASKS: [Texture; 5] = [Texture::Visibility, Texture::Memory, Texture::Compose, Texture::Upscale, Texture::Final];

pub fn a_move_by_whole_texels_shifts_every_mask_exactly(make: &Make) {
    let (_, mut fog) = explored(make, resampling());
    let before: Vec<_> = MASKS.iter().map(|&s| mask(&mut fog, s)).collect();
    assert!(before[1].2.iter().filter(|&&v| v > 0).count() > 100, "memory was explored");
    // Eight units = eight texels to +x, three to -y.
    let area = Area { center: Vec3::new(40.0, 29.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
    fog.set_area("i", area).unwrap();
    for (texture, (w, h, old)) in MASKS.iter().zip(&before) {
        let (_, _, new) = mask(&mut fog, *texture);
        for r in 0..*h {
            for c in 0..*w {
                let (oc, or) = (c + 8, r as i64 - 3);
                let want = if oc < *w && or >= 0 { old[(or as u32 * w + oc) as usize] } else { 0 };
                assert_eq!(new[(r * w + c) as usize], want, "{} at ({c}, {r})", texture.name());
            }
        }
    }
}

pub fn without_resampling_the_old_texel_space_rule_holds(make: &Make) {
    // The conformance goldens were recorded with this rule.
    let (_, mut fog) = explored(make, Profile { resample_on_area_change: false, ..resampling() });
    let memory = mask(&mut fog, Texture::Memory);
    fog.set_area("i", Area { center: Vec3::new(40.0, 29.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 }).unwrap();
    assert_eq!(mask(&mut fog, Texture::Memory), memory, "same size: kept in texel space");
    fog.set_area("i", Area { center: Vec3::new(40.0, 29.0, 5.0), extents: Vec3::new(128.0, 64.0, 10.0), yaw_degrees: 0.0 }).unwrap();
    assert!(mask(&mut fog, Texture::Memory).2.iter().all(|&v| v == 0), "new size: starts over");
}

pub fn growing_the_area_keeps_what_was_explored_where_it_was(make: &Make) {
    let (mut world, mut fog) = explored(make, resampling());
    let (w, _, old_memory) = mask(&mut fog, Texture::Memory);
    let (ow, _, old_final) = mask(&mut fog, Texture::Final);
    // Grow to x in [0, 128]: 64 texels across, so texels of 2 units and 32 rows.
    fog.expand_area_to_include("i", Vec3::new(128.0, 20.0, 0.0)).unwrap();
    let d = fog.dims("i").unwrap();
    assert_eq!((d.width, d.height), (64, 32));
    let (nw, nh, memory) = mask(&mut fog, Texture::Memory);
    // New texel (c, r) has its centre at world (2c + 1, 2r + 1): old texel (2c + 1, 2r + 1).
    for r in 0..nh {
        for c in 0..nw {
            let want = if 2 * c + 1 < w { old_memory[((2 * r + 1) * w + 2 * c + 1) as usize] } else { 0 };
            assert_eq!(memory[(r * nw + c) as usize], want, "memory at ({c}, {r})");
        }
    }
    let (_, _, fin) = mask(&mut fog, Texture::Final);
    assert_eq!(fin[(5 * nw + 5) as usize], old_final[(11 * ow + 11) as usize], "the fade state follows too");
    // The explored place stays explored while the fog runs on, at its world position.
    for _ in 0..5 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    let answer = fog.mask_query_now(&[Vec3::new(20.5, 20.5, 0.0), Vec3::new(100.5, 20.5, 0.0)], Some(0.0)).unwrap();
    match &answer[..] {
        [murk_core::MaskAnswer::Sampled { value: seen, .. }, murk_core::MaskAnswer::Sampled { value: unseen, .. }] => {
            assert_eq!(*seen, 32768, "explored: the explored value");
            assert_eq!(*unseen, 0, "never explored");
        }
        other => panic!("{other:?}"),
    }
}

pub fn a_quarter_turn_resamples_exactly(make: &Make) {
    let (_, mut fog) = explored(make, resampling());
    let before = fog.transform("i").unwrap();
    let (w, h, old) = mask(&mut fog, Texture::Memory);
    fog.set_area("i", Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 90.0 }).unwrap();
    let after = fog.transform("i").unwrap();
    let (_, _, new) = mask(&mut fog, Texture::Memory);
    let mut moved = 0;
    for r in 0..h {
        for c in 0..w {
            let (x, y) = after.texel_to_world(f64::from(c) + 0.5, f64::from(r) + 0.5);
            let (tx, ty) = before.world_to_texel(x, y);
            let (oc, or) = (tx.floor() as u32, ty.floor() as u32);
            assert_eq!(new[(r * w + c) as usize], old[(or * w + oc) as usize], "({c}, {r})");
            moved += usize::from(oc != c || or != r);
        }
    }
    assert!(moved > 1000, "the turn moved texels");
}

pub fn a_snapshot_right_after_a_resize_restores(make: &Make) {
    for profile in [resampling(), Profile { resample_on_area_change: false, ..resampling() }] {
        let (mut world, mut fog) = explored(make, profile);
        let mode = CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true };
        world.spawn((HeightCapture { origin: Vec2::ZERO, cell_size: 1.0, width: 4, height: 4, cells: vec![1.0; 16], mode, enabled: true },));
        fog.tick(&mut world, 50_000).unwrap();
        fog.expand_area_to_include("i", Vec3::new(128.0, 20.0, 0.0)).unwrap();
        let bytes = fog.snapshot(&world).unwrap();
        let hash = fog.lockstep_hash().unwrap();
        fog.restore(&mut world, &bytes).unwrap();
        assert_eq!(fog.lockstep_hash().unwrap(), hash);
        fog.tick(&mut world, 50_000).unwrap();
    }
}

pub fn a_rejected_area_changes_nothing(make: &Make) {
    let (_, mut fog) = explored(make, resampling());
    let before: Vec<_> = MASKS.iter().map(|&s| mask(&mut fog, s)).collect();
    let bad = Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, f32::NAN, 10.0), yaw_degrees: 0.0 };
    assert!(fog.set_area("i", bad).is_err());
    let after: Vec<_> = MASKS.iter().map(|&s| mask(&mut fog, s)).collect();
    assert_eq!(before, after);
}

/// A save game keeps a player's explored memory alone: exported, the area
/// changed (without resampling, so the masks start over), imported, and
/// every texel explored before is explored again where it was in the world;
/// so is every texel a bought map made known.
pub fn saved_memory_comes_back_where_it_was_after_the_area_changed(make: &Make) {
    let profile = Profile { resample_on_area_change: false, ..resampling() };
    let (mut world, mut fog) = explored(make, profile);
    let map = Reveal {
        area: RevealArea::Shape { at: Vec2::new(50.0, 50.0), shape: BlockerShape::Rect { size: Vec2::new(10.0, 6.0), yaw_degrees: 0.0 } },
        kind: RevealKind::Map,
        fade_ticks: 0,
        ticks: None,
    };
    fog.reveal(&FogTarget::Instance("i".into()), map).unwrap();
    fog.tick(&mut world, 50_000).unwrap();
    let (_, _, mapped_before) = mask(&mut fog, Texture::Mapped);
    assert!(mapped_before.iter().filter(|&&v| v == 65535).count() >= 50, "the map is known");
    let (_, _, before) = mask(&mut fog, Texture::Memory);
    assert!(before.iter().filter(|&&v| v > 0).count() > 200, "the source explored an area");
    let blob = fog.export_memory("i").unwrap();
    assert!(blob.len() < before.len() / 4, "{} bytes for {} texels", blob.len(), before.len());
    // The area moves by (+8, +4) units (whole texels); without resampling
    // the memory stays in texel space, in the wrong place for the world.
    let moved = Area { center: Vec3::new(40.0, 36.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
    fog.set_area("i", moved).unwrap();
    fog.tick(&mut world, 50_000).unwrap();
    let misplaced = mask(&mut fog, Texture::Memory).2;
    fog.import_memory("i", &blob).unwrap();
    let (_, _, after) = mask(&mut fog, Texture::Memory);
    for y in 0..64usize {
        for x in 0..64usize {
            let old = if x + 8 < 64 && y + 4 < 64 { before[(y + 4) * 64 + x + 8] } else { 0 };
            assert_eq!(after[y * 64 + x], old, "texel ({x}, {y})");
        }
    }
    assert_ne!(after, misplaced, "the import put the memory back in place");
    let (_, _, mapped_after) = mask(&mut fog, Texture::Mapped);
    for y in 0..64usize {
        for x in 0..64usize {
            let old = if x + 8 < 64 && y + 4 < 64 { mapped_before[(y + 4) * 64 + x + 8] } else { 0 };
            assert_eq!(mapped_after[y * 64 + x], old, "mapped texel ({x}, {y})");
        }
    }
    // Explored stays explored on screen once the instance recomputed.
    fog.tick(&mut world, 50_000).unwrap();
    let (_, _, composed) = mask(&mut fog, Texture::Compose);
    assert!(after.iter().zip(&composed).all(|(m, c)| *m == 0 || *c > 0), "every explored texel shows as explored");
    // Damaged or wrong blobs are named and change nothing.
    let hash = fog.lockstep_hash().unwrap();
    let e = fog.import_memory("i", &blob[..blob.len() - 1]).unwrap_err().to_string();
    assert!(e.contains("truncated or padded"), "{e}");
    let nan = MemoryBody {
        instance: "i".into(),
        area: Area { center: Vec3::new(f32::NAN, 0.0, 0.0), ..moved },
        width: 2,
        height: 2,
        memory: vec![0; 8],
        mapped: vec![0; 8],
    };
    let e = fog.import_memory("i", &murk_core::snapshot::encode(MEMORY_MAGIC, &nan).unwrap()).unwrap_err().to_string();
    assert!(e.contains("memory.area.center.x = NaN"), "{e}");
    let short = MemoryBody { instance: "i".into(), area: moved, width: 4, height: 4, memory: vec![0; 10], mapped: vec![0; 32] };
    let e = fog.import_memory("i", &murk_core::snapshot::encode(MEMORY_MAGIC, &short).unwrap()).unwrap_err().to_string();
    assert!(e.contains("memory.memory = 10 bytes: must hold 4x4 texels of 2 bytes = 32 bytes"), "{e}");
    let short = MemoryBody { instance: "i".into(), area: moved, width: 4, height: 4, memory: vec![0; 32], mapped: vec![0; 3] };
    let e = fog.import_memory("i", &murk_core::snapshot::encode(MEMORY_MAGIC, &short).unwrap()).unwrap_err().to_string();
    assert!(e.contains("memory.mapped = 3 bytes"), "{e}");
    let snapshot = fog.snapshot(&world).unwrap();
    let e = fog.import_memory("i", &snapshot).unwrap_err().to_string();
    assert!(e.contains("magic"), "a snapshot is not a memory blob: {e}");
    assert!(fog.import_memory("nowhere", &blob).is_err());
    // Another instance's memory, and memory of a place the area does not
    // cover, are named.
    let mut body: MemoryBody = murk_core::snapshot::decode(MEMORY_MAGIC, &blob).unwrap();
    body.instance = "j".into();
    let e = fog.import_memory("i", &murk_core::snapshot::encode(MEMORY_MAGIC, &body).unwrap()).unwrap_err().to_string();
    assert!(e.contains("memory.instance = j") && e.contains("`i`") && e.contains("as a map"), "{e}");
    body.instance = "i".into();
    body.area.center.x += 1000.0;
    let elsewhere = murk_core::snapshot::encode(MEMORY_MAGIC, &body).unwrap();
    let e = fog.import_memory("i", &elsewhere).unwrap_err().to_string();
    let centre = format!("memory.area = centre ({}, {})", body.area.center.x, body.area.center.y);
    assert!(e.contains(&centre) && e.contains("covers no texel of instance `i`"), "{e}");
    let e = fog.import_memory_as_map("i", &elsewhere).unwrap_err().to_string();
    assert!(e.contains("covers no texel"), "{e}");
    assert_eq!(fog.lockstep_hash().unwrap(), hash, "a rejected blob changes nothing");
    assert!(fog.import_memory_as_map("i", &blob[..blob.len() - 1]).is_err());
    assert_eq!(fog.lockstep_hash().unwrap(), hash, "nor as a map");
}

/// An ally's explored memory, imported as a map: what it explored becomes
/// mapped (known, never seen) where it was in the world, the instance's own
/// memory stays, and the final mask shows the mapped value there.
pub fn an_allys_memory_imported_as_a_map_becomes_the_mapped_state(make: &Make) {
    let (_, mut ally) = explored(make, resampling());
    let blob = ally.export_memory("i").unwrap();
    let (_, _, theirs) = mask(&mut ally, Texture::Memory);
    let mut fog = fog_on(make(), Profile { resample_on_area_change: false, ..resampling() });
    let mut world = World::new();
    let s = world.spawn((Position(Vec3::new(50.5, 50.5, 0.0)), VisionSource::new(6.0)));
    for _ in 0..4 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    world.despawn(s).unwrap();
    let (_, _, own) = mask(&mut fog, Texture::Memory);
    fog.import_memory_as_map("i", &blob).unwrap();
    assert_eq!(mask(&mut fog, Texture::Memory).2, own, "its own memory is kept");
    assert_eq!(mask(&mut fog, Texture::Mapped).2, theirs, "the ally's explored ground is mapped");
    for _ in 0..4 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    let (_, _, fin) = mask(&mut fog, Texture::Final);
    let centre = 20 * 64 + 20;
    assert_eq!((theirs[centre], own[centre], fin[centre]), (65535, 0, 16384), "mapped, never seen by this player");
}

/// Every test of this suite, by name.
/// Bounded input from other players: a small memory blob that claims a
/// huge memory is refused by name before it is decompressed, whether its
/// header claims a long body or its body claims a huge side; a blob of
/// more than four times the instance's texels is refused; nothing changes.
pub fn a_small_memory_blob_claiming_a_huge_side_is_refused_unread(make: &Make) {
    let (_, mut fog) = explored(make, Profile::default());
    let memory_before = fog.read_texture("i", Texture::Memory).unwrap();
    let area = fog.instance("i").unwrap().area;
    let body = |width: u32, height: u32, texels: usize| MemoryBody {
        instance: "i".into(),
        area,
        width,
        height,
        memory: vec![0; texels * 2],
        mapped: vec![0; texels * 2],
    };
    // A 64 KB payload whose header claims a body of 16 MB.
    let noise: Vec<u8> = (0..65536u32).map(|i| (murk_core::fixed::hash2(i as i32, 9) & 0xff) as u8).collect();
    let mut long = murk_core::snapshot::frame(MEMORY_MAGIC, &noise);
    long[20..28].copy_from_slice(&(16u64 << 20).to_le_bytes());
    let cases = [
        (long, "memory.body = 16777216"),
        (murk_core::snapshot::encode(MEMORY_MAGIC, &body(16384, 16384, 0)).unwrap(), "memory.width = 16384"),
        (murk_core::snapshot::encode(MEMORY_MAGIC, &body(4096, 4096, 0)).unwrap(), "memory.width x memory.height = 4096x4096"),
        (murk_core::snapshot::encode(MEMORY_MAGIC, &body(64, 64, 63 * 64)).unwrap(), "memory.memory"),
    ];
    for (blob, needle) in cases {
        assert!(blob.len() < 70_000, "a small blob ({} bytes)", blob.len());
        for as_map in [false, true] {
            let e = if as_map { fog.import_memory_as_map("i", &blob) } else { fog.import_memory("i", &blob) };
            let e = e.unwrap_err().to_string();
            assert!(e.contains(needle), "`{e}` should name `{needle}`");
        }
    }
    assert_eq!(fog.read_texture("i", Texture::Memory).unwrap(), memory_before, "refused blobs changed nothing");
    // Twice the resolution on each side is still taken.
    let fine = murk_core::snapshot::encode(MEMORY_MAGIC, &body(128, 128, 128 * 128)).unwrap();
    fog.import_memory("i", &fine).unwrap();
}

pub const TESTS: &[Test] = &[
    ("a_small_memory_blob_claiming_a_huge_side_is_refused_unread", a_small_memory_blob_claiming_a_huge_side_is_refused_unread),
    ("an_allys_memory_imported_as_a_map_becomes_the_mapped_state", an_allys_memory_imported_as_a_map_becomes_the_mapped_state),
    ("saved_memory_comes_back_where_it_was_after_the_area_changed", saved_memory_comes_back_where_it_was_after_the_area_changed),
    ("a_move_by_whole_texels_shifts_every_mask_exactly", a_move_by_whole_texels_shifts_every_mask_exactly),
    ("without_resampling_the_old_texel_space_rule_holds", without_resampling_the_old_texel_space_rule_holds),
    ("growing_the_area_keeps_what_was_explored_where_it_was", growing_the_area_keeps_what_was_explored_where_it_was),
    ("a_quarter_turn_resamples_exactly", a_quarter_turn_resamples_exactly),
    ("a_snapshot_right_after_a_resize_restores", a_snapshot_right_after_a_resize_restores),
    ("a_rejected_area_changes_nothing", a_rejected_area_changes_nothing),
];
