//! The time of a demo tick on the CPU backend: `assets/demo.json` ticked
//! as a browser page ticks it (every tick hashed and handed over two ticks
//! later, nothing read back), the native figure that `docs/npm.md` sets
//! beside the npm package's tick in a browser.
//!
//! `cargo run --release -p murk-cpu --example demo_ticks [THREADS] [ROUNDS]`
//! (one thread and five rounds by default): each round runs the whole demo
//! on a new runner and prints its mean and first tick.

use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), murk_core::MurkError> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let threads = args.next().transpose().ok().flatten().unwrap_or(1);
    let rounds = args.next().transpose().ok().flatten().unwrap_or(5);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/demo.json");
    let scenario = Scenario::load(&path)?;
    let files = ScenarioFiles::load(&scenario, path.parent().unwrap_or(Path::new(".")))?;
    for round in 0..rounds {
        let mut runner = ScenarioRunner::new(scenario.clone(), &files, Box::new(murk_cpu::CpuBackend::new(threads)?))?;
        runner.fog().set_hash_every_tick(true);
        let mut ms = Vec::with_capacity(scenario.ticks as usize);
        for _ in 0..scenario.ticks {
            let started = Instant::now();
            runner.advance()?;
            ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        let mean = ms.iter().sum::<f64>() / ms.len() as f64;
        println!("round {round}: {mean:.3} ms a tick over {} ticks on {threads} thread(s), the first {:.2} ms", ms.len(), ms[0]);
    }
    Ok(())
}
