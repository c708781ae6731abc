//! Scripted reveal and hide sequences on the seed world: an error changes nothing, an accepted state round-trips through a snapshot.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| murk_conformance::fuzz::run("reveal", data));
