//! Cost growth of a whole CPU frame (2 threads): against the source count
//! (10 to 10 000 sources of radius 32 texels on TheFrozenSea at 1024x1024)
//! and against the resolution (256 to 4096 texels square, 1000 sources of
//! radius 32 texels). Writes `benches/scaling/scaling.csv`; plot it with
//! `python3 benches/scaling/plot.py` (matplotlib).
//!
//! `cargo run --release -p murk-benches --example scaling`

use murk_conformance::workloads::{load_map, passable_cells};
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::World;
use murk_core::{Area, CaptureMode, FogSubsystem, InstanceDesc, Position, Profile, RayMethod, TeamMask, VisionSource};
use std::io::Write;

/// Median milliseconds of `runs` full frames (occlusion and visibility rebuilt).
fn frame_ms(resolution: u32, sources: usize, runs: usize) -> f64 {
    let map = load_map("TheFrozenSea.map");
    let mut world = World::new();
    world.spawn((map.to_capture(Vec2::ZERO, 1.0, 0.0, 4.0, CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true }),));
    let texel = 1024.0 / resolution as f32;
    for (c, r) in passable_cells(&map, sources, 7) {
        let mut s = VisionSource::new(32.0 * texel);
        s.falloff = Some(0.25);
        world.spawn((Position(Vec3::new(c as f32 + 0.5, r as f32 + 0.5, 0.0)), s));
    }
    let profile = Profile { ray_method: RayMethod::Dda, blur_radius: 2, ..Profile::default() };
    let desc = InstanceDesc {
        name: "m".into(),
        area: Area { center: Vec3::new(512.0, 512.0, 5.0), extents: Vec3::new(1024.0, 1024.0, 10.0), yaw_degrees: 0.0 },
        resolution,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile: profile.clone(),
    };
    let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(2).expect("pool")));
    fog.create_instance(desc).expect("instance");
    fog.tick(&mut world, 33_333).expect("tick");
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            fog.apply_profile("m", profile.clone()).expect("profile");
            fog.invalidate("m").expect("instance");
            let t = std::time::Instant::now();
            fog.tick(&mut world, 33_333).expect("tick");
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() -> std::io::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scaling");
    let mut out = std::fs::File::create(dir.join("scaling.csv"))?;
    writeln!(out, "sweep,resolution,sources,frame_ms")?;
    for sources in [10usize, 30, 100, 300, 1000, 3000, 10_000] {
        let ms = frame_ms(1024, sources, 3);
        println!("sources {sources:>6} at 1024: {ms:8.2} ms");
        writeln!(out, "sources,1024,{sources},{ms:.3}")?;
    }
    for resolution in [256u32, 512, 1024, 2048, 4096] {
        let ms = frame_ms(resolution, 1000, 3);
        println!("resolution {resolution:>5} with 1000 sources: {ms:8.2} ms");
        writeln!(out, "resolution,{resolution},1000,{ms:.3}")?;
    }
    Ok(())
}
