//! Plain-data components a game puts on its `hecs` entities.
//!
//! murk reads them each tick; behaviour lives in [`crate::FogSubsystem`].

use crate::error::{finite, in_range, MurkError, Result};
use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

/// World position of an entity (sources, blockers, capture members).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Position(pub Vec3);

/// A vision cone: the source sees only within `half_angle_degrees` of `yaw_degrees`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cone {
    /// Direction in the ground plane, degrees counter-clockwise from world +X.
    pub yaw_degrees: f32,
    /// Half opening angle in degrees, `0..=180`.
    pub half_angle_degrees: f32,
}

/// Height-layer participation of a source or blocker (Z layering).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeightLayer {
    /// Vertical extent above the entity's Z that takes part (world units).
    pub vertical_extent: f32,
}

/// A vision source: reveals a disk (or cone) around its [`Position`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisionSource {
    /// Reveal radius in world units.
    pub radius: f32,
    /// Edge softness: the outer fraction (`0..=1`) of the radius fades out
    /// linearly; `None` takes the instance profile's `smooth_falloff`.
    #[serde(default)]
    pub falloff: Option<f32>,
    /// Eye height above the position (world units).
    #[serde(default = "default_eye_height")]
    pub eye_height: f32,
    /// Optional view cone.
    #[serde(default)]
    pub cone: Option<Cone>,
    /// Team (0..=63, below [`TeamMask::TEAMS`]); instances observe a set of
    /// teams.
    #[serde(default)]
    pub team: u8,
    /// Height-layer participation; `None` behaves as 2D (always participates).
    #[serde(default)]
    pub height_layer: Option<HeightLayer>,
    /// Where the eye sits relative to the position (world units): an eye on
    /// a mast, a turret ahead of the hull. X and Y turn with the cone's yaw
    /// when the source has a cone (X along the cone's direction), and are
    /// world axes otherwise; Z adds to `eye_height`. The source sees from
    /// there; its team, Z layer and slab are the entity's.
    #[serde(default)]
    pub eye_offset: Vec3,
    /// Sees through every blocker and height (a scan, a spell): its reveal
    /// is its radius, cone and falloff alone, whatever the ray method.
    #[serde(default)]
    pub see_through: bool,
    /// What it detects of cloaked stealth actors ([`StealthActor::cloaked`]).
    #[serde(default)]
    pub detects: Detection,
    /// The sensor layer it senses (0: sight): only instances of that layer
    /// (`Profile::layer`) take it.
    #[serde(default)]
    pub layer: u8,
}

/// What a vision source detects of cloaked stealth actors: a cloaked
/// actor is shown to an observer only while a detector of a team the
/// observer's instance observes detects it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detection {
    /// Nothing: cloaked actors stay hidden from it.
    #[default]
    None,
    /// Every cloaked actor inside its radius and cone, through walls (the
    /// immediate query's integer rule).
    InRange,
    /// Every cloaked actor inside its radius and cone that it has a clear
    /// sight line to in the observer's instance (from its eye, by the
    /// instance's ray method; see `FogSubsystem::submit_sight_lines`).
    InSight,
}

fn default_eye_height() -> f32 {
    1.5
}

impl VisionSource {
    /// A source of `radius` with the default falloff and eye height.
    pub fn new(radius: f32) -> Self {
        Self {
            radius,
            falloff: None,
            eye_height: default_eye_height(),
            cone: None,
            team: 0,
            height_layer: None,
            eye_offset: Vec3::ZERO,
            see_through: false,
            detects: Detection::None,
            layer: 0,
        }
    }

    /// Where the source sees from in the ground plane, in `f64`: the
    /// position moved by the eye offset's X and Y (turned by the cone's yaw
    /// when there is a cone).
    pub fn eye_ground(&self, position: Vec3) -> (f64, f64) {
        let (ox, oy) = (f64::from(self.eye_offset.x), f64::from(self.eye_offset.y));
        let (ox, oy) = match self.cone {
            Some(c) => {
                let (s, c) = crate::transform::sin_cos_degrees(f64::from(c.yaw_degrees));
                (ox * c - oy * s, ox * s + oy * c)
            }
            None => (ox, oy),
        };
        (f64::from(position.x) + ox, f64::from(position.y) + oy)
    }

