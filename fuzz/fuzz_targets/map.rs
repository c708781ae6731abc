//! Moving AI map parsing must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = murk_core::movingai::MovingAiMap::parse(text, "fuzz");
    }
});
