//! Scenario parsing and a short run must never panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for format in ["json", "ron"] {
        let Ok(mut scenario) = Scenario::parse(text, format, "fuzz") else { continue };
        // Keep runs short and small: the point is input handling, not speed.
        scenario.ticks = scenario.ticks.min(3);
        if scenario.instances.iter().any(|i| i.resolution > 128) {
            continue;
        }
        let backend = Box::new(murk_cpu::CpuBackend::new(1).expect("pool"));
        if let Ok(mut runner) = ScenarioRunner::new(scenario, &ScenarioFiles::default(), backend) {
            while !runner.finished() {
                if runner.step().is_err() {
                    break;
                }
            }
        }
    }
});
