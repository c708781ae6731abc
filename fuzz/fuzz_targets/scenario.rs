//! Scenario files: parsing, validation and the first ticks never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| murk_conformance::fuzz::run("scenario", data));
