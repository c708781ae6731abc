//! The CPU backend's own behaviour: its thread count changes no hash, and
//! core's parallel work runs on its pool (the typed-error contract runs per
//! backend in the conformance harness: `robustness::unknown_keys_and_tickets_are_typed_errors`).

use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner, TickRecord};
use murk_core::Backend;
use murk_cpu::CpuBackend;
use std::path::PathBuf;

fn run(threads: usize) -> Vec<TickRecord> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/infiltration.json");
    let s = Scenario::load(&path).unwrap();
    let files = ScenarioFiles::load(&s, path.parent().unwrap()).unwrap();
    let mut r = ScenarioRunner::new(s, &files, Box::new(CpuBackend::new(threads).unwrap())).unwrap();
    let mut out = Vec::new();
    while !r.finished() {
        out.push(r.step().unwrap());
    }
    out
}

#[test]
fn lockstep_hashes_agree_across_thread_counts() {
    let a = run(1);
    assert_eq!(a, run(4));
    assert!(a.windows(2).any(|w| w[0].lockstep != w[1].lockstep), "the hash follows the state");
}

#[test]
fn core_parallel_work_runs_on_the_backend_pool() {
    // The capture resample runs inside `run_parallel`: on the backend's
    // threads, whose count then holds for the whole tick.
    let cpu = CpuBackend::new(1).unwrap();
    let mut name = None;
    cpu.run_parallel(&mut || name = std::thread::current().name().map(str::to_owned));
    assert_eq!(name.as_deref(), Some("murk-cpu-0"));
}

/// Footprints come back one value each; a texel outside the grid or ends
/// that do not cover the texels are named.
#[test]
fn footprints_are_one_value_each_and_bad_ones_are_named() {
    use murk_core::{FootprintList, FootprintRequest, InstanceDims};
    use std::sync::Arc;
    let mut b = CpuBackend::new(2).unwrap();
    b.create_instance(1, InstanceDims { width: 32, height: 32, out_width: 32, out_height: 32 }).unwrap();
    let request =
        |texels: Vec<[u32; 2]>, ends: Vec<u32>| FootprintRequest { key: 1, cutoff: 1, footprints: Arc::new(FootprintList { texels, ends }) };
    let good = request(vec![[0, 0], [1, 0], [5, 5], [31, 31]], vec![2, 3, 4]);
    let ticket = b.submit_footprints(std::slice::from_ref(&good)).unwrap();
    // A blank mask: nothing reaches the cutoff 1.
    assert_eq!(b.poll_samples(ticket, false).unwrap(), Some(vec![0, 0, 0]));
    for (bad, needle) in [
        (request(vec![[0, 0], [32, 3]], vec![2]), "(32, 3)"),
        (request(vec![[0, 0], [1, 1]], vec![1]), "footprints.ends"),
        (request(vec![[0, 0], [1, 1]], vec![2, 1]), "footprints.ends"),
    ] {
        let e = b.submit_footprints(&[good.clone(), bad]).unwrap_err().to_string();
        assert!(e.contains(needle), "`{e}` should name `{needle}`");
    }
}
