//! Entities: spawned at a position in the fog handle's world, moved,
//! despawned, and given or stripped of what murk reads (a vision source, a
//! blocker, a stealth actor, ...).
//!
//! An entity handle is the `hecs` entity's bits (`Entity::to_bits`): an id
//! and a generation, never 0. A despawned entity's handle stays stale even
//! when its id is reused, so a call with it is `MURK_ERR_STALE_ENTITY`. An
//! entity handle belongs to the fog handle whose world spawned it.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::guard::call;
use crate::status::{FfiError, Result};
use crate::{raw, registry};
use murk_core::error::finite;
use murk_core::glam::Vec3;
use murk_core::hecs::Entity;
use murk_core::{AntiVision, Blocker, HeightCapture, MurkError, Position, StealthActor, Tracked, TransientReveal, VisionSource};

/// A vision source (`murk_entity_set_source`).
pub const MURK_COMPONENT_SOURCE: u32 = 1;
/// A blocker (`murk_entity_set_blocker`).
pub const MURK_COMPONENT_BLOCKER: u32 = 2;
/// A stealth actor (`murk_entity_set_stealth`).
pub const MURK_COMPONENT_STEALTH: u32 = 3;
/// Tracked for the sight sets (`murk_entity_set_tracked`).
pub const MURK_COMPONENT_TRACKED: u32 = 4;
/// A transient reveal's countdown (`murk_entity_set_transient`).
pub const MURK_COMPONENT_TRANSIENT: u32 = 5;
/// An anti-vision area (`murk_entity_set_anti_vision`).
pub const MURK_COMPONENT_ANTI_VISION: u32 = 6;
/// A height capture (`murk_capture_add_movingai`, `murk_capture_add_raster`).
pub const MURK_COMPONENT_CAPTURE: u32 = 7;

/// How errors name an entity, as murk's tick does (`entity 7`).
pub(crate) fn label(e: Entity) -> String {
    format!("entity {}", e.id())
}

/// A position whose coordinates are finite; errors name `{field}.x` etc.
/// (`field` is formatted only then: a game moves every entity each tick).
fn position(field: impl Fn() -> String, x: f32, y: f32, z: f32) -> Result<Position> {
    for (axis, v) in [("x", x), ("y", y), ("z", z)] {
        finite(|| format!("{}.{axis}", field()), v)?;
    }
    Ok(Position(Vec3::new(x, y, z)))
}

/// Spawns an entity at world position (`x`, `y`, `z`) with nothing else on
/// it yet, and writes its handle to `out_entity` (0 on failure).
#[no_mangle]
pub extern "C" fn murk_entity_spawn(fog: u64, x: f32, y: f32, z: f32, out_entity: *mut u64) -> i32 {
    call(|| {
        raw::write(out_entity, 0, "out_entity")?;
        let p = position(|| "position".to_string(), x, y, z)?;
        let e = registry::with_fog(fog, |h| Ok(h.world.spawn((p,))))?;
        raw::write(out_entity, e.to_bits().get(), "out_entity")
    })
}

/// Moves an entity to world position (`x`, `y`, `z`).
#[no_mangle]
pub extern "C" fn murk_entity_move(fog: u64, entity: u64, x: f32, y: f32, z: f32) -> i32 {
    call(|| {
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            let p = position(|| format!("{}.position", label(e)), x, y, z)?;
            h.world.insert_one(e, p).map_err(|_| FfiError::StaleEntity(entity))
        })
    })
}

/// Despawns an entity; its handle is stale from then on.
#[no_mangle]
pub extern "C" fn murk_entity_despawn(fog: u64, entity: u64) -> i32 {
    call(|| {
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            h.world.despawn(e).map_err(|_| FfiError::StaleEntity(entity))
        })
    })
}

