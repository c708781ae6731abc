//! Properties of the pipeline over generated worlds, on every backend.
//!
//! Worlds use one world unit per texel and coordinates that are odd multiples
//! of 1/8, so no input sits exactly on a texel edge or centre; that keeps the
//! mirror relation exact (flooring is not symmetric at exact edges).

use super::{Make, Test};
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::Backend;
use murk_core::{
    pass_outputs, Area, Blocker, BlockerShape, CaptureMode, Cone, FogSubsystem, HeightCapture, HeightLayer, InstanceDesc, Position, Profile,
    RayMethod, Resolution, TeamMask, Texture, TextureData, TextureRow, VisionSource,
};
use murk_cpu::CpuBackend;
use proptest::prelude::*;

#[derive(Clone, Debug)]
pub(super) struct GenSource {
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) radius: f32,
    pub(super) eye: f32,
    pub(super) falloff: f32,
    pub(super) cone: Option<(f32, f32)>,
}

#[derive(Clone, Debug)]
pub(super) enum GenShape {
    Circle(f32),
    Rect(f32, f32, f32),
    Polygon(Vec<(i32, i32)>),
}

#[derive(Clone, Debug)]
pub(super) struct GenBlocker {
    x: i32,
    y: i32,
    shape: GenShape,
    height: Option<f32>,
}

#[derive(Clone, Debug)]
pub(super) struct GenWorld {
    pub(super) width: u32,
    pub(super) rows: u32,
    pub(super) sources: Vec<GenSource>,
    pub(super) blockers: Vec<GenBlocker>,
    pub(super) method: RayMethod,
    pub(super) blur_radius: u32,
    pub(super) forget_rate: f32,
    pub(super) fade_in_rate: f32,
    pub(super) reveal_walls: bool,
}

/// An odd multiple of 1/8 inside `-half..half`, as eighths.
pub(super) fn coord(half: u32) -> impl Strategy<Value = i32> {
    let h = half as i32 * 4 - 1;
    (-h..h).prop_map(|k| 2 * k + 1)
}

fn source(w: u32, h: u32) -> impl Strategy<Value = GenSource> {
    (coord(w), coord(h), 2.0f32..20.0, 0.5f32..6.0, 0.0f32..0.8, prop::option::of((0i32..360, 10i32..170)))
        .prop_map(|(x, y, radius, eye, falloff, cone)| GenSource { x, y, radius, eye, falloff, cone: cone.map(|(a, h)| (a as f32, h as f32)) })
}

fn shape() -> impl Strategy<Value = GenShape> {
    prop_oneof![
        (1.0f32..5.0).prop_map(GenShape::Circle),
        (1.0f32..12.0, 1.0f32..4.0, 0i32..180).prop_map(|(a, b, y)| GenShape::Rect(a, b, y as f32)),
        // Even eighths: added to the (odd) position, every vertex lands on an odd eighth.
        prop::collection::vec((-40i32..40, -40i32..40), 3..7).prop_map(|v| GenShape::Polygon(v.into_iter().map(|(x, y)| (2 * x, 2 * y)).collect())),
    ]
}

fn blocker(w: u32, h: u32, walls_only: bool) -> impl Strategy<Value = GenBlocker> {
    let height = if walls_only { Just(None).boxed() } else { prop::option::of(0.5f32..8.0).boxed() };
    (coord(w.saturating_sub(12).max(4)), coord(h.saturating_sub(12).max(4)), shape(), height).prop_map(|(x, y, shape, height)| GenBlocker {
        x,
        y,
        shape,
        height,
    })
}

pub(super) fn method() -> impl Strategy<Value = RayMethod> {
    prop_oneof![
        Just(RayMethod::None),
        Just(RayMethod::StepScan),
        Just(RayMethod::Dda),
        Just(RayMethod::HierarchicalDda),
        Just(RayMethod::DistanceField)
    ]
}

