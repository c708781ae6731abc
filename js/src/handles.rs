//! Handles the caller keeps: the bits of the `hecs` entities this library
//! spawned (a `BigInt` in JavaScript), each with what it is. A handle whose
//! entity is gone (removed, or a transient reveal that expired) is stale,
//! and using it is an error naming it, never a crash.
//!
//! ```text
//!   bits = generation << 32 | index      (hecs::Entity::to_bits)
//!   spawn ──> live ──remove / expiry──> stale (the index may be reused,
//!                                        under a new generation)
//! ```

use murk_core::hecs::{Entity, World};
use murk_core::{MurkError, Result};
use std::collections::BTreeMap;

/// What a handle stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleKind {
    /// An entity with a position and components (`Parts`).
    Entity,
    /// A height capture (a map): it has no position to move.
    Capture,
}

/// The live handles this library gave out.
#[derive(Clone, Debug, Default)]
pub struct Handles {
    live: BTreeMap<u64, HandleKind>,
}

impl Handles {
    /// Records a new entity of `kind`; its handle.
    pub fn add(&mut self, entity: Entity, kind: HandleKind) -> u64 {
        let bits = entity.to_bits().get();
        self.live.insert(bits, kind);
        bits
    }

    /// The entity of a live handle of `kind`; a stale handle, one this
    /// library never gave out, or one of another kind is an error naming it.
    pub fn get(&self, world: &World, bits: u64, kind: HandleKind) -> Result<Entity> {
        let entity = Entity::from_bits(bits).filter(|e| world.contains(*e));
        match (entity, self.live.get(&bits)) {
            (Some(e), Some(k)) if *k == kind => Ok(e),
            (Some(_), Some(HandleKind::Capture)) => {
                Err(MurkError::invalid("handle", bits, "is a height capture, which has no position (remove it and load the map again)"))
            }
            (Some(_), Some(HandleKind::Entity)) => Err(MurkError::invalid("handle", bits, "is an entity, not a height capture")),
            _ => Err(stale(bits)),
        }
    }

    /// The entity of a live handle of either kind, forgotten: what
    /// `remove` despawns.
    pub fn take(&mut self, world: &World, bits: u64) -> Result<Entity> {
        let kind = *self.live.get(&bits).ok_or_else(|| stale(bits))?;
        let entity = self.get(world, bits, kind)?;
        self.live.remove(&bits);
        Ok(entity)
    }

    /// Forgets the handles whose entities murk removed itself (transient
    /// reveals that expired in a tick).
    pub fn prune(&mut self, world: &World) {
        self.live.retain(|bits, _| Entity::from_bits(*bits).is_some_and(|e| world.contains(e)));
    }
}

/// The error of a stale or foreign handle.
fn stale(bits: u64) -> MurkError {
    MurkError::invalid("handle", bits, "is stale: its entity was removed (or expired as a transient reveal), or this Fog never gave it out")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_handle_is_stale_even_when_its_index_is_reused() {
        let mut world = World::new();
        let mut handles = Handles::default();
        let first = world.spawn((1u8,));
        let bits = handles.add(first, HandleKind::Entity);
        let taken = handles.take(&world, bits).unwrap();
        world.despawn(taken).unwrap();
        let second = world.spawn((2u8,));
        assert_eq!(second.id(), first.id(), "hecs reuses the index");
        handles.add(second, HandleKind::Entity);
        let e = handles.get(&world, bits, HandleKind::Entity).unwrap_err().to_string();
        assert!(e.contains(&format!("handle = {bits}: is stale")), "{e}");
    }

    #[test]
    fn a_capture_is_not_an_entity_and_garbage_is_stale() {
        let mut world = World::new();
        let mut handles = Handles::default();
        let bits = handles.add(world.spawn((1u8,)), HandleKind::Capture);
        assert!(handles.get(&world, bits, HandleKind::Entity).unwrap_err().to_string().contains("is a height capture"));
        assert!(handles.get(&world, 0, HandleKind::Entity).unwrap_err().to_string().contains("handle = 0: is stale"));
        assert!(handles.get(&world, u64::MAX, HandleKind::Capture).is_err());
    }
}
