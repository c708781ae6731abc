//! The snapshot format is pinned: the fog snapshots of four corpus cases
//! (the coverage pyramid, a distance field at scale 2, a height capture,
//! overlapping instances), taken at the end of each run, hash to the values
//! below (format 5). A change of the bytes fails here; it must come with a new
//! `murk_core::snapshot::VERSION` and new values.

use murk_core::fixed::Fnv64;
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use std::path::Path;

fn fog_snapshot_hash(case: &str) -> u64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases").join(case);
    let scenario = Scenario::load(&path).unwrap();
    let files = ScenarioFiles::load(&scenario, path.parent().unwrap()).unwrap();
    let mut runner = ScenarioRunner::new(scenario, &files, Box::new(murk_cpu::CpuBackend::new(2).unwrap())).unwrap();
    while !runner.finished() {
        runner.step().unwrap();
    }
    let world = std::mem::take(runner.world());
    let bytes = runner.fog().snapshot(&world).unwrap();
    let mut h = Fnv64::default();
    h.write(&bytes);
    h.finish()
}

#[test]
fn fog_snapshots_keep_their_bytes() {
    let got: Vec<(&str, String)> =
        ["method-hierarchical-dda-heights.json", "method-distance-field-scale2.json", "dirty-capture-again.json", "instances-overlapping.json"]
            .into_iter()
            .map(|case| (case, format!("{:016x}", fog_snapshot_hash(case))))
            .collect();
    let want = ["a8ffe92a262521d9", "231da0e98a3dd208", "983bddd0345ffe8f", "60cf687202dc1f77"];
    assert_eq!(got.iter().map(|(_, h)| h.as_str()).collect::<Vec<_>>(), want, "{got:?}");
}
