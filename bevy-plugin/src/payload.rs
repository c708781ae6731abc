//! Ghost payloads in Bevy: a component of the game that ghosts carry as
//! their actor was last seen (`FogSubsystem::register_ghost_payload`).

use crate::components::{FogGhost, FogStealth};
use crate::fog::FogSetup;
use crate::mirror::{mirror_entities, publish_entities, FogMirror};
use crate::set::MurkSet;
use bevy::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::marker::PhantomData;

/// Makes the ghosts of stealth actors carry `T` as it was when the actor was
/// last seen (by that ghost's observer), and never update it: the game's
/// owner, health or construction progress of a unit seen last, nothing
/// newer. `T` lives on the Bevy actor; the plugin copies it into murk each
/// tick and onto the ghost when murk spawns one. Add after `MurkPlugin`.
pub struct FogGhostPayloadPlugin<T> {
    name: String,
    kind: PhantomData<fn() -> T>,
}

impl<T> FogGhostPayloadPlugin<T> {
    /// `name` stands for `T` in murk's snapshots; it must be unique.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), kind: PhantomData }
    }
}

impl<T: Component + Clone + Serialize + DeserializeOwned> Plugin for FogGhostPayloadPlugin<T> {
    fn build(&self, app: &mut App) {
        let name = self.name.clone();
        app.init_resource::<FogSetup>();
        app.world_mut().resource_mut::<FogSetup>().0.push(Box::new(move |fog| fog.register_ghost_payload::<T>(&name)));
        app.add_systems(
            FixedUpdate,
            (mirror_payload::<T>.in_set(MurkSet::Mirror).after(mirror_entities), ghost_payload::<T>.in_set(MurkSet::Publish).after(publish_entities)),
        );
    }
}

/// The actors' `T` into the mirror, where murk copies it from.
/// Stealth actors whose `T` changed.
type ChangedPayload<T> = (With<FogStealth>, Changed<T>);

fn mirror_payload<T: Component + Clone>(mut mirror: ResMut<FogMirror>, actors: Query<(Entity, &T), ChangedPayload<T>>) {
    for (e, value) in &actors {
        if let Some(h) = mirror.hecs_entity(e) {
            let _ = mirror.world.insert_one(h, value.clone());
        }
    }
}

/// New Bevy ghosts get the `T` murk gave their ghost.
fn ghost_payload<T: Component + Clone>(mut commands: Commands, mirror: Res<FogMirror>, ghosts: Query<Option<&T>, With<FogGhost>>) {
    for (h, e) in &mirror.ghosts {
        if let (Ok(None), Ok(value)) = (ghosts.get(*e), mirror.world.get::<&T>(*h)) {
            commands.entity(*e).insert((*value).clone());
        }
    }
}
