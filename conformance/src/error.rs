//! The harness's error type.

use murk_core::MurkError;

/// What can go wrong while the harness runs or checks a case.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// murk refused a case or failed running it; `context` names the case,
    /// the variant and the tick where they are known.
    #[error("{context}: {source}")]
    Murk {
        /// Where it happened.
        context: String,
        /// murk's error, naming the field and value.
        source: MurkError,
    },
    /// No GPU adapter, or none whose device murk can use.
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// A file (manifest, image) could not be read, written or decoded.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A case's output differs from its goldens, or has none.
    #[error("{0}")]
    Mismatch(String),
}

impl HarnessError {
    /// A file error.
    pub fn file(path: &std::path::Path, message: impl std::fmt::Display) -> Self {
        Self::File { path: path.display().to_string(), message: message.to_string() }
    }
}

/// Adds where a murk error happened.
pub trait Context<T> {
    /// The error as a [`HarnessError::Murk`] with `context`.
    fn context(self, context: impl FnOnce() -> String) -> Result<T, HarnessError>;
}

impl<T> Context<T> for Result<T, MurkError> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T, HarnessError> {
        self.map_err(|source| HarnessError::Murk { context: context(), source })
    }
}
