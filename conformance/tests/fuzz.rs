//! The fuzz targets (`murk_conformance::fuzz`) on stable, bounded in time:
//! every checked-in regression input, every seed, then a seeded random run
//! of mutations per target.
//!
//! `MURK_FUZZ_SECONDS` (default 3) is the random run's time per target and
//! `MURK_FUZZ_SEED` (default 14) its seed; `.ci/run` runs longer. An input
//! that panics is written to `target/fuzz-crashes/TARGET/HASH.bin` and the
//! test fails naming it: fix the bug, then move the file into
//! `conformance/fuzz/regressions/TARGET/`, where every later run replays it.

use murk_conformance::fuzz::{mutate, mutate_json, run, seeds, snapshot_regressions, Rng, TARGETS};

#[test]
fn every_target_has_seeds_and_a_test() {
    // The random run of a target mutates its seeds (the API target draws raw
    // bytes), and each target has a `fuzz_*` test below: this file's source
    // names every target in a `fuzz_target("...")` call.
    let this = include_str!("fuzz.rs");
    for target in TARGETS {
        assert!(matches!(target, "api" | "reveal") || !seeds(target, &repo()).is_empty(), "fuzz target `{target}` has no seed");
        assert!(this.contains(&format!("fuzz_target(\"{target}\")")), "fuzz target `{target}` has no test");
    }
}
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs one input; on a panic, saves it and returns where.
fn try_input(target: &str, data: &[u8]) -> Option<PathBuf> {
    // An abort (allocation failure, stack overflow) cannot be caught: with
    // MURK_FUZZ_TRACE set, each input is written first, to be found after one.
    if std::env::var_os("MURK_FUZZ_TRACE").is_some() {
        let _ = std::fs::write(repo().join("target").join(format!("fuzz-current-{target}.bin")), data);
    }
    if catch_unwind(AssertUnwindSafe(|| run(target, data))).is_ok() {
        return None;
    }
    let mut h = murk_core::fixed::Fnv64::default();
    h.write(data);
    let dir = repo().join("target").join("fuzz-crashes").join(target);
    let path = dir.join(format!("{:016x}.bin", h.finish()));
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(&path, data);
    Some(path)
}

fn regressions(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = repo().join("conformance").join("fuzz").join("regressions").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    files.retain(|p| p.is_file() && !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.')));
    files.sort();
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
}

fn fuzz_target(target: &str) {
    // Replaying one input: `MURK_FUZZ_TARGET=api MURK_FUZZ_FILE=/abs/path.bin
    // cargo test -p murk-conformance --test fuzz api` runs just that input,
    // unguarded, so that a panic shows its backtrace.
    if let (Ok(t), Ok(file)) = (std::env::var("MURK_FUZZ_TARGET"), std::env::var("MURK_FUZZ_FILE")) {
        if t == target {
            run(target, &std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}")));
        }
        return;
    }
    let mut crashes = Vec::new();
    for (path, data) in regressions(target) {
        if let Some(saved) = try_input(target, &data) {
            crashes.push(format!("regression {} (saved again as {})", path.display(), saved.display()));
        }
    }
    let seeds = seeds(target, &repo());
    for seed in &seeds {
        if let Some(saved) = try_input(target, seed) {
            crashes.push(format!("a seed, saved as {}", saved.display()));
        }
    }
    let budget = Duration::from_secs(env_u64("MURK_FUZZ_SECONDS", 3));
    let mut rng = Rng(env_u64("MURK_FUZZ_SEED", 14) ^ target.bytes().fold(0, |h, b| h * 31 + u64::from(b)));
    let started = Instant::now();
    let mut cases = 0u64;
    while started.elapsed() < budget && crashes.len() < 5 {
        let input = if matches!(target, "api" | "reveal") {
            let n = rng.below(300);
            rng.bytes(n)
        } else {
            let seed = &seeds[rng.below(seeds.len())];
            // Scenarios and profiles: half the time a structural mutation, so
            // that the checks behind the parser are reached.
            let structural = matches!(target, "scenario" | "profile") && rng.below(2) == 0;
            match structural.then(|| mutate_json(seed, &mut rng)).flatten() {
                Some(m) => m,
                None => mutate(seed, &mut rng),
            }
        };
        if let Some(saved) = try_input(target, &input) {
            crashes.push(format!("random case {cases}, saved as {}", saved.display()));
        }
        cases += 1;
    }
    eprintln!(
        "fuzz `{target}`: {} regressions, {} seeds, {cases} random cases in {:.1} s",
        regressions(target).len(),
        seeds.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(crashes.is_empty(), "fuzz target `{target}` panicked on:\n{}", crashes.join("\n"));
}

/// The snapshot target's regressions are in this build's format: each
/// decodes, framed as the target frames it, to a body that holds its bug.
/// (An input of an older body layout would stop at the decoder and test
/// nothing.) After a format change, `MURK_FUZZ_REMAKE=1` writes them anew
/// from [`snapshot_regressions`].
#[test]
fn snapshot_regressions_hold_their_bugs_in_this_format() {
    let dir = repo().join("conformance").join("fuzz").join("regressions").join("snapshot");
    let made = snapshot_regressions();
    if std::env::var_os("MURK_FUZZ_REMAKE").is_some() {
        for (name, bytes) in &made {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
    for (name, _) in &made {
        let held = std::fs::read(dir.join(name)).unwrap();
        let version = u32::from_le_bytes(held[8..12].try_into().unwrap());
        assert_eq!(version, murk_core::snapshot::VERSION, "{name}: format {version}; remake it with MURK_FUZZ_REMAKE=1");
        let framed = murk_core::snapshot::frame(murk_core::snapshot::FOG_MAGIC, &held[28..held.len() - 8]);
        let body = murk_core::FogBody::decode(&framed).unwrap_or_else(|e| panic!("{name} does not decode ({e}); remake it with MURK_FUZZ_REMAKE=1"));
        let holds = match *name {
            "ghost-id-in-the-billions.bin" => body.stealth.iter().any(|s| s.state.ghost.is_some_and(|g| g.id() == 3_000_000_000)),
            "texture-byte-count-overflow.bin" => body.instances.iter().flat_map(|i| &i.textures).any(|t| (t.width, t.height) == (u32::MAX, u32::MAX)),
            other => panic!("no check for regression {other}"),
        };
        assert!(holds, "{name} no longer holds its bug");
    }
}

#[test]
fn fuzz_snapshot_restore() {
    fuzz_target("snapshot");
}

#[test]
fn fuzz_memory_import() {
    fuzz_target("memory");
}

#[test]
fn fuzz_profile_files() {
    fuzz_target("profile");
}

#[test]
fn fuzz_scenario_files() {
    fuzz_target("scenario");
}

#[test]
fn fuzz_api_sequences() {
    fuzz_target("api");
}

#[test]
fn fuzz_map_files() {
    fuzz_target("map");
}

#[test]
fn fuzz_reveal_sequences() {
    fuzz_target("reveal");
}