pub(super) fn world_with(walls_only: bool, methods: BoxedStrategy<RayMethod>) -> impl Strategy<Value = GenWorld> {
    (prop_oneof![Just(32u32), Just(48), Just(64)], prop_oneof![Just(32u32), Just(40), Just(64)]).prop_flat_map(move |(w, h)| {
        (
            prop::collection::vec(source(w, h), 1..6),
            prop::collection::vec(blocker(w, h, walls_only), 0..6),
            methods.clone(),
            0u32..3,
            prop_oneof![Just(0.0f32), Just(0.7)],
            prop_oneof![Just(3.0f32), Just(1.0e4)],
            any::<bool>(),
        )
            .prop_map(move |(sources, blockers, method, blur_radius, forget_rate, fade_in_rate, reveal_walls)| GenWorld {
                width: w,
                rows: h,
                sources,
                blockers,
                method,
                blur_radius,
                forget_rate,
                fade_in_rate,
                reveal_walls,
            })
    })
}

/// A rigid motion of the world (and the area with it, unless `area_fixed`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Motion {
    pub(super) quarter_turns: i32,
    pub(super) mirror: bool,
    pub(super) shift: Vec2,
    pub(super) area_fixed: bool,
}

pub(super) const IDENTITY: Motion = Motion { quarter_turns: 0, mirror: false, shift: Vec2::ZERO, area_fixed: false };

impl Motion {
    fn vec(self, mut p: Vec2) -> Vec2 {
        if self.mirror {
            p.x = -p.x;
        }
        for _ in 0..self.quarter_turns {
            p = Vec2::new(-p.y, p.x);
        }
        p
    }
    fn point(self, p: Vec2) -> Vec2 {
        self.vec(p) + self.shift
    }
    fn yaw(self, deg: f32) -> f32 {
        let d = if self.mirror { 180.0 - deg } else { deg };
        d + 90.0 * self.quarter_turns as f32
    }
}

pub(super) fn eighths(k: i32) -> f32 {
    k as f32 / 8.0
}

pub(super) fn spawn_world(g: &GenWorld, m: Motion, world: &mut World) {
    for s in &g.sources {
        let mut v = VisionSource::new(s.radius);
        v.eye_height = s.eye;
        v.falloff = Some(s.falloff);
        v.cone = s.cone.map(|(a, h)| Cone { yaw_degrees: m.yaw(a), half_angle_degrees: h });
        let p = m.point(Vec2::new(eighths(s.x), eighths(s.y)));
        world.spawn((Position(Vec3::new(p.x, p.y, 0.0)), v));
    }
    for b in &g.blockers {
        let shape = match &b.shape {
            GenShape::Circle(r) => BlockerShape::Circle { radius: *r },
            GenShape::Rect(a, c, yaw) => BlockerShape::Rect { size: Vec2::new(*a, *c), yaw_degrees: m.yaw(*yaw) },
            GenShape::Polygon(pts) => BlockerShape::Polygon { points: pts.iter().map(|&(x, y)| m.vec(Vec2::new(eighths(x), eighths(y)))).collect() },
        };
        let p = m.point(Vec2::new(eighths(b.x), eighths(b.y)));
        let mut blk = Blocker::wall(shape);
        blk.height = b.height;
        world.spawn((Position(Vec3::new(p.x, p.y, 0.0)), blk));
    }
}

fn profile(g: &GenWorld) -> Profile {
    Profile {
        ray_method: g.method,
        blur_radius: g.blur_radius,
        forget_rate: g.forget_rate,
        fade_in_rate: g.fade_in_rate,
        df_jitter: 0.2,
        soft_shadows: true,
        reveal_walls: g.reveal_walls,
        ..Profile::default()
    }
}

pub(super) fn fog_for(make: &Make, g: &GenWorld, m: Motion) -> FogSubsystem {
    let mut fog = FogSubsystem::new(make());
    let m = if m.area_fixed { IDENTITY } else { m };
    let c = m.point(Vec2::ZERO);
    fog.create_instance(InstanceDesc {
        name: "i".into(),
        area: Area { center: Vec3::new(c.x, c.y, 5.0), extents: Vec3::new(g.width as f32, g.rows as f32, 10.0), yaw_degrees: m.yaw(0.0) },
        resolution: g.width,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile: profile(g),
    })
    .unwrap();
    fog
}

