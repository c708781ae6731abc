//! The targets whose input is a sequence of calls: any API call on the
//! seed world (`api`), and scripted reveals and hides (`reveal`). Each byte
//! picks a call, the following bytes its arguments.

use super::seeds::seed_world;
use super::unchanged::unchanged_on_error;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::snapshot::{frame, unframe, FOG_MAGIC};
use murk_core::{
    Area, Blocker, BlockerShape, FogSubsystem, FogTarget, InstanceDesc, Position, Profile, RayMethod, Reveal, RevealArea, RevealId, RevealKind,
    StealthActor, TeamMask, VisionSource,
};
use murk_cpu::CpuBackend;

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
                    observed_teams: TeamMask(u64::from(b.u32()) * 0x1_0000_0001),
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
