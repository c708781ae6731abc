//! Metamorphic tests: moving the whole world together with the area changes
//! nothing, and every backend gives the reference's bytes (the CPU on one
//! thread) on the same scene.

use super::{Make, Test};
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::World;
use murk_core::Backend;
use murk_core::{
    pass_outputs, Area, Blocker, BlockerShape, CaptureMode, Cone, FogSubsystem, HeightCapture, InstanceDesc, Position, Profile, RayMethod,
    Resolution, TeamMask, Texture, TextureImage, TextureRow, VisionSource,
};
use murk_cpu::CpuBackend;

/// A rigid motion of the ground plane: `quarter_turns` of 90 degrees about
/// the origin, then a translation.
#[derive(Clone, Copy)]
struct Motion {
    quarter_turns: i32,
    shift: Vec2,
}

impl Motion {
    fn point(self, p: Vec2) -> Vec2 {
        let mut q = p;
        for _ in 0..self.quarter_turns.rem_euclid(4) {
            q = Vec2::new(-q.y, q.x);
        }
        q + self.shift
    }
    fn p3(self, p: Vec3) -> Vec3 {
        let q = self.point(Vec2::new(p.x, p.y));
        Vec3::new(q.x, q.y, p.z)
    }
    fn yaw(self, deg: f32) -> f32 {
        deg + 90.0 * self.quarter_turns as f32
    }
    /// The raster rotated with the world (cell grids stay axis-aligned).
    fn capture(self, c: &HeightCapture) -> HeightCapture {
        let mut out = c.clone();
        for _ in 0..self.quarter_turns.rem_euclid(4) {
            let (w, h) = (out.width, out.height);
            let mut cells = vec![f32::NAN; (w * h) as usize];
            for j in 0..h {
                for i in 0..w {
                    // Cell (i, j) becomes (h - 1 - j, i) in a raster h wide.
                    cells[(i * h + (h - 1 - j)) as usize] = out.cells[(j * w + i) as usize];
                }
            }
            out.origin = Vec2::new(-(out.origin.y + h as f32 * out.cell_size), out.origin.x);
            out.width = h;
            out.height = w;
            out.cells = cells;
        }
        out.origin += self.shift;
        out
    }
}

fn scene(backend: Box<dyn Backend>, m: Motion, method: RayMethod, base_yaw: f32) -> FogSubsystem {
    let mut fog = FogSubsystem::new(backend);
    let profile = Profile {
        ray_method: method,
        soft_shadows: method == RayMethod::DistanceField,
        df_jitter: if method == RayMethod::DistanceField { 0.3 } else { 0.0 },
        blur_radius: 2,
        forget_rate: 0.5,
        ..Profile::default()
    };
    fog.create_instance(InstanceDesc {
        name: "i".into(),
        area: Area { center: m.p3(Vec3::new(40.0, 30.0, 5.0)), extents: Vec3::new(64.0, 48.0, 10.0), yaw_degrees: m.yaw(base_yaw) },
        resolution: 64,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile,
    })
    .unwrap();
    let mut world = World::new();
    let mut cone = VisionSource::new(18.0);
    cone.cone = Some(Cone { yaw_degrees: m.yaw(200.0), half_angle_degrees: 50.0 });
    world.spawn((Position(m.p3(Vec3::new(45.25, 28.5, 0.0))), cone));
    let mut tall = VisionSource::new(22.0);
    tall.eye_height = 6.0;
    tall.falloff = Some(0.4);
    world.spawn((Position(m.p3(Vec3::new(22.75, 36.125, 0.0))), tall));
    world.spawn((Position(m.p3(Vec3::new(58.5, 44.0, 0.0))), VisionSource::new(12.5)));
    let mut low = Blocker::wall(BlockerShape::Circle { radius: 2.5 });
    low.height = Some(2.0);
    world.spawn((Position(m.p3(Vec3::new(33.0, 33.0, 0.0))), low));
    world.spawn((
        Position(m.p3(Vec3::new(50.0, 20.0, 0.0))),
        Blocker::wall(BlockerShape::Rect { size: Vec2::new(10.0, 1.5), yaw_degrees: m.yaw(15.0) }),
    ));
    let l_shape = [(0.0, 0.0), (6.0, 0.0), (6.0, 2.0), (2.0, 2.0), (2.0, 7.0), (0.0, 7.0)];
    let points = l_shape.iter().map(|&(x, y)| m.point(Vec2::new(x, y)) - m.shift).collect();
    world.spawn((Position(m.p3(Vec3::new(28.0, 20.0, 0.0))), Blocker::wall(BlockerShape::Polygon { points })));
    let mut cells = vec![f32::NAN; 16 * 12];
    for (i, c) in cells.iter_mut().enumerate() {
        if i % 7 == 3 {
            *c = 3.0;
        }
    }
    let capture =
        HeightCapture { origin: Vec2::new(10.0, 40.0), cell_size: 1.0, width: 16, height: 12, cells, mode: CaptureMode::FullScene, enabled: true };
    world.spawn((m.capture(&capture),));
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    fog
}

