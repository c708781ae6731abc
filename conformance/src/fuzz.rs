//! Fuzz targets as plain functions, shared by the stable test that runs in
//! CI (`tests/fuzz.rs`: the checked-in regressions, the seeds, then a short
//! seeded random run) and by the cargo-fuzz targets in `fuzz/` (nightly,
//! open-ended).
//!
//! Each target takes arbitrary bytes and must not panic. Beyond that, each
//! checks the house rule that a rejected input changes nothing: after every
//! error, the subsystem's lockstep hash, instance names, tick count and
//! counters are what they were before the call.

use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_core::snapshot::{frame, unframe, FOG_MAGIC};
use murk_core::MEMORY_MAGIC;
use murk_core::{
    ActiveReveal, Area, Blocker, BlockerShape, FogSubsystem, FogTarget, InstanceDesc, InstanceStats, Position, Profile, RayMethod, Reveal,
    RevealArea, RevealId, RevealKind, StealthActor, TeamMask, VisionSource,
};
use murk_cpu::CpuBackend;

/// The targets, by name (the folder names under `fuzz/regressions/`).
pub const TARGETS: [&str; 7] = ["snapshot", "memory", "profile", "scenario", "api", "map", "reveal"];

/// Runs the target `name` on `data`.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "snapshot" => snapshot(data),
        "memory" => memory(data),
        "profile" => profile(data),
        "scenario" => scenario(data),
        "api" => api(data),
        "map" => map(data),
        "reveal" => reveal(data),
        other => panic!("no fuzz target `{other}`"),
    }
}

/// Everything a rejected call must leave alone.
#[derive(Debug, PartialEq)]
struct Observed {
    hash: u64,
    names: Vec<String>,
    tick: u64,
    stats: Vec<InstanceStats>,
    reveals: Vec<Vec<ActiveReveal>>,
    entities: u32,
}

fn observe(fog: &mut FogSubsystem, world: &World) -> Observed {
    let names = fog.instance_names();
    let stats = names.iter().map(|n| fog.stats(n).expect("listed")).collect();
    let reveals = names.iter().map(|n| fog.reveals(n).expect("listed").to_vec()).collect();
    Observed { hash: fog.lockstep_hash().expect("the CPU backend reads back"), names, tick: fog.tick_count(), stats, reveals, entities: world.len() }
}

/// Runs `call`; if it fails, asserts that nothing observable changed.
fn unchanged_on_error<T>(
    fog: &mut FogSubsystem,
    world: &mut World,
    what: &str,
    call: impl FnOnce(&mut FogSubsystem, &mut World) -> murk_core::Result<T>,
) -> Option<T> {
    let before = observe(fog, world);
    match call(fog, world) {
        Ok(v) => Some(v),
        Err(e) => {
            let after = observe(fog, world);
            assert_eq!(before, after, "{what} failed ({e}) and changed the state");
            None
        }
    }
}

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

/// Reads the bytes of an API sequence.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    /// A float: ordinary values most of the time, and the extremes.
    fn f32(&mut self) -> f32 {
        const SPECIAL: [f32; 12] = [0.0, -0.0, 1.0e-30, -1.0e-30, 1.0e30, -1.0e30, f32::MAX, f32::MIN, f32::INFINITY, f32::NAN, 4.0e16, 4095.0625];
        let k = self.u8();
        if k < 200 {
            (f32::from(k) - 40.0) / 4.0 + f32::from(self.u8()) / 256.0
        } else if k < 240 {
            f32::from_bits(self.u32())
        } else {
            SPECIAL[usize::from(k - 240) % SPECIAL.len()]
        }
    }
    fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.f32(), self.f32(), self.f32())
    }
    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

fn area_from(b: &mut Bytes) -> Area {
    Area { center: b.vec3(), extents: b.vec3(), yaw_degrees: b.f32() }
}

fn fuzz_profile(b: &mut Bytes) -> Profile {
    let methods = [RayMethod::None, RayMethod::StepScan, RayMethod::Dda, RayMethod::HierarchicalDda, RayMethod::DistanceField];
    let (method, fade_in_rate, relax_rate, forget, update, blur, df) = (b.u8(), b.f32(), b.f32(), b.f32(), b.f32(), b.u8(), b.u8());
    let flags = b.u8();
    Profile {
        ray_method: methods[usize::from(method) % methods.len()],
        fade_in_rate,
        relax_rate,
        forget_rate: forget.abs().min(1.0e4),
        update_rate: update.abs().min(1.0),
        blur_radius: u32::from(blur % 4),
        df_scale: [1, 2, 4, 3][usize::from(df % 4)],
        // Bits of their own, so that every pair of these settings is drawn.
        freeze_state: flags.is_multiple_of(8),
        resample_on_area_change: flags & 8 != 0,
        reveal_walls: flags & 16 == 0,
        ..Profile::default()
    }
}

