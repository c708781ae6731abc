//! The error type of murk-core.

/// Everything that can go wrong at murk-core's boundary.
///
/// Messages name the offending field and value, so a game developer can find
/// the bad input without a debugger.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MurkError {
    /// A value is out of its documented range, not finite, or inconsistent.
    #[error("invalid {field} = {value}: {reason}")]
    InvalidValue {
        /// The field, as a path (`instances[0].area.extents.x`).
        field: String,
        /// The offending value, printed.
        value: String,
        /// What the valid range is.
        reason: String,
    },
    /// No fog instance has this name.
    #[error("unknown instance `{0}`")]
    UnknownInstance(String),
    /// An instance with this name exists already.
    #[error("duplicate instance `{0}`")]
    DuplicateInstance(String),
    /// An entity id that the world does not hold, or that lacks a component.
    #[error("unknown entity `{0}`")]
    UnknownEntity(String),
    /// A scenario, profile, map or snapshot file could not be parsed.
    #[error("cannot parse {what}: {message}")]
    Parse {
        /// The file or document.
        what: String,
        /// The parser's message, with line and column where it has them.
        message: String,
    },
    /// A snapshot, run snapshot or explored-memory blob of another format
    /// version than this build reads: formats do not carry over (the
    /// version is in the container's header, `crate::snapshot::VERSION`).
    #[error("{kind} format version {found} is {}", version_gap(*.found, *.expected))]
    SnapshotVersion {
        /// The container's magic as text (`MURKSNAP`, `MURKRUN`, `MURKMEM`).
        kind: String,
        /// The version the container holds.
        found: u32,
        /// The version this build reads and writes.
        expected: u32,
    },
    /// A file could not be read or written.
    #[error("cannot access {path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A mask-query handle that was never given out, or whose answers were
    /// already delivered.
    #[error("unknown query handle {0}: never given out, or its answers were already delivered")]
    UnknownQuery(u64),
    /// A backend has no instance under this key.
    #[error("backend {backend}: no instance with key {key}")]
    UnknownKey {
        /// The backend's name.
        backend: String,
        /// The instance key.
        key: u32,
    },
    /// A readback ticket the backend never gave out, or already delivered.
    #[error("backend {backend}: {what} ticket {ticket} is unknown or was already delivered")]
    UnknownTicket {
        /// The backend's name.
        backend: String,
        /// What the ticket is for (`sample`, `changed-flag`).
        what: &'static str,
        /// The ticket.
        ticket: u64,
    },
    /// A readback that was waited for did not come back.
    #[error("backend {backend}: a waited-for {what} did not land")]
    ReadbackLost {
        /// The backend's name.
        backend: String,
        /// What was read back (`changed flag`, `stealth readback`, `query`).
        what: &'static str,
    },
    /// No GPU adapter on the backends that were allowed (what was tried and
    /// why it failed).
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// A device that lacks what murk needs (each limit or feature named).
    #[error("the device on {adapter} lacks what murk needs: {missing}")]
    DeviceTooWeak {
        /// The adapter and its wgpu backend.
        adapter: String,
        /// Each limit or feature that falls short, with what murk needs.
        missing: String,
    },
    /// The backend failed (a device lost, a readback that did not come
    /// back, inputs of another size than the instance's, ...), or gave an
    /// answer that does not check. `source` is the backend's own error
    /// (`murk_cpu::CpuError`, `murk_gpu::GpuError`), or core's message.
    #[error("backend {backend}: {source}")]
    Backend {
        /// The backend's name.
        backend: String,
        /// What failed.
        #[source]
        source: BackendError,
    },
}

impl MurkError {
    /// Shorthand for [`MurkError::InvalidValue`].
    pub fn invalid(field: impl Into<String>, value: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        Self::InvalidValue { field: field.into(), value: value.to_string(), reason: reason.into() }
    }

