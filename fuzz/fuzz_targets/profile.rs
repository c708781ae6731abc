//! Profile files (JSON, RON, TOML): never a panic; an accepted profile creates an instance that ticks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| murk_conformance::fuzz::run("profile", data));
