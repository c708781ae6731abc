//! Vision sources and anti-vision areas on entities, as flat C structs.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::entity::label;
use crate::guard::call;
use crate::status::FfiError;
use crate::{raw, registry};
use murk_core::glam::Vec3;
use murk_core::{AntiVision, Cone, Detection, HeightLayer, MurkError, TeamMask, VisionSource};

/// A vision source (`murk_core::VisionSource`): it reveals a disk, or a
/// cone, around its entity's position. Start from `murk_source_default`.
/// Flags are 0 (off) or any other value (on).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MurkSource {
    /// Reveal radius in world units (not negative).
    pub radius: f32,
    /// Whether `falloff` is given; off: the instance profile's `smooth_falloff`.
    pub has_falloff: u32,
    /// The outer fraction (`0..=1`) of the radius over which the reveal fades out.
    pub falloff: f32,
    /// Eye height above the position (world units).
    pub eye_height: f32,
    /// Where the eye sits relative to the position (X along the cone's
    /// direction when there is a cone; Z adds to `eye_height`).
    pub eye_offset: [f32; 3],
    /// Whether the source sees only within its cone.
    pub has_cone: u32,
    /// The cone's direction, degrees counter-clockwise from world +X.
    pub cone_yaw_degrees: f32,
    /// The cone's half opening angle, `0..=180` degrees.
    pub cone_half_angle_degrees: f32,
    /// Team, `0..=63`; an instance is revealed by the teams it observes.
    pub team: u32,
    /// Whether the source takes part in height layers only over
    /// `vertical_extent` above its Z (off: always, as in 2D).
    pub has_height_layer: u32,
    /// The vertical extent above the entity's Z (world units).
    pub vertical_extent: f32,
    /// Sees through every blocker and height (a scan, a spell).
    pub see_through: u32,
    /// Whether it detects cloaked stealth actors: `MURK_DETECTS_NONE`,
    /// `MURK_DETECTS_IN_RANGE` (within its radius, through walls) or
    /// `MURK_DETECTS_IN_SIGHT` (with a clear sight line).
    pub detects: u32,
    /// The sensor layer it senses, `0..=255` (0: sight; radar, sonar: the
    /// game numbers them).
    pub layer: u32,
}

/// A source that detects no cloaked actor.
pub const MURK_DETECTS_NONE: u32 = 0;
/// A source that detects cloaked actors within its radius, through walls.
pub const MURK_DETECTS_IN_RANGE: u32 = 1;
/// A source that detects cloaked actors it has a clear sight line to.
pub const MURK_DETECTS_IN_SIGHT: u32 = 2;

/// An anti-vision area (`murk_core::AntiVision`): where it covers a texel
/// of an instance observing a targeted team, that team sees less there.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MurkAntiVision {
    /// Radius in world units.
    pub radius: f32,
    /// Outer fraction of the radius over which the concealment fades out.
    pub falloff: f32,
    /// The teams (bit set) it hides the area from; `MURK_ALL_TEAMS`: all.
    pub targets: u64,
    /// The sensor layer it jams, `0..=255` (0: sight; a radar jammer on
    /// the radar's layer).
    pub layer: u32,
}

impl From<VisionSource> for MurkSource {
    fn from(s: VisionSource) -> Self {
        let cone = s.cone.unwrap_or(Cone { yaw_degrees: 0.0, half_angle_degrees: 180.0 });
        MurkSource {
            radius: s.radius,
            has_falloff: u32::from(s.falloff.is_some()),
            falloff: s.falloff.unwrap_or(0.0),
            eye_height: s.eye_height,
            eye_offset: s.eye_offset.to_array(),
            has_cone: u32::from(s.cone.is_some()),
            cone_yaw_degrees: cone.yaw_degrees,
            cone_half_angle_degrees: cone.half_angle_degrees,
            team: u32::from(s.team),
            has_height_layer: u32::from(s.height_layer.is_some()),
            vertical_extent: s.height_layer.map_or(0.0, |l| l.vertical_extent),
            see_through: u32::from(s.see_through),
            detects: match s.detects {
                Detection::None => MURK_DETECTS_NONE,
                Detection::InRange => MURK_DETECTS_IN_RANGE,
                Detection::InSight => MURK_DETECTS_IN_SIGHT,
            },
            layer: u32::from(s.layer),
        }
    }
}