    /// The checks that do not depend on an instance (the tick also measures
    /// the radius in each instance's texels); errors name `{label}.source.*`.
    pub fn check(&self, label: &(impl std::fmt::Display + ?Sized)) -> Result<()> {
        let r = finite(|| format!("{label}.source.radius"), self.radius)?;
        if r < 0.0 {
            return Err(MurkError::invalid(format!("{label}.source.radius"), self.radius, "must not be negative"));
        }
        if let Some(f) = self.falloff {
            in_range(|| format!("{label}.source.falloff"), f, 0.0, 1.0)?;
        }
        finite(|| format!("{label}.source.eye_height"), self.eye_height)?;
        for (axis, v) in ["x", "y", "z"].into_iter().zip(self.eye_offset.to_array()) {
            finite(|| format!("{label}.source.eye_offset.{axis}"), v)?;
        }
        TeamMask::check(self.team, || format!("{label}.source.team"))?;
        if let Some(c) = self.cone {
            finite(|| format!("{label}.source.cone.yaw_degrees"), c.yaw_degrees)?;
            in_range(|| format!("{label}.source.cone.half_angle_degrees"), c.half_angle_degrees, 0.0, 180.0)?;
        }
        if let Some(layer) = self.height_layer {
            let extent = finite(|| format!("{label}.source.height_layer.vertical_extent"), layer.vertical_extent)?;
            if extent < 0.0 {
                return Err(MurkError::invalid(format!("{label}.source.height_layer.vertical_extent"), extent, "must not be negative"));
            }
        }
        Ok(())
    }
}

/// A transient reveal (a sound ping, a flare): the entity is despawned after
/// `remaining_ticks` ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransientReveal {
    /// Ticks left, counting this one.
    pub remaining_ticks: u32,
}

/// Blocker outline, relative to the entity's [`Position`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum BlockerShape {
    /// A disk.
    Circle {
        /// Radius in world units.
        radius: f32,
    },
    /// An oriented rectangle.
    Rect {
        /// Full size (x, y) in world units.
        size: Vec2,
        /// Rotation, degrees counter-clockwise.
        #[serde(default)]
        yaw_degrees: f32,
    },
    /// A simple polygon (even-odd rule), points relative to the position.
    Polygon {
        /// At least three points.
        points: Vec<Vec2>,
    },
}

/// Whether a blocker is expected to move (informational: murk detects
/// changes of either kind and rebuilds occlusion when any blocker changed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mobility {
    /// Placed once.
    #[default]
    Static,
    /// Moves at run time.
    Dynamic,
}

/// An occluder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blocker {
    /// Outline.
    pub shape: BlockerShape,
    /// Height above the position's Z; `None` is a wall nothing sees over.
    #[serde(default)]
    pub height: Option<f32>,
    /// Height-layer participation (Z layering): the column
    /// `z .. z + height` must overlap an instance's slab.
    #[serde(default)]
    pub use_height_layer: bool,
    /// Static or dynamic.
    #[serde(default)]
    pub mobility: Mobility,
}

impl Blocker {
    /// A wall of the given shape.
    pub fn wall(shape: BlockerShape) -> Self {
        Self { shape, height: None, use_height_layer: false, mobility: Mobility::Static }
    }

    /// The checks that do not depend on an instance; errors name
    /// `{label}.blocker.*`, as the tick's do.
    pub fn check(&self, label: &(impl std::fmt::Display + ?Sized)) -> Result<()> {
        if let Some(v) = self.height {
            let v = finite(|| format!("{label}.blocker.height"), v)?;
            if v < 0.0 {
                return Err(MurkError::invalid(format!("{label}.blocker.height"), v, "must not be negative"));
            }
        }
        self.shape.check(&format!("{label}.blocker.shape"))
    }
}

