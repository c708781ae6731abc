//! The `rts` line-of-sight job done by murk and by peers, in one run:
//! which texels of TheFrozenSea are visible from the same 1000 sources of
//! radius 32 (the union), each peer driven by the same rayon loop over the
//! sources; and the exact distance transform of the `rts` coverage.
//!
//! `cargo bench -p murk-benches --bench peers`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use murk_benches::{pool, prepare};
use murk_conformance::workloads;
use murk_cpu::passes;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

const SIZE: usize = 1024;

/// bracket-pathfinding's view of the grid.
struct BracketMap<'a>(&'a [u8]);

impl bracket_pathfinding::prelude::BaseMap for BracketMap<'_> {
    fn is_opaque(&self, idx: usize) -> bool {
        self.0[idx] != 0
    }
}

impl bracket_pathfinding::prelude::Algorithm2D for BracketMap<'_> {
    fn dimensions(&self) -> bracket_pathfinding::prelude::Point {
        bracket_pathfinding::prelude::Point::new(SIZE as i32, SIZE as i32)
    }
}

fn union() -> Vec<AtomicBool> {
    (0..SIZE * SIZE).map(|_| AtomicBool::new(false)).collect()
}

fn peers(c: &mut Criterion) {
    let mut w = workloads::rts();
    let p = prepare(&mut w);
    let (wd, ht) = (p.occlusion.width, p.occlusion.height);
    let accel = passes::visibility::Accel::new(&p.coverage, &p.heights, wd, ht);
    let occ = p.occlusion(&accel);
    let cells = &w.source_cells;
    let radius = w.radius as usize;
    let blocked = |x: i32, y: i32| x < 0 || y < 0 || x >= SIZE as i32 || y >= SIZE as i32 || p.coverage[y as usize * SIZE + x as usize] != 0;
    let mut out = vec![0u16; SIZE * SIZE];
    // The same job with reveal_walls off: what lighting walls costs.
    let walls_off = murk_core::RecomputeInput { reveal_walls: false, ..p.recompute.clone() };
    let mut g = c.benchmark_group("los_rts");
    g.sample_size(10);
    for threads in [1usize, 2] {
        let pool = pool(threads);
        g.bench_function(BenchmarkId::new("visibility/murk", threads), |b| {
            b.iter(|| pool.install(|| passes::visibility::visibility(&p.recompute, &occ, &mut out)))
        });
        g.bench_function(BenchmarkId::new("visibility/murk-reveal-walls-off", threads), |b| {
            b.iter(|| pool.install(|| passes::visibility::visibility(&walls_off, &occ, &mut out)))
        });
        g.bench_function(BenchmarkId::new("adam_fov_rs", threads), |b| {
            b.iter(|| {
                let seen = union();
                pool.install(|| {
                    cells.par_iter().for_each(|&(x, y)| {
                        adam_fov_rs::compute_fov(
                            adam_fov_rs::IVec2::new(x as i32, y as i32),
                            radius,
                            [SIZE as u32, SIZE as u32],
                            |q| blocked(q.x, q.y),
                            |q| seen[q.y as usize * SIZE + q.x as usize].store(true, Ordering::Relaxed),
                        )
                    })
                });
                seen
            })
        });
        g.bench_function(BenchmarkId::new("doryen-fov", threads), |b| {
            b.iter(|| {
                let seen = union();
                let transparent: Vec<bool> = p.coverage.iter().map(|&c| c == 0).collect();
                pool.install(|| {
                    cells.par_iter().for_each_init(
                        || {
                            let mut map = doryen_fov::MapData::new(SIZE, SIZE);
                            map.transparent.clone_from(&transparent);
                            (map, doryen_fov::FovRestrictive::new())
                        },
                        |(map, fov), &(x, y)| {
                            use doryen_fov::FovAlgorithm;
                            fov.compute_fov(map, x as usize, y as usize, radius, true);
                            let (x0, x1) = ((x as usize).saturating_sub(radius), (x as usize + radius).min(SIZE - 1));
                            let (y0, y1) = ((y as usize).saturating_sub(radius), (y as usize + radius).min(SIZE - 1));
                            for yy in y0..=y1 {
                                for xx in x0..=x1 {
                                    if map.is_in_fov(xx, yy) {
                                        seen[yy * SIZE + xx].store(true, Ordering::Relaxed);
                                        map.set_fov(xx, yy, false);
                                    }
                                }
                            }
                        },
                    )
                });
                seen
            })
        });
        g.bench_function(BenchmarkId::new("bracket-pathfinding", threads), |b| {
            let map = BracketMap(&p.coverage);
            b.iter(|| {
                let seen = union();
                pool.install(|| {
                    cells.par_iter().for_each(|&(x, y)| {
                        let set =
                            bracket_pathfinding::prelude::field_of_view_set(bracket_pathfinding::prelude::Point::new(x, y), radius as i32, &map);
                        for q in set {
                            seen[q.y as usize * SIZE + q.x as usize].store(true, Ordering::Relaxed);
                        }
                    })
                });
                seen
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("distance_field_rts");
    g.sample_size(10);
    for threads in [1usize, 2] {
        let pool = pool(threads);
        g.bench_function(BenchmarkId::new("murk", threads), |b| {
            b.iter(|| pool.install(|| passes::distance_field::distance_field(&p.coverage, wd, ht, 1)))
        });
    }
    g.bench_function(BenchmarkId::new("distance-transform", 1), |b| {
        b.iter(|| {
            let mut grid = distance_transform::BoolGrid::new(SIZE, SIZE);
            for y in 0..SIZE {
                for x in 0..SIZE {
                    grid.set(x, y, p.coverage[y * SIZE + x] != 0);
                }
            }
            distance_transform::dt::dt2d(&grid)
        })
    });
    g.finish();
}

criterion_group!(benches, peers);
criterion_main!(benches);