/// Runs two ticks of the world seen through `m` and returns every texture a
/// pass writes.
fn run(make: &Make, g: &GenWorld, m: Motion) -> Vec<(&'static TextureRow, murk_core::TextureImage)> {
    let mut fog = fog_for(make, g, m);
    let mut world = World::new();
    spawn_world(g, m, &mut world);
    fog.tick(&mut world, 50_000).unwrap();
    fog.tick(&mut world, 50_000).unwrap();
    pass_outputs().map(|row| (row, fog.read_row("i", row).unwrap())).collect()
}

pub(super) fn u16s(img: &murk_core::TextureImage) -> &[u16] {
    match &img.data {
        TextureData::U16(v) => v,
        other => panic!("not a mask: {other:?}"),
    }
}

fn u8s(img: &murk_core::TextureImage) -> &[u8] {
    match &img.data {
        TextureData::U8(v) => v,
        other => panic!("not a coverage grid: {other:?}"),
    }
}

/// A square grid turned a quarter counter-clockwise `k` times, as the
/// world turns under an area at yaw 0 (texel x follows world X, rows world Y).
fn turn<T: Copy>(v: &[T], n: usize, k: i32) -> Vec<T> {
    let mut out = v.to_vec();
    for _ in 0..k {
        out = (0..n * n).map(|i| out[(n - 1 - i % n) * n + i / n]).collect();
    }
    out
}

fn flip_rows(img: &murk_core::TextureImage) -> Vec<u16> {
    let v = u16s(img);
    v.chunks(img.width as usize).rev().flatten().copied().collect()
}

/// 48 cases a property, or `PROPTEST_CASES` for a deeper run.
pub(super) fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

pub fn translating_world_and_area_together_changes_nothing(make: &Make) {
    proptest!(config(), |(g in world_with(false, method().boxed()), dx in -200i32..200, dy in -200i32..200)| {
        let shifted = Motion { shift: Vec2::new(dx as f32 * 0.25, dy as f32 * 0.5), ..IDENTITY };
        prop_assert_eq!(run(make, &g, IDENTITY), run(make, &g, shifted));
    });
}

pub fn rotating_world_and_area_by_quarter_turns_changes_nothing(make: &Make) {
    proptest!(config(), |(g in world_with(false, method().boxed()), k in 1i32..4)| {
        prop_assert_eq!(run(make, &g, IDENTITY), run(make, &g, Motion { quarter_turns: k, ..IDENTITY }));
    });
}

pub fn mirroring_the_world_mirrors_the_masks(make: &Make) {
    proptest!(config(), |(g in world_with(false, prop_oneof![Just(RayMethod::None), Just(RayMethod::StepScan), Just(RayMethod::Dda), Just(RayMethod::HierarchicalDda)].boxed()))| {
        // Mirroring world X with the area flips the area's handedness: texel rows reverse.
        let a = run(make, &g, IDENTITY);
        let b = run(make, &g, Motion { mirror: true, ..IDENTITY });
        for ((row, x), (_, y)) in a.iter().zip(&b) {
            if row.texture.is_mask() {
                prop_assert_eq!(u16s(x), &flip_rows(y)[..], "texture {}", row.name);
            }
        }
    });
}