impl BlockerShape {
    /// Checks the outline (finite numbers, a radius not negative, a
    /// positive size, at least three points); errors name `{field}.*`.
    pub fn check(&self, field: &str) -> Result<()> {
        match self {
            BlockerShape::Circle { radius } => {
                let r = finite(|| format!("{field}.circle.radius"), *radius)?;
                if r < 0.0 {
                    return Err(MurkError::invalid(format!("{field}.circle.radius"), radius, "must not be negative"));
                }
            }
            BlockerShape::Rect { size, yaw_degrees } => {
                let sx = finite(|| format!("{field}.rect.size.x"), size.x)?;
                let sy = finite(|| format!("{field}.rect.size.y"), size.y)?;
                if sx <= 0.0 || sy <= 0.0 {
                    let v = if sx <= 0.0 { size.x } else { size.y };
                    return Err(MurkError::invalid(format!("{field}.rect.size"), v, "must be positive"));
                }
                finite(|| format!("{field}.rect.yaw_degrees"), *yaw_degrees)?;
            }
            BlockerShape::Polygon { points } => {
                if points.len() < 3 {
                    return Err(MurkError::invalid(format!("{field}.polygon.points"), points.len(), "needs at least 3 points"));
                }
                for (i, p) in points.iter().enumerate() {
                    finite(|| format!("{field}.polygon.points[{i}].x"), p.x)?;
                    finite(|| format!("{field}.polygon.points[{i}].y"), p.y)?;
                }
            }
        }
        Ok(())
    }
}

/// How a height capture decides when to recapture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureMode {
    /// Everything contributes: recaptured on every recompute.
    FullScene,
    /// Only the registered member entities contribute.
    ShowOnly {
        /// Registered entities (their [`Position`] and [`Pose`] are watched).
        #[serde(skip)]
        members: Vec<hecs::Entity>,
        /// Recapture only when a member moved, turned or was scaled, or the
        /// member list changed.
        update_only_if_transform_changed: bool,
    },
}

/// A top-down height raster the engine renders and murk consumes.
///
/// Cell `(c, r)` covers world `origin + (c, r) * cell_size` to one cell
/// further; `NaN` cells are empty, `+inf` cells are walls, others hold an
/// absolute world height.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightCapture {
    /// World XY of the corner of cell (0, 0).
    pub origin: Vec2,
    /// Cell size in world units.
    pub cell_size: f32,
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Row-major heights (`NaN` = nothing there).
    pub cells: Vec<f32>,
    /// Recapture policy.
    pub mode: CaptureMode,
    /// Whether the capture counts. A disabled capture is left out as if
    /// it were not there (its heights leave the occlusion) until enabled.
    pub enabled: bool,
}

/// The rotation and scale of an entity, beside its [`Position`]: murk reads
/// them from the members of a `ShowOnly` height capture, which it recaptures
/// when a member turns or is scaled as when it moves (what the engine
/// renders into the capture changed). Engines with transforms mirror them
/// here (the Bevy plugin does, for capture members).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Rotation.
    pub rotation: glam::Quat,
    /// Scale per axis.
    pub scale: Vec3,
}

/// Teams an instance observes, as a bit set of team ids 0..=63 (bit `t`
/// for team `t`): a free-for-all of 64 players, each its own team.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamMask(pub u64);

impl TeamMask {
    /// Every team.
    pub const ALL: TeamMask = TeamMask(u64::MAX);
    /// How many teams there are: ids run from 0 to `TEAMS - 1`.
    pub const TEAMS: u8 = 64;
    /// Whether `team` is in the set.
    pub fn contains(self, team: u8) -> bool {
        team < Self::TEAMS && self.0 & (1 << team) != 0
    }
    /// The set of the listed teams; an id of [`TeamMask::TEAMS`] or more is
    /// an error naming it (`teams[i]`).
    pub fn of(teams: &[u8]) -> Result<TeamMask> {
        let mut mask = 0;
        for (i, &t) in teams.iter().enumerate() {
            Self::check(t, || format!("teams[{i}]"))?;
            mask |= 1 << t;
        }
        Ok(TeamMask(mask))
    }
    /// `team` as an id, or an error naming `field`.
    pub fn check(team: u8, field: impl FnOnce() -> String) -> Result<u8> {
        if team < Self::TEAMS {
            Ok(team)
        } else {
            Err(MurkError::invalid(field(), team, format!("must be within 0..={}", Self::TEAMS - 1)))
        }
    }
}

impl Default for TeamMask {
    fn default() -> Self {
        Self::ALL
    }
}

