//! The components a Bevy game puts on its entities for murk to see.
//!
//! Each wraps the plain-data component of `murk_core` of the same role; the
//! entity's `Transform` gives the position (see [`crate::FogAxes`]). murk
//! mirrors only entities that carry at least one of them.

use bevy::prelude::*;
use murk_core::{AntiVision, Blocker, HeightCapture, StealthActor, Tracked, TransientReveal, VisionSource};

/// A vision source: reveals a disk (or cone) around the entity.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct FogVision {
    /// Radius, falloff, eye height, cone, team, height layer.
    pub source: VisionSource,
    /// Turn the cone with the entity: its yaw is the heading of the
    /// entity's local +X axis in the ground plane, plus the cone's own yaw.
    pub cone_follows_rotation: bool,
}

impl FogVision {
    /// A source of `radius` world units with the default falloff and eye height.
    pub fn new(radius: f32) -> Self {
        Self { source: VisionSource::new(radius), cone_follows_rotation: false }
    }

    /// The same source, for `team`.
    pub fn team(mut self, team: u8) -> Self {
        self.source.team = team;
        self
    }
}

/// An occluder (a wall, a rock), its outline relative to the entity.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct FogBlocker(pub Blocker);

/// A top-down height raster (terrain) that murk turns into occlusion.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct FogCapture {
    /// The raster and its recapture policy. With
    /// [`murk_core::CaptureMode::ShowOnly`], murk watches [`Self::members`]
    /// (the mode's own member list is filled from them).
    pub capture: HeightCapture,
    /// Entities whose movement makes a `ShowOnly` capture recapture; each
    /// must carry a murk component itself.
    pub members: Vec<Entity>,
}

/// An actor whose visibility follows the fog (hidden units, ghosts).
#[derive(Component, Clone, Debug, PartialEq, Default)]
pub struct FogStealth(pub StealthActor);

/// An area hidden from the teams it targets (smoke, a cloaking field).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct FogAntiVision(pub AntiVision);

/// A reveal that lasts a number of ticks (a flare, a ping); murk despawns
/// the entity when it runs out.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct FogReveal(pub TransientReveal);

/// Hides the entity while its [`FogStealth`] actor is not visible, and
/// shows it again once it is: the enemy units a player's team cannot see
/// disappear from the screen. With the actor's `fade_seconds` above zero
/// they fade out and in over that time instead of popping: the entity's
/// [`FogFade`] scales the alpha of its `Sprite`, and of its
/// `StandardMaterial` or `ColorMaterial` (the entity is given its own copy
/// of the material the first time it fades, blended while partly faded).
/// Its [`Visibility`] is `Hidden` once it has faded out completely.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[require(FogStealth, Visibility)]
pub struct FogHideWhenUnseen;

/// How far murk has faded a [`FogStealth`] actor in, after the last tick:
/// 0 fully hidden, 1 fully shown, in between while it fades over the
/// actor's `fade_seconds` (murk's fade, 0..=65535, divided by 65535). The
/// plugin inserts it on every actor murk has checked and keeps it current;
/// [`FogHideWhenUnseen`] applies it to the built-in materials, and a game's
/// own materials can read it.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct FogFade(pub f32);

impl FogFade {
    /// murk's fade (0..=65535) as a fraction.
    pub fn from_murk(fade: u16) -> Self {
        Self(f32::from(fade) / f32::from(u16::MAX))
    }
}

/// A ghost murk placed where a hidden [`FogStealth`] actor in
/// [`murk_core::HideMode::FreezeWithGhost`] was last seen. The plugin spawns
/// the entity with a `Transform` there and despawns it when murk removes
/// the ghost; add a sprite or mesh to it in an observer of `Add<FogGhost>`.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct FogGhost {
    /// The actor it stands in for.
    pub actor: Entity,
}

/// The local player's view on a client: the instance (team) whose eyes
/// this app draws through. Per-observer stealth actors
/// (`StealthActor::per_observer`) then fade, hide and leave ghosts by that
/// observer's state ([`FogFade`], [`FogHideWhenUnseen`]), and ghosts of
/// other observers are hidden. `None` (the default): per-observer actors
/// are left alone and every ghost is shown, as on a server. A name that is
/// no instance is a [`crate::FogError`] each tick.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct FogViewer(pub Option<String>);

/// On the ghost of a per-observer actor (`StealthActor::per_observer`): the
/// instance whose players it stands in for; show it to them only.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
pub struct FogGhostObserver(pub String);

/// An entity whose visibility per team matters (a unit, a building, a
/// projectile): murk works out every tick which instances see it
/// (`FogSubsystem::observers_of`; `docs/multiplayer.md`).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct FogTracked(pub Tracked);
