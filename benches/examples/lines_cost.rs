//! What a batch of 10 000 sight lines and the explored count cost beside
//! an `rts-steady` tick, measured so that the machine's drift cancels:
//! each round runs its steady ticks (every tenth unit walking, the
//! explored count asked after each and timed apart) and then as many
//! batches of the lines a game's targeting asks
//! (`murk_benches::ticks::rts_lines`: from each unit to ten points within
//! its sight radius), each batch answered now on the state the last tick
//! left, and compares the medians.
//!
//! `cargo run --release -p murk-benches --example lines_cost [ROUNDS] [TICKS]`
//! (defaults 12 rounds of 40 ticks and 40 batches).

use murk_benches::ticks::{median, rts_lines, Change, RtsTicks};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(12);
    let ticks: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(40);
    let mut t = RtsTicks::new(Box::new(murk_cpu::CpuBackend::new(2).expect("a pool")), Change::Walkers);
    let name = t.fog.instance_names().into_iter().next().expect("the rts instance");
    let lines = rts_lines(&t.world);
    let clear = t.fog.sight_lines_now(&name, &lines).expect("lines").iter().filter(|a| a.visible).count();
    println!("{rounds} rounds of {ticks} ticks and {ticks} batches, 2 threads; {clear} of {} lines clear", lines.len());
    println!("round  steady tick  10k lines  x steady   explored  x steady");
    let (mut ratios, mut explored_ratios) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let (mut tick_times, mut explored_times) = (Vec::with_capacity(ticks), Vec::with_capacity(ticks));
        for _ in 0..ticks {
            let started = Instant::now();
            t.step();
            let ticked = Instant::now();
            std::hint::black_box(t.fog.explored(&name).expect("explored"));
            explored_times.push(ticked.elapsed());
            tick_times.push(ticked - started);
        }
        let (tick, explored) = (median(tick_times), median(explored_times));
        let batch = median(
            (0..ticks)
                .map(|_| {
                    let started = Instant::now();
                    std::hint::black_box(t.fog.sight_lines_now(&name, &lines).expect("lines"));
                    started.elapsed()
                })
                .collect(),
        );
        let ratio = batch.as_secs_f64() / tick.as_secs_f64();
        let explored_ratio = explored.as_secs_f64() / tick.as_secs_f64();
        ratios.push(ratio);
        explored_ratios.push(explored_ratio);
        println!(
            "{round:5}  {:8.0} us  {:6.0} us  {ratio:7.3}   {:5.0} us  {explored_ratio:7.3}",
            tick.as_secs_f64() * 1e6,
            batch.as_secs_f64() * 1e6,
            explored.as_secs_f64() * 1e6
        );
    }
    for (what, mut r) in [("10k lines", ratios), ("explored", explored_ratios)] {
        r.sort_by(f64::total_cmp);
        println!("{what}: median x steady {:.3} (from {:.3} to {:.3})", r[r.len() / 2], r[0], r[r.len() - 1]);
    }
}
