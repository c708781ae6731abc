//! Blockers on entities: circles, oriented rectangles and polygons that
//! stop sight, as a flat C struct.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::entity::label;
use crate::guard::call;
use crate::status::FfiError;
use crate::{raw, registry};
use murk_core::glam::Vec2;
use murk_core::{Blocker, BlockerShape, Mobility};

/// A disk of `radius`.
pub const MURK_SHAPE_CIRCLE: u32 = 0;
/// An oriented rectangle of `size`, turned by `yaw_degrees`.
pub const MURK_SHAPE_RECT: u32 = 1;
/// A simple polygon of `point_count` points (even-odd rule).
pub const MURK_SHAPE_POLYGON: u32 = 2;

/// A point in the ground plane, relative to an entity's position.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MurkVec2 {
    /// X.
    pub x: f32,
    /// Y.
    pub y: f32,
}

/// A blocker (`murk_core::Blocker`): an outline around its entity's
/// position that sight does not cross, up to a height or entirely. Start
/// from `murk_blocker_default`; flags are 0 (off) or any other value (on).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MurkBlocker {
    /// `MURK_SHAPE_CIRCLE`, `MURK_SHAPE_RECT` or `MURK_SHAPE_POLYGON`.
    pub shape: u32,
    /// A circle's radius (world units).
    pub radius: f32,
    /// A rectangle's full size (X, Y).
    pub size: [f32; 2],
    /// A rectangle's rotation, degrees counter-clockwise.
    pub yaw_degrees: f32,
    /// A polygon's points (at least 3), relative to the position; read
    /// during `murk_entity_set_blocker` only.
    pub points: *const MurkVec2,
    /// How many points `points` holds.
    pub point_count: usize,
    /// Whether `height` is given; off: a wall nothing sees over.
    pub has_height: u32,
    /// Height above the position's Z.
    pub height: f32,
    /// Takes part in height layers (the column `z .. z + height` must meet
    /// an instance's slab).
    pub use_height_layer: u32,
    /// Expected to move (informational: murk detects changes either way).
    pub dynamic: u32,
}

/// Fills `out_blocker` with a circle of radius 0 that is a wall, static,
/// without points.
#[no_mangle]
pub extern "C" fn murk_blocker_default(out_blocker: *mut MurkBlocker) -> i32 {
    call(|| {
        let b = MurkBlocker {
            shape: MURK_SHAPE_CIRCLE,
            radius: 0.0,
            size: [0.0; 2],
            yaw_degrees: 0.0,
            points: std::ptr::null(),
            point_count: 0,
            has_height: 0,
            height: 0.0,
            use_height_layer: 0,
            dynamic: 0,
        };
        raw::write(out_blocker, b, "out_blocker")
    })
}

/// Makes an entity a blocker (replacing the one it had). The blocker is
/// checked now; errors name its field (`entity 3.blocker.shape.circle.radius`).
#[no_mangle]
pub extern "C" fn murk_entity_set_blocker(fog: u64, entity: u64, blocker: *const MurkBlocker) -> i32 {
    call(|| {
        let b = raw::read(blocker, "blocker")?;
        let shape = match b.shape {
            MURK_SHAPE_CIRCLE => BlockerShape::Circle { radius: b.radius },
            MURK_SHAPE_RECT => BlockerShape::Rect { size: Vec2::from(b.size), yaw_degrees: b.yaw_degrees },
            MURK_SHAPE_POLYGON => {
                let points = raw::slice(b.points, b.point_count, "blocker.points")?;
                BlockerShape::Polygon { points: points.iter().map(|p| Vec2::new(p.x, p.y)).collect() }
            }
            other => {
                return Err(FfiError::invalid("blocker.shape", other, "must be MURK_SHAPE_CIRCLE (0), MURK_SHAPE_RECT (1) or MURK_SHAPE_POLYGON (2)"))
            }
        };
        let blocker = Blocker {
            shape,
            height: (b.has_height != 0).then_some(b.height),
            use_height_layer: b.use_height_layer != 0,
            mobility: if b.dynamic != 0 { Mobility::Dynamic } else { Mobility::Static },
        };
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            blocker.check(&label(e))?;
            h.world.insert_one(e, blocker).map_err(|_| FfiError::StaleEntity(entity))
        })
    })
}
