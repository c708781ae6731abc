//! # murk-gpu
//!
//! The GPU backend of murk: every pass of the pipeline as a WGSL compute
//! shader (`shaders/<pass>.wgsl`, set up by `src/passes/<pass>.rs`), in the
//! integer arithmetic of the CPU reference, so both give the same bytes for
//! every pass, tick and case of the conformance suite.
//!
//! ```
//! use murk_core::glam::Vec3;
//! use murk_core::{Area, FogSubsystem, InstanceDesc, Position, Profile, TeamMask, VisionSource};
//!
//! fn final_mask(backend: Box<dyn murk_core::Backend>) -> murk_core::Result<Vec<u16>> {
//!     let mut fog = FogSubsystem::new(backend);
//!     let area = Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
//!     fog.create_instance(InstanceDesc { name: "main".into(), area, resolution: 64, lod: 0, observed_teams: TeamMask::ALL, profile: Profile::default() })?;
//!     let mut world = murk_core::hecs::World::new();
//!     world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), VisionSource::new(10.0)));
//!     for _ in 0..4 {
//!         fog.tick(&mut world, 33_333)?;
//!     }
//!     fog.final_mask("main")
//! }
//!
//! // murk's own device; `GpuBackend::from_device` takes a renderer's.
//! match murk_gpu::GpuBackend::new() {
//!     Ok(gpu) => assert_eq!(final_mask(Box::new(gpu))?, final_mask(Box::new(murk_cpu::CpuBackend::new(1)?))?),
//!     // No adapter (or one without what murk needs): the error says which.
//!     Err(e) => println!("no GPU backend here: {e}"),
//! }
//! # Ok::<(), murk_core::MurkError>(())
//! ```
//!
//! * Buffers for the simulation: every texel is a `u32` (masks) or `i32`
//!   (heights) in a storage buffer; buffers come from a pool by size and go
//!   back to it when an instance is destroyed.
//! * A texture for materials: after every blend the final mask is written
//!   into a filterable [`MASK_TEXTURE_FORMAT`] texture in the same
//!   submission ([`GpuBackend::mask_texture`]); `include/murk_fog.wgsl`
//!   samples it. On request a detail texture holds visibility, explored
//!   memory and the composed mask ([`GpuBackend::set_detail_texture`]).
//! * No waiting in a tick: an instance's occlusion build, recompute, blend
//!   and presentation are one submission; the recompute's "changed" flag
//!   and the stealth samples come back through readbacks that core uses
//!   [`murk_core::READBACK_LATENCY_TICKS`] ticks later. Only reading
//!   textures (pictures, hashes, snapshots) blocks, and [`Backend::blocking_waits`]
//!   counts each time it does.
//! * Any device: [`GpuBackend::new`] opens murk's own (any backend wgpu
//!   offers, chosen with `MURK_WGPU_BACKEND`), [`GpuBackend::from_device`]
//!   runs on the host's device and queue after checking their limits.
//!
//! See `docs/gpu.md` for embedding murk in a wgpu renderer.
//!
//! | file | what |
//! |---|---|
//! | `backend.rs` | [`GpuBackend`], the handle: worlds, their keys, the `Backend` calls |
//! | `gpu.rs` | the device state: every instance, the encoder being recorded, the readbacks in flight |
//! | `instance.rs` | one instance's buffers: its occlusion, its masks (`Masks<wgpu::Buffer>`), the mask textures |
//! | `build.rs` | occlusion builds and copies, texture sets loaded |
//! | `keep.rs` | rollback states kept on the device: textures copied there, never read back |
//! | `readout.rs` | textures read back, the state hash's sources |
//! | `sample.rs` | sample batches: the final mask at texels |
//! | `footprints.rs` | footprint judgments, one value per footprint |
//! | `hash.rs` | the state hash on the device |
//! | `passes/` | each pass's dispatches, twins of `shaders/<pass>.wgsl` |
//! | `shaders.rs` | the WGSL modules and `Shaders`, one compiled pipeline per field |
//! | `context.rs` | the device: buffer pool, bind groups, dispatches, submissions, readbacks, timings |
//! | `readback.rs` | a readback in flight |
//! | `limits.rs` | what murk needs of a device; opening its own |
//! | `render.rs`, `looks.rs` | drawing with the mask texture; the premade looks |
//! | `error.rs` | the backend's errors |

mod backend;
mod build;
mod context;
mod count;
mod error;
mod footprints;
mod gpu;
mod hash;
mod instance;
mod keep;
mod kept;
mod limits;
mod lines;
pub mod looks;
pub mod passes;
mod readback;
mod readout;
mod render;
mod sample;
mod shaders;

pub use backend::GpuBackend;
pub use error::GpuError;
pub use footprints::FootprintRange;
pub use limits::{limits_for, required_limits, BACKEND_VAR};
pub use render::TopView;
pub use sample::SampleRange;
pub use shaders::{module_names, wgsl_source, FOG_INCLUDE, MASK_TEXTURE_FORMAT};
/// The wgpu this backend is built on, for hosts that hand it a device.
pub use wgpu;
