//! # murk-looks
//!
//! Premade fog looks: what a game draws from a final mask. They live outside
//! `murk-core`, which stays the deterministic integer core.
//!
//! ```
//! use murk_looks::{Looks, MaskView, OverlayStyle};
//!
//! // A 2 x 1 final mask: never seen, visible.
//! let texels = [0u16, 65535];
//! let mask = MaskView { width: 2, height: 1, texels: &texels, explored: 0.5, mapped: 0.0 };
//! // The CPU reference of the looks (`murk-gpu` has the same on the GPU).
//! let layer = murk_cpu::looks::CpuLooks.overlay(&mask, None, 0.0, &OverlayStyle::default())?;
//! assert_eq!(layer.pixels.len(), (layer.width * layer.height * 4) as usize);
//! let alpha = |x: u32| layer.pixels[(x * 4 + 3) as usize];
//! assert!(alpha(0) > alpha(layer.width - 1), "the unseen side is covered more than the visible one");
//! # Ok::<(), murk_core::MurkError>(())
//! ```
//!
//! Three looks ([`Look`]), each computed by a backend through the [`Looks`]
//! trait (the CPU reference in `murk-cpu`, WGSL compute in `murk-gpu`):
//!
//! * **overlay** — the state overlay: clear where visible, a breathing
//!   tinted haze over explored ground, a map tint over mapped ground (known
//!   from a map, never seen), near-black where never seen
//!   ([`OverlayStyle`], an RGBA8 layer over the area).
//! * **surface** — the 3D fog surface: a heightfield sheet floating above the
//!   ground that sinks to the ground where the mask is explored
//!   ([`SurfaceParams`] in, a [`SurfaceGrid`] of vertex heights out; [`mesh`]
//!   turns it into chunks, levels of detail and glTF).
//! * **volume** — volumetric ground fog: a half-resolution march per pixel of
//!   a camera view, with the analytic height fog past the march
//!   ([`VolumeParams`], [`VolumeFrame`]).
//!
//! These are presentation: floats are fine here, CPU and GPU agree within the
//! tolerance each look states (see `docs/looks.md`), and gameplay never reads
//! them. The mask's world mapping is the one of [`ShaderParams`] (the same
//! transform `backend-gpu/include/murk_fog.wgsl` gives engines).
mod camera;
mod look;
mod looks;
mod mask;
pub mod mesh;
mod noise;
mod overlay;
mod surface;
mod volume;

pub use camera::{dot, normalize, Camera};
pub use look::Look;
pub use looks::Looks;
pub use mask::{fog_uv, MaskView};
pub use noise::{hash3, smoothstep, value_noise2, value_noise3};
pub use overlay::{validate_tint, OverlayStyle, RgbaImage};
pub use surface::{object_hidden, surface_elevation, validate_surface, SurfaceGrid, SurfaceParams};
pub use volume::{half_size, height_fog_depth, henyey_greenstein, VolumeFrame, VolumeParams, VolumeScene};
