//! What the sight sets cost a tick, measured so that the machine's drift
//! cancels: rounds of `rts-steady` ticks (one instance, every tenth unit
//! walking), `rts-observed` ticks (four team instances) and `rts-tracked`
//! ticks (the same with every unit tracked) run one after the other in one
//! process, and each round's medians are compared with each other. The
//! sight steps are timed inside the tracked ticks (murk-core's `timers`
//! feature): what the tick waited for them (the tail of the footprint
//! gathering, which runs beside the gathering of the instances' inputs,
//! and the update of the sets while the footprints are judged) and their
//! own time wherever they ran, each over the round's steady tick. The
//! tracked less the observed median is the same cost seen from outside
//! (its noise is a tracked tick's, several times the steady tick's).
//! On a shared machine the tick's time drifts by tens of percent from one
//! second to the next; within a round of a few hundred milliseconds it
//! moves far less.
//!
//! `cargo run --release -p murk-benches --example sight_cost [ROUNDS] [TICKS]`
//! (defaults 12 rounds of 40 ticks per row; `still` as a third argument
//! keeps every unit standing).

use murk_benches::ticks::{median, Change, RtsTicks};
use murk_core::Backend;
use std::time::{Duration, Instant};

fn cpu(threads: usize) -> Box<dyn Backend> {
    Box::new(murk_cpu::CpuBackend::new(threads).expect("a pool"))
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(12);
    let ticks: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(40);
    let still = args.get(2).is_some_and(|a| a == "still");
    let (observed, tracked) = if still { (Change::ObservedStill, Change::TrackedStill) } else { (Change::Observed, Change::Tracked) };
    let mut steady = RtsTicks::new(cpu(2), Change::Walkers);
    let mut plain = RtsTicks::new(cpu(2), observed);
    let mut judged = RtsTicks::new(cpu(2), tracked);
    let timed = |t: &mut RtsTicks| {
        let started = Instant::now();
        t.step();
        started.elapsed()
    };
    println!("{} rounds of {ticks} ticks per row, 2 threads ({} units walking)", rounds, if still { "no" } else { "a tenth of the" });
    println!(
        "round  steady tick  added to the tick (wait + sets)  x steady   own time (gather + sets)  x steady   {} - {}",
        tracked.label(),
        observed.label()
    );
    let (mut ratios, mut own_ratios) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let steady_tick = median((0..ticks).map(|_| timed(&mut steady)).collect());
        let plain_tick = median((0..ticks).map(|_| timed(&mut plain)).collect());
        judged.fog.take_sight_times();
        let (mut added, mut own) = (Vec::with_capacity(ticks), Vec::with_capacity(ticks));
        let mut judged_ticks = Vec::with_capacity(ticks);
        let mut sum = murk_core::SightTimes::default();
        for _ in 0..ticks {
            judged_ticks.push(timed(&mut judged));
            let spent = judged.fog.take_sight_times();
            (sum.gather, sum.gather_wait, sum.update) = (sum.gather + spent.gather, sum.gather_wait + spent.gather_wait, sum.update + spent.update);
            added.push(spent.added());
            own.push(spent.total());
        }
        let (added, own, judged_tick) = (median(added), median(own), median(judged_ticks));
        let (ratio, own_ratio) = (added.as_secs_f64() / steady_tick.as_secs_f64(), own.as_secs_f64() / steady_tick.as_secs_f64());
        ratios.push(ratio);
        own_ratios.push(own_ratio);
        let per_tick = |d: Duration| micros(d) / ticks as f64;
        println!(
            "{round:5}  {:8.0} us  {:6.1} us ({:5.1} + {:5.1})        {ratio:7.3}   {:6.1} us ({:5.1} + {:5.1})  {own_ratio:7.3}   {:+7.0} us",
            micros(steady_tick),
            micros(added),
            per_tick(sum.gather_wait),
            per_tick(sum.update),
            micros(own),
            per_tick(sum.gather),
            per_tick(sum.update),
            micros(judged_tick) - micros(plain_tick)
        );
    }
    for (what, mut r) in [("added to the tick", ratios), ("own time", own_ratios)] {
        r.sort_by(f64::total_cmp);
        println!("sight steps, {what}, x steady tick: median {:.3}, range {:.3}..{:.3} over {rounds} rounds", r[r.len() / 2], r[0], r[r.len() - 1]);
    }
}
