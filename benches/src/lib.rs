//! # murk-benches
//!
//! Criterion benches of murk's backends; the workloads come from
//! `murk_conformance::workloads`, so what is timed is what is tested.
