//! Each CPU pass alone on `rts`, as a tick runs it: `<pass>/cpu/<threads>`.
//!
//! The rows time the functions the CPU backend calls in a tick, over the
//! whole grid (every block marked, no source window kept: a cold
//! recompute): the occlusion build
//! rasterizes row by row into the occlusion tables
//! (`Accel::fill_and_rebuild` over `rasterize_row`), memory and compose run
//! as one pass over the marked blocks, the blend over the unsettled ones.
//!
//! `cargo bench -p murk-benches --bench passes`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use murk_benches::{pool, prepare};
use murk_conformance::workloads;
use murk_cpu::passes::{self, compose::ComposeParams, dirty::Blocks, visibility::Occlusion};

fn passes_rts(c: &mut Criterion) {
    let mut w = workloads::rts();
    let p = prepare(&mut w);
    let (wd, ht) = (p.occlusion.width, p.occlusion.height);
    let n = (wd * ht) as usize;
    let accel = passes::visibility::Accel::new(&p.coverage, &p.heights, wd, ht);
    let mips = passes::mips::build_mips(&p.coverage, wd, ht);
    let df = passes::distance_field::distance_field(&p.coverage, wd, ht, 1);
    let occ = Occlusion { width: wd, height: ht, coverage: &p.coverage, heights: &p.heights, mips: &mips, distance_field: &df, accel: &accel };
    let mut vis = vec![0u16; n];
    passes::visibility::visibility(&p.recompute, &occ, &mut vis);
    let (mut a, mut b, mut t) = (vec![0u16; n], vec![0u16; n], vec![0u16; n]);
    let (mut cov, mut hgt) = (vec![0u8; n], vec![0i32; n]);
    for threads in [1usize, 2] {
        let pool = pool(threads);
        let id = |pass: &str| BenchmarkId::new(format!("{pass}/cpu"), threads);
        let mut g = c.benchmark_group("passes");
        g.sample_size(10);
        let mut tables = passes::visibility::Accel::default();
        g.bench_function(id("rasterize_and_tables"), |bch| {
            bch.iter(|| {
                pool.install(|| {
                    tables.fill_and_rebuild(&mut cov, &mut hgt, wd, ht, |row, c, h| passes::rasterize::rasterize_row(&p.occlusion, row, c, h))
                })
            })
        });
        g.bench_function(id("mips"), |bch| bch.iter(|| pool.install(|| passes::mips::build_mips(&p.coverage, wd, ht))));
        g.bench_function(id("distance_field"), |bch| bch.iter(|| pool.install(|| passes::distance_field::distance_field(&p.coverage, wd, ht, 1))));
        // A cold recompute: no source window kept from an earlier tick.
        g.bench_function(id("visibility"), |bch| {
            bch.iter(|| {
                let mut windows = passes::visibility::WindowCache::default();
                pool.install(|| passes::visibility::visibility_changes(&p.recompute, &occ, &mut windows, &mut a))
            })
        });
        g.bench_function(id("blur"), |bch| bch.iter(|| pool.install(|| passes::blur::blur(&p.recompute.blur, wd, ht, &vis, &mut b))));
        let params = ComposeParams { fade_in_step: 5000, relax_step: 2000, explored_value: 32768, mapped_value: 0, show_memory_alpha: 65535 };
        let all = Blocks::new(wd as usize, ht as usize, true);
        let (mut unsettled, mut moved, mut remembered) = (all.clone(), all.clone(), all.clone());
        let mut mapped = vec![0u16; vis.len()];
        g.bench_function(id("memory_compose"), |bch| {
            bch.iter(|| {
                pool.install(|| {
                    passes::settle::memory_compose_marked(
                        &vis,
                        &mut t,
                        &mut mapped,
                        &mut b,
                        None,
                        None,
                        (100, false),
                        params,
                        &all,
                        &mut unsettled,
                        &mut moved,
                        &mut remembered,
                    )
                })
            })
        });
        g.bench_function(id("upscale"), |bch| bch.iter(|| pool.install(|| passes::upscale::upscale(&vis, wd / 2, ht / 2, 2, &mut b))));
        // The blend unmarks the blocks it settles: every iteration starts
        // from all marked (the copy is a bool per 16 texels).
        let mut start = vis.clone();
        g.bench_function(id("blend"), |bch| {
            bch.iter(|| {
                unsettled.clone_from(&all);
                pool.install(|| {
                    passes::settle::blend_marked(&mut start, &t, 30000, &mut b, &mut unsettled, false, passes::settle::BandMarks::default())
                })
            })
        });
        g.finish();
    }
}

/// The GPU rows: each pass alone on the `rts` inputs, when an adapter exists.
/// (On lavapipe these are not performance figures.)
fn passes_rts_gpu(c: &mut Criterion) {
    use murk_core::Backend;
    let mut gpu = match murk_gpu::GpuBackend::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("no GPU rows: {e}");
            return;
        }
    };
    eprintln!("GPU rows on {}", gpu.adapter());
    let mut w = workloads::rts();
    let p = prepare(&mut w);
    let mut occlusion = p.occlusion.clone();
    occlusion.build_mips = true;
    occlusion.distance_field_scale = 1;
    let dims = murk_core::InstanceDims { width: occlusion.width, height: occlusion.height, out_width: occlusion.width, out_height: occlusion.height };
    gpu.create_instance(0, dims).expect("instance");
    gpu.build_occlusion(0, &occlusion).expect("occlusion");
    gpu.recompute(0, &p.recompute).expect("recompute");
    let mut g = c.benchmark_group("passes");
    g.sample_size(10);
    for pass in murk_core::Pass::ALL {
        g.bench_function(BenchmarkId::new(format!("{}/gpu", pass.name()), 1), |b| {
            b.iter(|| gpu.run_pass(0, pass, &occlusion, &p.recompute).expect("pass"))
        });
    }
    g.finish();
}

criterion_group!(benches, passes_rts, passes_rts_gpu);
criterion_main!(benches);
