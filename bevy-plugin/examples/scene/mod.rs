//! The scene both examples show: a Moving AI map (Dragon Age: Origins'
//! `lak303d`) as terrain and as murk's height capture, a squad of the
//! player's scouts walking it, and enemy patrols that are hidden whenever
//! the scouts cannot see them, all under the fog overlay.

use bevy::prelude::*;
use murk_bevy::prelude::*;
use murk_core::movingai::MovingAiMap;
use murk_core::CaptureMode;

const MAP: &str = include_str!("../../../assets/maps/lak303d.map");

/// The parsed map, for the walkers.
#[derive(Resource)]
pub struct Terrain(pub MovingAiMap);

/// A unit walking toward a passable cell, picking a new one on arrival or
/// when the way is blocked.
#[derive(Component)]
pub struct Walker {
    target: Vec2,
    speed: f32,
    seed: u64,
}

fn next_random(seed: &mut u64) -> u64 {
    // A 64-bit LCG (Knuth's MMIX constants): deterministic walks, no dependency.
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

fn random_cell(map: &MovingAiMap, seed: &mut u64) -> Vec2 {
    loop {
        let c = (next_random(seed) % u64::from(map.width)) as u32;
        let r = (next_random(seed) % u64::from(map.height)) as u32;
        if map.passable(c, r) {
            return Vec2::new(c as f32 + 0.5, r as f32 + 0.5);
        }
    }
}

/// The fog instance over the whole map.
pub fn instance(map: &MovingAiMap) -> FogInstance {
    let (w, h) = (map.width as f32, map.height as f32);
    FogInstance::new(InstanceDesc {
        name: "player".into(),
        area: Area { center: Vec3::new(w / 2.0, h / 2.0, 5.0), extents: Vec3::new(w, h, 10.0), yaw_degrees: 0.0 },
        resolution: map.width,
        lod: 0,
        observed_teams: TeamMask::of(&[0]).expect("teams below 64"),
        profile: Profile { explored_value: 0.45, fade_in_rate: 8.0, relax_rate: 3.0, ..Profile::default() },
    })
}

/// The map, parsed.
pub fn terrain() -> MovingAiMap {
    MovingAiMap::parse(MAP, "lak303d.map").expect("the bundled map parses")
}

/// The terrain picture: ground, trees, water and walls, row 0 at the top.
fn terrain_image(map: &MovingAiMap) -> Image {
    let mut data = Vec::with_capacity((map.width * map.height * 4) as usize);
    for r in (0..map.height).rev() {
        for c in 0..map.width {
            let rgb = match map.cells[(r * map.width + c) as usize] {
                b'.' | b'G' => [150, 140, 100],
                b'S' => [90, 110, 70],
                b'W' => [60, 90, 150],
                b'T' => [40, 90, 40],
                _ => [25, 22, 20],
            };
            data.extend_from_slice(&[rgb[0], rgb[1], rgb[2], 255]);
        }
    }
    Image::new(
        wgpu::Extent3d { width: map.width, height: map.height, depth_or_array_layers: 1 },
        wgpu::TextureDimension::D2,
        data,
        wgpu::TextureFormat::Rgba8UnormSrgb,
        bevy::asset::RenderAssetUsages::RENDER_WORLD,
    )
}

/// Spawns the terrain, its capture, the overlay and the units.
pub fn spawn(
    mut commands: Commands,
    terrain: Res<Terrain>,
    mut images: ResMut<Assets<Image>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut colors: ResMut<Assets<ColorMaterial>>,
    mut overlays: ResMut<Assets<FogOverlayMaterial>>,
) {
    let map = &terrain.0;
    let (w, h) = (map.width as f32, map.height as f32);
    let centre = Vec3::new(w / 2.0, h / 2.0, 0.0);
    commands.spawn((
        Sprite { image: images.add(terrain_image(map)), custom_size: Some(Vec2::new(w, h)), ..default() },
        Transform::from_translation(centre),
    ));
    let capture = map.to_capture(Vec2::ZERO, 1.0, 0.0, 4.0, CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true });
    commands.spawn((Transform::default(), FogCapture { capture, members: Vec::new() }));
    commands.spawn((
        Mesh2d(meshes.add(Rectangle::new(w, h))),
        MeshMaterial2d(overlays.add(FogOverlayMaterial::new("player"))),
        Transform::from_translation(centre + Vec3::Z * 10.0),
    ));
    let scout = (meshes.add(Circle::new(1.6)), colors.add(Color::srgb(0.3, 0.7, 1.0)));
    let enemy = (meshes.add(Circle::new(1.6)), colors.add(Color::srgb(1.0, 0.3, 0.2)));
    let mut seed = 7;
    for i in 0..24u64 {
        let at = random_cell(map, &mut seed);
        let walker = Walker { target: random_cell(map, &mut seed), speed: 6.0 + (i % 5) as f32, seed: seed ^ i };
        let z = if i < 8 { 5.0 } else { 4.0 };
        let mut e = commands.spawn((Transform::from_translation(at.extend(z)), walker));
        if i < 8 {
            e.insert((Mesh2d(scout.0.clone()), MeshMaterial2d(scout.1.clone()), FogVision::new(18.0).team(0)));
        } else {
            // Enemies stand above the overlay: they must vanish by being
            // hidden, not by the fog drawn over them.
            e.insert((Mesh2d(enemy.0.clone()), MeshMaterial2d(enemy.1.clone()), FogStealth::default(), FogHideWhenUnseen));
            e.insert(Transform::from_translation(at.extend(20.0)));
        }
    }
}

/// Walks the units (in `FixedUpdate`, before murk mirrors them).
pub fn walk(time: Res<Time>, terrain: Res<Terrain>, mut walkers: Query<(&mut Transform, &mut Walker)>) {
    let map = &terrain.0;
    let dt = time.delta_secs();
    for (mut t, mut w) in &mut walkers {
        let here = t.translation.truncate();
        let to = w.target - here;
        let step = w.speed * dt;
        let next = if to.length() <= step { w.target } else { here + to.normalize() * step };
        let (c, r) = (next.x.floor(), next.y.floor());
        let blocked = c < 0.0 || r < 0.0 || !map.passable(c as u32, r as u32);
        if blocked || next == w.target {
            let mut seed = w.seed;
            w.target = random_cell(map, &mut seed);
            w.seed = seed;
        }
        if !blocked {
            t.translation.x = next.x;
            t.translation.y = next.y;
        }
    }
}

/// A 2D camera that shows the whole map.
pub fn camera(map: &MovingAiMap) -> impl Bundle + Clone {
    let (w, h) = (map.width as f32, map.height as f32);
    (
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scaling_mode: bevy::camera::ScalingMode::AutoMin { min_width: w, min_height: h },
            ..OrthographicProjection::default_2d()
        }),
        Transform::from_xyz(w / 2.0, h / 2.0, 100.0),
    )
}
