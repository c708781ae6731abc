//! Which texels of the `rts` job murk reveals and which adam_fov_rs reveals,
//! with `reveal_walls` on and off: counts of texels seen by both, by murk
//! only and by the peer only, and how many of each are covered (walls,
//! trees); and what the CPU keeps per source between
//! recomputes (its window). The figures in BENCHMARKS.md come from here.
//!
//! `cargo run --release -p murk-benches --example agreement`

use murk_benches::{pool, prepare};
use murk_conformance::workloads;
use murk_cpu::passes::{self, visibility::WindowCache};

fn main() {
    let mut w = workloads::rts();
    let p = prepare(&mut w);
    let (wd, ht) = (p.occlusion.width, p.occlusion.height);
    let size = wd as usize;
    let accel = passes::visibility::Accel::new(&p.coverage, &p.heights, wd, ht);
    let occ = p.occlusion(&accel);
    let blocked = |x: i32, y: i32| x < 0 || y < 0 || x >= wd as i32 || y >= ht as i32 || p.coverage[y as usize * size + x as usize] != 0;
    let mut peer = vec![false; p.coverage.len()];
    for &(x, y) in &w.source_cells {
        adam_fov_rs::compute_fov(
            adam_fov_rs::IVec2::new(x as i32, y as i32),
            w.radius as usize,
            [wd, ht],
            |q| blocked(q.x, q.y),
            |q| peer[q.y as usize * size + q.x as usize] = true,
        );
    }
    println!("rts: {} sources of radius {} on {wd}x{ht}", w.source_cells.len(), w.radius);
    println!("| reveal_walls | both | murk only | of which covered | adam_fov_rs only | of which covered |");
    println!("|---|---|---|---|---|---|");
    for on in [false, true] {
        let mut input = p.recompute.clone();
        input.reveal_walls = on;
        let mut out = vec![0u16; p.coverage.len()];
        pool(2).install(|| passes::visibility::visibility(&input, &occ, &mut out));
        let (mut both, mut murk_only, mut murk_only_covered, mut peer_only, mut peer_only_covered) = (0, 0, 0, 0, 0);
        for (i, (&v, &seen)) in out.iter().zip(&peer).enumerate() {
            match (v > 0, seen) {
                (true, true) => both += 1,
                (true, false) => {
                    murk_only += 1;
                    murk_only_covered += usize::from(p.coverage[i] != 0);
                }
                (false, true) => {
                    peer_only += 1;
                    peer_only_covered += usize::from(p.coverage[i] != 0);
                }
                (false, false) => {}
            }
        }
        println!("| {} | {both} | {murk_only} | {murk_only_covered} | {peer_only} | {peer_only_covered} |", if on { "on" } else { "off" });
    }
    let mut cache = WindowCache::default();
    let mut out = vec![0u16; p.coverage.len()];
    pool(2).install(|| passes::visibility::visibility_cached(&p.recompute, &occ, &mut cache, &mut out));
    println!(
        "kept source windows: {} windows, {:.2} MB ({:.0} bytes per window)",
        cache.len(),
        cache.bytes() as f64 / 1e6,
        cache.bytes() as f64 / cache.len().max(1) as f64
    );
}