pub fn turning_the_world_under_a_fixed_area_turns_every_mask(make: &Make) {
    proptest!(config(), |(g in world_with(false, prop_oneof![Just(RayMethod::None), Just(RayMethod::StepScan), Just(RayMethod::Dda), Just(RayMethod::HierarchicalDda)].boxed()),
        k in 1i32..4)| {
        // The area stays square at yaw 0 while the world turns by quarter
        // turns about its centre: coverage and every mask turn with it, the
        // blur included (no rounding between its two axes).
        let g = GenWorld { rows: g.width, ..g };
        let n = g.width as usize;
        let a = run(make, &g, IDENTITY);
        let b = run(make, &g, Motion { quarter_turns: k, area_fixed: true, ..IDENTITY });
        for ((row, x), (_, y)) in a.iter().zip(&b) {
            if row.texture == Texture::Coverage {
                prop_assert_eq!(turn(u8s(x), n, k), u8s(y).to_vec(), "texture {}", row.name);
            } else if row.texture.is_mask() {
                prop_assert_eq!(turn(u16s(x), n, k), u16s(y).to_vec(), "texture {}", row.name);
            }
        }
    });
}

pub fn every_backend_gives_the_references_bytes(make: &Make) {
    let reference = || -> Box<dyn Backend> { Box::new(CpuBackend::new(1).unwrap()) };
    proptest!(config(), |(g in world_with(false, method().boxed()))| {
        prop_assert_eq!(run(&reference, &g, IDENTITY), run(make, &g, IDENTITY));
    });
}

pub fn hierarchical_dda_equals_dda(make: &Make) {
    proptest!(config(), |(g in world_with(false, Just(RayMethod::Dda).boxed()))| {
        let mut h = g.clone();
        h.method = RayMethod::HierarchicalDda;
        let (a, b) = (run(make, &g, IDENTITY), run(make, &h, IDENTITY));
        for ((row, x), (_, y)) in a.iter().zip(&b) {
            if row.resolution != Resolution::Pyramid {
                prop_assert_eq!(x, y, "texture {}", row.name);
            }
        }
    });
}

pub fn adding_a_source_never_lowers_visibility(make: &Make) {
    proptest!(config(), |(g in world_with(false, method().boxed()), extra in source(64, 64))| {
        let mut more = g.clone();
        more.sources.push(extra);
        let (a, b) = (run(make, &g, IDENTITY), run(make, &more, IDENTITY));
        let (va, vb) = (u16s(&a[4].1), u16s(&b[4].1));
        prop_assert_eq!(a[4].0.texture, Texture::Visibility);
        for (i, (x, y)) in va.iter().zip(vb).enumerate() {
            prop_assert!(y >= x, "texel {} fell from {} to {}", i, x, y);
        }
    });
}

pub fn adding_a_wall_never_raises_visibility_except_its_own_faces(make: &Make) {
    proptest!(config(), |(g in world_with(true, prop_oneof![Just(RayMethod::StepScan), Just(RayMethod::Dda), Just(RayMethod::HierarchicalDda)].boxed()),
        extra in blocker(64, 64, true))| {
        // Without reveal_walls no texel rises; with it, only texels the new
        // wall covers may (its faces), never anything behind or beside it.
        let mut more = g.clone();
        more.blockers.push(extra);
        let (a, b) = (run(make, &g, IDENTITY), run(make, &more, IDENTITY));
        prop_assert_eq!((a[0].0.texture, a[4].0.texture), (Texture::Coverage, Texture::Visibility));
        let (ca, cb) = (u8s(&a[0].1), u8s(&b[0].1));
        for (i, (x, y)) in u16s(&a[4].1).iter().zip(u16s(&b[4].1)).enumerate() {
            let newly_covered = g.reveal_walls && ca[i] == 0 && cb[i] != 0;
            prop_assert!(y <= x || newly_covered, "texel {} rose from {} to {} (covered before {}, after {})", i, x, y, ca[i], cb[i]);
        }
    });
}