/// `value` as a sensor layer, or the error naming `field`.
fn layer(field: impl FnOnce() -> String, value: u32) -> Result<u8, FfiError> {
    u8::try_from(value).map_err(|_| MurkError::invalid(field(), value, "must be within 0..=255").into())
}

/// Fills `out_source` with murk's defaults (radius 0, eye height 1.5, team
/// 0, no falloff, cone or height layer of its own).
#[no_mangle]
pub extern "C" fn murk_source_default(out_source: *mut MurkSource) -> i32 {
    call(|| raw::write(out_source, MurkSource::from(VisionSource::new(0.0)), "out_source"))
}

/// Makes an entity a vision source (replacing the one it had). The
/// source is checked now; errors name its field
/// (`entity 3.source.radius`).
#[no_mangle]
pub extern "C" fn murk_entity_set_source(fog: u64, entity: u64, source: *const MurkSource) -> i32 {
    call(|| {
        let s = raw::read(source, "source")?;
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            let label = label(e);
            let field = || format!("{label}.source.team");
            let team = u8::try_from(s.team).map_err(|_| MurkError::invalid(field(), s.team, "must be within 0..=63"))?;
            let team = TeamMask::check(team, field)?;
            let source = VisionSource {
                radius: s.radius,
                falloff: (s.has_falloff != 0).then_some(s.falloff),
                eye_height: s.eye_height,
                cone: (s.has_cone != 0).then_some(Cone { yaw_degrees: s.cone_yaw_degrees, half_angle_degrees: s.cone_half_angle_degrees }),
                team,
                height_layer: (s.has_height_layer != 0).then_some(HeightLayer { vertical_extent: s.vertical_extent }),
                eye_offset: Vec3::from(s.eye_offset),
                see_through: s.see_through != 0,
                detects: match s.detects {
                    MURK_DETECTS_NONE => Detection::None,
                    MURK_DETECTS_IN_RANGE => Detection::InRange,
                    MURK_DETECTS_IN_SIGHT => Detection::InSight,
                    other => {
                        let why = "must be MURK_DETECTS_NONE (0), MURK_DETECTS_IN_RANGE (1) or MURK_DETECTS_IN_SIGHT (2)";
                        return Err(MurkError::invalid(format!("{label}.source.detects"), other, why).into());
                    }
                },
                layer: layer(|| format!("{label}.source.layer"), s.layer)?,
            };
            source.check(&label)?;
            h.world.insert_one(e, source).map_err(|_| FfiError::StaleEntity(entity))
        })
    })
}

/// Makes an entity an anti-vision area (replacing the one it had); errors
/// name its field as the tick does (`entity 3.anti_vision.source.radius`).
#[no_mangle]
pub extern "C" fn murk_entity_set_anti_vision(fog: u64, entity: u64, area: *const MurkAntiVision) -> i32 {
    call(|| {
        let a = raw::read(area, "area")?;
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            let layer = layer(|| format!("{}.anti_vision.layer", label(e)), a.layer)?;
            let anti = AntiVision { radius: a.radius, falloff: a.falloff, targets: TeamMask(a.targets), layer };
            // Checked as the tick checks it: as a source, named
            // `entity 3.anti_vision.source.radius`.
            let as_source = VisionSource { falloff: Some(anti.falloff), eye_height: 0.0, ..VisionSource::new(anti.radius) };
            as_source.check(&format!("{}.anti_vision", label(e)))?;
            h.world.insert_one(e, anti).map_err(|_| FfiError::StaleEntity(entity))
        })
    })
}
