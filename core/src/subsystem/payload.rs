//! Ghost payloads: the game's components a ghost carries as they were when
//! its actor was last seen (owner, health, construction progress), so that
//! nothing about the real entity leaks through its ghost.

use crate::error::{MurkError, Result};
use hecs::{Entity, World};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// One registered payload component: its name and how to copy it, as
/// postcard bytes, from an actor and onto a ghost.
pub(crate) struct PayloadKind {
    pub(crate) name: String,
    capture: fn(&World, Entity) -> Option<Vec<u8>>,
    insert: fn(&mut World, Entity, &[u8]) -> bool,
    check: fn(&[u8]) -> bool,
}

fn capture<T: hecs::Component + Serialize>(world: &World, e: Entity) -> Option<Vec<u8>> {
    world.get::<&T>(e).ok().and_then(|c| postcard::to_allocvec(&*c).ok())
}

fn insert<T: hecs::Component + DeserializeOwned>(world: &mut World, e: Entity, bytes: &[u8]) -> bool {
    postcard::from_bytes::<T>(bytes).ok().is_some_and(|v| world.insert_one(e, v).is_ok())
}

fn check<T: DeserializeOwned>(bytes: &[u8]) -> bool {
    postcard::from_bytes::<T>(bytes).is_ok()
}

impl PayloadKind {
    /// The payload kind of component `T`, named `name` in snapshots.
    pub(crate) fn of<T: hecs::Component + Serialize + DeserializeOwned>(name: &str) -> Self {
        PayloadKind { name: name.to_string(), capture: capture::<T>, insert: insert::<T>, check: check::<T> }
    }
}

/// The registered payload of actor `e` now, in registration order.
pub(crate) fn capture_payload(kinds: &[PayloadKind], world: &World, e: Entity) -> Vec<(String, Vec<u8>)> {
    kinds.iter().filter_map(|p| (p.capture)(world, e).map(|b| (p.name.clone(), b))).collect()
}

/// Checks a saved payload: every name registered, every value readable
/// as its type; `field` names it in errors.
pub(crate) fn check_payload(kinds: &[PayloadKind], payload: &[(String, Vec<u8>)], field: &str) -> Result<()> {
    for (name, bytes) in payload {
        let kind = kinds
            .iter()
            .find(|p| &p.name == name)
            .ok_or_else(|| MurkError::invalid(format!("{field}.payload"), name, "is a component the game did not register"))?;
        if !(kind.check)(bytes) {
            return Err(MurkError::invalid(
                format!("{field}.payload.{name}"),
                format!("{} bytes", bytes.len()),
                "do not decode as the registered type",
            ));
        }
    }
    Ok(())
}

/// Puts a (checked) payload onto a ghost.
pub(crate) fn insert_payload(kinds: &[PayloadKind], world: &mut World, ghost: Entity, payload: &[(String, Vec<u8>)]) {
    for (name, bytes) in payload {
        if let Some(kind) = kinds.iter().find(|p| &p.name == name) {
            // Checked when it was captured or restored: it decodes.
            let _ = (kind.insert)(world, ghost, bytes);
        }
    }
}