fn textures(fog: &mut FogSubsystem) -> Vec<(&'static TextureRow, Vec<u8>)> {
    pass_outputs().map(|row| (row, fog.read_row("i", row).unwrap().bytes())).collect()
}

fn assert_same(a: &[(&TextureRow, Vec<u8>)], b: &[(&TextureRow, Vec<u8>)], what: &str) {
    for ((row, x), (_, y)) in a.iter().zip(b) {
        if x != y {
            let first = x.iter().zip(y).position(|(p, q)| p != q);
            panic!("{what}: texture {} differs (first differing byte {first:?})", row.name);
        }
    }
}

const METHODS: [RayMethod; 4] = [RayMethod::Dda, RayMethod::HierarchicalDda, RayMethod::StepScan, RayMethod::DistanceField];

pub fn translating_world_and_area_together_changes_no_mask(make: &Make) {
    for method in METHODS {
        for yaw in [0.0, 30.0] {
            let base = textures(&mut scene(make(), Motion { quarter_turns: 0, shift: Vec2::ZERO }, method, yaw));
            let moved = textures(&mut scene(make(), Motion { quarter_turns: 0, shift: Vec2::new(13.25, -7.5) }, method, yaw));
            assert_same(&base, &moved, &format!("{method:?} yaw {yaw} translated"));
        }
    }
}

pub fn rotating_world_and_area_by_quarter_turns_changes_no_mask(make: &Make) {
    for method in METHODS {
        for yaw in [0.0, 30.0] {
            let base = textures(&mut scene(make(), Motion { quarter_turns: 0, shift: Vec2::ZERO }, method, yaw));
            assert!(base.iter().any(|(row, b)| row.texture == Texture::Final && b.iter().any(|&x| x != 0)), "the scene reveals something");
            for k in 1..4 {
                let turned = textures(&mut scene(make(), Motion { quarter_turns: k, shift: Vec2::ZERO }, method, yaw));
                assert_same(&base, &turned, &format!("{method:?} yaw {yaw} turned {k} quarter(s)"));
            }
        }
    }
}

/// The square area [0, 64]^2 kept at yaw 0 while the world turns a
/// quarter about its centre, at `lod`: every texture at the grid's
/// resolution after three ticks.
fn turned_world(make: &Make, lod: u32, method: RayMethod, turned: bool) -> Vec<(&'static TextureRow, TextureImage)> {
    // A quarter turn about (32, 32): (x, y) -> (64 - y, x).
    let p = |x: f32, y: f32| if turned { Vec3::new(64.0 - y, x, 0.0) } else { Vec3::new(x, y, 0.0) };
    let yaw = |d: f32| if turned { d + 90.0 } else { d };
    let mut fog = FogSubsystem::new(make());
    let profile = Profile { ray_method: method, blur_radius: 2, forget_rate: 0.5, ..Profile::default() };
    let area = Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
    fog.create_instance(InstanceDesc { name: "i".into(), area, resolution: 64, lod, observed_teams: TeamMask::ALL, profile }).unwrap();
    let mut world = World::new();
    let mut cone = VisionSource::new(20.0);
    cone.cone = Some(Cone { yaw_degrees: yaw(200.0), half_angle_degrees: 50.0 });
    world.spawn((Position(p(45.5, 28.5)), cone));
    world.spawn((Position(p(21.5, 37.5)), VisionSource { eye_height: 4.0, falloff: Some(0.4), ..VisionSource::new(18.0) }));
    world.spawn((Position(p(33.0, 33.0)), Blocker { height: Some(2.0), ..Blocker::wall(BlockerShape::Circle { radius: 2.5 }) }));
    world.spawn((Position(p(50.0, 20.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(10.0, 2.0), yaw_degrees: yaw(0.0) })));
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    let at_grid = pass_outputs().filter(|row| matches!(row.resolution, Resolution::Internal | Resolution::Output));
    at_grid.map(|row| (row, fog.read_row("i", row).unwrap())).collect()
}

