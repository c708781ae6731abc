//! Moving AI map parsing never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| murk_conformance::fuzz::run("map", data));
