//! The snapshot format is pinned: the bodies of the fog snapshots of five
//! corpus cases (the coverage pyramid, a distance field at scale 2, a height
//! capture, overlapping instances, bought maps partly hidden), taken at the
//! end of each run, hash to the values below (format 14). A change of the bytes fails here; it must
//! come with a new `murk_core::snapshot::VERSION` and new values. The body
//! is pinned rather than the container: the compressor may pack the same
//! body otherwise in another release, which any reader still decodes.
//! (Format 5 hashed the first four to 18d9f5eb.., 87610d13.., b684ef46..
//! and c6f905ad..; format 6 adds the mapped texture, the reveals, the
//! signature of the last reveal layer and the next reveal id, the
//! profile's mapped share, and the sight sets, tracked entities and
//! footprint samples in flight. The third value was b55b6b0b.. until a
//! recapture whose heights came out the same stopped rebuilding the
//! occlusion: the body's build counter moved, not its layout. Format 7
//! adds the profile's `eye_offset` and `see_through`; format 6 hashed the
//! five to 0a089f5b.., 285d451f.., 3f18a01b.., 534f221a.. and f8a7157d...
//! Format 8 keeps 7's layout; the source and blocker hashes of the instance
//! states became word folds (`murk_core::hash::WordFold`) instead of
//! FNV-1a; format 7 hashed the five to 66d2b97c.., 8d9dd5aa.., 8dcc1c9d..,
//! edeac954.. and 04867e04... Format 9 keeps the layout again; the blocker
//! hash became the finished sum of one word fold per shape; format 8 hashed
//! the five to be0a8364.., 36df2d9b.., 84c8c7fa.., 49887c2a.. and 586b07c7...
//! Format 10 changes only the explored-memory blob, which names its
//! instance; fog snapshot bodies are 9's, so the values stay. Format 11
//! writes the subsystem's live types: an instance's state holds its flags
//! in flight, its reveals and their signature; stealth states, stealth
//! batches and per-tick hashes in flight are written as they are held;
//! footprint batches hold groups, not samples; format 10 hashed the five to
//! 8004a4c4.., f73d6372.., 65a9914a.., 0885309b.. and 07851aaa... Format 12
//! writes team masks in 64 bits (an instance observing every team writes
//! a longer varint) and a profile's `eyes_on_terrain`; format 11 hashed the
//! five to 91708219.., 66ff60b4.., 23e00598.., 5280b5a6.. and 33630af5...
//! Format 13 names the kind of a pending query's answers, carries the
//! detection of cloaked actors in stealth samples and batches, and a
//! profile's sensor `layer`, `blip_error` and `domains`; format 12 hashed the five to
//! d14735f7.., a10f053a.., b6d1802f.., d25eb2b3.. and 9fc9f428...
//! Format 14 adds a profile's `snap_sources`; format 13 hashed the five
//! to 301189a1.., 76a44db6.., ecf07193.., 2b604a2d.. and 1aefdb9d...)

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
    let got: Vec<(&str, String)> = [
        "method-hierarchical-dda-heights.json",
        "method-distance-field-scale2.json",
        "dirty-capture-again.json",
        "instances-overlapping.json",
        "reveal-map-hide.json",
    ]
    .into_iter()
    .map(|case| (case, format!("{:016x}", fog_snapshot_hash(case))))
    .collect();
    let want = ["e3e475e2d36e400f", "4ef940184c935328", "1e447e460e5732e8", "1c2ec94c8cc8b0aa", "2093db3b7f53ad68"];
    assert_eq!(got.iter().map(|(_, h)| h.as_str()).collect::<Vec<_>>(), want, "{got:?}");
}
