#![expect(missing_docs, reason = "criterion_group! generates undocumented items")]

//! Whole-frame and per-pass benches of the CPU backend.
//!
//! `cargo bench -p murk-benches --bench frame`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use murk_conformance::workloads::{self, Workload};
use murk_core::FogSubsystem;
use murk_cpu::CpuBackend;

/// A subsystem over the workload with occlusion built once.
fn prepared(w: &mut Workload, threads: usize) -> FogSubsystem {
    let mut fog = FogSubsystem::new(Box::new(CpuBackend::new(threads).expect("thread pool")));
    fog.create_instance(w.desc.clone()).expect("valid workload");
    fog.tick(&mut w.world, 33_333).expect("first tick");
    fog
}

fn frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame");
    group.sample_size(10);
    for mut w in [workloads::small(), workloads::rts()] {
        for threads in [1, 2] {
            let mut fog = prepared(&mut w, threads);
            // Each iteration recomputes everything but occlusion: the profile
            // is re-applied, so the settled-skip rule cannot apply.
            let name = w.desc.name.clone();
            let profile = w.desc.profile.clone();
            group.bench_with_input(BenchmarkId::new(format!("{}/cpu", w.name), threads), &threads, |b, _| {
                b.iter(|| {
                    fog.apply_profile(&name, profile.clone()).expect("profile");
                    fog.tick(&mut w.world, 33_333).expect("tick")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, frame);
criterion_main!(benches);
