//! Sequences of API calls: no panic, and every rejected call changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| murk_conformance::fuzz::run("api", data));
