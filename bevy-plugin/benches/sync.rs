#![expect(missing_docs, reason = "criterion_group! generates undocumented items")]

//! What mirroring Bevy entities into murk costs at `rts` scale (TheFrozenSea,
//! 1024², 1000 sources of radius 32, 10 % of them moving each tick), beside
//! the whole fixed tick it is part of (mirror, murk's tick on the CPU,
//! publishing the results), in the same run.
//!
//! `cargo bench -p murk-bevy --bench sync -- --noplot`

use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;
use criterion::{criterion_group, criterion_main, Criterion};
use murk_bevy::prelude::*;
use murk_core::movingai::MovingAiMap;
use murk_core::CaptureMode;
use std::time::{Duration, Instant};

const MAP: &str = include_str!("../../assets/maps/TheFrozenSea.map");
const UNITS: usize = 1000;
const MOVING: usize = UNITS / 10;

#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
struct MirrorOnly;

fn app() -> (App, Vec<Entity>) {
    let map = MovingAiMap::parse(MAP, "TheFrozenSea.map").expect("the map parses");
    let (w, h) = (map.width as f32, map.height as f32);
    let desc = InstanceDesc {
        name: "rts".into(),
        area: Area { center: Vec3::new(w / 2.0, h / 2.0, 5.0), extents: Vec3::new(w, h, 10.0), yaw_degrees: 0.0 },
        resolution: map.width,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile: Profile::default(),
    };
    let mut app = App::new();
    app.add_plugins(MinimalPlugins).add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(desc)));
    let mut mirror_only = Schedule::new(MirrorOnly);
    mirror_only.add_systems(murk_bevy::mirror_entities);
    app.add_schedule(mirror_only);
    let capture = map.to_capture(Vec2::ZERO, 1.0, 0.0, 4.0, CaptureMode::FullScene);
    app.world_mut().spawn((Transform::default(), FogCapture { capture, members: Vec::new() }));
    let mut units = Vec::new();
    let mut seed = 1u64;
    while units.len() < UNITS {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let (c, r) = ((seed >> 33) as u32 % map.width, (seed >> 13) as u32 % map.height);
        if map.passable(c, r) {
            units.push(app.world_mut().spawn((Transform::from_xyz(c as f32 + 0.5, r as f32 + 0.5, 0.0), FogVision::new(32.0))).id());
        }
    }
    // The first tick mirrors everything and computes the whole map.
    app.world_mut().run_schedule(FixedUpdate);
    (app, units)
}

/// Moves a tenth of the units half a texel (a different tenth each tick).
fn walk(app: &mut App, units: &[Entity], tick: usize) {
    let sign = if tick.is_multiple_of(2) { 0.5 } else { -0.5 };
    for e in units.iter().skip((tick * MOVING) % UNITS).take(MOVING) {
        if let Some(mut t) = app.world_mut().get_mut::<Transform>(*e) {
            t.translation.x += sign;
        }
    }
}

fn timed(c: &mut Criterion, name: &str, label: impl ScheduleLabel + Clone) {
    let (mut app, units) = app();
    let mut tick = 0;
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                walk(&mut app, &units, tick);
                tick += 1;
                let t = Instant::now();
                app.world_mut().run_schedule(label.clone());
                total += t.elapsed();
            }
            total
        })
    });
}

fn sync(c: &mut Criterion) {
    timed(c, "sync/rts-steady/mirror", MirrorOnly);
    timed(c, "sync/rts-steady/fixed-tick", FixedUpdate);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(8));
    targets = sync
}
criterion_main!(benches);
