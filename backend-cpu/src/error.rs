//! What goes wrong in the CPU backend ([`CpuError`]). It reaches the
//! caller as the source of [`MurkError::Backend`] (backend `cpu`), whose
//! message is this error's.

use murk_core::{InstanceKey, MurkError};

/// What goes wrong in the CPU backend.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// The worker threads could not be started.
    #[error(transparent)]
    ThreadPool(#[from] rayon::ThreadPoolBuildError),
    /// An input of another size than the instance it is for (an occlusion
    /// input, a reveal plane, a texture of a set, the occlusion to share).
    #[error("{what} is {size}, the instance is {instance}")]
    SizeMismatch {
        /// The input.
        what: String,
        /// Its size.
        size: String,
        /// The instance's.
        instance: String,
    },
    /// A texture set without a texture the instance needs.
    #[error("a texture set without {0}")]
    MissingTexture(String),
    /// A texture whose texels are not of the type or layout it needs.
    #[error("texture `{texture}` {problem}")]
    TexelType {
        /// The texture's name.
        texture: String,
        /// What is wrong with its texels.
        problem: String,
    },
    /// A mip level the instance's occlusion build did not make.
    #[error("mip level {level} is not built ({built} levels are)")]
    NotBuilt {
        /// The level asked for.
        level: u32,
        /// The levels built.
        built: usize,
    },
}

impl CpuError {
    /// [`CpuError::SizeMismatch`] of `what` at `size` for an instance of
    /// `instance` (both `WxH`).
    pub(crate) fn size(what: impl Into<String>, size: (u32, u32), instance: (u32, u32)) -> Self {
        CpuError::SizeMismatch { what: what.into(), size: format!("{}x{}", size.0, size.1), instance: format!("{}x{}", instance.0, instance.1) }
    }
}

impl From<CpuError> for MurkError {
    fn from(e: CpuError) -> Self {
        MurkError::backend("cpu", e)
    }
}

/// The typed error of a key no instance has.
pub(crate) fn unknown_key(key: InstanceKey) -> MurkError {
    MurkError::UnknownKey { backend: "cpu".into(), key }
}
