//! Fuzz targets as plain functions, shared by the stable test that runs in
//! CI (`tests/fuzz.rs`: the checked-in regressions, the seeds, then a short
//! seeded random run) and by the cargo-fuzz targets in `fuzz/` (nightly,
//! open-ended).
//!
//! Each target takes arbitrary bytes and must not panic. Beyond that, each
//! checks the house rule that a rejected input changes nothing: after every
//! error, the subsystem's lockstep hash, instance names, tick count and
//! counters are what they were before the call.
//!
//! One file per kind of input: `files.rs` (snapshots, memory blobs,
//! profiles, scenarios, maps), `calls.rs` (sequences of API calls and of
//! scripted reveals), with the world they start from and the inputs the
//! random run mutates in `seeds.rs`, the mutations in `mutate.rs`, and the
//! rule every target checks in `unchanged.rs`.

mod calls;
mod files;
mod mutate;
mod seeds;
mod unchanged;

pub use calls::{api, reveal};
pub use files::{map, memory, profile, scenario, snapshot};
pub use mutate::{mutate, mutate_json, Rng};
pub use seeds::{raw_container, raw_snapshot, seed_world, seeds, snapshot_regressions};

/// The targets, by name (the folder names under `fuzz/regressions/`).
pub const TARGETS: [&str; 7] = ["snapshot", "memory", "profile", "scenario", "api", "map", "reveal"];

/// Runs the target `name` on `data`.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "snapshot" => snapshot(data),
        "memory" => memory(data),
        "profile" => profile(data),
        "scenario" => scenario(data),
        "api" => api(data),
        "map" => map(data),
        "reveal" => reveal(data),
        other => panic!("no fuzz target `{other}`"),
    }
}
