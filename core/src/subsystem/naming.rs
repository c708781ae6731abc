//! How the subsystem's errors name what they judged: the instance an input
//! was judged by, the field path of a description, and an entity.

use crate::error::MurkError;
use hecs::Entity;

/// Names the instance that judged a world input.
pub(crate) fn in_instance(e: MurkError, name: &str) -> MurkError {
    match e {
        MurkError::InvalidValue { field, value, reason } => MurkError::InvalidValue { field: format!("instance `{name}`: {field}"), value, reason },
        MurkError::UnknownEntity(what) => MurkError::UnknownEntity(format!("instance `{name}`: {what}")),
        other => other,
    }
}

/// Puts `prefix` before the field an error names.
pub(crate) fn prefix_error(e: MurkError, prefix: &str) -> MurkError {
    match e {
        MurkError::InvalidValue { field, value, reason } => MurkError::InvalidValue { field: format!("{prefix}.{field}"), value, reason },
        other => other,
    }
}

/// How errors name an entity (`entity 7`).
pub(crate) fn entity_label(e: Entity) -> EntityLabel {
    EntityLabel(e)
}

/// How errors name an entity (`entity 7`), formatted only when shown: a
/// tick labels every entity it reads.
pub(crate) struct EntityLabel(pub(crate) Entity);

impl std::fmt::Display for EntityLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "entity {}", self.0.id())
    }
}
