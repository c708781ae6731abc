//! What a rollback game's memory does over many frames: `rts` (1024x1024,
//! 1000 sources, a tenth walking) with 20 000 tracked units (the sources
//! and 19 000 more), a stealth actor judged per observer in every fiftieth,
//! and each frame a save, a mask query left in flight, a tick and a load of
//! the state saved, as a rollback loop that mispredicted every frame would
//! run. The process's resident memory is printed every `STEP` cycles with
//! the growth per cycle since the first of them (cycle `STEP`: the
//! allocator and the caches settle before), and the readbacks the backend
//! holds. Linux only (`/proc/self/statm`).
//!
//! `cargo run --release -p murk-benches --example rollback_memory [CYCLES] [STEP]`
//! (defaults 10 000 cycles, printed every 1000).

use murk_benches::ticks::{Change, RtsTicks};
use murk_core::glam::Vec3;
use murk_core::{Position, StealthActor, Tracked, VisionSource};

/// Resident bytes of this process.
fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
    pages * 4096
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cycles: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let step: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000).max(1);
    let mut t = RtsTicks::new(Box::new(murk_cpu::CpuBackend::new(2).expect("a pool")), Change::Walkers);
    let sources: Vec<_> = t.world.query::<(murk_core::hecs::Entity, &VisionSource)>().iter().map(|(e, _)| e).collect();
    for e in sources {
        t.world.insert_one(e, Tracked::new(1.0)).expect("a source");
    }
    for i in 0..19_000u32 {
        let at = Vec3::new(8.5 + (i * 37 % 1000) as f32, 8.5 + (i * 53 % 1000) as f32, 0.0);
        let e = t.world.spawn((Position(at), Tracked::new(1.0)));
        if i % 50 == 0 {
            t.world.insert_one(e, StealthActor { per_observer: true, ..StealthActor::default() }).expect("a unit");
        }
    }
    let points = [Vec3::new(100.0, 100.0, 0.0), Vec3::new(600.0, 400.0, 0.0)];
    for _ in 0..8 {
        t.step();
    }
    println!("{cycles} cycles of save, query, tick, load; rts with 20 000 tracked units, 2 threads");
    println!("{:>7}  {:>10}  {:>22}  {:>14}", "cycle", "resident", format!("per cycle since {step}"), "readbacks held");
    println!("{:>7}  {:>7.1} MiB  {:>22}  {:>14}", 0, resident() as f64 / 1048576.0, "", t.fog.readbacks_held());
    // The allocator and the caches settle in the first cycles: the growth
    // is counted from the first print on (cycle `step`).
    let mut since: Option<(usize, u64)> = None;
    for cycle in 1..=cycles {
        let state = t.fog.save_state(&t.world).expect("save");
        t.fog.submit_mask_query(&points, None).expect("a query");
        t.step();
        t.fog.load_state(&mut t.world, &state).expect("load");
        if cycle % step == 0 {
            let now = resident();
            let (from, at) = *since.get_or_insert((cycle, now));
            let growth = if cycle > from { format!("{:.0} B/cycle", (now as f64 - at as f64) / (cycle - from) as f64) } else { String::new() };
            println!("{cycle:>7}  {:>7.1} MiB  {growth:>22}  {:>14}", now as f64 / 1048576.0, t.fog.readbacks_held());
        }
    }
}