pub fn reveal_walls_lights_only_covered_texels_beside_open_ones(make: &Make) {
    proptest!(config(), |(g in world_with(false, method().boxed()))| {
        // The same world with the setting off and on: open texels keep their
        // value; a covered texel takes exactly the strongest of its own and
        // its open 8-neighbours' values (so a covered texel with no open
        // neighbour, a wall behind a wall, keeps its own).
        let (off, on) = (GenWorld { reveal_walls: false, ..g.clone() }, GenWorld { reveal_walls: true, ..g });
        let (a, b) = (run(make, &off, IDENTITY), run(make, &on, IDENTITY));
        let (cov, va, vb) = (u8s(&a[0].1), u16s(&a[4].1), u16s(&b[4].1));
        let (w, h) = (a[4].1.width as i64, a[4].1.height as i64);
        // Only without anti-vision is the rule a plain max (the generator makes none).
        for y in 0..h {
            for x in 0..w {
                let i = (y * w + x) as usize;
                let mut expect = va[i];
                if cov[i] != 0 {
                    for (nx, ny) in (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (x + dx, y + dy))) {
                        if nx >= 0 && ny >= 0 && nx < w && ny < h && cov[(ny * w + nx) as usize] == 0 {
                            expect = expect.max(va[(ny * w + nx) as usize]);
                        }
                    }
                }
                prop_assert_eq!(vb[i], expect, "texel ({}, {}) covered {}", x, y, cov[i]);
            }
        }
    });
}

/// Marks the entity the incremental test opens and closes as a door.
struct DoorTag;

