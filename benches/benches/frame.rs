#![expect(missing_docs, reason = "criterion_group! generates undocumented items")]

//! Whole frames, backends side by side: `frame/<workload>/<backend>/<threads>`.
//!
//! `cargo bench -p murk-benches --bench frame`. The GPU rows appear when an
//! adapter exists (figures on lavapipe are not performance figures).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use murk_conformance::workloads::{self, Workload};
use murk_core::{Backend, FogSubsystem};

/// One full recompute (occlusion, visibility .. upscale, blend) per iteration.
fn bench_frames(c: &mut Criterion, w: &mut Workload, backends: Vec<(String, Box<dyn Backend>)>) {
    let mut group = c.benchmark_group("frame");
    group.sample_size(10);
    for (label, backend) in backends {
        let mut fog = FogSubsystem::new(backend);
        fog.create_instance(w.desc.clone()).expect("valid workload");
        fog.tick(&mut w.world, 33_333).expect("first tick");
        let (name, profile) = (w.desc.name.clone(), w.desc.profile.clone());
        group.bench_function(BenchmarkId::new(format!("{}/{label}", w.name), ""), |b| {
            b.iter(|| {
                // Invalidate so that nothing is skipped: occlusion and visibility both rebuild.
                fog.apply_profile(&name, profile.clone()).expect("profile");
                fog.invalidate(&name).expect("instance");
                fog.tick(&mut w.world, 33_333).expect("tick")
            })
        });
    }
    group.finish();
}

fn cpu(threads: usize) -> (String, Box<dyn Backend>) {
    (format!("cpu/{threads}"), Box::new(murk_cpu::CpuBackend::new(threads).expect("pool")))
}

fn frame(c: &mut Criterion) {
    let gpu = murk_gpu::SharedGpu::new();
    match &gpu {
        Ok(g) => eprintln!("GPU rows on {}", g.adapter()),
        Err(e) => eprintln!("no GPU rows: {e}"),
    }
    let with_gpu = |mut v: Vec<(String, Box<dyn Backend>)>| {
        if let Ok(g) = &gpu {
            v.push(("gpu/1".into(), g.backend()));
        }
        v
    };
    bench_frames(c, &mut workloads::small(), with_gpu(vec![cpu(1), cpu(2)]));
    bench_frames(c, &mut workloads::rts(), with_gpu(vec![cpu(1), cpu(2)]));
    if std::env::var_os("MURK_BENCH_HUGE").is_some() {
        bench_frames(c, &mut workloads::huge(), with_gpu(vec![cpu(2)]));
    }
}

criterion_group!(benches, frame);
criterion_main!(benches);