/// Anti-vision: an area hidden from the teams it targets (a smoke screen, a
/// cloaking field). Where it covers a texel of an instance that observes a
/// targeted team, visibility there is scaled down by its strength, whatever
/// the sources say. No occlusion applies to it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AntiVision {
    /// Radius in world units.
    pub radius: f32,
    /// Outer fraction of the radius over which the concealment fades out.
    #[serde(default)]
    pub falloff: f32,
    /// Teams it hides the area from.
    #[serde(default)]
    pub targets: TeamMask,
    /// The sensor layer it cancels (0: sight; a radar layer's is a jammer):
    /// only instances of that layer (`Profile::layer`) take it.
    #[serde(default)]
    pub layer: u8,
}

/// How a stealth actor reacts when it stops being visible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HideMode {
    /// Just hide the actor.
    #[default]
    Hide,
    /// Hide it and leave a ghost at the last transform it was seen at.
    FreezeWithGhost,
}

/// Who decides a stealth actor's visibility.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VisibilityPolicy {
    /// The fog mask at the actor's position (the default).
    #[default]
    FogDriven,
    /// Always visible.
    AlwaysVisible,
    /// Always hidden.
    AlwaysHidden,
}

/// An actor whose visibility follows the fog.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StealthActor {
    /// What happens when it is hidden.
    #[serde(default)]
    pub hide_mode: HideMode,
    /// Who decides.
    #[serde(default)]
    pub policy: VisibilityPolicy,
    /// Per-actor cutoff (`0..=1`); negative uses the instance's `visibility_cutoff`.
    #[serde(default = "cutoff_off")]
    pub cutoff_override: f32,
    /// Seconds of the fade in and out (0 = instant).
    #[serde(default)]
    pub fade_seconds: f32,
    /// The instance whose mask decides; `None` is the instance the actor stands
    /// in (overlapping in X/Y, closest in Z).
    #[serde(default)]
    pub instance: Option<String>,
    /// A state per observer instead of one for everybody: every instance
    /// judges the actor on its own final mask, with its own events and its
    /// own ghost (`TickReport::observer_events`). Excludes `instance`.
    #[serde(default)]
    pub per_observer: bool,
    /// Cloaked: besides what the fog decides, shown to an observer only
    /// while a detector ([`VisionSource::detects`]) of a team its judging
    /// instance observes detects it (with `FogDriven`; the other policies
    /// decide alone).
    #[serde(default)]
    pub cloaked: bool,
}

fn cutoff_off() -> f32 {
    -1.0
}

impl Default for StealthActor {
    fn default() -> Self {
        Self {
            hide_mode: HideMode::Hide,
            policy: VisibilityPolicy::FogDriven,
            cutoff_override: -1.0,
            fade_seconds: 0.0,
            instance: None,
            per_observer: false,
            cloaked: false,
        }
    }
}

/// Marks a ghost entity murk spawned for a [`StealthActor`] in
/// [`HideMode::FreezeWithGhost`]; it carries the last seen [`Position`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ghost {
    /// The actor it stands in for.
    pub actor: hecs::Entity,
}

/// On a ghost of a per-observer stealth actor: the observer (instance) it
/// stands in for; only that observer's players should be shown it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GhostObserver(pub String);

/// Marks an entity whose visibility matters to the game's players (a unit,
/// a building, a projectile): each instance is an observer, and every tick
/// murk works out which tracked entities each observer sees (see
/// `FogSubsystem::visible_to`). It is seen when any internal texel of its
/// footprint has a sight signal (raw visibility or scripted sight reveal,
/// never the presented mask) of at least the instance's visibility cutoff
/// (and at least 1): the contract in `docs/multiplayer.md`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tracked {
    /// Footprint radius around its [`Position`] in world units (0: the
    /// texel under it only). Texels whose centre lies within it count, as
    /// for a circle blocker, and the texel under the position always does.
    pub footprint: f32,
    /// The domains it moves in, a bit set ([`Tracked::GROUND`] by default;
    /// the game names the other bits: air, naval, underground): an
    /// instance's sight set takes it only when it is in a domain of the
    /// instance's `Profile::domains` (ground radar sees no aircraft).
    #[serde(default = "ground")]
    pub domains: u32,
}

fn ground() -> u32 {
    Tracked::GROUND
}

impl Tracked {
    /// The ground domain, bit 0.
    pub const GROUND: u32 = 1;

    /// A ground entity with footprint radius `footprint`.
    pub fn new(footprint: f32) -> Self {
        Self { footprint, domains: Self::GROUND }
    }
}
