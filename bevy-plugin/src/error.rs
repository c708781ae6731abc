//! What murk reports to the game when it refuses or fails at something.

use bevy::prelude::*;
use murk_core::{BackendChoice, MurkError};

/// Something murk refused or failed at (bad input names the field and
/// value; nothing already computed is lost). The message is `Display`; the
/// [`MurkError`] behind it, where there is one, is its source.
#[non_exhaustive]
#[derive(Message, Clone, Debug, PartialEq, thiserror::Error)]
pub enum FogError {
    /// murk refused a call or failed (a mirrored component, a tick, a
    /// snapshot, a backend that did not start).
    #[error(transparent)]
    Murk(#[from] MurkError),
    /// An instance the game asked for was refused; it is asked for again
    /// when its description changes.
    #[error("instance `{name}`: {source}")]
    Instance {
        /// The instance.
        name: String,
        /// Why.
        #[source]
        source: MurkError,
    },
    /// Switching the backend failed: murk runs on where it ran.
    #[error("switching murk to {to:?}: {source}")]
    Switch {
        /// The backend asked for.
        to: BackendChoice,
        /// Why it failed.
        #[source]
        source: MurkError,
    },
    /// A `FogViewer` that names no instance.
    #[error("FogViewer = {0}: names no instance")]
    UnknownViewer(String),
    /// A fixed timestep longer than murk ticks (`u32::MAX` microseconds).
    #[error("invalid Time<Fixed> timestep = {micros} us: murk ticks at most u32::MAX microseconds")]
    Timestep {
        /// The timestep in microseconds.
        micros: u128,
    },
}
