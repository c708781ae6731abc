//! murk-bevy's integration tests, in one binary so that Bevy is linked once.

mod app;
mod render;
#[cfg(feature = "replicon")]
mod replication;
mod transforms;
