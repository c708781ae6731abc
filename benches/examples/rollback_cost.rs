//! What a rollback game's frames cost against the steady tick, measured in
//! paired rounds so that the machine's drift cancels: each round runs
//! `rts-steady` ticks (one instance, every tenth unit walking), then, on the
//! same run, rollbacks of eight frames (the state eight ticks back loaded,
//! seven ticks simulated again, one more to come back), timing the load, the
//! first tick after it and the whole rollback, and saves into a ring of
//! eight with the oldest dropped; and a second run of the same workload
//! that takes the lockstep hash in every tick (`rts-hash-every`), its ticks
//! between two halves of the steady ones (tick by tick alternation would
//! have each run evict the other's textures from the caches). Each figure
//! is over the round's median steady tick.
//!
//! `cargo run --release -p murk-benches --example rollback_cost [ROUNDS] [ROLLBACKS] [THREADS]`
//! (defaults 8 rounds of 12 rollbacks, 2 threads).

use murk_benches::ticks::{median, Change, RtsTicks};
use murk_core::SaveState;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

const FRAMES: usize = 8;

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(8);
    let rollbacks: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(12);
    let threads: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2);
    let backend = murk_cpu::CpuBackend::new(threads).expect("a pool");
    let mut t = RtsTicks::new(Box::new(backend), Change::Walkers);
    let mut hashing = RtsTicks::new(Box::new(murk_cpu::CpuBackend::new(threads).expect("a pool")), Change::HashEvery);
    let mut ring: VecDeque<(u32, SaveState)> = VecDeque::new();
    // A tick, then its state saved into the ring, the oldest dropped:
    // (tick, save with drop).
    let forward = |t: &mut RtsTicks, ring: &mut VecDeque<(u32, SaveState)>| {
        let started = Instant::now();
        t.step();
        let ticked = started.elapsed();
        let started = Instant::now();
        ring.push_back((t.ticks(), t.fog.save_state(&t.world).expect("save")));
        if ring.len() > FRAMES + 1 {
            drop(ring.pop_front());
        }
        (ticked, started.elapsed())
    };
    for _ in 0..=FRAMES {
        forward(&mut t, &mut ring);
    }
    println!("{rounds} rounds, {rollbacks} rollbacks of {FRAMES} frames each, {threads} threads, rts (a tenth of 1000 units walking)");
    println!("round  steady tick   load   first tick after it   rollback of 8   save with drop   tick while saving   hash every tick   (x steady)");
    let mut firsts = Vec::new();
    let mut totals = Vec::new();
    let mut hashes = Vec::new();
    for round in 1..=rounds {
        // Steady ticks on the same run, no state saved, around the ticks of
        // the run that hashes every tick.
        let timed = |t: &mut RtsTicks, n: usize| -> Vec<Duration> {
            (0..n)
                .map(|_| {
                    let started = Instant::now();
                    t.step();
                    started.elapsed()
                })
                .collect()
        };
        let mut plain = timed(&mut t, 12);
        let hash_every = median(timed(&mut hashing, 24));
        plain.extend(timed(&mut t, 12));
        let steady = median(plain);
        ring.clear();
        let (mut ticks_saving, mut saves) = (Vec::new(), Vec::new());
        for _ in 0..=FRAMES {
            forward(&mut t, &mut ring);
        }
        let (mut loads, mut first, mut whole) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rollbacks {
            let (at, state) = &ring[ring.len() - 1 - FRAMES];
            let started = Instant::now();
            t.rewind(state, *at);
            let loaded = started.elapsed();
            t.step();
            let after = started.elapsed() - loaded;
            for _ in 1..FRAMES - 1 {
                t.step();
            }
            whole.push(started.elapsed());
            loads.push(loaded);
            first.push(after);
            // One more tick and its save bring the run back to where it was.
            let (ticked, saved) = forward(&mut t, &mut ring);
            ticks_saving.push(ticked);
            saves.push(saved);
        }
        let (load, after, total) = (median(loads), median(first), median(whole));
        let (saving, save) = (median(ticks_saving), median(saves));
        println!(
            "{round:>5}  {:>8.0} us   {:>5.2}   {:>19.2}   {:>13.2}   {:>14.2}   {:>17.2}   {:>15.2}",
            steady.as_secs_f64() * 1e6,
            ratio(load, steady),
            ratio(after, steady),
            ratio(total, steady),
            ratio(save, steady),
            ratio(saving, steady),
            ratio(hash_every, steady),
        );
        firsts.push(ratio(after, steady));
        totals.push(ratio(total, steady));
        hashes.push(ratio(hash_every, steady));
    }
    let spread = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        format!("{:.2}x ({:.2}-{:.2})", v[v.len() / 2], v[0], v[v.len() - 1])
    };
    println!("median over rounds: first tick after a load {}, rollback of 8 {}, hash every tick {}", spread(firsts), spread(totals), spread(hashes));
}
