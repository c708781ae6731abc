//! The CPU backend's errors, named as the backend `cpu`.

use murk_core::{InstanceKey, MurkError};

/// A failure of the CPU backend, with its message.
pub(crate) fn backend_error(message: String) -> MurkError {
    MurkError::Backend { backend: "cpu".into(), message }
}

/// The typed error of a key no instance has.
pub(crate) fn unknown_key(key: InstanceKey) -> MurkError {
    MurkError::UnknownKey { backend: "cpu".into(), key }
}
