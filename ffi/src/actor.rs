//! Stealth actors on entities: whose visibility follows the fog, with
//! events when it changes and ghosts where it was last seen.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::entity::label;
use crate::guard::call;
use crate::status::FfiError;
use crate::{raw, registry};
use murk_core::{HideMode, StealthActor, VisibilityPolicy};
use std::ffi::c_char;

/// Hidden when not seen.
pub const MURK_HIDE: u32 = 0;
/// Hidden when not seen, leaving a ghost entity where it was last seen.
pub const MURK_HIDE_FREEZE_WITH_GHOST: u32 = 1;
/// The fog mask where the actor stands decides.
pub const MURK_POLICY_FOG_DRIVEN: u32 = 0;
/// Always visible.
pub const MURK_POLICY_ALWAYS_VISIBLE: u32 = 1;
/// Always hidden.
pub const MURK_POLICY_ALWAYS_HIDDEN: u32 = 2;

/// A stealth actor (`murk_core::StealthActor`). Start from
/// `murk_stealth_default`; flags are 0 (off) or any other value (on).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MurkStealth {
    /// `MURK_HIDE` or `MURK_HIDE_FREEZE_WITH_GHOST`.
    pub hide_mode: u32,
    /// `MURK_POLICY_FOG_DRIVEN`, `MURK_POLICY_ALWAYS_VISIBLE` or
    /// `MURK_POLICY_ALWAYS_HIDDEN`.
    pub policy: u32,
    /// The mask value (`0..=1`) at which it counts as seen; negative: the
    /// instance's `visibility_cutoff`.
    pub cutoff_override: f32,
    /// Seconds of the fade in and out (0: instant).
    pub fade_seconds: f32,
    /// The instance whose mask decides (UTF-8, `instance_len` bytes); null:
    /// the instance it stands in. Read during `murk_entity_set_stealth` only.
    pub instance: *const c_char,
    /// The length of `instance` in bytes.
    pub instance_len: usize,
    /// A state per observer (every instance judges it on its own mask,
    /// with its own events and ghost) instead of one for everybody.
    pub per_observer: u32,
    /// Cloaked: a fog-driven actor shown to an observer only while a
    /// detector of the teams it observes detects it.
    pub cloaked: u32,
}

/// Fills `out_stealth` with murk's defaults: hidden when not seen, fog
/// driven, the instance's cutoff, no fade, one state for everybody.
#[no_mangle]
pub extern "C" fn murk_stealth_default(out_stealth: *mut MurkStealth) -> i32 {
    call(|| {
        let d = StealthActor::default();
        let s = MurkStealth {
            hide_mode: MURK_HIDE,
            policy: MURK_POLICY_FOG_DRIVEN,
            cutoff_override: d.cutoff_override,
            fade_seconds: d.fade_seconds,
            instance: std::ptr::null(),
            instance_len: 0,
            per_observer: 0,
            cloaked: u32::from(d.cloaked),
        };
        raw::write(out_stealth, s, "out_stealth")
    })
}

/// Makes an entity a stealth actor (replacing the one it had). Its
/// transitions come out of the ticks (`murk_stealth_events`,
/// `murk_observer_stealth_events`). Checked now; errors name the field
/// (`entity 3.stealth.fade_seconds`).
#[no_mangle]
pub extern "C" fn murk_entity_set_stealth(fog: u64, entity: u64, stealth: *const MurkStealth) -> i32 {
    call(|| {
        let s = raw::read(stealth, "stealth")?;
        let hide_mode = match s.hide_mode {
            MURK_HIDE => HideMode::Hide,
            MURK_HIDE_FREEZE_WITH_GHOST => HideMode::FreezeWithGhost,
            other => return Err(FfiError::invalid("stealth.hide_mode", other, "must be MURK_HIDE (0) or MURK_HIDE_FREEZE_WITH_GHOST (1)")),
        };
        let policy = match s.policy {
            MURK_POLICY_FOG_DRIVEN => VisibilityPolicy::FogDriven,
            MURK_POLICY_ALWAYS_VISIBLE => VisibilityPolicy::AlwaysVisible,
            MURK_POLICY_ALWAYS_HIDDEN => VisibilityPolicy::AlwaysHidden,
            other => {
                return Err(FfiError::invalid(
                    "stealth.policy",
                    other,
                    "must be MURK_POLICY_FOG_DRIVEN (0), MURK_POLICY_ALWAYS_VISIBLE (1) or MURK_POLICY_ALWAYS_HIDDEN (2)",
                ))
            }
        };
        let instance = raw::optional_text(s.instance, s.instance_len, "stealth.instance")?.map(str::to_string);
        let actor = StealthActor {
            hide_mode,
            policy,
            cutoff_override: s.cutoff_override,
            fade_seconds: s.fade_seconds,
            instance,
            per_observer: s.per_observer != 0,
            cloaked: s.cloaked != 0,
        };
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            murk_core::stealth::quantize(&label(e), &actor)?;
            h.world.insert_one(e, actor).map_err(|_| FfiError::StaleEntity(entity))
        })
    })
}
