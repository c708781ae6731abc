//! murk in Bevy: add [`MurkPlugin`] and murk sees the entities that carry
//! its components, ticks in `FixedUpdate`, and hands each fog instance's
//! mask to materials as a Bevy [`Image`].
//!
//! ```
//! use bevy::prelude::*;
//! use murk_bevy::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins(MinimalPlugins).add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(
//!     InstanceDesc {
//!         name: "player".into(),
//!         area: Area { center: Vec3::new(64.0, 64.0, 0.0), extents: Vec3::new(128.0, 128.0, 10.0), yaw_degrees: 0.0 },
//!         resolution: 128,
//!         lod: 0,
//!         observed_teams: TeamMask::of(&[0]).expect("teams below 64"),
//!         profile: Profile::default(),
//!     },
//! )));
//! app.world_mut().spawn((Transform::from_xyz(10.0, 10.0, 0.0), FogVision::new(12.0)));
//! // Fixed ticks run as time passes: murk ticks in the frames that follow.
//! while app.world().resource::<MurkFog>().ticks() == 0 {
//!     app.update();
//! }
//! let mask = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().final_mask("player").unwrap();
//! assert_eq!(mask.len(), 128 * 128);
//! ```
//!
//! Each fixed tick runs in [`MurkSet`] order: the game's entities are
//! mirrored into murk's own world (only those spawned, changed or
//! despawned since the last tick cost work), murk ticks, and the results
//! come back as messages ([`FogStealthEvent`], [`FogError`]), ghost
//! entities ([`FogGhost`]), visibility of [`FogHideWhenUnseen`] entities,
//! the [`FogHash`] and the mask images ([`FogImages`]). Move units before
//! [`MurkSet::Mirror`] in `FixedUpdate` so murk sees this tick's positions.

mod components;
mod error;
mod fade;
mod fog;
pub mod headless;
mod mask;
mod material;
mod mirror;
mod payload;
#[cfg(feature = "replicon")]
mod replicon;
mod set;

pub use components::{
    FogAntiVision, FogBlocker, FogCapture, FogFade, FogGhost, FogGhostObserver, FogHideWhenUnseen, FogReveal, FogStealth, FogTracked, FogViewer,
    FogVision,
};
pub use error::FogError;
pub use fog::{
    FogControl, FogHash, FogInstance, FogInstances, FogObserverStealthEvent, FogProfile, FogQueries, FogRestored, FogSaved, FogSightEvent,
    FogStealthEvent, MurkFog, RestoreFog, SaveFog, StealthChange, SwitchBackend,
};
pub use mask::{mask_texels, FogImages};
pub use material::{FogLook, FogOverlayMaterial, FogParamsUniform, FogTerrainExtension, FogTerrainMaterial};
pub use mirror::{mirror_entities, world_blocker, FogAxes, FogMirror, RemovedMurk};
/// murk's run-time choice of backend (from `murk-core`).
pub use murk_core::BackendChoice;
pub use payload::FogGhostPayloadPlugin;
#[cfg(feature = "replicon")]
pub use replicon::{FogObserver, FogSeenBy, MurkReplicationPlugin};
pub use set::MurkSet;

use bevy::prelude::*;

/// What a game usually needs: the plugin, its components, its resources
/// and messages, and the murk types that describe instances.
pub mod prelude {
    pub use crate::{
        FogAntiVision, FogAxes, FogBlocker, FogCapture, FogControl, FogError, FogFade, FogGhost, FogGhostObserver, FogHash, FogHideWhenUnseen,
        FogImages, FogInstance, FogInstances, FogLook, FogMirror, FogObserverStealthEvent, FogOverlayMaterial, FogProfile, FogQueries, FogRestored,
        FogReveal, FogSaved, FogSightEvent, FogStealth, FogStealthEvent, FogTerrainExtension, FogTerrainMaterial, FogTracked, FogViewer, FogVision,
        MurkFog, MurkPlugin, MurkSet, RestoreFog, SaveFog, StealthChange, SwitchBackend,
    };
    pub use murk_core::{Area, BackendChoice, Blocker, BlockerShape, InstanceDesc, Profile, StealthActor, TeamMask, Tracked, VisionSource};
}

/// murk's plugin. Choose the backend at run time (murk's one
/// [`BackendChoice`], re-exported in the prelude): `Cpu` (the reference, on
/// every core), `Gpu` (Bevy's render device when the app renders, murk's own
/// device otherwise; refused, with the reason in a [`FogError`], when there
/// is no adapter or it lacks what murk needs) or `Auto` (the GPU when it can
/// run murk, else the CPU). [`MurkPlugin::default`] starts on `Auto`.
#[derive(Clone)]
pub struct MurkPlugin {
    /// The backend to start on ([`SwitchBackend`] changes it later).
    pub backend: BackendChoice,
    /// How Bevy's axes map onto murk's ground plane.
    pub axes: FogAxes,
    /// Instances to create at startup (more can be added to
    /// [`FogInstances`] at any time).
    pub instances: Vec<FogInstance>,
    /// Hash murk's state after every tick into [`FogHash`], two ticks late:
    /// on the GPU the hash is computed on the device and read back without
    /// waiting, so a lockstep game can leave it on.
    pub hash_each_tick: bool,
}

impl MurkPlugin {
    /// The plugin on `backend`, 2D axes, no instances yet.
    pub fn new(backend: BackendChoice) -> Self {
        Self { backend, axes: FogAxes::XY, instances: Vec::new(), hash_each_tick: false }
    }

    /// Adds an instance to create at startup.
    pub fn instance(mut self, instance: FogInstance) -> Self {
        self.instances.push(instance);
        self
    }

    /// Sets how Bevy's axes map onto murk's.
    pub fn axes(mut self, axes: FogAxes) -> Self {
        self.axes = axes;
        self
    }

    /// Turns the per-tick lockstep hash on or off.
    pub fn hash_each_tick(mut self, on: bool) -> Self {
        self.hash_each_tick = on;
        self
    }
}

impl Default for MurkPlugin {
    fn default() -> Self {
        Self::new(BackendChoice::Auto)
    }
}

impl Plugin for MurkPlugin {
    fn build(&self, app: &mut App) {
        let mut instances = FogInstances::default();
        for i in &self.instances {
            instances.insert(i.clone());
        }
        app.insert_resource(instances)
            .insert_resource(FogMirror::new(self.axes))
            .insert_resource(FogHash::default())
            .init_resource::<FogImages>()
            .add_message::<FogStealthEvent>()
            .add_message::<FogObserverStealthEvent>()
            .add_message::<FogSightEvent>()
            .add_message::<FogError>()
            .add_message::<SaveFog>()
            .add_message::<FogSaved>()
            .add_message::<RestoreFog>()
            .add_message::<FogRestored>()
            .add_message::<SwitchBackend>()
            .configure_sets(FixedUpdate, (MurkSet::Mirror, MurkSet::Tick, MurkSet::Publish).chain());
        fog::build(app, self.backend, self.hash_each_tick);
        mirror::build(app);
        fade::build(app);
        mask::build(app);
        material::build(app);
    }

    fn finish(&self, app: &mut App) {
        // The render device (when the app renders) exists from here on.
        mask::finish(app);
    }
}
