//! The passes of the pipeline (see `docs/determinism.md`), one file each;
//! every file names its GPU twin. `lanes` holds what the `wide` kernels share.

pub mod blend;
pub mod blur;
pub mod compose;
pub mod dirty;
pub mod distance_field;
pub mod footprints;
pub mod lanes;
pub mod memory;
pub mod mips;
pub mod pieces;
pub mod rasterize;
pub mod settle;
pub mod upscale;
pub mod visibility;
