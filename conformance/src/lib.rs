//! # murk-conformance
//!
//! The referee every backend answers to: shared workloads (the scenes the
//! benches time) and the harness that runs scenario files on a backend and
//! compares every pass.

pub mod workloads;
