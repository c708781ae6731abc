//! Every backend answers to the same tests: the corpus case by case against
//! the goldens, and the behaviour suites, each as a trial named by its
//! variant (`[cpu-1] blur-none`, `[cpu-3] rules::teams_filter_sources`,
//! `[gpu:<adapter>] ...`).
//!
//! The GPU trials carry the ignored flag, like every GPU test of the
//! workspace: `cargo test` reports them as ignored, and
//! `cargo test -- --ignored` runs them on the first adapter. Without an
//! adapter they fail when run, never pass; with `MURK_REQUIRE_GPU=1` a
//! missing adapter is also a failing trial of the plain run (CI sets it).

mod areas;
mod detection;
mod explored;
mod gameplay;
mod judged;
mod layers;
mod lines;
mod metamorphic;
mod observers;
mod pipeline;
mod properties;
mod reveals;
mod robustness;
mod rules;
mod sight;
mod snapshots;

use libtest_mimic::{Arguments, Failed, Trial};
use murk_conformance::harness::{case_files, case_name, check_case, cpu_variants, load_manifest, variant, Variant};
use murk_core::{Backend, BackendChoice};
use std::sync::Arc;

/// Makes a fresh backend of the variant under test.
pub type Make = dyn Fn() -> Box<dyn Backend>;

/// A behaviour test, by name.
pub type Test = (&'static str, fn(&Make));

/// The suites, by module name.
const SUITES: &[(&str, &[Test])] = &[
    ("pipeline", pipeline::TESTS),
    ("rules", rules::TESTS),
    ("areas", areas::TESTS),
    ("gameplay", gameplay::TESTS),
    ("snapshots", snapshots::TESTS),
    ("metamorphic", metamorphic::TESTS),
    ("observers", observers::TESTS),
    ("properties", properties::TESTS),
    ("reveals", reveals::TESTS),
    ("robustness", robustness::TESTS),
    ("sight", sight::TESTS),
    ("judged", judged::TESTS),
    ("lines", lines::TESTS),
    ("explored", explored::TESTS),
    ("detection", detection::TESTS),
    ("layers", layers::TESTS),
];

/// The trials of one variant: every corpus case, then every suite test.
fn trials(label: &str, variant: Option<Arc<Variant>>, why_not: &str, ignored: bool) -> Vec<Trial> {
    let manifest = Arc::new(load_manifest());
    let mut out = Vec::new();
    for case in case_files() {
        let (variant, manifest, why_not) = (variant.clone(), manifest.clone(), why_not.to_string());
        out.push(
            Trial::test(format!("[{label}] {}", case_name(&case)), move || {
                let variant = variant.ok_or_else(|| Failed::from(why_not))?;
                let manifest = manifest.as_ref().as_ref().map_err(|e| Failed::from(e.to_string()))?;
                check_case(&case, &variant, manifest).map_err(|e| Failed::from(e.to_string()))
            })
            .with_ignored_flag(ignored),
        );
    }
    for (suite, tests) in SUITES {
        for &(name, test) in *tests {
            let full = format!("{suite}::{name}");
            let (variant, why_not) = (variant.clone(), why_not.to_string());
            out.push(
                Trial::test(format!("[{label}] {full}"), move || {
                    let variant = variant.ok_or_else(|| Failed::from(why_not))?;
                    test(&*variant.make);
                    Ok(())
                })
                .with_ignored_flag(ignored),
            );
        }
    }
    out
}

fn main() {
    let args = Arguments::from_args();
    let mut all = Vec::new();
    for cpu in cpu_variants().expect("the CPU reference opens") {
        let label = cpu.name.clone();
        all.extend(trials(&label, Some(Arc::new(cpu)), "", false));
    }
    // Open a device only when GPU trials will run (or must).
    let require = std::env::var("MURK_REQUIRE_GPU").is_ok_and(|v| v == "1");
    if args.ignored || args.include_ignored || require {
        match variant(BackendChoice::Gpu, 1) {
            Ok(gpu) => {
                let label = gpu.name.clone();
                all.extend(trials(&label, Some(Arc::new(gpu)), "", true));
            }
            Err(e) => {
                let why = e.to_string();
                all.extend(trials("gpu", None, &why, true));
                if require {
                    all.push(Trial::test("[gpu] an adapter is present (MURK_REQUIRE_GPU=1)", move || Err(Failed::from(why))));
                }
            }
        }
    } else {
        all.extend(trials("gpu", None, "not run: GPU trials run with `cargo test -- --ignored`", true));
    }
    libtest_mimic::run(&args, all).exit();
}
