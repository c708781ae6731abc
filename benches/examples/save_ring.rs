//! A rollback game's saves against the steady tick: each round runs
//! `rts-steady` ticks (one instance, every tenth unit walking), then, on the
//! same run, frames of a tick and a save into a ring of eight states with
//! the oldest dropped, the save and the drop timed apart. Per round, over
//! the round's median steady tick: the save, the drop, the two together
//! (median and slowest frame) and the tick while states are saved; at the
//! end, the median over the rounds of save with drop and the bytes the
//! ring holds (each allocation once).
//!
//! `cargo run --release -p murk-benches --example save_ring [ROUNDS] [FRAMES]`
//! (defaults 6 rounds of 32 frames, 2 threads).

use murk_benches::ticks::{median, Change, RtsTicks};
use murk_core::SaveState;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

const RING: usize = 8;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(6).max(1);
    let frames: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(32).max(1);
    let mut t = RtsTicks::new(Box::new(murk_cpu::CpuBackend::new(2).expect("a pool")), Change::Walkers);
    let mut ring: VecDeque<SaveState> = VecDeque::new();
    let frame = |t: &mut RtsTicks, ring: &mut VecDeque<SaveState>| {
        let started = Instant::now();
        t.step();
        let ticked = started.elapsed();
        let started = Instant::now();
        ring.push_back(t.fog.save_state(&t.world).expect("save"));
        let saved = started.elapsed();
        let started = Instant::now();
        if ring.len() > RING {
            drop(ring.pop_front());
        }
        (ticked, saved, started.elapsed())
    };
    for _ in 0..=RING {
        frame(&mut t, &mut ring);
    }
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!("{rounds} rounds of {frames} frames, a ring of {RING} states, 2 threads, rts (a tenth of 1000 units walking)");
    println!("round  steady tick   save   drop   save with drop   slowest frame's   tick while saving   (x steady)");
    let mut medians = Vec::new();
    for round in 1..=rounds {
        let steady = median(
            (0..16)
                .map(|_| {
                    let started = Instant::now();
                    t.step();
                    started.elapsed()
                })
                .collect(),
        );
        let (mut ticks, mut saves, mut drops, mut both) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..frames {
            let (ticked, saved, dropped) = frame(&mut t, &mut ring);
            ticks.push(ticked);
            saves.push(saved);
            drops.push(dropped);
            both.push(saved + dropped);
        }
        let slowest = both.iter().copied().max().unwrap_or_default();
        let together = median(both);
        medians.push(ratio(together, steady));
        println!(
            "{round:>5}  {:>8.0} us   {:>4.2}   {:>4.2}   {:>14.2}   {:>15.2}   {:>17.2}",
            steady.as_secs_f64() * 1e6,
            ratio(median(saves), steady),
            ratio(median(drops), steady),
            ratio(together, steady),
            ratio(slowest, steady),
            ratio(median(ticks), steady),
        );
    }
    // The ring's bytes: the oldest state's, then what each next one holds
    // that the one before it does not.
    let bytes: usize = ring
        .iter()
        .enumerate()
        .map(|(k, s)| match k.checked_sub(1) {
            None => s.texture_bytes(s).0,
            Some(before) => {
                let (all, shared) = s.texture_bytes(&ring[before]);
                all - shared
            }
        })
        .sum();
    medians.sort_by(f64::total_cmp);
    println!("median over rounds: save with drop {:.3}; the ring of {} holds {:.1} MB", medians[medians.len() / 2], ring.len(), bytes as f64 / 1e6);
}
