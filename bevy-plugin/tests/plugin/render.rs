//! Bevy draws the fog (the 2D overlay, and the 3D terrain material) from
//! the mask image, and the picture shows
//! each texel in its state: clear where murk's mask is fully visible, dark
//! where nothing was ever seen. On the GPU backend murk runs on Bevy's own
//! render device and the image is filled on the device; on the CPU backend
//! it is uploaded. Both need an adapter to render (CI: lavapipe).

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy::render::view::Msaa;
use bevy::time::TimeUpdateStrategy;
use murk_bevy::headless::{finish_plugins, render_plugins, target_image, Picture};
use murk_bevy::prelude::*;
use std::time::Duration;

const SIZE: u32 = 64;

fn desc() -> InstanceDesc {
    InstanceDesc {
        name: "ground".into(),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: SIZE,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile: Profile { fade_in_rate: 1000.0, relax_rate: 1000.0, blur_iterations: 0, ..Profile::default() },
    }
}

/// What draws the fog.
#[derive(Clone, Copy, Debug, PartialEq)]
enum View {
    /// The 2D overlay over a white background.
    Overlay,
    /// White unlit ground with the terrain material, seen from above (Y up).
    Terrain,
}

/// Renders a few frames of a source in an open field and returns the last
/// picture and murk's final mask at that point.
fn render(choice: BackendChoice, view: View) -> (Vec<u8>, Vec<u16>, String) {
    let mut app = App::new();
    let step = Duration::from_millis(50);
    let axes = if view == View::Terrain { FogAxes::YUp } else { FogAxes::XY };
    app.add_plugins(render_plugins())
        .insert_resource(Time::<Fixed>::from_duration(step))
        .insert_resource(TimeUpdateStrategy::ManualDuration(step))
        .add_plugins(MurkPlugin::new(choice).axes(axes).instance(FogInstance::new(desc())));
    finish_plugins(&mut app);
    let target = app.world_mut().resource_mut::<Assets<Image>>().add(target_image(SIZE, SIZE));
    let camera = (bevy::camera::RenderTarget::Image(target.clone().into()), Tonemapping::None, Msaa::Off);
    let clear = Camera { clear_color: ClearColorConfig::Custom(Color::WHITE), ..default() };
    match view {
        View::Overlay => {
            let mesh = app.world_mut().resource_mut::<Assets<Mesh>>().add(Rectangle::new(64.0, 64.0));
            let material = app.world_mut().resource_mut::<Assets<FogOverlayMaterial>>().add(FogOverlayMaterial::new("ground"));
            let world = app.world_mut();
            world.spawn((Camera2d, clear, camera, Transform::from_xyz(32.0, 32.0, 10.0)));
            world.spawn((Mesh2d(mesh), MeshMaterial2d(material), Transform::from_xyz(32.0, 32.0, 1.0)));
        }
        View::Terrain => {
            let mesh = app.world_mut().resource_mut::<Assets<Mesh>>().add(Plane3d::default().mesh().size(64.0, 64.0));
            let ground = StandardMaterial { base_color: Color::WHITE, unlit: true, ..default() };
            let material = app
                .world_mut()
                .resource_mut::<Assets<FogTerrainMaterial>>()
                .add(FogTerrainMaterial { base: ground, extension: FogTerrainExtension::new("ground") });
            let world = app.world_mut();
            // murk (x, y) is Bevy (x, -z): above the area's centre, looking
            // down with -Z (murk's +Y) at the top of the picture.
            let projection = OrthographicProjection {
                scaling_mode: bevy::camera::ScalingMode::Fixed { width: 64.0, height: 64.0 },
                ..OrthographicProjection::default_3d()
            };
            world.spawn((
                Camera3d::default(),
                clear,
                camera,
                Projection::Orthographic(projection),
                Transform::from_xyz(32.0, 50.0, -32.0).looking_at(Vec3::new(32.0, 0.0, -32.0), Vec3::NEG_Z),
            ));
            world.spawn((Mesh3d(mesh), MeshMaterial3d(material), Transform::from_xyz(32.0, 0.0, -32.0)));
        }
    }
    let world = app.world_mut();
    let source = axes.to_bevy(Vec3::new(16.5, 32.5, 0.0));
    world.spawn((Transform::from_translation(source), FogVision::new(10.0)));
    let picture = Picture::watch(&mut world.commands(), target, SIZE);
    world.flush();
    for _ in 0..12 {
        app.update();
    }
    let errors: Vec<FogError> = app.world_mut().resource_mut::<Messages<FogError>>().drain().collect();
    assert!(errors.is_empty(), "{errors:?}");
    let fog = app.world().resource::<MurkFog>();
    let name = fog.backend_name().expect("murk started");
    assert_eq!(fog.on_render_device(), choice == BackendChoice::Gpu, "{name}: the GPU backend runs on Bevy's device");
    let mask = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().final_mask("ground").unwrap();
    (picture.latest().expect("a frame was read back"), mask, name)
}

/// Pixel (x, y) (row 0 at the top) shows world (x + 0.5, 63.5 - y), the
/// centre of texel (x, 63 - y): its state must show.
fn check(choice: BackendChoice, view: View) {
    let (rgba, mask, backend) = render(choice, view);
    assert_eq!(rgba.len(), (SIZE * SIZE * 4) as usize);
    // For a person to look at; the checks below are the test.
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("murk-bevy-{view:?}-{choice:?}.png"));
    png_of(&rgba, &path).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    let (mut clear, mut dark) = (0, 0);
    for y in 0..SIZE as usize {
        for x in 0..SIZE as usize {
            let texel = mask[(SIZE as usize - 1 - y) * SIZE as usize + x];
            let red = rgba[(y * SIZE as usize + x) * 4];
            if texel == u16::MAX {
                assert!(red > 200, "{backend}: pixel ({x}, {y}) over a visible texel is clear, red = {red}");
                clear += 1;
            } else if texel == 0 {
                assert!(red < 60, "{backend}: pixel ({x}, {y}) over an unseen texel is dark, red = {red}");
                dark += 1;
            }
        }
    }
    assert!(clear > 100 && dark > 1000, "{backend}: the picture has both states to check ({clear} clear, {dark} dark)");
}

