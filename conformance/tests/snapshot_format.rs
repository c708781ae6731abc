//! The snapshot format is pinned: the bodies of the fog snapshots of four
//! corpus cases (the coverage pyramid, a distance field at scale 2, a height
//! capture, overlapping instances), taken at the end of each run, hash to
//! the values below (format 5). A change of the bytes fails here; it must
//! come with a new `murk_core::snapshot::VERSION` and new values. The body
//! is pinned rather than the container: the compressor may pack the same
//! body otherwise in another release, which any reader still decodes.
//! (Checked when format 5 came: each body is the format-4 body of the same
//! run, whose container hashed to 03dce2cf.., e36ec4a9.., d0913316.. and
//! d74cd129.., followed by the empty list of per-tick hashes.)

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
    let body = murk_core::snapshot::unframe(murk_core::snapshot::FOG_MAGIC, &bytes).unwrap();
    let mut h = Fnv64::default();
    h.write(&body);
    h.finish()
}

#[test]
fn fog_snapshots_keep_their_bytes() {
    let got: Vec<(&str, String)> =
        ["method-hierarchical-dda-heights.json", "method-distance-field-scale2.json", "dirty-capture-again.json", "instances-overlapping.json"]
            .into_iter()
            .map(|case| (case, format!("{:016x}", fog_snapshot_hash(case))))
            .collect();
    let want = ["18d9f5ebc0ed1a78", "87610d13c00a6bb8", "b684ef4697016329", "c6f905ad6bdad875"];
    assert_eq!(got.iter().map(|(_, h)| h.as_str()).collect::<Vec<_>>(), want, "{got:?}");
}