/// Whether an entity handle names a live entity of the fog handle's world:
/// 1 or 0 to `out_alive` (a stale entity is not an error here). A
/// transient reveal is despawned by the tick that ends it.
#[no_mangle]
pub extern "C" fn murk_entity_alive(fog: u64, entity: u64, out_alive: *mut u32) -> i32 {
    call(|| {
        let alive = registry::with_fog(fog, |h| Ok(h.entity(entity).is_ok()))?;
        raw::write(out_alive, u32::from(alive), "out_alive")
    })
}

/// Takes `component` (a `MURK_COMPONENT_*`) off an entity; an entity
/// without it is left as it is.
#[no_mangle]
pub extern "C" fn murk_entity_remove(fog: u64, entity: u64, component: u32) -> i32 {
    call(|| {
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            let w = &mut h.world;
            // An absent component is no error: the entity is as asked.
            match component {
                MURK_COMPONENT_SOURCE => drop(w.remove_one::<VisionSource>(e)),
                MURK_COMPONENT_BLOCKER => drop(w.remove_one::<Blocker>(e)),
                MURK_COMPONENT_STEALTH => drop(w.remove_one::<StealthActor>(e)),
                MURK_COMPONENT_TRACKED => drop(w.remove_one::<Tracked>(e)),
                MURK_COMPONENT_TRANSIENT => drop(w.remove_one::<TransientReveal>(e)),
                MURK_COMPONENT_ANTI_VISION => drop(w.remove_one::<AntiVision>(e)),
                MURK_COMPONENT_CAPTURE => drop(w.remove_one::<HeightCapture>(e)),
                other => return Err(FfiError::invalid("component", other, "must be one of MURK_COMPONENT_SOURCE (1) to MURK_COMPONENT_CAPTURE (7)")),
            }
            Ok(())
        })
    })
}

/// Tracks an entity for the sight sets: each instance (observer) works out
/// every tick whether it sees a texel of the entity's footprint, a circle
/// of `footprint` world units around its position (0: the texel under
/// it); see `murk_visible_to` and `murk_sight_events`.
#[no_mangle]
pub extern "C" fn murk_entity_set_tracked(fog: u64, entity: u64, footprint: f32) -> i32 {
    murk_entity_set_tracked_in(fog, entity, footprint, Tracked::GROUND)
}

/// `murk_entity_set_tracked` for an entity that moves in `domains`, a bit
/// set (bit 0, `MURK_DOMAIN_GROUND`, is the ground; the game names the
/// others: air, naval, underground): an instance's sight set takes it
/// only where the instance's profile `domains` share a bit with them (a
/// ground radar sees no aircraft; an entity of no domain, 0, is in no
/// sight set).
#[no_mangle]
pub extern "C" fn murk_entity_set_tracked_in(fog: u64, entity: u64, footprint: f32, domains: u32) -> i32 {
    call(|| {
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            let field = format!("{}.tracked.footprint", label(e));
            let f = finite(|| field.clone(), footprint)?;
            if f < 0.0 {
                return Err(MurkError::invalid(field, f, "must not be negative").into());
            }
            h.world.insert_one(e, Tracked { footprint, domains }).map_err(|_| FfiError::StaleEntity(entity))
        })
    })
}

/// The ground domain of a tracked entity (`murk_entity_set_tracked_in`).
pub const MURK_DOMAIN_GROUND: u32 = 1;

const _: () = assert!(MURK_DOMAIN_GROUND == Tracked::GROUND, "the C ground domain is murk's");

/// Makes an entity a transient reveal (a flare, a sound ping): the tick
/// that ends its `ticks` ticks (at least 1) despawns it.
#[no_mangle]
pub extern "C" fn murk_entity_set_transient(fog: u64, entity: u64, ticks: u32) -> i32 {
    call(|| {
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            if ticks == 0 {
                return Err(MurkError::invalid(format!("{}.transient_ticks", label(e)), ticks, "must be at least 1").into());
            }
            h.world.insert_one(e, TransientReveal { remaining_ticks: ticks }).map_err(|_| FfiError::StaleEntity(entity))
        })
    })
}
