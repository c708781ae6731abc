//! What murk reports to the game when it refuses or fails at something.

use bevy::prelude::*;
use murk_core::MurkError;

/// Something murk refused or failed at (bad input names the field and
/// value; nothing already computed is lost).
#[derive(Message, Clone, Debug, PartialEq, Eq)]
pub struct FogError(pub String);

impl From<MurkError> for FogError {
    fn from(e: MurkError) -> Self {
        FogError(e.to_string())
    }
}
