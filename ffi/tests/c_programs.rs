//! The C programs, compiled with the system C compiler against
//! `include/murk.h` and the library this build made, and run:
//!
//! - `examples/demo.c` builds `assets/demo.json` through the C API and
//!   must print, tick by tick, the lockstep hashes the Rust scenario runner
//!   computes for the same file (on the CPU, and on the GPU where an
//!   adapter is); its snapshot restores in Rust;
//! - `tests/api.c` drives every call the way a game does and checks what
//!   comes back;
//! - `tests/bad_input.c` drives bad input through every call and checks
//!   each code and message, also under valgrind;
//! - `tests/header.cpp` includes the header from C++.

mod support;

use std::io::Write;
use support::{compile, demo_runner, printed, printed_hashes, run, runner_hashes};

fn demo_hashes(tag: &str, backend: &str, extra: &[&str]) -> Vec<String> {
    let demo = compile("examples/demo.c", tag);
    let mut args = vec!["assets/maps/lak303d.map", "--backend", backend];
    args.extend_from_slice(extra);
    let out = run(&demo, &args);
    assert!(out.status.success(), "the C demo failed on {backend}:\n{}", printed(&out));
    printed_hashes(&out)
}

fn assert_same_hashes(what: &str, got: &[String], want: &[String]) {
    assert_eq!(got.len(), want.len(), "{what}: {} ticks, the runner ran {}", got.len(), want.len());
    if let Some(tick) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!("{what}: the lockstep hash of tick {tick} is {}, the Rust runner's {}", got[tick], want[tick]);
    }
}

#[test]
fn the_c_demo_prints_the_hashes_of_the_rust_scenario_runner() {
    assert_same_hashes("C demo on the cpu", &demo_hashes("cpu", "cpu", &[]), &runner_hashes());
}

#[test]
fn a_snapshot_saved_through_the_c_api_restores_in_rust_and_continues_with_the_same_hashes() {
    let snapshot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("murk-ffi-demo-70.murk");
    let _ = std::fs::remove_file(&snapshot);
    let c = demo_hashes("snapshot", "cpu", &["--snapshot-at", "70", snapshot.to_str().expect("a UTF-8 path")]);
    let bytes = std::fs::read(&snapshot).expect("the C demo wrote its snapshot");
    let reference = runner_hashes();
    assert_same_hashes("C demo with a snapshot", &c, &reference);

    // A runner at tick 71 whose fog state went elsewhere (two more ticks
    // of the subsystem alone, and its memory forgotten), so that only the
    // restore can bring it back.
    let mut runner = demo_runner();
    for _ in 0..=70 {
        runner.step().expect("the demo runs");
    }
    let mut world = std::mem::take(runner.world());
    let fog = runner.fog();
    fog.hide_all(&murk_core::FogTarget::Instance("demo".into())).expect("the demo has its instance");
    for _ in 0..2 {
        fog.tick(&mut world, 33_333).expect("the subsystem ticks");
    }
    let astray = format!("{:016x}", fog.lockstep_hash().expect("the hash reads"));
    assert_ne!(astray, reference[70], "the fog state went elsewhere before the restore");
    fog.restore(&mut world, &bytes).expect("the C snapshot restores in Rust");
    assert_eq!(format!("{:016x}", fog.lockstep_hash().expect("the hash reads")), reference[70], "restored: tick 70's state");
    *runner.world() = world;
    let continued: Vec<String> = (71..reference.len()).map(|_| runner.step().expect("the demo continues").lockstep).collect();
    assert_same_hashes("Rust runner after the C snapshot", &continued, &reference[71..]);
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-ffi -- --ignored"]
fn the_c_demo_on_the_gpu_prints_the_cpus_hashes() {
    assert_same_hashes("C demo on the gpu", &demo_hashes("gpu", "gpu", &[]), &runner_hashes());
}

#[test]
fn the_header_compiles_and_links_as_cpp() {
    let program = compile("tests/header.cpp", "cpp");
    let out = run(&program, &[]);
    assert!(out.status.success(), "tests/header.cpp failed:\n{}", printed(&out));
}

#[test]
fn the_api_program_sees_what_a_game_expects() {
    let api = compile("tests/api.c", "plain");
    let out = run(&api, &[]);
    assert!(out.status.success(), "tests/api.c failed:\n{}", printed(&out));
}

#[test]
fn every_bad_input_is_an_error_code_with_a_message() {
    let bad = compile("tests/bad_input.c", "plain");
    let out = run(&bad, &[]);
    assert!(out.status.success(), "tests/bad_input.c failed:\n{}", printed(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("bad_input: every check passed"), "the program ran to its end:\n{}", printed(&out));
}

/// Writes a line past the test harness's capture, so that a skip shows
/// in `cargo test`'s output.
fn tell(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

#[test]
fn bad_input_is_clean_under_valgrind() {
    let found = std::process::Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os("MURK_REQUIRE_VALGRIND").is_none_or(|v| v != "1"), "MURK_REQUIRE_VALGRIND=1 but valgrind is not on PATH");
        tell("bad_input_is_clean_under_valgrind: skipped: valgrind not found (install it, or set MURK_REQUIRE_VALGRIND=1 to make this a failure)");
        return;
    }
    let bad = compile("tests/bad_input.c", "valgrind");
    let program = bad.to_str().expect("a UTF-8 path");
    let out = run(
        std::path::Path::new("valgrind"),
        &["--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite", program],
    );
    assert!(out.status.success(), "valgrind found errors (exit {:?}):\n{}", out.status.code(), printed(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("bad_input: every check passed"), "{}", printed(&out));
}