pub fn incremental_recompute_equals_full_recompute(make: &Make) {
    let local = std::sync::atomic::AtomicU32::new(0);
    proptest!(config(), |(g in world_with(false, method().boxed()),
        edits in prop::collection::vec((0u8..16, any::<u16>(), -30i32..30, -30i32..30), 1..10))| {
        // Two subsystems see the same edits. Before every tick the reference
        // is saved and restored into a new backend (so it keeps no source
        // window and no visibility) and invalidated (so it rebuilds
        // occlusion). The other follows the rules (kept windows, kept
        // visibility on quiet ticks). Masks and hashes must agree on every
        // tick.
        let mut inc = fog_for(make, &g, IDENTITY);
        let mut full = fog_for(make, &g, IDENTITY);
        let mut world = World::new();
        spawn_world(&g, IDENTITY, &mut world);
        for (tick, (kind, pick, dx, dy)) in edits.into_iter().enumerate() {
            let sources: Vec<_> = world.query::<(Entity, &VisionSource)>().iter().map(|(e, _)| e).collect();
            let blockers: Vec<_> = world.query::<(Entity, &Blocker)>().iter().map(|(e, _)| e).collect();
            let source = (!sources.is_empty()).then(|| sources[pick as usize % sources.len()]);
            match kind {
                0 if source.is_some() => world.get::<&mut Position>(source.unwrap()).unwrap().0 += Vec3::new(eighths(dx), eighths(dy), 0.0),
                1 if !blockers.is_empty() => {
                    world.get::<&mut Position>(blockers[pick as usize % blockers.len()]).unwrap().0 += Vec3::new(eighths(dx), eighths(dy), 0.0);
                }
                2 if !blockers.is_empty() => world.despawn(blockers[pick as usize % blockers.len()]).unwrap(),
                3 => {
                    world.spawn((Position(Vec3::new(eighths(2 * dx + 1), eighths(2 * dy + 1), 0.0)), Blocker::wall(BlockerShape::Circle { radius: 1.5 })));
                }
                4 => {
                    world.spawn((Position(Vec3::new(eighths(2 * dx + 1), eighths(2 * dy + 1), 0.0)), VisionSource::new(3.0 + f32::from(pick % 20))));
                }
                5 if source.is_some() => world.despawn(source.unwrap()).unwrap(),
                6 if source.is_some() => world.get::<&mut VisionSource>(source.unwrap()).unwrap().radius = 2.0 + f32::from(pick % 25),
                7 if source.is_some() => {
                    let cone = (pick % 3 != 0).then(|| Cone { yaw_degrees: f32::from(pick % 360), half_angle_degrees: 10.0 + f32::from(pick % 150) });
                    world.get::<&mut VisionSource>(source.unwrap()).unwrap().cone = cone;
                }
                8 if source.is_some() => world.get::<&mut VisionSource>(source.unwrap()).unwrap().team = (pick % 3) as u8,
                9 => {
                    // A profile change: reveal_walls, blur, method or cadence.
                    let mut p = profile(&g);
                    match pick % 4 {
                        0 => p.reveal_walls = !p.reveal_walls,
                        1 => p.blur_radius = (g.blur_radius + 1) % 3,
                        2 => p.ray_method = RayMethod::HierarchicalDda,
                        _ => p.update_rate = 0.1,
                    }
                    for fog in [&mut inc, &mut full] {
                        fog.apply_profile("i", p.clone()).unwrap();
                        if pick % 5 == 0 {
                            fog.set_observed_teams("i", TeamMask::of(&[0, 1]).unwrap()).unwrap();
                        }
                    }
                }
                11 if !blockers.is_empty() => {
                    // A blocker changes shape where it stands.
                    let shape = match pick % 3 {
                        0 => BlockerShape::Circle { radius: 0.5 + f32::from(pick % 9) / 2.0 },
                        1 => BlockerShape::Rect { size: Vec2::new(1.0 + f32::from(pick % 5), 0.5 + f32::from(pick % 3)), yaw_degrees: f32::from(pick % 90) },
                        _ => BlockerShape::Polygon { points: vec![Vec2::new(0.0, 0.0), Vec2::new(eighths(dx), 2.5), Vec2::new(2.0, eighths(dy))] },
                    };
                    world.get::<&mut Blocker>(blockers[pick as usize % blockers.len()]).unwrap().shape = shape;
                }
                12 if !blockers.is_empty() => {
                    // A blocker rises, sinks or becomes a wall.
                    let height = (pick % 4 != 0).then(|| f32::from(pick % 9));
                    world.get::<&mut Blocker>(blockers[pick as usize % blockers.len()]).unwrap().height = height;
                }
                13 if world.query::<&HeightCapture>().iter().next().is_none() => {
                    // Terrain: one cell per texel over the grid, some cells high.
                    let cells = (0..g.width * g.rows).map(|i| {
                        let v = murk_core::fixed::hash2(i as i32, i32::from(pick));
                        if v.is_multiple_of(5) { (v % 7) as f32 } else { f32::NAN }
                    }).collect();
                    let mode = CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true };
                    let origin = Vec2::new(-(g.width as f32) / 2.0, -(g.rows as f32) / 2.0);
                    world.spawn((HeightCapture { origin, cell_size: 1.0, width: g.width, height: g.rows, cells, mode, enabled: true },));
                }
                14 => {
                    // A terrain edit over a few cells, marked dirty there.
                    let capture = world.query::<(Entity, &HeightCapture)>().iter().next().map(|(e, _)| e);
                    if let Some(e) = capture {
                        let (cx, cy) = ((dx + 30) as u32 % g.width, (dy + 30) as u32 % g.rows);
                        let (cw, ch) = (u32::from(pick % 4) + 1, u32::from(pick / 4 % 4) + 1);
                        let mut c = world.get::<&mut HeightCapture>(e).unwrap();
                        let lo = c.origin + Vec2::new(cx as f32, cy as f32);
                        if inc.mark_capture_dirty_in(lo, lo + Vec2::new(cw as f32, ch as f32)).is_ok() {
                            for y in cy..(cy + ch).min(g.rows) {
                                for x in cx..(cx + cw).min(g.width) {
                                    let i = (y * g.width + x) as usize;
                                    c.cells[i] = if c.cells[i].is_nan() { f32::from(pick % 6) } else { f32::NAN };
                                }
                            }
                        }
                    }
                }
                15 => {
                    // A door: a wall that appears and vanishes on one entity.
                    let door = world.query::<(Entity, &DoorTag)>().iter().next().map(|(e, _)| e);
                    match door {
                        Some(e) if world.get::<&Blocker>(e).is_ok() => drop(world.remove_one::<Blocker>(e).unwrap()),
                        Some(e) => world.insert_one(e, Blocker::wall(BlockerShape::Rect { size: Vec2::new(1.0, 4.0), yaw_degrees: 0.0 })).unwrap(),
                        None => drop(world.spawn((Position(Vec3::new(eighths(2 * dx + 1), eighths(2 * dy + 1), 0.0)), DoorTag))),
                    }
                }
                10 => {
                    let area = Area { center: Vec3::new(f32::from(pick % 4) + eighths(dx) / 64.0, 0.0, 5.0), extents: Vec3::new(g.width as f32, g.rows as f32, 10.0), yaw_degrees: 0.0 };
                    for fog in [&mut inc, &mut full] {
                        fog.set_area("i", area).unwrap();
                    }
                }
                _ => {}
            }
            let saved = full.snapshot(&world).unwrap();
            full = FogSubsystem::new(make());
            full.restore(&mut world, &saved).unwrap();
            full.invalidate("i").unwrap();
            let report = inc.tick(&mut world, 50_000).unwrap();
            full.tick(&mut world, 50_000).unwrap();
            for row in pass_outputs() {
                prop_assert_eq!(inc.read_row("i", row).unwrap(), full.read_row("i", row).unwrap(), "tick {}, texture {}", tick, row.name);
            }
            prop_assert_eq!(inc.state_hashes().unwrap(), full.state_hashes().unwrap(), "tick {}", tick);
            local.fetch_add(u32::from(report.instances["i"].occlusion_local), std::sync::atomic::Ordering::Relaxed);
        }
    });
    // The edits are drawn so that many ticks take the local path: it ran.
    assert!(local.into_inner() > 0, "no tick rebuilt the occlusion locally");
}

