//! murk-bevy's integration tests, in one binary so that Bevy is linked once.

mod app;
mod render;
mod transforms;
