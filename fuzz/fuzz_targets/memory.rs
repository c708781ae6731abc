//! Explored-memory import (checksums fixed up so the body is parsed): an error changes nothing, an accepted blob runs on.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| murk_conformance::fuzz::run("memory", data));
