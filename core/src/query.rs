//! Gameplay queries: the immediate query (inside any source's radius or cone,
//! no occlusion, no latency), the mask query (the value of the final mask
//! at a point, batched behind a handle) and sight lines (whether the ray
//! from one point to another is clear, batched behind a handle). The
//! subsystem's side (locating a point, batching queries over its
//! instances, projecting lines) is in `subsystem/queries.rs`.

use crate::components::{Position, TeamMask, VisionSource};
use crate::error::{finite, in_range, MurkError, Result};
use crate::fixed::UNIT_ONE;
use crate::transform::{sin_cos_degrees, AreaTransform};
use glam::Vec3;
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};

/// World coordinates are compared in 1/256 world units (exact integers).
const WORLD_Q: f64 = 256.0;

/// The answer to one point of a mask query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskAnswer {
    /// The point lies in `instance`; `value` is the final mask there.
    Sampled {
        /// The instance that answered (overlapping in X/Y, closest in Z).
        instance: String,
        /// Final mask value, 0..=65535.
        value: u16,
        /// `value >= cutoff` (the instance's cutoff or the query's override).
        visible: bool,
    },
    /// No instance covers the point.
    NoInstance,
}

/// A submitted batch of mask queries or sight lines; poll it each tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct QueryHandle(pub u64);

/// One line of sight question to an instance: does a looker standing at
/// `from`, its eye `eye_height` above it, see the ground under `to`?
///
/// The looker's eye is that of a vision source at `from` with this eye
/// height (the profile's `eye_offset` and `eyes_on_terrain` apply), and
/// the target is the ground of the texel under `to` plus the profile's
/// `target_height` (`to.z` is not read): the line is judged by step 5 of
/// the visibility pass, the ray over the occlusion, with the instance's
/// ray method, exactly as the visibility pass judges the ray of a source
/// there. Range, cone and Z layering are not part of it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SightLine {
    /// Where the looker stands (its `Position`).
    pub from: Vec3,
    /// Where the target stands; X and Y pick its texel.
    pub to: Vec3,
    /// The looker's eye above `from`, world units (a `VisionSource`'s
    /// `eye_height`).
    #[serde(default)]
    pub eye_height: f32,
}

/// The answer to one sight line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SightAnswer {
    /// The light the ray lets through, 0..=65535: 0 or 65535 for the
    /// binary ray methods, a soft shadow's share for the distance field.
    pub light: u16,
    /// `light >= cutoff`, the instance's visibility cutoff: a lone source
    /// at full strength at `from` would show `to` as visible.
    pub visible: bool,
}

/// How much of an instance's grid its explored memory covers
/// ([`crate::FogSubsystem::explored`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explored {
    /// Texels of the memory above 0.
    pub texels: u64,
    /// Texels of the grid.
    pub of: u64,
}

impl Explored {
    /// `texels / of`, `0..=1`.
    pub fn fraction(&self) -> f64 {
        if self.of == 0 {
            0.0
        } else {
            self.texels as f64 / self.of as f64
        }
    }
}

/// A tracked entity an observer senses on a layer other than sight and
/// does not see ([`crate::FogSubsystem::blips`]): where it is, give or
/// take the layer's error, and nothing of what it is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Blip {
    /// The entity's position, moved by the layer's error.
    pub position: Vec3,
}

/// The most sight lines one batch takes; a larger batch is an error (split
/// it), never cut short.
pub const MAX_SIGHT_LINES: usize = 1 << 20;

/// The answers a query handle delivers, of the kind it was submitted as.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryAnswers {
    /// A mask query's, one per point.
    Mask(Vec<MaskAnswer>),
    /// A sight-line batch's, one per line.
    Lines(Vec<SightAnswer>),
}

impl QueryAnswers {
    /// What the handle was submitted as, for errors.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            QueryAnswers::Mask(_) => "a mask query",
            QueryAnswers::Lines(_) => "a sight-line batch",
        }
    }
}

/// Largest coordinate the immediate query takes, in world units: 2^54, so
/// that quantized coordinates stay within ±2^62 and their differences and
/// squares fit 128-bit integers.
pub const MAX_QUERY_COORD: f64 = (1u64 << 54) as f64;
/// Largest source radius the immediate query takes, in world units: 2^40, so
/// that the cone test's products (Q14 directions times squared distances
/// inside the radius) stay below 2^127.
pub const MAX_QUERY_RADIUS: f64 = (1u64 << 40) as f64;

fn quantize(field: &str, v: f32, limit: f64) -> Result<i64> {
    quantize_shown(field, finite(field, v)?, v, limit)
}

/// [`quantize`] of a coordinate murk computed (a source's eye).
fn quantize_f64(field: &str, x: f64, limit: f64) -> Result<i64> {
    if !x.is_finite() {
        return Err(MurkError::invalid(field, x, "must be a finite number"));
    }
    quantize_shown(field, x, x, limit)
}

/// A finite coordinate `x` to 1/256 units; an error shows it as `shown`.
fn quantize_shown(field: &str, x: f64, shown: impl std::fmt::Display, limit: f64) -> Result<i64> {
    if x.abs() > limit {
        return Err(MurkError::invalid(
            field,
            shown,
            format!("is beyond ±{limit} world units, where the immediate query's 1/256-unit integers would overflow"),
        ));
    }
    // |x| <= 2^54, so x * 256 is exact and fits i64.
    Ok((x * WORLD_Q).round() as i64)
}

