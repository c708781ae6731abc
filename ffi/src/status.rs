//! Status codes: what every `murk_*` call returns, and the one error type
//! of the crate that they are made from.
//!
//! A call returns [`MURK_OK`] or one of the `MURK_ERR_*` codes below; the
//! message that goes with a failure (naming the bad argument, field and
//! value) is the thread's last error (`last_error.rs`). Codes are stable:
//! new ones are added, none is renumbered (`MURK_API_VERSION` counts
//! changes that are not additions).

use murk_core::MurkError;

/// The call succeeded.
pub const MURK_OK: i32 = 0;
/// A pointer the call needs was null (or an output buffer was null with a
/// nonzero capacity).
pub const MURK_ERR_NULL_POINTER: i32 = 1;
/// The fog handle is 0, was never given out, or was freed.
pub const MURK_ERR_INVALID_HANDLE: i32 = 2;
/// The entity handle is 0, was never given out by this fog handle, or its
/// entity was despawned (by the caller, or by murk: an expired transient
/// reveal).
pub const MURK_ERR_STALE_ENTITY: i32 = 3;
/// An argument is malformed before murk sees it: text that is not UTF-8, a
/// length that does not match, an unknown enum code, a misaligned pointer.
pub const MURK_ERR_INVALID_ARGUMENT: i32 = 4;
/// An output buffer is too small; the needed size was written to the
/// call's length output, and nothing else was written.
pub const MURK_ERR_BUFFER_TOO_SMALL: i32 = 5;
/// murk refused a value (not finite, out of range, inconsistent); the
/// message names the field and the value.
pub const MURK_ERR_INVALID_VALUE: i32 = 6;
/// No fog instance has this name.
pub const MURK_ERR_UNKNOWN_INSTANCE: i32 = 7;
/// An instance with this name exists already.
pub const MURK_ERR_DUPLICATE_INSTANCE: i32 = 8;
/// Text or bytes could not be parsed: a profile, a map, a snapshot, an
/// explored-memory blob.
pub const MURK_ERR_PARSE: i32 = 9;
/// No GPU adapter could be opened (`MURK_BACKEND_GPU`), or the device
/// lacks what murk needs.
pub const MURK_ERR_NO_ADAPTER: i32 = 10;
/// The backend failed (a device lost, a readback that did not land), or
/// murk reported an error this version of the C API has no code for.
pub const MURK_ERR_BACKEND: i32 = 11;
/// murk panicked inside the call (a bug in murk: please report it with
/// the message). The panic did not cross into the caller; the fog handle
/// the call worked on is unusable from then on and should be freed.
pub const MURK_ERR_PANIC: i32 = 12;

/// Everything a `murk_*` call can fail with. Messages name the argument,
/// field and value.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum FfiError {
    /// A required pointer was null.
    #[error("`{0}` is a null pointer")]
    NullPointer(&'static str),
    /// A fog handle that is not live.
    #[error("fog handle {0:#x} is not live: 0, never given out, or freed")]
    InvalidHandle(u64),
    /// An entity handle that names no live entity of the fog handle's world.
    #[error("entity {0:#x} is not live in this fog's world: 0, never spawned here, or despawned")]
    StaleEntity(u64),
    /// A malformed argument.
    #[error("invalid argument `{name}` = {value}: {reason}")]
    InvalidArgument {
        /// The parameter (`instance`, `stage`, `backend`).
        name: &'static str,
        /// Its value, printed.
        value: String,
        /// What it must be.
        reason: String,
    },
    /// An output buffer smaller than what it must hold.
    #[error("`{name}` holds {capacity} but {needed} are needed (the needed size was written to the length output)")]
    BufferTooSmall {
        /// The buffer parameter.
        name: &'static str,
        /// What the caller said it holds (bytes or items).
        capacity: usize,
        /// What the answer needs.
        needed: usize,
    },
    /// A fog handle whose state a panic left unknown.
    #[error("fog handle {0:#x} is unusable: an earlier call panicked inside it; free it")]
    Poisoned(u64),
    /// A panic inside murk, caught at the boundary.
    #[error("murk panicked: {0}")]
    Panic(String),
    /// murk refused the call.
    #[error(transparent)]
    Murk(#[from] MurkError),
}

impl FfiError {
    /// The status code the call returns.
    pub fn code(&self) -> i32 {
        match self {
            FfiError::NullPointer(_) => MURK_ERR_NULL_POINTER,
            FfiError::InvalidHandle(_) => MURK_ERR_INVALID_HANDLE,
            FfiError::StaleEntity(_) => MURK_ERR_STALE_ENTITY,
            FfiError::InvalidArgument { .. } => MURK_ERR_INVALID_ARGUMENT,
            FfiError::BufferTooSmall { .. } => MURK_ERR_BUFFER_TOO_SMALL,
            FfiError::Poisoned(_) | FfiError::Panic(_) => MURK_ERR_PANIC,
            FfiError::Murk(e) => match e {
                MurkError::InvalidValue { .. } => MURK_ERR_INVALID_VALUE,
                MurkError::UnknownInstance(_) => MURK_ERR_UNKNOWN_INSTANCE,
                MurkError::DuplicateInstance(_) => MURK_ERR_DUPLICATE_INSTANCE,
                MurkError::UnknownEntity(_) => MURK_ERR_STALE_ENTITY,
                MurkError::Parse { .. } | MurkError::Io { .. } | MurkError::SnapshotVersion { .. } => MURK_ERR_PARSE,
                MurkError::NoAdapter(_) | MurkError::DeviceTooWeak { .. } => MURK_ERR_NO_ADAPTER,
                _ => MURK_ERR_BACKEND,
            },
        }
    }

    /// Shorthand for [`FfiError::InvalidArgument`].
    pub fn invalid(name: &'static str, value: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        FfiError::InvalidArgument { name, value: value.to_string(), reason: reason.into() }
    }
}

/// Result with [`FfiError`].
pub(crate) type Result<T, E = FfiError> = std::result::Result<T, E>;
