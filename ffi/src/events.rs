//! What the last tick changed for the game: stealth transitions, and the
//! tracked entities each observer (instance) gained or lost sight of, with
//! each observer's sight set now.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::guard::call;
use crate::{raw, registry};
use murk_core::hecs::Entity;
use murk_core::{SightEvent, StealthEvent};
use std::ffi::c_char;

/// The actor became visible.
pub const MURK_EVENT_REVEALED: u32 = 1;
/// The actor became hidden.
pub const MURK_EVENT_HIDDEN: u32 = 2;
/// A ghost entity was spawned where the actor was last seen.
pub const MURK_EVENT_GHOST_SPAWNED: u32 = 3;
/// The actor's ghost entity was despawned (seen again, or gone).
pub const MURK_EVENT_GHOST_REMOVED: u32 = 4;
/// The observer sees the tracked entity from this tick on.
pub const MURK_SIGHT_ENTERED: u32 = 1;
/// The observer no longer sees the tracked entity (out of sight, no
/// longer tracked, or despawned).
pub const MURK_SIGHT_LEFT: u32 = 2;

/// A stealth transition of the last tick.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MurkStealthEvent {
    /// `MURK_EVENT_REVEALED`, `MURK_EVENT_HIDDEN`,
    /// `MURK_EVENT_GHOST_SPAWNED` or `MURK_EVENT_GHOST_REMOVED`.
    pub kind: u32,
    /// The actor's entity.
    pub actor: u64,
    /// The ghost's entity (0 for revealed and hidden).
    pub ghost: u64,
}

/// A change of an observer's sight set in the last tick.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MurkSightEvent {
    /// `MURK_SIGHT_ENTERED` or `MURK_SIGHT_LEFT`.
    pub kind: u32,
    /// The tracked entity.
    pub entity: u64,
}

fn bits(e: Entity) -> u64 {
    e.to_bits().get()
}

impl From<&StealthEvent> for MurkStealthEvent {
    fn from(e: &StealthEvent) -> Self {
        let (kind, ghost) = match e {
            StealthEvent::Revealed { .. } => (MURK_EVENT_REVEALED, 0),
            StealthEvent::Hidden { .. } => (MURK_EVENT_HIDDEN, 0),
            StealthEvent::GhostSpawned { ghost, .. } => (MURK_EVENT_GHOST_SPAWNED, bits(*ghost)),
            StealthEvent::GhostRemoved { ghost, .. } => (MURK_EVENT_GHOST_REMOVED, bits(*ghost)),
        };
        MurkStealthEvent { kind, actor: bits(e.actor()), ghost }
    }
}

/// The last tick's transitions of the stealth actors with one state for
/// everybody, in actor order, into `buf` of `capacity` events; `out_len`
/// receives how many there are (a null `buf` with capacity 0 asks for that
/// only).
#[no_mangle]
pub extern "C" fn murk_stealth_events(fog: u64, buf: *mut MurkStealthEvent, capacity: usize, out_len: *mut usize) -> i32 {
    call(|| {
        let events: Vec<MurkStealthEvent> = registry::with_fog(fog, |h| Ok(h.report.events.iter().map(MurkStealthEvent::from).collect()))?;
        raw::fill(buf, capacity, &events, out_len, "buf").map(drop)
    })
}

/// The last tick's transitions of per-observer stealth actors as observer
/// (instance) `observer` judged them, in actor order; buffers as for
/// `murk_stealth_events`.
#[no_mangle]
pub extern "C" fn murk_observer_stealth_events(
    fog: u64,
    observer: *const c_char,
    observer_len: usize,
    buf: *mut MurkStealthEvent,
    capacity: usize,
    out_len: *mut usize,
) -> i32 {
    call(|| {
        let observer = raw::text(observer, observer_len, "observer")?;
        let events: Vec<MurkStealthEvent> = registry::with_fog(fog, |h| {
            h.fog.instance(observer)?;
            Ok(h.report.observer_events.iter().filter(|(o, _)| o == observer).map(|(_, e)| MurkStealthEvent::from(e)).collect())
        })?;
        raw::fill(buf, capacity, &events, out_len, "buf").map(drop)
    })
}

/// The tracked entities that entered or left observer `observer`'s sight
/// set in the last tick, in entity order; buffers as for
/// `murk_stealth_events`.
#[no_mangle]
pub extern "C" fn murk_sight_events(
    fog: u64,
    observer: *const c_char,
    observer_len: usize,
    buf: *mut MurkSightEvent,
    capacity: usize,
    out_len: *mut usize,
) -> i32 {
    call(|| {
        let observer = raw::text(observer, observer_len, "observer")?;
        let events: Vec<MurkSightEvent> = registry::with_fog(fog, |h| {
            h.fog.instance(observer)?;
            Ok(h.report
                .sight
                .iter()
                .filter_map(|e| match e {
                    SightEvent::Entered { observer: o, entity } if o == observer => {
                        Some(MurkSightEvent { kind: MURK_SIGHT_ENTERED, entity: bits(*entity) })
                    }
                    SightEvent::Left { observer: o, entity } if o == observer => {
                        Some(MurkSightEvent { kind: MURK_SIGHT_LEFT, entity: bits(*entity) })
                    }
                    _ => None,
                })
                .collect())
        })?;
        raw::fill(buf, capacity, &events, out_len, "buf").map(drop)
    })
}

/// The tracked entities observer `observer` sees after the last tick, in
/// entity order, into `buf` of `capacity` entity handles; `out_len`
/// receives how many (a null `buf` with capacity 0 asks for that only).
#[no_mangle]
pub extern "C" fn murk_visible_to(
    fog: u64,
    observer: *const c_char,
    observer_len: usize,
    buf: *mut u64,
    capacity: usize,
    out_len: *mut usize,
) -> i32 {
    call(|| {
        let observer = raw::text(observer, observer_len, "observer")?;
        let set: Vec<u64> = registry::with_fog(fog, |h| Ok(h.fog.visible_to(observer)?.into_iter().map(bits).collect()))?;
        raw::fill(buf, capacity, &set, out_len, "buf").map(drop)
    })
}
