//! murk inside a rollback client: `ggrs`'s `SyncTestSession` on a workload,
//! two players walking units and placing buildings, murk's lockstep hash as
//! the checksum of every frame. Prints the wall time per frame (a save, the
//! frame, and the rollback of `check-distance` frames simulated again).
//!
//! `cargo run --release -p murk-conformance --example rollback -- --workload rts --frames 60`

use clap::{Parser, ValueEnum};
use murk_conformance::rollback::{sync_test, RollbackGame};
use murk_conformance::workloads;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Scene {
    /// TheFrozenSea at 1024x1024, 1000 sources of radius 32.
    Rts,
    /// 256x256, 64 sources, 24 blockers.
    Small,
}

/// A ggrs sync test of murk.
#[derive(Parser)]
struct Args {
    /// The workload.
    #[arg(long, value_enum, default_value = "rts")]
    workload: Scene,
    /// Frames to advance.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    frames: u32,
    /// Frames rolled back and simulated again on every frame.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=16))]
    check_distance: u64,
    /// CPU worker threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let (w, span) = match args.workload {
        Scene::Rts => (workloads::rts(), 896),
        Scene::Small => (workloads::small(), 128),
    };
    let name = w.name;
    let mut game = RollbackGame::new(w, Box::new(murk_cpu::CpuBackend::new(args.threads as usize)?))?;
    let run = sync_test(&mut game, args.frames, args.check_distance as usize, span)?;
    println!(
        "{name}: {} frames in a ggrs SyncTestSession (check distance {}), every checksum matched; {:.1} ms per frame on the cpu with {} thread(s)",
        run.frames, args.check_distance, run.frame_ms, args.threads
    );
    Ok(())
}
