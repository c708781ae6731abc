//! # murk-core
//!
//! The backend-neutral heart of murk, a deterministic fog-of-war simulation
//! core. A game keeps its vision sources, blockers and height captures as
//! plain components in a [`hecs::World`]; a [`FogSubsystem`] turns them, each
//! tick, into per-instance masks (visibility, explored memory, composed and
//! final) computed by a [`Backend`].
//!
//! ```
//! use murk_core::{Area, FogSubsystem, InstanceDesc, Position, Profile, TeamMask, VisionSource};
//! use glam::Vec3;
//!
//! // Any backend: the CPU reference here (`murk-cpu`), or `murk-gpu`.
//! let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(1)?));
//! fog.create_instance(InstanceDesc {
//!     name: "main".into(),
//!     area: Area { center: Vec3::new(64.0, 64.0, 5.0), extents: Vec3::new(128.0, 128.0, 10.0), yaw_degrees: 0.0 },
//!     resolution: 128,
//!     lod: 0,
//!     observed_teams: TeamMask::ALL,
//!     profile: Profile::default(),
//! })?;
//! let mut world = hecs::World::new();
//! world.spawn((Position(Vec3::new(20.0, 30.0, 0.0)), VisionSource::new(16.0)));
//! for _ in 0..30 {
//!     fog.tick(&mut world, 33_333)?;
//! }
//! // 128 x 128 texels of one unit each, row 0 at the area's -Y edge.
//! let final_mask: Vec<u16> = fog.final_mask("main")?;
//! assert!(final_mask[30 * 128 + 20] > 0, "the source sees where it stands");
//! assert_eq!(final_mask[120 * 128 + 120], 0, "and not the far corner");
//! # Ok::<(), murk_core::MurkError>(())
//! ```
//!
//! Goals, in order: **exact** (integer arithmetic end to end, the same bytes
//! on every backend and thread count), **correct** (the recompute rules, Z
//! layering and cadence of `docs/determinism.md`), then **fast**.
//!

pub mod backend;
pub mod binning;
pub mod components;
pub mod error;
pub mod fixed;
pub mod frame;
pub mod hash;
pub mod movingai;
mod pass;
pub mod profile;
pub mod query;
pub mod raster;
mod resample;
pub mod scenario;
mod serde_adapters;
pub mod snapshot;
pub mod stealth;
pub mod subsystem;
pub mod texture;
pub mod transform;
pub mod zlayer;

pub use backend::{
    read_row, Backend, BackendChoice, FootprintList, FootprintRequest, InstanceKey, KeptFootprints, LineRequest, LineTexels, Opened, PassTiming,
    Readback, ReadbackHold, SampleRequest, TickRunner,
};
pub use binning::{bin_sources, TileBins};
pub use components::{
    AntiVision, Blocker, BlockerShape, CaptureMode, Cone, Detection, Ghost, GhostObserver, HeightCapture, HeightLayer, HideMode, Mobility, Pose,
    Position, StealthActor, TeamMask, Tracked, TransientReveal, VisibilityPolicy, VisionSource,
};
pub use error::{MurkError, Result};
pub use frame::{
    BlurKernel, CircleTexel, FrameParams, OcclusionInput, PolygonTexel, RayRule, RecomputeInput, RecomputeReport, RevealLayer, ShaderParams,
    SourceTexel, READBACK_LATENCY_TICKS,
};
pub use glam;
pub use hecs;
pub use pass::Pass;
pub use profile::{Profile, ProfileQ, RayMethod};
pub use query::{Blip, Explored, MaskAnswer, QueryAnswers, QueryHandle, SightAnswer, SightLine, MAX_SIGHT_LINES};
pub use stealth::{StealthEvent, StealthState};
#[cfg(feature = "timers")]
pub use subsystem::SightTimes;
pub use subsystem::{
    ActiveReveal, FogBody, FogSubsystem, FogTarget, InstanceDesc, InstanceState, InstanceStats, InstanceTick, LandedHash, MemoryBody, Reveal,
    RevealArea, RevealId, RevealKind, SaveState, SightEvent, TextureBody, TickReport, MAX_FOOTPRINT_TEXELS, MAX_OBSERVERS, MEMORY_MAGIC,
};
pub use texture::{
    instance_textures, mip_atlas, pass_outputs, BackendNotes, Grid, InstanceDims, KeptTextures, Masks, OcclusionBuild, Resolution, TexelKind,
    TexelRect, Texture, TextureData, TextureImage, TextureRow, TextureSet, TextureSpec, TileData, TiledImage, TEXTURES, TILE,
};
pub use transform::{Area, AreaTransform};
