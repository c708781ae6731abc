//! What mirroring Bevy entities into murk costs at `rts` scale (the `rts`
//! workload: TheFrozenSea at 1024², 1000 sources of radius 32, every tenth
//! walking a quarter unit per tick, as in the `frame` bench's `rts-steady`),
//! beside the whole fixed tick it is part of (mirror, murk's tick on the
//! CPU, publishing) and beside the same tick run on `FogSubsystem` without
//! Bevy, in one run.
//!
//! `cargo bench -p murk-bevy --bench sync -- --noplot`

use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;
use bevy::transform::systems::{mark_dirty_trees, propagate_parent_transforms, sync_simple_transforms};
use criterion::{criterion_group, criterion_main, Criterion};
use murk_bevy::prelude::*;
use murk_conformance::workloads;
use murk_core::{FogSubsystem, HeightCapture, Position};
use std::time::{Duration, Instant};

#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
struct MirrorOnly;

/// The `rts` workload as a Bevy app, after its cold first tick; and the
/// walking tenth of its sources.
fn app() -> (App, Vec<Entity>) {
    let mut w = workloads::rts();
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_micros(33_333)))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(w.desc.clone())));
    // The plugin's mirror step as it runs in `FixedUpdate`: Bevy's
    // transform propagation (the mirror reads global transforms), then the
    // mirror system.
    let mut mirror_only = Schedule::new(MirrorOnly);
    mirror_only.add_systems((mark_dirty_trees, propagate_parent_transforms, sync_simple_transforms, murk_bevy::mirror_entities).chain());
    app.add_schedule(mirror_only);
    for capture in w.world.query_mut::<&HeightCapture>() {
        app.world_mut().spawn((Transform::default(), FogCapture { capture: capture.clone(), members: Vec::new() }));
    }
    let mut sources: Vec<(hecs::Entity, Vec3, VisionSource)> =
        w.world.query_mut::<(hecs::Entity, &Position, &VisionSource)>().into_iter().map(|(e, p, s)| (e, p.0, *s)).collect();
    sources.sort_by_key(|s| s.0);
    let mut moving = Vec::new();
    for (i, (_, p, s)) in sources.into_iter().enumerate() {
        let e = app.world_mut().spawn((Transform::from_translation(p), FogVision { source: s, cone_follows_rotation: false })).id();
        if i % 10 == 0 {
            moving.push(e);
        }
    }
    app.world_mut().run_schedule(FixedUpdate);
    (app, moving)
}

/// Eight ticks east, eight back, a quarter unit per tick.
fn dx(tick: u32) -> f32 {
    if tick % 16 < 8 {
        0.25
    } else {
        -0.25
    }
}

fn timed(c: &mut Criterion, name: &str, label: impl ScheduleLabel + Clone) {
    let (mut app, moving) = app();
    let mut tick = 0;
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for e in &moving {
                    if let Some(mut t) = app.world_mut().get_mut::<Transform>(*e) {
                        t.translation.x += dx(tick);
                    }
                }
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
    // The same ticks without Bevy.
    let mut w = workloads::rts();
    let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(num_threads()).expect("a CPU backend")));
    fog.create_instance(w.desc.clone()).expect("valid workload");
    fog.tick(&mut w.world, 33_333).expect("the cold tick");
    let mut sources: Vec<hecs::Entity> = w.world.query_mut::<(hecs::Entity, &VisionSource)>().into_iter().map(|(e, _)| e).collect();
    sources.sort();
    let moving: Vec<hecs::Entity> = sources.into_iter().step_by(10).collect();
    let mut tick = 0;
    c.bench_function("sync/rts-steady/subsystem", |b| {
        b.iter(|| {
            for &e in &moving {
                w.world.get::<&mut Position>(e).expect("source").0.x += dx(tick);
            }
            tick += 1;
            fog.tick(&mut w.world, 33_333).expect("tick")
        })
    });
}

/// The plugin's CPU backend runs on every core; so does the comparison.
fn num_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(8));
    targets = sync
}
criterion_main!(benches);
