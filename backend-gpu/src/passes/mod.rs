//! The Rust setup of each pass: buffers bound, dispatches recorded. Each
//! file is the twin of `shaders/<pass>.wgsl` and of
//! `backend-cpu/src/passes/<pass>.rs`.

pub mod blend;
pub mod blur;
pub mod compose;
pub mod distance_field;
pub mod memory;
pub mod mips;
pub mod rasterize;
pub mod upscale;
pub mod visibility;