/// Whether `point` lies inside the radius (and cone) of any sight source
/// (layer 0) of `teams`. Integer arithmetic on coordinates quantized to
/// 1/256 world unit.
pub fn immediate(world: &World, point: Vec3, teams: TeamMask) -> Result<bool> {
    quantize("point.x", point.x, MAX_QUERY_COORD)?;
    quantize("point.y", point.y, MAX_QUERY_COORD)?;
    let mut sources: Vec<(Entity, Position, VisionSource)> =
        world.query::<(Entity, &Position, &VisionSource)>().iter().map(|(e, p, s)| (e, *p, *s)).collect();
    sources.sort_by_key(|(e, _, _)| e.to_bits());
    for (e, pos, s) in sources {
        // Sight only: sources of other sensor layers do not count.
        if s.layer == 0 && teams.contains(s.team) && reaches(e, &pos, &s, point)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `point` lies inside the radius (and cone) of source `s` of
/// entity `e` at `pos`, measured from its eye: the immediate query's
/// integer rule for one source.
pub(crate) fn reaches(e: Entity, pos: &Position, s: &VisionSource, point: Vec3) -> Result<bool> {
    let px = quantize("point.x", point.x, MAX_QUERY_COORD)?;
    let py = quantize("point.y", point.y, MAX_QUERY_COORD)?;
    let label = format!("entity {}", e.id());
    quantize(&format!("{label}.position.x"), pos.0.x, MAX_QUERY_COORD)?;
    quantize(&format!("{label}.position.y"), pos.0.y, MAX_QUERY_COORD)?;
    for (axis, v) in ["x", "y"].into_iter().zip([s.eye_offset.x, s.eye_offset.y]) {
        finite(&format!("{label}.source.eye_offset.{axis}"), v)?;
    }
    // From the eye, as the masks see it.
    let (ex, ey) = s.eye_ground(pos.0);
    let sx = quantize_f64(&format!("{label}.position.x"), ex, MAX_QUERY_COORD)?;
    let sy = quantize_f64(&format!("{label}.position.y"), ey, MAX_QUERY_COORD)?;
    let r = finite(&format!("{label}.source.radius"), s.radius)?;
    if r < 0.0 {
        return Err(MurkError::invalid(format!("{label}.source.radius"), r, "must not be negative"));
    }
    let r = i128::from(quantize(&format!("{label}.source.radius"), s.radius, MAX_QUERY_RADIUS)?);
    // |dx|, |dy| <= 2^63: their squares and sum fit below 2^127.
    let (dx, dy) = (i128::from(px) - i128::from(sx), i128::from(py) - i128::from(sy));
    let (ax, ay) = (dx.unsigned_abs(), dy.unsigned_abs());
    let d2 = ax * ax + ay * ay;
    if d2 >= r.unsigned_abs() * r.unsigned_abs() {
        return Ok(false);
    }
    // Inside the radius: |dx|, |dy| < r <= 2^48, so d2 < 2^97.
    let d2 = d2 as i128;
    if let Some(c) = s.cone {
        let half = in_range(&format!("{label}.source.cone.half_angle_degrees"), c.half_angle_degrees, 0.0, 180.0)?;
        let yaw = finite(&format!("{label}.source.cone.yaw_degrees"), c.yaw_degrees)?;
        if half < 180.0 && d2 > 0 {
            let (sn, cs) = sin_cos_degrees(yaw);
            let unit = f64::from(UNIT_ONE);
            let (cx, cy) = (i128::from((cs * unit).round() as i64), i128::from((sn * unit).round() as i64));
            let cos_half = i128::from((sin_cos_degrees(half).1 * unit).round() as i64);
            // dot >= cos_half * |d|, squared with signs handled.
            let dot = dx * cx + dy * cy;
            let inside =
                if cos_half >= 0 { dot >= 0 && dot * dot >= cos_half * cos_half * d2 } else { dot >= 0 || dot * dot <= cos_half * cos_half * d2 };
            if !inside {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The output texel of a world point in an instance, if the point is inside
/// its area (X/Y), and how far it is from the area's centre in Z.
pub fn texel_of(out: &AreaTransform, center_z: f32, point: Vec3) -> Option<([u32; 2], f64)> {
    let (tx, ty) = out.world_to_texel(f64::from(point.x), f64::from(point.y));
    let (w, h) = (f64::from(out.width()), f64::from(out.height()));
    if !(0.0..=w).contains(&tx) || !(0.0..=h).contains(&ty) {
        return None;
    }
    let texel = [(tx.floor() as u32).min(out.width() - 1), (ty.floor() as u32).min(out.height() - 1)];
    Some((texel, (f64::from(point.z) - f64::from(center_z)).abs()))
}

/// A submitted batch of mask queries or sight lines: its answers,
/// complete once the backend's readback (one for every instance) has
/// landed.
pub(crate) struct PendingQuery {
    pub(crate) answers: QueryAnswers,
    pub(crate) in_flight: Option<(u64, InFlightParts)>,
}

/// What a query's readback fills in when it lands.
pub(crate) enum InFlightParts {
    /// The points each instance answers.
    Mask(Vec<QueryPart>),
    /// Every line, judged against this cutoff.
    Lines { cutoff: u16 },
}

/// The points of a mask query that one instance answers.
pub(crate) struct QueryPart {
    pub(crate) instance: String,
    pub(crate) indices: Vec<usize>,
    pub(crate) cutoff: u16,
}
