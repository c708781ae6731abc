//! Pass 1, rasterize: blockers and the height capture -> coverage + height.
//! The rule lives in core ([`murk_core::raster`]), where scripted reveals use
//! it too. Twin: `backend-gpu/shaders/rasterize.wgsl`.

pub use murk_core::raster::{centre_q, polygon_contains, rasterize, rasterize_row, rasterize_span};
