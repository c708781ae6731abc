//! Fog instances: one mask (one team's view, a minimap) over an area,
//! created from a profile given as JSON, TOML or RON text.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::guard::call;
use crate::status::{FfiError, Result};
use crate::{raw, registry};
use murk_core::glam::Vec3;
use murk_core::{Area, InstanceDesc, Profile, TeamMask};
use std::ffi::c_char;

/// Profile text in JSON (`{"explored_value": 0.4}`).
pub const MURK_FORMAT_JSON: u32 = 0;
/// Profile text in TOML (`explored_value = 0.4`).
pub const MURK_FORMAT_TOML: u32 = 1;
/// Profile text in RON (`(explored_value: 0.4)`).
pub const MURK_FORMAT_RON: u32 = 2;
/// Every team (0..=63): an instance's `observed_teams`, an anti-vision
/// area's `targets` (bit `t` for team `t`).
pub const MURK_ALL_TEAMS: u64 = u64::MAX;

/// The box an instance covers (`murk_core::Area`): centre and full size
/// in world units, turned by `yaw_degrees` counter-clockwise in the ground
/// plane.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MurkArea {
    /// Centre of the box (world X, Y, Z).
    pub center: [f32; 3],
    /// Full size of the box (not half extents); Z is the height slab.
    pub extents: [f32; 3],
    /// Rotation in the ground plane, degrees counter-clockwise.
    pub yaw_degrees: f32,
}

/// An instance's texture sizes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MurkDims {
    /// Internal width: the passes run at `resolution >> lod`.
    pub width: u32,
    /// Internal height.
    pub height: u32,
    /// Output width (the final mask's).
    pub out_width: u32,
    /// Output height.
    pub out_height: u32,
}

/// A profile from text in `format`; absent text is the default profile.
/// Errors name `profile.<field>`.
fn profile(text: Option<&str>, format: u32) -> Result<Profile> {
    let format = match format {
        MURK_FORMAT_JSON => "json",
        MURK_FORMAT_TOML => "toml",
        MURK_FORMAT_RON => "ron",
        other => return Err(FfiError::invalid("profile_format", other, "must be MURK_FORMAT_JSON (0), MURK_FORMAT_TOML (1) or MURK_FORMAT_RON (2)")),
    };
    match text {
        Some(text) => Ok(Profile::parse(text, format, "profile")?),
        None => Ok(Profile::default()),
    }
}

/// Creates instance `name` over `area`: `resolution` output texels along
/// the area's X side (rows follow from the aspect), passes at
/// `resolution >> lod`, revealed by the sources of the teams in the bit
/// set `observed_teams` (`MURK_ALL_TEAMS`: every team), with the profile
/// in `profile` (`profile_len` bytes of `profile_format` text; null with
/// length 0: the defaults). Errors name the bad field
/// (`instance `name`.area.extents.x`, `profile.explored_value`); nothing is
/// created then.
#[no_mangle]
pub extern "C" fn murk_instance_create(
    fog: u64,
    name: *const c_char,
    name_len: usize,
    area: *const MurkArea,
    resolution: u32,
    lod: u32,
    observed_teams: u64,
    profile_text: *const c_char,
    profile_len: usize,
    profile_format: u32,
) -> i32 {
    call(|| {
        let name = raw::text(name, name_len, "name")?;
        let area = raw::read(area, "area")?;
        let profile = profile(raw::optional_text(profile_text, profile_len, "profile_text")?, profile_format)?;
        let desc = InstanceDesc {
            name: name.to_string(),
            area: Area { center: Vec3::from(area.center), extents: Vec3::from(area.extents), yaw_degrees: area.yaw_degrees },
            resolution,
            lod,
            observed_teams: TeamMask(observed_teams),
            profile,
        };
        registry::with_fog(fog, |h| Ok(h.fog.create_instance(desc)?))
    })
}

/// Replaces instance `name`'s profile at run time (text as for
/// `murk_instance_create`); the masks are kept.
#[no_mangle]
pub extern "C" fn murk_instance_set_profile(
    fog: u64,
    name: *const c_char,
    name_len: usize,
    profile_text: *const c_char,
    profile_len: usize,
    profile_format: u32,
) -> i32 {
    call(|| {
        let name = raw::text(name, name_len, "name")?;
        let profile = profile(raw::optional_text(profile_text, profile_len, "profile_text")?, profile_format)?;
        registry::with_fog(fog, |h| Ok(h.fog.apply_profile(name, profile)?))
    })
}

/// Destroys instance `name` and its textures.
#[no_mangle]
pub extern "C" fn murk_instance_destroy(fog: u64, name: *const c_char, name_len: usize) -> i32 {
    call(|| {
        let name = raw::text(name, name_len, "name")?;
        registry::with_fog(fog, |h| Ok(h.fog.destroy_instance(name)?))
    })
}

/// Instance `name`'s texture sizes.
#[no_mangle]
pub extern "C" fn murk_instance_dims(fog: u64, name: *const c_char, name_len: usize, out_dims: *mut MurkDims) -> i32 {
    call(|| {
        let name = raw::text(name, name_len, "name")?;
        let d = registry::with_fog(fog, |h| Ok(h.fog.dims(name)?))?;
        raw::write(out_dims, MurkDims { width: d.width, height: d.height, out_width: d.out_width, out_height: d.out_height }, "out_dims")
    })
}
