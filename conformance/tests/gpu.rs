//! The whole corpus on the GPU backend, byte for byte against the goldens.
//!
//! These tests need a GPU adapter (CI uses Mesa's lavapipe), so they are
//! ignored by the plain `cargo test`, which reports them as ignored. Run them
//! with `cargo test -p murk-conformance --test gpu -- --ignored`; without an
//! adapter they fail, they never pass.

use murk_conformance::harness::{case_files, check_case, gpu_variant, load_manifest};

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn every_case_matches_its_goldens_on_the_gpu() {
    let (variant, adapter) = gpu_variant().unwrap_or_else(|e| panic!("the GPU conformance did not run: {e}"));
    eprintln!("GPU conformance on [{adapter}]");
    let manifest = load_manifest().unwrap();
    let mut failures = Vec::new();
    let cases = case_files();
    for case in &cases {
        if let Err(e) = check_case(case, &variant, &manifest) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ on [{adapter}]:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
