//! What tick rows cost over an `rts-steady` tick, measured so that the
//! machine's drift cancels: each round runs its `rts-steady` ticks (every
//! tenth unit walking) and then as many ticks of each row asked, and
//! compares the medians: a row's share is its difference over the steady
//! tick of the same round. Useful pairs: `rts-radar`, `rts-radar-snapped`
//! and `rts-radar-sweep` (what a radar layer costs), `rts-4teams` (four
//! team instances of 250 sources against one of all 1000), `rts-march`.
//!
//! `cargo run --release -p murk-benches --example paired [ROUNDS] [TICKS] ROW...`
//! (defaults 12 rounds of 40 ticks per row; rows by their bench names).

use murk_benches::ticks::{median_tick, Change, RtsTicks};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(12);
    let ticks: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(40);
    let names: Vec<&String> = args.iter().skip(2).collect();
    if rounds == 0 || ticks == 0 {
        eprintln!("rounds and ticks must be at least 1");
        std::process::exit(2);
    }
    if names.is_empty() {
        let all: Vec<&str> = Change::ALL.iter().map(|c| c.label()).collect();
        eprintln!("name the rows to pair with rts-steady: {}", all.join(", "));
        std::process::exit(2);
    }
    let cpu = || Box::new(murk_cpu::CpuBackend::new(2).expect("a pool"));
    let mut rows = Vec::new();
    for name in names {
        let Some(change) = Change::named(name) else {
            eprintln!("no row is named {name}");
            std::process::exit(2);
        };
        rows.push((change, RtsTicks::new(cpu(), change), Vec::new()));
    }
    let mut steady = RtsTicks::new(cpu(), Change::Walkers);
    println!("{rounds} rounds of {ticks} ticks per row, 2 threads");
    print!("round  steady tick");
    for (c, _, _) in &rows {
        print!("  {:>18}  share", c.label());
    }
    println!();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    for round in 1..=rounds {
        let plain = median_tick(&mut steady, ticks);
        print!("{round:5}  {:8.0} us", us(plain));
        for (_, t, shares) in &mut rows {
            let with = median_tick(t, ticks);
            let share = (with.as_secs_f64() - plain.as_secs_f64()) / plain.as_secs_f64();
            shares.push(share);
            print!("  {:15.0} us  {share:+7.3}", us(with));
        }
        println!();
    }
    for (c, _, mut v) in rows {
        v.sort_by(f64::total_cmp);
        println!("{}: median {:+.3} of a steady tick (from {:+.3} to {:+.3})", c.label(), v[v.len() / 2], v[0], v[v.len() - 1]);
    }
}
