//! # murk-cpu
//!
//! The CPU reference backend of murk: every pass of the pipeline in
//! plain integer Rust, parallel over rows with rayon; the painting of
//! source windows, blur, memory, compose, upscale and blend run `wide` SIMD
//! kernels, each beside the scalar twin it is tested equal to. Visibility
//! keeps each source's window across recomputes, and their combination, so
//! a recompute redoes only what the sources that changed touch; the passes
//! after it redo only the blocks of texels that changed or have not settled
//! (see `docs/determinism.md`).
//! It is the backend that
//! writes the conformance goldens; every other backend must match its bytes.
//!
//! ```
//! use murk_core::{Area, FogSubsystem, InstanceDesc, Position, Profile, TeamMask, VisionSource};
//! use murk_core::glam::Vec3;
//!
//! // Two threads; any thread count gives the same bytes.
//! let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(2)?));
//! assert_eq!(fog.backend_name(), "cpu[threads=2]");
//! let area = Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
//! let desc = InstanceDesc { name: "main".into(), area, resolution: 64, lod: 0, observed_teams: TeamMask::ALL, profile: Profile::default() };
//! fog.create_instance(desc)?;
//! let mut world = hecs::World::new();
//! world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), VisionSource::new(10.0)));
//! fog.tick(&mut world, 33_333)?;
//! assert_eq!(fog.final_mask("main")?.len(), 64 * 64);
//! # Ok::<(), murk_core::MurkError>(())
//! ```
//!
//! Results do not depend on the thread count: every pass writes each texel
//! from inputs that no other thread writes, and the only reductions are
//! order-free (`max`, `or`).
//!
//! | file | what |
//! |---|---|
//! | `backend.rs` | [`CpuBackend`]: the instances, their pool, the `Backend` calls |
//! | `instance.rs` | one instance: its occlusion, its masks (`Masks<Vec<u16>>`), what the passes keep |
//! | `occlusion.rs` | the occlusion textures and their tables: build, update, copy, load |
//! | `recompute.rs` | a recompute (passes 5-9) and the blend over the blocks that may move |
//! | `save.rs`, `load.rs` | rollback states: saving in shared tiles, the state hash; loading a texture set |
//! | `tiles.rs` | the versions of the masks' tiles, and which masks copy which |
//! | `texels.rs` | a texture's texels borrowed, whatever their type |
//! | `workers.rs` | the pool, whose workers stay awake while a call runs |
//! | `error.rs` | the backend's errors |
//! | `passes/` | the passes, one file each, twins of the GPU's shaders |
//! | `looks/` | the premade looks ([`looks::CpuLooks`]) |

mod backend;
mod error;
mod instance;
mod load;
pub mod looks;
mod occlusion;
pub mod passes;
mod recompute;
mod save;
mod texels;
mod tiles;
mod workers;

pub use backend::CpuBackend;
pub use error::CpuError;