/// An image turned a quarter as the world turns: texel (x, y) moves to
/// (w - 1 - y, x) of a square grid.
fn quarter_turned(img: &TextureImage) -> Vec<u8> {
    let (w, size) = (img.width as usize, img.bytes().len() / (img.width * img.height) as usize);
    let bytes = img.bytes();
    let mut out = vec![0u8; bytes.len()];
    for y in 0..w {
        for x in 0..w {
            let (nx, ny) = (w - 1 - y, x);
            out[(ny * w + nx) * size..][..size].copy_from_slice(&bytes[(y * w + x) * size..][..size]);
        }
    }
    out
}

/// With the area kept still, a quarter turn of the world turns every mask
/// by a quarter, exactly, at LOD 0, 1 and 2 (the upscale rounds the four
/// taps' sum once, which is symmetric in X and Y).
pub fn a_quarter_turn_of_the_world_under_a_still_area_turns_every_mask(make: &Make) {
    for lod in [0, 1, 2] {
        // (The Distance Field is left out: its jitter hashes texel coordinates.)
        for method in [RayMethod::None, RayMethod::StepScan, RayMethod::Dda, RayMethod::HierarchicalDda] {
            let base = turned_world(make, lod, method, false);
            let turned = turned_world(make, lod, method, true);
            assert!(
                base.iter().any(|(row, img)| row.texture == Texture::Final && img.bytes().iter().any(|&b| b != 0)),
                "the scene reveals something"
            );
            for ((row, a), (_, b)) in base.iter().zip(&turned) {
                let want = quarter_turned(a);
                if let Some(i) = want.iter().zip(b.bytes()).position(|(p, q)| *p != q) {
                    let differ = want.iter().zip(b.bytes()).filter(|(p, q)| *p != q).count();
                    panic!("lod {lod} {method:?}: texture {} differs at byte {i} ({differ} bytes)", row.name);
                }
            }
        }
    }
}

pub fn every_backend_gives_the_references_bytes(make: &Make) {
    for method in METHODS {
        let still = Motion { quarter_turns: 0, shift: Vec2::ZERO };
        let reference = textures(&mut scene(Box::new(CpuBackend::new(1).unwrap()), still, method, 30.0));
        assert_same(&reference, &textures(&mut scene(make(), still, method, 30.0)), &format!("{method:?} against the CPU on 1 thread"));
    }
}

pub fn hierarchical_dda_equals_dda(make: &Make) {
    let mut a = scene(make(), Motion { quarter_turns: 0, shift: Vec2::ZERO }, RayMethod::Dda, 30.0);
    let mut b = scene(make(), Motion { quarter_turns: 0, shift: Vec2::ZERO }, RayMethod::HierarchicalDda, 30.0);
    for s in [Texture::Visibility, Texture::Blur, Texture::Memory, Texture::Compose, Texture::Final] {
        assert_eq!(a.read_texture("i", s).unwrap(), b.read_texture("i", s).unwrap(), "{}", s.name());
    }
}

/// Every test of this suite, by name.
pub const TESTS: &[Test] = &[
    ("translating_world_and_area_together_changes_no_mask", translating_world_and_area_together_changes_no_mask),
    ("rotating_world_and_area_by_quarter_turns_changes_no_mask", rotating_world_and_area_by_quarter_turns_changes_no_mask),
    ("a_quarter_turn_of_the_world_under_a_still_area_turns_every_mask", a_quarter_turn_of_the_world_under_a_still_area_turns_every_mask),
    ("every_backend_gives_the_references_bytes", every_backend_gives_the_references_bytes),
    ("hierarchical_dda_equals_dda", hierarchical_dda_equals_dda),
];
