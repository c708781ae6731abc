//! The targets whose input is a file: snapshots and explored-memory blobs
//! (their containers framed so that the body is parsed), profiles,
//! scenarios and Moving AI maps.

use super::seeds::seed_world;
use super::unchanged::unchanged_on_error;
use murk_core::glam::Vec3;
use murk_core::hecs::World;
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_core::snapshot::{frame, unframe, FOG_MAGIC};
use murk_core::{Area, Blocker, BlockerShape, FogSubsystem, InstanceDesc, Position, Profile, TeamMask, VisionSource, MEMORY_MAGIC};
use murk_cpu::CpuBackend;

/// A fuzz input for a container of `magic`: as it is, unless it starts as
/// one but does not check (most mutations), when the bytes between the
/// header and the checksum are taken as an uncompressed body and framed
/// properly, so that the body parser is reached.
fn framed<'a>(magic: &[u8; 8], data: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    if data.len() >= 36 && data.starts_with(magic) && unframe(magic, data).is_err() {
        std::borrow::Cow::Owned(frame(magic, &data[28..data.len() - 8]))
    } else {
        std::borrow::Cow::Borrowed(data)
    }
}

/// Snapshot restore: `data` is a snapshot (any bytes). When it starts as a
/// snapshot but its container does not check (most mutations), the bytes
/// between the header and the checksum are taken as an uncompressed body
/// and framed properly, so that the body parser is reached: the fuzzer
/// mutates bodies in the form of [`raw_snapshot`]. The restore must fail
/// without changing anything, or succeed and leave a subsystem that ticks
/// and snapshots again.
pub fn snapshot(data: &[u8]) {
    let bytes = framed(FOG_MAGIC, data);
    let (mut world, mut fog) = seed_world();
    if unchanged_on_error(&mut fog, &mut world, "restore", |f, w| f.restore(w, &bytes)).is_some() {
        // Accepted: it must run on, and round-trip.
        let _ = unchanged_on_error(&mut fog, &mut world, "tick after restore", |f, w| f.tick(w, 50_000));
        let again = fog.snapshot(&world).expect("a restored state snapshots");
        let (mut world2, mut fog2) = seed_world();
        fog2.restore(&mut world2, &again).expect("a snapshot murk wrote restores");
    }
}

/// Explored-memory import: `data` is a memory blob (any bytes), framed as
/// the snapshot target frames its input (the fuzzer mutates the body in the
/// form of [`raw_container`]). The import into instance `a` must fail
/// without changing anything, or succeed and leave a subsystem that ticks.
///
/// The same bytes are also imported as a container of their own with the
/// checksum put right, so that mutated headers (a body length that claims a
/// huge memory) reach the bound checked before anything is decompressed.
pub fn memory(data: &[u8]) {
    let bytes = framed(MEMORY_MAGIC, data);
    let (mut world, mut fog) = seed_world();
    if unchanged_on_error(&mut fog, &mut world, "import_memory", |f, _| f.import_memory("a", &bytes)).is_some() {
        let _ = unchanged_on_error(&mut fog, &mut world, "tick after import", |f, w| f.tick(w, 50_000));
    }
    if data.len() >= 36 && data.starts_with(MEMORY_MAGIC) {
        let mut own = data.to_vec();
        let end = own.len() - 8;
        let sum = murk_core::hash::bytes_hash(&own[28..end]);
        own[end..].copy_from_slice(&sum.to_le_bytes());
        let _ = unchanged_on_error(&mut fog, &mut world, "import_memory_as_map", |f, _| f.import_memory_as_map("a", &own));
    }
}

/// Profile files: JSON, RON or TOML text; an accepted profile must create an
/// instance that ticks.
pub fn profile(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for format in ["json", "ron", "toml"] {
        let Ok(profile) = Profile::parse(text, format, "fuzz") else { continue };
        let mut fog = FogSubsystem::new(Box::new(CpuBackend::new(1).expect("pool")));
        let area = Area { center: Vec3::new(8.0, 8.0, 5.0), extents: Vec3::new(16.0, 16.0, 10.0), yaw_degrees: 0.0 };
        let desc = InstanceDesc { name: "p".into(), area, resolution: 16, lod: 0, observed_teams: TeamMask::ALL, profile: profile.clone() };
        let mut world = World::new();
        if unchanged_on_error(&mut fog, &mut world, "create_instance", |f, _| f.create_instance(desc)).is_none() {
            continue;
        }
        world.spawn((Position(Vec3::new(4.5, 4.5, 0.0)), VisionSource::new(5.0)));
        world.spawn((Position(Vec3::new(9.0, 9.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 1.0 })));
        for dt in [0, 33_333, 1, u32::MAX] {
            let _ = unchanged_on_error(&mut fog, &mut world, "tick", |f, w| f.tick(w, dt));
        }
        let _ = unchanged_on_error(&mut fog, &mut world, "apply_profile", |f, _| f.apply_profile("p", profile.clone()));
    }
}

/// Scenario files: JSON or RON; an accepted scenario runs its first ticks
/// (at most 3, on instances of at most 128 texels).
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for format in ["json", "ron"] {
        let Ok(scenario) = Scenario::parse(text, format, "fuzz") else { continue };
        if scenario.instances.iter().any(|i| i.resolution > 128) || scenario.instances.len() > 4 {
            continue;
        }
        let backend = Box::new(CpuBackend::new(1).expect("pool"));
        let Ok(mut runner) = ScenarioRunner::new(scenario, &ScenarioFiles::default(), backend) else { continue };
        for _ in 0..3 {
            if runner.finished() || runner.step().is_err() {
                break;
            }
        }
    }
}

/// Moving AI maps.
pub fn map(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = murk_core::movingai::MovingAiMap::parse(text, "fuzz");
    }
}
