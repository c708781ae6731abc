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
    /// The backend failed (device lost, out of memory, ...).
    #[error("backend {backend}: {message}")]
    Backend {
        /// The backend's name.
        backend: String,
        /// What failed.
        message: String,
    },
}

impl MurkError {
    /// Shorthand for [`MurkError::InvalidValue`].
    pub fn invalid(field: impl Into<String>, value: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        Self::InvalidValue { field: field.into(), value: value.to_string(), reason: reason.into() }
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
