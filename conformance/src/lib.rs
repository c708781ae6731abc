//! # murk-conformance
//!
//! The referee every backend answers to: the scenario
//! corpus in `cases/`, the goldens in `goldens/` (written only by the CPU
//! reference through `murk-bless`), the harness that runs every case on a
//! backend variant and compares each pass exactly, the contact sheet, and the
//! workloads the benches share with the tests, a rollback game that a
//! `ggrs` sync test judges, and an independent judge of the sight sets.

pub mod error;
pub mod fuzz;
pub mod harness;
pub mod judge;
pub mod looks;
pub mod rollback;
pub mod scene;
pub mod sheet;
pub mod workloads;
