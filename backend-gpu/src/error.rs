//! What goes wrong in the GPU backend ([`GpuError`]). It reaches the
//! caller as the source of [`MurkError::Backend`] (backend `gpu`), whose
//! message is this error's.

use murk_core::{InstanceKey, MurkError};

/// What goes wrong in the GPU backend.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// A WGSL module that naga does not parse.
    #[error("{module}.wgsl: {report}")]
    Shader {
        /// The module's name.
        module: String,
        /// naga's report, with the lines it points at.
        report: String,
    },
    /// A shader whose module has no entry point of the name it is
    /// registered under.
    #[error("module `{module}` has no entry point `{entry}`")]
    Pipeline {
        /// The module.
        module: String,
        /// The entry point asked for.
        entry: String,
    },
    /// The adapter would not open a device.
    #[error("cannot open {adapter}: {source}")]
    Device {
        /// The adapter and its wgpu backend.
        adapter: String,
        /// wgpu's error.
        #[source]
        source: wgpu::RequestDeviceError,
    },
    /// Polling the device failed (a lost device, a timeout).
    #[error("device poll: {0}")]
    Poll(#[source] wgpu::PollError),
    /// A readback that did not land when it was waited for, or failed to
    /// map.
    #[error("{0}")]
    ReadbackLost(&'static str),
    /// A landed readback whose mapped bytes could not be read.
    #[error("a landed readback could not be read: {0}")]
    Mapped(#[source] wgpu::MapRangeError),
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
    /// A texture larger than the device allows.
    #[error("the mask texture would be {width}x{height}, the device allows {side} texels a side (max_texture_dimension_2d)")]
    TooLarge {
        /// The texture's width.
        width: u32,
        /// Its height.
        height: u32,
        /// The device's limit.
        side: u32,
    },
    /// A pass, texture or level that the instance's occlusion build did not
    /// make.
    #[error("{0}")]
    NotBuilt(String),
    /// A texture whose texels are not of the type a pass takes.
    #[error("texture `{texture}` holds {kind} texels, {needs}")]
    TexelType {
        /// The texture's name.
        texture: String,
        /// Its texel type.
        kind: &'static str,
        /// What the pass takes.
        needs: &'static str,
    },
    /// A rendered picture could not be read back.
    #[error("reading the picture back: {0}")]
    Picture(#[source] MurkError),
}

impl GpuError {
    /// [`GpuError::SizeMismatch`] of `what` at `size` for an instance of
    /// `instance`.
    pub(crate) fn size(what: impl Into<String>, size: impl Into<String>, instance: impl Into<String>) -> Self {
        GpuError::SizeMismatch { what: what.into(), size: size.into(), instance: instance.into() }
    }
}

impl From<GpuError> for MurkError {
    fn from(e: GpuError) -> Self {
        MurkError::backend("gpu", e)
    }
}

/// The typed error of a key no instance has.
pub(crate) fn unknown_key(key: InstanceKey) -> MurkError {
    MurkError::UnknownKey { backend: "gpu".into(), key }
}