/// API sequences: each byte picks a call, the following bytes its arguments.
/// Every call that fails must change nothing; none may panic.
pub fn api(data: &[u8]) {
    let mut b = Bytes(data);
    let mut fog = FogSubsystem::new(Box::new(CpuBackend::new(1).expect("pool")));
    let mut world = World::new();
    let mut entities: Vec<Entity> = Vec::new();
    let mut snapshots: Vec<Vec<u8>> = Vec::new();
    let names = ["a", "b", "c"];
    // Start from a valid instance (with fuzzed settings), so that most
    // sequences exercise ticks, queries and snapshots rather than only the
    // rejection of random areas.
    let area = Area { center: Vec3::new(8.0, 8.0, 5.0), extents: Vec3::new(16.0, 16.0, 10.0), yaw_degrees: 0.0 };
    let first = InstanceDesc { name: "a".into(), area, resolution: 16, lod: 0, observed_teams: TeamMask::ALL, profile: fuzz_profile(&mut b) };
    let _ = unchanged_on_error(&mut fog, &mut world, "create_instance", |f, _| f.create_instance(first));
    let mut steps = 0;
    while !b.done() && steps < 64 {
        steps += 1;
        let op = b.u8() % 16;
        let name = names[usize::from(b.u8()) % names.len()];
        match op {
            0 => {
                // At most 32 texels across (and so at most 32 x 4096 texels):
                // the point is input handling, not big allocations.
                let resolution = [1, 8, 16, 24, 32, 0, 17, 31][usize::from(b.u8() % 8)];
                let desc = InstanceDesc {
                    name: name.into(),
                    area: area_from(&mut b),
                    resolution,
                    lod: u32::from(b.u8() % 6),
                    observed_teams: TeamMask(b.u32()),
                    profile: fuzz_profile(&mut b),
                };
                let _ = unchanged_on_error(&mut fog, &mut world, "create_instance", |f, _| f.create_instance(desc));
            }
            1 => {
                let _ = unchanged_on_error(&mut fog, &mut world, "destroy_instance", |f, _| f.destroy_instance(name));
            }
            2 | 3 => {
                let dt = [0, 1, 33_333, 1_000_000, u32::MAX][usize::from(b.u8() % 5)];
                let _ = unchanged_on_error(&mut fog, &mut world, "tick", |f, w| f.tick(w, dt));
            }
            4 => {
                let area = area_from(&mut b);
                let _ = unchanged_on_error(&mut fog, &mut world, "set_area", |f, _| f.set_area(name, area));
            }
            5 => {
                let point = b.vec3();
                let _ = unchanged_on_error(&mut fog, &mut world, "expand_area_to_include", |f, _| f.expand_area_to_include(name, point));
            }
            6 => {
                let p = fuzz_profile(&mut b);
                let _ = unchanged_on_error(&mut fog, &mut world, "apply_profile", |f, _| f.apply_profile(name, p));
            }
            7 => {
                let radius = b.f32();
                let source = VisionSource { team: b.u8() % 40, ..VisionSource::new(radius) };
                entities.push(world.spawn((Position(b.vec3()), source)));
            }
            8 => {
                let shape = match b.u8() % 3 {
                    0 => BlockerShape::Circle { radius: b.f32() },
                    1 => BlockerShape::Rect { size: Vec2::new(b.f32(), b.f32()), yaw_degrees: b.f32() },
                    _ => BlockerShape::Polygon { points: (0..b.u8() % 6).map(|_| Vec2::new(b.f32(), b.f32())).collect() },
                };
                entities.push(world.spawn((Position(b.vec3()), Blocker::wall(shape))));
            }
            9 => {
                if !entities.is_empty() {
                    let e = entities[usize::from(b.u8()) % entities.len()];
                    let p = b.vec3();
                    if let Ok(mut pos) = world.get::<&mut Position>(e) {
                        pos.0 = p;
                    }
                }
            }
            10 => {
                if !entities.is_empty() {
                    let e = entities.swap_remove(usize::from(b.u8()) % entities.len());
                    let _ = world.despawn(e);
                }
            }
            11 => {
                let p = b.vec3();
                let _ = unchanged_on_error(&mut fog, &mut world, "query_immediate", |f, w| f.query_immediate(w, p, TeamMask::ALL));
                let _ = unchanged_on_error(&mut fog, &mut world, "mask_query_now", |f, _| f.mask_query_now(&[p], None));
            }
            12 => {
                if let Some(s) = unchanged_on_error(&mut fog, &mut world, "snapshot", |f, w| f.snapshot(w)) {
                    snapshots.push(s);
                }
            }
            13 => {
                if !snapshots.is_empty() {
                    let mut s = snapshots[usize::from(b.u8()) % snapshots.len()].clone();
                    // Sometimes damage the body, framed again so that it is parsed.
                    if b.u8() % 2 == 0 {
                        let mut body = unframe(FOG_MAGIC, &s).expect("murk wrote it");
                        if !body.is_empty() {
                            let at = b.u32() as usize % body.len();
                            body[at] ^= b.u8() | 1;
                        }
                        s = frame(FOG_MAGIC, &body);
                    }
                    let _ = unchanged_on_error(&mut fog, &mut world, "restore", |f, w| f.restore(w, &s));
                }
            }
            14 => {
                let actor = StealthActor { hide_mode: murk_core::HideMode::FreezeWithGhost, ..StealthActor::default() };
                entities.push(world.spawn((Position(b.vec3()), actor)));
            }
            _ => {
                let _ = unchanged_on_error(&mut fog, &mut world, "invalidate", |f, _| f.invalidate(name));
            }
        }
    }
}

