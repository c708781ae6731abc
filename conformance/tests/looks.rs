//! The premade looks on the CPU reference: the low-resolution goldens, and
//! pictures that keep the three states apart (explored ground clear,
//! never-seen ground opaque) in every look.

use murk_conformance::looks::{check_goldens, Fixture};
use murk_cpu::looks::CpuLooks;
use murk_looks::{mesh::FogMesh, mesh::MeshSettings, Looks};

#[test]
fn cpu_looks_match_their_goldens() {
    let report = check_goldens(&mut CpuLooks, "cpu").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.len(), 3);
}

/// Mask texel regions of the fixture, in world XY: the visible disc is
/// centred on texel (14, 16) = world (29, 33); texels x >= 30 (world x >= 60)
/// were never seen.
fn visible_world() -> [f32; 2] {
    [29.0, 33.0]
}
fn unexplored_world() -> [f32; 2] {
    [84.0, 20.0]
}

#[test]
fn every_look_is_clear_where_explored_and_opaque_where_never_seen() {
    let fx = Fixture::new();
    let mut looks = CpuLooks;
    // Overlay: alpha 0 inside the visible disc, 255 over never-seen ground.
    let overlay = looks.overlay(&fx.view(), Some(&fx.tint), 0.0, &Default::default()).unwrap();
    let alpha = |x: f32, y: f32| {
        let (px, py) = ((x / 96.0 * overlay.width as f32) as u32, (y / 64.0 * overlay.height as f32) as u32);
        overlay.pixels[((py * overlay.width + px) * 4 + 3) as usize]
    };
    let [vx, vy] = visible_world();
    let [ux, uy] = unexplored_world();
    assert_eq!(alpha(vx, vy), 0, "overlay: visible is clear");
    assert_eq!(alpha(ux, uy), 255, "overlay: never seen is opaque");
    // Surface: sunk below the ground and invisible over explored ground,
    // floating and opaque over never-seen ground.
    let grid = looks.surface(&fx.view(), &fx.area, &fx.ground, &fx.surface).unwrap();
    let mesh = FogMesh::build(&grid, &fx.surface, &fx.ground, &MeshSettings::default(), None);
    let vertex =
        |x: f32, y: f32| ((y / fx.surface.spacing[1]).round() as u32 * fx.surface.cols + (x / fx.surface.spacing[0]).round() as u32) as usize;
    let (v, u) = (vertex(vx, vy), vertex(ux, uy));
    assert!(grid.z[v] < fx.ground[v] && mesh.upper[v].colour[3] == 0.0, "surface: explored ground is clear");
    assert!(grid.z[u] >= fx.surface.fog_level && mesh.upper[u].colour[3] == 1.0, "surface: never seen is covered");
    // Volume: the transmittance to the ground is high where the ground was
    // seen and low where it never was.
    let (_, full) = looks.volume(&fx.view(), &fx.area, &fx.scene(), &fx.volume_params(0)).unwrap();
    let cam = &fx.camera;
    let mut seen = (0, 0);
    let mut foggy = Vec::new();
    for y in 0..cam.height {
        for x in 0..cam.width {
            let t = fx.depth[(y * cam.width + x) as usize];
            if !t.is_finite() {
                continue;
            }
            let d = cam.ray(x as f32 + 0.5, y as f32 + 0.5);
            let p = [cam.eye[0] + d[0] * t, cam.eye[1] + d[1] * t];
            let trans = full.texels[(y * cam.width + x) as usize][3];
            let (dx, dy) = (p[0] - vx, p[1] - vy);
            if dx * dx + dy * dy < 8.0 * 8.0 {
                assert!(trans > 0.9, "volume: visible ground at {p:?} is clear ({trans})");
                seen.0 += 1;
            } else if (80.0..94.0).contains(&p[0]) && (10.0..44.0).contains(&p[1]) {
                assert!(trans < 0.15, "volume: never-seen ground at {p:?} is opaque ({trans})");
                foggy.push(trans);
            }
        }
    }
    seen.1 = foggy.len();
    assert!(seen.0 > 20 && seen.1 > 100, "pixels checked: {seen:?}");
    foggy.sort_by(f32::total_cmp);
    assert!(foggy[foggy.len() / 2] < 0.05, "volume: the median never-seen pixel shows {} of the ground", foggy[foggy.len() / 2]);
}