    /// [`MurkError::Backend`] of backend `backend` with the error it gave.
    pub fn backend(backend: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Backend { backend: backend.into(), source: BackendError::new(source) }
    }

    /// [`MurkError::Backend`] of backend `backend` with a message (an
    /// answer of the backend that does not check).
    pub fn backend_message(backend: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Backend { backend: backend.into(), source: BackendError::message(message) }
    }
}

/// The source of a [`MurkError::Backend`]: the error a backend gave, shared
/// so that [`MurkError`] stays `Clone`. It dereferences to that error, which
/// is what [`std::error::Error::source`] of the `MurkError` returns: a
/// caller finds the backend's own type with `downcast_ref`.
#[derive(Clone)]
pub struct BackendError(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl BackendError {
    /// Keeps `error`.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(error))
    }

    /// A message as an error (what core writes when a backend's answer does
    /// not check).
    pub fn message(message: impl Into<String>) -> Self {
        Self::new(Message(message.into()))
    }

    /// The error, as its own type when it is an `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref()
    }
}

impl std::ops::Deref for BackendError {
    type Target = dyn std::error::Error + Send + Sync + 'static;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Debug for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Equal when their messages are: what a test compares.
impl PartialEq for BackendError {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

/// A message as an error.
#[derive(Debug)]
struct Message(String);

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Message {}

/// What a container's format version is to this build's, in words.
fn version_gap(found: u32, expected: u32) -> String {
    if found < expected {
        format!("older than this build's version {expected}: snapshots do not carry over between formats, start the run again from its scenario")
    } else {
        format!("not supported (this build reads version {expected})")
    }
}

/// Result with [`MurkError`].
pub type Result<T, E = MurkError> = std::result::Result<T, E>;

/// Reads a document whose parser picks the format by extension: its text,
/// the extension in lower case, and the path as errors name it.
pub(crate) fn read_document(path: &std::path::Path) -> Result<(String, String, String)> {
    let what = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| MurkError::Io { path: what.clone(), message: e.to_string() })?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    Ok((text, ext, what))
}

/// The name of a field in an error message: a string, or a closure that
/// builds it, so that hot loops format names only when something is wrong.
pub trait FieldName {
    /// The name.
    fn field_name(&self) -> String;
}

impl FieldName for &str {
    fn field_name(&self) -> String {
        (*self).to_string()
    }
}

impl FieldName for &String {
    fn field_name(&self) -> String {
        (*self).clone()
    }
}

impl<F: Fn() -> String> FieldName for F {
    fn field_name(&self) -> String {
        self()
    }
}

/// Checks that `v` is finite; names `field` otherwise.
pub fn finite(field: impl FieldName, v: f32) -> Result<f64> {
    if v.is_finite() {
        Ok(f64::from(v))
    } else {
        Err(MurkError::invalid(field.field_name(), v, "must be a finite number"))
    }
}

/// Checks that `v` is finite and inside `lo..=hi`.
pub fn in_range(field: impl FieldName, v: f32, lo: f32, hi: f32) -> Result<f64> {
    if !v.is_finite() || v < lo || v > hi {
        let reason = if v.is_finite() { format!("must be within {lo}..={hi}") } else { "must be a finite number".to_string() };
        return Err(MurkError::invalid(field.field_name(), v, reason));
    }
    Ok(f64::from(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("the device is lost")]
    struct Lost;

    #[test]
    fn a_backend_error_names_the_backend_and_keeps_its_source() {
        let e = MurkError::backend("gpu", Lost);
        assert_eq!(e.to_string(), "backend gpu: the device is lost");
        let source = std::error::Error::source(&e).expect("a source");
        assert!(source.downcast_ref::<Lost>().is_some(), "the backend's own type: {source:?}");
        assert_eq!(e.clone(), e);
        let m = MurkError::backend_message("cpu", "saved 3 textures of the 4 asked");
        assert_eq!(m.to_string(), "backend cpu: saved 3 textures of the 4 asked");
        assert_ne!(m, e);
    }
}
