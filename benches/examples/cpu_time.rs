//! Wall and CPU time per operation over fixed iteration counts: the cold
//! `rts` visibility pass and adam_fov_rs's `rts` job (`v`), one cold
//! long-sighted source at 2048x2048 and 4096x4096 (`l`, the latter with
//! DDA and with Step Scan), the steady `rts`
//! tick (`s`), and whole `rts` and `rts-10` frames (`f`; `t` for `rts-10`
//! only), on 1 and 2
//! threads. On a machine shared with other work, criterion's wall-clock
//! medians move with the other load; the CPU time this process spends per
//! operation (user + system, all its threads, from `/proc/self/stat` at
//! 10 ms resolution) moves far less, so it compares commits measured at
//! different moments. Linux only.
//!
//! `cargo run --release -p murk-benches --example cpu_time -- vsf`
//! (`MURK_CPU_TIME_THREADS=1` for one thread count, `MURK_CPU_TIME_SCALE=10`
//! for ten times the iterations, as when profiling).

use murk_benches::{pool, prepare, Prepared};
use murk_conformance::workloads;
use murk_core::hecs::Entity;
use murk_core::{FogSubsystem, Position, VisionSource};
use murk_cpu::passes;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// CPU seconds this process has used so far.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name: state is the first, utime the 12th, stime the 13th.
    let fields: Vec<&str> = stat.rsplit(')').next().expect("stat fields").split_whitespace().collect();
    let ticks = |k: usize| fields[k].parse::<f64>().expect("clock ticks");
    (ticks(11) + ticks(12)) / 100.0
}

/// Runs `op` once to warm up, then `n` times, and prints the mean wall and
/// CPU milliseconds per run.
fn measure(label: &str, n: usize, mut op: impl FnMut()) {
    // `MURK_CPU_TIME_SCALE` multiplies the iteration counts (for profiling).
    let n = n * std::env::var("MURK_CPU_TIME_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    op();
    let (start, cpu) = (Instant::now(), cpu_seconds());
    for _ in 0..n {
        op();
    }
    let wall = start.elapsed().as_secs_f64() * 1e3 / n as f64;
    let cpu = (cpu_seconds() - cpu) * 1e3 / n as f64;
    println!("{label:28} wall {wall:8.3} ms   cpu {cpu:8.3} ms");
}

/// Measures the cold visibility pass of a prepared workload (every window
/// built, no distance field or mips) on `threads` threads.
fn cold_visibility(label: &str, n: usize, p: &Prepared, threads: usize) {
    let (wd, ht) = (p.occlusion.width, p.occlusion.height);
    let accel = passes::visibility::Accel::new(&p.coverage, &p.heights, wd, ht);
    let occ = p.occlusion(&accel);
    let mut out = vec![0u16; (wd * ht) as usize];
    let pool = pool(threads);
    measure(label, n, || pool.install(|| passes::visibility::visibility(&p.recompute, &occ, &mut out)));
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "vsf".into());
    // `MURK_CPU_TIME_THREADS=1` measures one thread count only.
    let counts: Vec<usize> = match std::env::var("MURK_CPU_TIME_THREADS") {
        Ok(t) => vec![t.parse().expect("a thread count")],
        Err(_) => vec![1, 2],
    };
    for threads in counts {
        if which.contains('v') {
            let mut w = workloads::rts();
            let p = prepare(&mut w);
            cold_visibility(&format!("visibility/murk/{threads}"), 12, &p, threads);
            // The job of the peers bench: the union of what every source sees.
            let size = p.occlusion.width as usize;
            let pool = pool(threads);
            let blocked = |x: i32, y: i32| x < 0 || y < 0 || x >= size as i32 || y >= size as i32 || p.coverage[y as usize * size + x as usize] != 0;
            measure(&format!("adam_fov_rs/{threads}"), 40, || {
                let seen: Vec<AtomicBool> = (0..size * size).map(|_| AtomicBool::new(false)).collect();
                pool.install(|| {
                    w.source_cells.par_iter().for_each(|&(x, y)| {
                        adam_fov_rs::compute_fov(
                            adam_fov_rs::IVec2::new(x as i32, y as i32),
                            w.radius as usize,
                            [size as u32, size as u32],
                            |q| blocked(q.x, q.y),
                            |q| seen[q.y as usize * size + q.x as usize].store(true, Ordering::Relaxed),
                        )
                    })
                });
            });
        }
        if which.contains('l') {
            // One long-sighted source, cold: radius 1000 at 2048x2048 and
            // radius 4095 at 4096x4096 (the cost cliffs of issue 12).
            for (mut w, n) in [(workloads::long_sight(), 3), (workloads::far_sight(), 1)] {
                let p = prepare(&mut w);
                cold_visibility(&format!("visibility/{}/{threads}", w.name), n, &p, threads);
            }
            // The far-sighted source again with Step Scan's rays.
            let mut w = workloads::far_sight();
            w.desc.profile.ray_method = murk_core::RayMethod::StepScan;
            let p = prepare(&mut w);
            cold_visibility(&format!("visibility/far-sight-step-scan/{threads}"), 1, &p, threads);
        }
        if which.contains('s') {
            // As `tick/rts-steady`: every tenth source walks a quarter unit a
            // tick, eight ticks east and eight back.
            let mut w = workloads::rts();
            let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(threads).expect("pool")));
            fog.create_instance(w.desc.clone()).expect("valid workload");
            let mut sources: Vec<Entity> = w.world.query::<(Entity, &VisionSource)>().iter().map(|(e, _)| e).collect();
            sources.sort();
            let moving: Vec<Entity> = sources.into_iter().step_by(10).collect();
            for _ in 0..4 {
                fog.tick(&mut w.world, 33_333).expect("tick");
            }
            let mut tick = 0u32;
            measure(&format!("tick/rts-steady/{threads}"), 60, || {
                let dx = if tick % 16 < 8 { 0.25 } else { -0.25 };
                for &e in &moving {
                    w.world.get::<&mut Position>(e).expect("source").0.x += dx;
                }
                tick += 1;
                fog.tick(&mut w.world, 33_333).expect("tick");
            });
        }
        if which.contains('f') || which.contains('t') {
            // As `frame/...`: everything invalidated, so nothing is kept
            // (`t`: the 10-source frame only).
            let frames =
                if which.contains('f') { vec![(workloads::rts(), 12), (workloads::rts_sparse(), 30)] } else { vec![(workloads::rts_sparse(), 30)] };
            for (mut w, n) in frames {
                let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(threads).expect("pool")));
                fog.create_instance(w.desc.clone()).expect("valid workload");
                fog.tick(&mut w.world, 33_333).expect("first tick");
                let (name, profile) = (w.desc.name.clone(), w.desc.profile.clone());
                measure(&format!("frame/{}/{threads}", w.name), n, || {
                    fog.apply_profile(&name, profile.clone()).expect("profile");
                    fog.invalidate(&name).expect("instance");
                    fog.tick(&mut w.world, 33_333).expect("tick");
                });
            }
        }
    }
}