pub fn a_source_outside_the_slab_changes_nothing(make: &Make) {
    proptest!(config(), |(g in world_with(false, method().boxed()), extra in source(64, 64), z in prop_oneof![-40.0f32..-2.5, 10.5f32..40.0])| {
        // The instance's slab is z 0..10; the extra source's column z..z+2 misses it.
        let layered = |with_extra: bool| {
            let mut fog = fog_for(make, &g, IDENTITY);
            fog.apply_profile("i", Profile { z_layering: true, ..profile(&g) }).unwrap();
            let mut world = World::new();
            spawn_world(&g, IDENTITY, &mut world);
            if with_extra {
                let mut v = VisionSource::new(extra.radius);
                v.height_layer = Some(HeightLayer { vertical_extent: 2.0 });
                world.spawn((Position(Vec3::new(eighths(extra.x), eighths(extra.y), z)), v));
            }
            fog.tick(&mut world, 50_000).unwrap();
            fog.tick(&mut world, 50_000).unwrap();
            pass_outputs().map(|row| fog.read_row("i", row).unwrap()).collect::<Vec<_>>()
        };
        prop_assert_eq!(layered(false), layered(true));
    });
}

/// Every test of this suite, by name.
pub const TESTS: &[Test] = &[
    ("translating_world_and_area_together_changes_nothing", translating_world_and_area_together_changes_nothing),
    ("rotating_world_and_area_by_quarter_turns_changes_nothing", rotating_world_and_area_by_quarter_turns_changes_nothing),
    ("mirroring_the_world_mirrors_the_masks", mirroring_the_world_mirrors_the_masks),
    ("turning_the_world_under_a_fixed_area_turns_every_mask", turning_the_world_under_a_fixed_area_turns_every_mask),
    ("every_backend_gives_the_references_bytes", every_backend_gives_the_references_bytes),
    ("hierarchical_dda_equals_dda", hierarchical_dda_equals_dda),
    ("adding_a_source_never_lowers_visibility", adding_a_source_never_lowers_visibility),
    ("adding_a_wall_never_raises_visibility_except_its_own_faces", adding_a_wall_never_raises_visibility_except_its_own_faces),
    ("reveal_walls_lights_only_covered_texels_beside_open_ones", reveal_walls_lights_only_covered_texels_beside_open_ones),
    ("incremental_recompute_equals_full_recompute", incremental_recompute_equals_full_recompute),
    ("a_source_outside_the_slab_changes_nothing", a_source_outside_the_slab_changes_nothing),
];
