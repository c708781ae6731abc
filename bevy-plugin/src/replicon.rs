//! A server adapter on `bevy_replicon`: each client is sent a tracked entity
//! only while the instance its team views sees it, and a per-observer ghost
//! only to the team whose ghost it is (`docs/multiplayer.md`).

use crate::components::{FogGhostObserver, FogTracked};
use crate::fog::MurkFog;
use crate::mirror::FogMirror;
use crate::set::MurkSet;
use bevy::prelude::*;
use bevy_replicon::prelude::*;

/// On a client's entity on the server (replicon's `ConnectedClient`): the
/// murk instance whose view that client's team gets.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
#[component(immutable)]
pub struct FogObserver(pub String);

/// On a replicated entity: the instances that may be sent it now. The
/// plugin keeps it on every [`FogTracked`] entity (murk's sight sets) and
/// on every per-observer ghost (its observer); an entity without it is sent
/// to nobody.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
#[component(immutable)]
pub struct FogSeenBy(pub Vec<String>);

impl VisibilityFilter for FogSeenBy {
    type ClientComponent = FogObserver;
    type Scope = Entity;

    fn is_visible(&self, _client: Entity, observer: Option<&FogObserver>) -> bool {
        observer.is_some_and(|o| self.0.contains(&o.0))
    }
}

/// Drives replicon's per-client visibility from murk: add it to a server
/// app beside `MurkPlugin` and replicon's plugins, put [`FogObserver`] on
/// each client entity, and give the entities to replicate `Replicated`.
pub struct MurkReplicationPlugin;

impl Plugin for MurkReplicationPlugin {
    fn build(&self, app: &mut App) {
        app.add_visibility_filter::<FogSeenBy>().add_systems(FixedUpdate, seen_by.after(MurkSet::Publish));
    }
}

/// After murk's tick: every tracked entity's [`FogSeenBy`] is the set of
/// instances that see it (empty until murk has judged it), every
/// per-observer ghost's is its observer.
fn seen_by(
    mut commands: Commands,
    mut fog: ResMut<MurkFog>,
    mirror: Res<FogMirror>,
    tracked: Query<(Entity, Option<&FogSeenBy>), With<FogTracked>>,
    ghosts: Query<(Entity, &FogGhostObserver, Option<&FogSeenBy>)>,
) {
    let Some(sub) = fog.subsystem() else { return };
    for (e, current) in &tracked {
        let seen = mirror.hecs_entity(e).and_then(|h| sub.observers_of(h).ok()).unwrap_or_default();
        if current.map(|c| &c.0) != Some(&seen) {
            commands.entity(e).insert(FogSeenBy(seen));
        }
    }
    for (e, observer, current) in &ghosts {
        if current.is_none() {
            commands.entity(e).insert((FogSeenBy(vec![observer.0.clone()]), Replicated));
        }
    }
}
