//! The GPU backend's errors, named as the backend `gpu`.

use murk_core::{InstanceKey, MurkError};

/// A failure of the GPU backend, with its message.
pub(crate) fn gpu_error(message: impl Into<String>) -> MurkError {
    MurkError::Backend { backend: "gpu".into(), message: message.into() }
}

/// The typed error of a key no instance has.
pub(crate) fn unknown_key(key: InstanceKey) -> MurkError {
    MurkError::UnknownKey { backend: "gpu".into(), key }
}