fn shape_from(b: &mut Bytes) -> BlockerShape {
    match b.u8() % 3 {
        0 => BlockerShape::Circle { radius: b.f32() },
        1 => BlockerShape::Rect { size: Vec2::new(b.f32(), b.f32()), yaw_degrees: b.f32() },
        _ => BlockerShape::Polygon { points: (0..b.u8() % 6).map(|_| Vec2::new(b.f32(), b.f32())).collect() },
    }
}

fn reveal_area_from(b: &mut Bytes) -> RevealArea {
    if b.u8().is_multiple_of(4) {
        RevealArea::Everywhere
    } else {
        RevealArea::Shape { at: Vec2::new(b.f32(), b.f32()), shape: shape_from(b) }
    }
}

fn target_from(b: &mut Bytes) -> FogTarget {
    match b.u8() % 4 {
        0 => FogTarget::Team(b.u8() % 40),
        1 => FogTarget::Instance("a".into()),
        2 => FogTarget::Instance("b".into()),
        _ => FogTarget::Instance("nowhere".into()),
    }
}

/// Scripted reveals and hides on the seed world (which holds two reveals):
/// each byte picks a call, the following bytes its arguments, among
/// reveals, ends, hides, ticks, area changes, memory export and import, and
/// snapshot and in-memory state round trips. Every call that fails must change nothing; an
/// accepted state must snapshot and restore to the same hash.
pub fn reveal(data: &[u8]) {
    let mut b = Bytes(data);
    let (mut world, mut fog) = seed_world();
    let mut steps = 0;
    while !b.done() && steps < 48 {
        steps += 1;
        match b.u8() % 8 {
            0 | 1 => {
                let target = target_from(&mut b);
                let area = reveal_area_from(&mut b);
                let kind = if b.u8().is_multiple_of(3) { RevealKind::Map } else { RevealKind::Sight { remember: b.u8().is_multiple_of(2) } };
                let fade_ticks = [0, 1, 3, 1000, u32::MAX][usize::from(b.u8() % 5)];
                let ticks = [None, Some(0), Some(1), Some(5), Some(u32::MAX)][usize::from(b.u8() % 5)];
                let r = Reveal { area, kind, fade_ticks, ticks };
                let _ = unchanged_on_error(&mut fog, &mut world, "reveal", |f, _| f.reveal(&target, r));
            }
            2 => {
                let id = RevealId(u64::from(b.u8() % 8));
                let _ = unchanged_on_error(&mut fog, &mut world, "end_reveal", |f, _| f.end_reveal(id));
            }
            3 => {
                let (target, area) = (target_from(&mut b), reveal_area_from(&mut b));
                let _ = unchanged_on_error(&mut fog, &mut world, "hide", |f, _| f.hide(&target, &area));
            }
            4 | 5 => {
                let dt = [0, 33_333, u32::MAX][usize::from(b.u8() % 3)];
                let _ = unchanged_on_error(&mut fog, &mut world, "tick", |f, w| f.tick(w, dt));
            }
            6 => {
                let name = ["a", "b"][usize::from(b.u8() % 2)];
                let area = area_from(&mut b);
                let _ = unchanged_on_error(&mut fog, &mut world, "set_area", |f, _| f.set_area(name, area));
            }
            _ => {
                if let Some(blob) = unchanged_on_error(&mut fog, &mut world, "export_memory", |f, _| f.export_memory("a")) {
                    let _ = unchanged_on_error(&mut fog, &mut world, "import_memory", |f, _| f.import_memory("b", &blob));
                }
                let bytes = fog.snapshot(&world).expect("snapshots");
                let hash = fog.lockstep_hash().expect("hashes");
                let (mut world2, mut fog2) = seed_world();
                fog2.restore(&mut world2, &bytes).expect("a snapshot murk wrote restores");
                assert_eq!(fog2.lockstep_hash().expect("hashes"), hash, "a restore gives back the state");
                let state = fog.save_state(&world).expect("saves");
                fog2.load_state(&mut world2, &state).expect("a state murk saved loads");
                assert_eq!(fog2.lockstep_hash().expect("hashes"), hash, "a loaded state is the state");
            }
        }
    }
}

