//! What the tests of the C programs share: finding the library this test
//! build made, compiling a C program against it with the system compiler,
//! and the demo's hashes from the Rust scenario runner.

use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The folder holding the shared library this test build made: beside
/// the test executable (`target/<profile>/deps`), where cargo writes the
/// library's `cdylib` when it builds the crate for its tests, else one up.
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its executable");
    let deps = exe.parent().expect("the executable is in a folder").to_path_buf();
    let name = format!("{}murk_ffi{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    [deps.clone(), deps.join("..")]
        .into_iter()
        .find(|d| d.join(&name).is_file())
        .unwrap_or_else(|| panic!("{name} is neither in {} nor in its parent: cargo builds it with the crate", deps.display()))
}

/// Compiles `ffi/<source>` with the system compiler (C11 with `$CC`, else
/// `cc`; C++17 with `$CXX`, else `c++`, for a `.cpp` file) against
/// `include/murk.h` and the shared library, warnings as errors and without
/// floating-point contraction, into an executable named after it and `tag`
/// (tests that run at once compile the same program under different
/// tags); the executable's path.
pub fn compile(source: &str, tag: &str) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stem = Path::new(source).file_stem().and_then(|s| s.to_str()).expect("a file name");
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("murk-ffi-{stem}-{tag}"));
    let lib = library_dir();
    let (compiler, standard) = if source.ends_with(".cpp") {
        (std::env::var("CXX").unwrap_or_else(|_| "c++".to_string()), "-std=c++17")
    } else {
        (std::env::var("CC").unwrap_or_else(|_| "cc".to_string()), "-std=c11")
    };
    let out = Command::new(&compiler)
        .args([standard, "-pedantic", "-g", "-O1", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join(source))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg("-lmurk_ffi")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lm", "-lpthread", "-ldl"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}`: {e}"));
    assert!(out.status.success(), "{compiler} failed on {source}:\n{}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Runs a program from the repository's root; its output. The library
/// path cargo sets for tests is removed: it names `target/<profile>` too,
/// where a library of another build may lie, and it would win over the
/// run path the program was linked with.
pub fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(repo())
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("DYLD_LIBRARY_PATH")
        .env_remove("DYLD_FALLBACK_LIBRARY_PATH")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

/// Everything a run printed, for failure messages.
pub fn printed(out: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The runner of `assets/demo.json` on the CPU backend, before tick 0.
pub fn demo_runner() -> ScenarioRunner {
    let path = repo().join("assets/demo.json");
    let scenario = Scenario::load(&path).expect("assets/demo.json loads");
    let files = ScenarioFiles::load(&scenario, &repo().join("assets")).expect("the demo's map loads");
    let backend = murk_cpu::CpuBackend::new(2).expect("the CPU backend opens");
    ScenarioRunner::new(scenario, &files, Box::new(backend)).expect("the demo is valid")
}

/// The lockstep hash after each of the demo's ticks, from the Rust
/// scenario runner (what `murk run assets/demo.json` writes in
/// `summary.json`), as 16 hex digits.
pub fn runner_hashes() -> Vec<String> {
    let mut runner = demo_runner();
    let ticks = runner.scenario().ticks;
    (0..ticks).map(|_| runner.step().expect("the demo runs").lockstep).collect()
}

/// The hashes the C demo printed (`tick N HASH` lines), checked to be
/// numbered 0, 1, 2, ...
pub fn printed_hashes(out: &Output) -> Vec<String> {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let mut parts = line.split_whitespace();
            assert_eq!((parts.next(), parts.next()), (Some("tick"), Some(i.to_string().as_str())), "line {i}: `{line}`");
            parts.next().unwrap_or_else(|| panic!("line {i} has no hash: `{line}`")).to_string()
        })
        .collect()
}
