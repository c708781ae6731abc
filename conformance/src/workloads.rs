//! Shared workloads: the scenes the benches time are the scenes the tests check.
//!
//! * `small`: 256x256, 64 sources, a few blockers.
//! * `rts`: 1024x1024 over `TheFrozenSea.map` (StarCraft), 1000 sources of
//!   radius 32 texels on passable cells, DDA, blur radius 2.
//! * `rts-10`: the same map with 10 sources.
//! * `long-sight`: the map at 2048x2048 with one source of radius 1000.
//! * `huge`: 4096x4096, 10 000 sources (the same map scaled by 4).

use murk_core::fixed::hash2;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::World;
use murk_core::movingai::MovingAiMap;
use murk_core::{Area, Blocker, BlockerShape, CaptureMode, InstanceDesc, Position, Profile, RayMethod, TeamMask, VisionSource};
use std::path::PathBuf;

/// The repository's `assets/maps` folder.
pub fn maps_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/maps")
}

/// Loads a map from `assets/maps`.
pub fn load_map(name: &str) -> MovingAiMap {
    let path = maps_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    MovingAiMap::parse(&text, name).unwrap_or_else(|e| panic!("{e}"))
}

/// A scene: a world and the one instance that looks at it.
pub struct Workload {
    /// Name (`small`, `rts`, `huge`).
    pub name: &'static str,
    /// The instance.
    pub desc: InstanceDesc,
    /// Sources, blockers and the map capture.
    pub world: World,
    /// The map, when the scene has one.
    pub map: Option<MovingAiMap>,
    /// Source positions in map cells (for peers that work on the grid).
    pub source_cells: Vec<(u32, u32)>,
    /// Source radius in texels (= cells).
    pub radius: u32,
}

fn square_instance(name: &str, size: f32, resolution: u32, method: RayMethod) -> InstanceDesc {
    InstanceDesc {
        name: name.into(),
        area: Area { center: Vec3::new(size / 2.0, size / 2.0, 5.0), extents: Vec3::new(size, size, 10.0), yaw_degrees: 0.0 },
        resolution,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile: Profile { ray_method: method, blur_radius: 2, blur_sigma: 1.0, ..Profile::default() },
    }
}

/// `count` distinct passable cells picked by a fixed hash (the same every run).
pub fn passable_cells(map: &MovingAiMap, count: usize, seed: i32) -> Vec<(u32, u32)> {
    let mut cells = Vec::with_capacity(count);
    let mut i = 0;
    while cells.len() < count {
        let h = hash2(i, seed);
        i += 1;
        let (c, r) = (h % map.width, (h / map.width) % map.height);
        if map.passable(c, r) && !cells.contains(&(c, r)) {
            cells.push((c, r));
        }
        assert!(i < 100_000_000, "map has too few passable cells");
    }
    cells
}

/// A map scene: one cell per texel scaled by `cells_per_texel_inv`, `sources` sources of `radius` texels.
fn map_scene(name: &'static str, map: MovingAiMap, scale: u32, sources: usize, radius: u32, method: RayMethod) -> Workload {
    let size = (map.width * scale) as f32;
    let desc = square_instance(name, size, map.width * scale, method);
    let mut world = World::new();
    let capture =
        map.to_capture(Vec2::ZERO, scale as f32, 0.0, 4.0, CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true });
    world.spawn((capture,));
    let cells = passable_cells(&map, sources, 7);
    for &(c, r) in &cells {
        let mut s = VisionSource::new(radius as f32);
        s.falloff = Some(0.25);
        let p = Vec3::new((c * scale) as f32 + 0.5 * scale as f32, (r * scale) as f32 + 0.5 * scale as f32, 0.0);
        world.spawn((Position(p), s));
    }
    Workload { name, desc, world, map: Some(map), source_cells: cells, radius }
}

/// `rts`: TheFrozenSea at 1024x1024, 1000 sources of radius 32, DDA, blur radius 2.
pub fn rts() -> Workload {
    map_scene("rts", load_map("TheFrozenSea.map"), 1, 1000, 32, RayMethod::Dda)
}

/// `long-sight`: TheFrozenSea at 2048x2048 with one DDA source of radius
/// 1000 texels: the cost of one long-sighted source.
pub fn long_sight() -> Workload {
    map_scene("long-sight", load_map("TheFrozenSea.map"), 2, 1, 1000, RayMethod::Dda)
}

/// `far-sight`: TheFrozenSea at 4096x4096 with one DDA source of radius
/// 4095 texels: the largest reach on the largest grid the issue names.
pub fn far_sight() -> Workload {
    map_scene("far-sight", load_map("TheFrozenSea.map"), 4, 1, 4095, RayMethod::Dda)
}

/// `rts-10`: `rts` with 10 sources: what a frame costs that has little to do.
pub fn rts_sparse() -> Workload {
    map_scene("rts-10", load_map("TheFrozenSea.map"), 1, 10, 32, RayMethod::Dda)
}

/// `huge`: TheFrozenSea scaled to 4096x4096, 10 000 sources of radius 32.
pub fn huge() -> Workload {
    map_scene("huge", load_map("TheFrozenSea.map"), 4, 10_000, 32, RayMethod::Dda)
}

/// `small`: 256x256 with 64 sources and 24 blockers, no map.
pub fn small() -> Workload {
    let desc = square_instance("small", 256.0, 256, RayMethod::Dda);
    let mut world = World::new();
    let mut cells = Vec::new();
    for i in 0..64 {
        let h = hash2(i, 3);
        let (x, y) = (h % 256, (h >> 8) % 256);
        cells.push((x, y));
        world.spawn((Position(Vec3::new(x as f32 + 0.5, y as f32 + 0.5, 0.0)), VisionSource::new(24.0)));
    }
    for i in 0..24 {
        let h = hash2(i, 4);
        let (x, y) = ((h % 256) as f32, ((h >> 8) % 256) as f32);
        let shape = if i % 2 == 0 {
            BlockerShape::Circle { radius: 3.0 + (h % 5) as f32 }
        } else {
            BlockerShape::Rect { size: Vec2::new(12.0, 2.0), yaw_degrees: (h % 180) as f32 }
        };
        world.spawn((Position(Vec3::new(x, y, 0.0)), Blocker::wall(shape)));
    }
    Workload { name: "small", desc, world, map: None, source_cells: cells, radius: 24 }
}