/// A small deterministic generator (SplitMix64) for the seeded random runs.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// A mutation of `seed`: a few bytes flipped, set to extremes, inserted,
/// removed, or a slice repeated; for snapshots, the checksum is fixed up by
/// the target itself.
pub fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len().max(1);
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = rng.below(len);
                out[i] = [0, 1, 0x7f, 0x80, 0xff][rng.below(5)];
            }
            2 => {
                let i = rng.below(len + 1).min(out.len());
                let n = 1 + rng.below(8);
                let b = rng.bytes(n);
                out.splice(i..i, b);
            }
            3 if !out.is_empty() => {
                let i = rng.below(len);
                let n = (1 + rng.below(8)).min(out.len() - i);
                out.drain(i..i + n);
            }
            4 if out.len() > 8 => {
                // A little-endian u32 or u64 field set to a boundary value.
                let i = rng.below(out.len() - 8);
                let v: u64 = [0, 1, u64::from(u32::MAX), u64::MAX, u64::MAX - 1, 1 << 40][rng.below(6)];
                let w = if rng.below(2) == 0 { 4 } else { 8 };
                out[i..i + w].copy_from_slice(&v.to_le_bytes()[..w]);
            }
            _ => {
                let i = rng.below(len + 1).min(out.len());
                out.truncate(i);
            }
        }
    }
    out
}

/// The seeds of a target: real inputs the mutations start from.
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

/// A structural mutation of a JSON seed: a few values replaced by
/// boundary values, keys removed, array elements repeated or dropped. The
/// result parses as JSON, so the scenario and profile checks (not only the
/// parser) are reached. `None` when the seed is not JSON.
pub fn mutate_json(seed: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
    let mut value: serde_json::Value = serde_json::from_slice(seed).ok()?;
    for _ in 0..1 + rng.below(3) {
        let mut count = 0;
        count_nodes(&value, &mut count);
        let target = rng.below(count.max(1));
        let mut at = 0;
        mutate_node(&mut value, target, &mut at, rng);
    }
    serde_json::to_vec(&value).ok()
}

fn count_nodes(v: &serde_json::Value, n: &mut usize) {
    *n += 1;
    match v {
        serde_json::Value::Array(a) => a.iter().for_each(|x| count_nodes(x, n)),
        serde_json::Value::Object(o) => o.values().for_each(|x| count_nodes(x, n)),
        _ => {}
    }
}

fn mutate_node(v: &mut serde_json::Value, target: usize, at: &mut usize, rng: &mut Rng) -> bool {
    use serde_json::Value;
    if *at == target {
        let boundary: [Value; 14] = [
            Value::from(0),
            Value::from(-1),
            Value::from(1),
            Value::from(u32::MAX),
            Value::from(1_000_001),
            Value::from(4096),
            Value::from(4097),
            Value::from(1.0e30),
            Value::from(-1.0e30),
            Value::from(1.0e-30),
            Value::from(4095.0625),
            Value::from(0.5),
            Value::from("x"),
            Value::Null,
        ];
        match v {
            Value::Array(a) if !a.is_empty() && rng.below(2) == 0 => {
                let i = rng.below(a.len());
                if rng.below(2) == 0 {
                    let copy = a[i].clone();
                    a.insert(i, copy);
                } else {
                    a.remove(i);
                }
            }
            Value::Object(o) if !o.is_empty() && rng.below(3) == 0 => {
                let key = o.keys().nth(rng.below(o.len())).cloned().unwrap_or_default();
                o.remove(&key);
            }
            _ => *v = boundary[rng.below(boundary.len())].clone(),
        }
        return true;
    }
    *at += 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|x| mutate_node(x, target, at, rng)),
        Value::Object(o) => o.values_mut().any(|x| mutate_node(x, target, at, rng)),
        _ => false,
    }
}
