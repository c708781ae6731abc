//! murk under a real rollback client: a `ggrs` `SyncTestSession` rolls back
//! and simulates again every frame, comparing murk's lockstep hashes.

use murk_conformance::rollback::{sync_test, RollbackError, RollbackGame};
use murk_conformance::workloads;

fn cpu(threads: usize) -> Box<dyn murk_core::Backend> {
    Box::new(murk_cpu::CpuBackend::new(threads).unwrap())
}

#[test]
fn murk_passes_a_ggrs_sync_test_with_units_walking_and_buildings_placed() {
    for (threads, check_distance) in [(1, 2), (3, 7)] {
        let mut game = RollbackGame::new(workloads::small(), cpu(threads)).unwrap();
        let run = sync_test(&mut game, 40, check_distance, 128).unwrap_or_else(|e| panic!("{threads} threads: {e}"));
        assert_eq!(run.frames, 40);
        // The buildings placed are in the fog's occlusion: 16 were placed.
        let stats = game.fog().stats("small").unwrap();
        assert!(stats.occlusion_builds >= 16, "{stats:?}");
    }
}

/// The judge is not blind: a game whose rollback forgets to restore the
/// fog gives other checksums when it simulates frames again.
#[test]
fn the_sync_test_catches_a_rollback_that_forgets_the_fog() {
    let mut game = RollbackGame::new(workloads::small(), cpu(2)).unwrap().without_fog_restore();
    match sync_test(&mut game, 40, 2, 128) {
        Err(RollbackError::Session(ggrs::GgrsError::MismatchedChecksum { mismatched_frames, .. })) => assert!(!mismatched_frames.is_empty()),
        other => panic!("the broken rollback passed: {other:?}"),
    }
}

#[test]
fn murk_passes_a_ggrs_sync_test_at_rts_scale() {
    let mut game = RollbackGame::new(workloads::rts(), cpu(2)).unwrap();
    sync_test(&mut game, 6, 2, 896).unwrap();
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test rollback -- --ignored"]
fn murk_passes_a_ggrs_sync_test_on_the_gpu() {
    let gpu = murk_gpu::GpuBackend::new().unwrap_or_else(|e| panic!("the GPU test did not run: {e}"));
    let mut game = RollbackGame::new(workloads::small(), Box::new(gpu)).unwrap();
    sync_test(&mut game, 20, 2, 128).unwrap();
}