fn png_of(rgba: &[u8], path: &std::path::Path) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), SIZE, SIZE);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header().map_err(std::io::Error::other)?.write_image_data(rgba).map_err(std::io::Error::other)
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-bevy -- --ignored"]
fn the_overlay_draws_the_mask_computed_on_bevys_device() {
    check(BackendChoice::Gpu, View::Overlay);
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-bevy -- --ignored"]
fn the_overlay_draws_the_mask_uploaded_from_the_cpu() {
    check(BackendChoice::Cpu, View::Overlay);
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-bevy -- --ignored"]
fn the_terrain_material_fogs_the_ground_murk_cannot_see() {
    check(BackendChoice::Gpu, View::Terrain);
}

/// A unit murk sees fades in over its `fade_seconds`: halfway through, the
/// sprite and the `ColorMaterial` mesh are drawn at half their alpha over
/// the white ground, and their pixels are half grey.
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-bevy -- --ignored"]
fn a_unit_half_faded_in_is_drawn_half_transparent() {
    let mut app = App::new();
    let step = Duration::from_millis(50);
    app.add_plugins(render_plugins())
        .insert_resource(Time::<Fixed>::from_duration(step))
        .insert_resource(TimeUpdateStrategy::ManualDuration(step))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(desc())));
    finish_plugins(&mut app);
    let target = app.world_mut().resource_mut::<Assets<Image>>().add(target_image(SIZE, SIZE));
    let camera = (bevy::camera::RenderTarget::Image(target.clone().into()), Tonemapping::None, Msaa::Off);
    let clear = Camera { clear_color: ClearColorConfig::Custom(Color::WHITE), ..default() };
    let mesh = app.world_mut().resource_mut::<Assets<Mesh>>().add(Rectangle::new(12.0, 12.0));
    let black = app.world_mut().resource_mut::<Assets<ColorMaterial>>().add(ColorMaterial::from_color(Color::BLACK));
    let stealth = FogStealth(StealthActor { fade_seconds: 1.0, ..StealthActor::default() });
    let world = app.world_mut();
    world.spawn((Camera2d, clear, camera, Transform::from_xyz(32.0, 32.0, 10.0)));
    world.spawn((Transform::from_xyz(32.5, 32.5, 0.0), FogVision::new(30.0)));
    let sprite = world
        .spawn((Sprite::from_color(Color::BLACK, Vec2::splat(12.0)), Transform::from_xyz(16.0, 32.0, 1.0), stealth.clone(), FogHideWhenUnseen))
        .id();
    let mesh_unit = world.spawn((Mesh2d(mesh), MeshMaterial2d(black.clone()), Transform::from_xyz(48.0, 32.0, 1.0), stealth, FogHideWhenUnseen)).id();
    let picture = Picture::watch(&mut world.commands(), target, SIZE);
    world.flush();
    // 50 ms ticks over a 1 s fade: a twentieth a tick; stop at half.
    let fade_of = |app: &App, e: Entity| app.world().get::<FogFade>(e).map(|f| f.0);
    for _ in 0..40 {
        app.update();
        if fade_of(&app, sprite).is_some_and(|f| f >= 0.45) {
            break;
        }
    }
    let fade = fade_of(&app, sprite).expect("murk checked the unit and gave it its fade");
    assert!((0.45..0.6).contains(&fade), "the unit is half faded in: {fade}");
    assert_eq!(fade_of(&app, mesh_unit), Some(fade), "both units fade alike");
    // Hold the game still and let the picture catch up with it.
    app.world_mut().resource_mut::<Time<Virtual>>().pause();
    for _ in 0..4 {
        app.update();
    }
    let errors: Vec<FogError> = app.world_mut().resource_mut::<Messages<FogError>>().drain().collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(fade_of(&app, sprite), Some(fade), "no tick ran while paused");
    let world = app.world();
    assert_eq!(world.get::<Visibility>(sprite), Some(&Visibility::Inherited), "a fading unit is drawn");
    let own = &world.get::<MeshMaterial2d<ColorMaterial>>(mesh_unit).unwrap().0;
    assert_ne!(own, &black, "the fading mesh has its own material, the shared one is untouched");
    let materials = world.resource::<Assets<ColorMaterial>>();
    assert_eq!(materials.get(&black).unwrap().color.alpha(), 1.0);
    assert_eq!(materials.get(own).unwrap().color.alpha(), fade);
    let rgba = picture.latest().expect("a frame was read back");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("murk-bevy-half-faded.png");
    png_of(&rgba, &path).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    // Pixel (x, y) shows world (x + 0.5, 63.5 - y): black at `fade` alpha
    // over white is 1 - fade.
    let red = |x: usize, y: usize| i32::from(rgba[(y * SIZE as usize + x) * 4]);
    let want = (255.0 * (1.0 - fade)).round() as i32;
    for (what, x) in [("sprite", 16), ("mesh", 48)] {
        let got = red(x, 31);
        assert!((got - want).abs() <= 12, "the {what} unit's pixel is {got}, half faded in it is {want}");
    }
    assert_eq!(red(32, 8), 255, "the ground away from the units stays white");
}
