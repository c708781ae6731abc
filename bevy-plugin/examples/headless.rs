//! The rts scene rendered without a window: a few frames drawn offscreen and
//! written as PNG files (what a replay tool or a CI job would do).
//!
//! `cargo run -p murk-bevy --example headless -- --backend gpu --frames 3 --out target/murk-bevy-headless`

mod scene;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use clap::Parser;
use murk_bevy::headless::{finish_plugins, render_plugins, target_image, Picture};
use murk_bevy::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

/// Renders the rts scene offscreen and writes frames as PNG.
#[derive(Parser)]
struct Args {
    /// Where murk computes: cpu, gpu or auto.
    #[arg(long, default_value = "auto")]
    backend: BackendChoice,
    /// Frames to write.
    #[arg(long, default_value_t = 3)]
    frames: u32,
    /// Fixed ticks between written frames.
    #[arg(long, default_value_t = 15)]
    every: u32,
    /// Output folder.
    #[arg(long, default_value = "target/murk-bevy-headless")]
    out: PathBuf,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let choice = args.backend;
    let map = scene::terrain();
    let (w, h) = (map.width * 4, map.height * 4);
    let step = Duration::from_micros(33_333);
    let mut app = App::new();
    app.add_plugins(render_plugins())
        .insert_resource(Time::<Fixed>::from_duration(step))
        .insert_resource(TimeUpdateStrategy::ManualDuration(step))
        .add_plugins(MurkPlugin::new(choice).instance(scene::instance(&map)));
    finish_plugins(&mut app);
    let target = app.world_mut().resource_mut::<Assets<Image>>().add(target_image(w, h));
    let camera = (scene::camera(&map), bevy::camera::RenderTarget::Image(target.clone().into()));
    app.insert_resource(scene::Terrain(map))
        .add_systems(
            Startup,
            (scene::spawn, move |mut commands: Commands| {
                commands.spawn(camera.clone());
            }),
        )
        .add_systems(FixedUpdate, scene::walk.before(MurkSet::Mirror));
    let picture = Picture::watch(&mut app.world_mut().commands(), target, w);
    app.world_mut().flush();
    std::fs::create_dir_all(&args.out)?;
    for frame in 0..args.frames {
        for _ in 0..args.every {
            app.update();
        }
        if let Some(e) = app.world_mut().resource_mut::<Messages<FogError>>().drain().next() {
            return Err(format!("murk: {e}").into());
        }
        let rgba = picture.latest().ok_or("no frame was read back")?;
        let path = args.out.join(format!("frame-{frame:02}.png"));
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(&path)?), w, h);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.write_header()?.write_image_data(&rgba)?;
        let backend = app.world().resource::<MurkFog>().backend_name().unwrap_or_default();
        println!("{} ({backend})", path.display());
    }
    Ok(())
}
