//! What a radar layer costs an `rts-steady` tick, measured so that the
//! machine's drift cancels: each round runs its `rts-steady` ticks (every
//! tenth unit walking) and then as many `rts-radar` ticks (the same, with
//! a radar source beside every unit, 20 radar jammers and a radar instance
//! of sensor layer 1 at a quarter of the resolution that sees through
//! walls), as many `rts-radar-snapped` ticks (the same radar with its
//! sources on its texels' centres) and as many `rts-radar-sweep` ticks
//! (the exact radar recomputing five times a second), and compares the
//! medians: a radar's cost is the difference over the steady tick.
//!
//! `cargo run --release -p murk-benches --example layers_cost [ROUNDS] [TICKS]`
//! (defaults 12 rounds of 40 ticks per row).

use murk_benches::ticks::{Change, RtsTicks};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn row(t: &mut RtsTicks, ticks: usize) -> Duration {
    median(
        (0..ticks)
            .map(|_| {
                let started = Instant::now();
                t.step();
                started.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(12);
    let ticks: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(40);
    let cpu = || Box::new(murk_cpu::CpuBackend::new(2).expect("a pool"));
    let mut steady = RtsTicks::new(cpu(), Change::Walkers);
    let mut rows = [Change::Radar, Change::RadarSnapped, Change::RadarSweep].map(|c| (c, RtsTicks::new(cpu(), c), Vec::new()));
    println!("{rounds} rounds of {ticks} ticks per row, 2 threads");
    print!("round  steady tick");
    for (c, _, _) in &rows {
        print!("  {:>17}  share", c.label());
    }
    println!();
    for round in 1..=rounds {
        let plain = row(&mut steady, ticks);
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        print!("{round:5}  {:8.0} us", us(plain));
        for (_, t, shares) in &mut rows {
            let with = row(t, ticks);
            let share = (with.as_secs_f64() - plain.as_secs_f64()) / plain.as_secs_f64();
            shares.push(share);
            print!("  {:14.0} us  {share:+7.3}", us(with));
        }
        println!();
    }
    for (c, _, mut v) in rows {
        v.sort_by(f64::total_cmp);
        println!("{}: median {:+.3} of a steady tick (from {:+.3} to {:+.3})", c.label(), v[v.len() / 2], v[0], v[v.len() - 1]);
    }
}
