//! The scenes the behaviour tests build, on any backend: the standard
//! instance `i` (64x64 texels over world `[0, 64]^2`, slab z in `[0, 10]`, one
//! texel per unit) and a subsystem holding it.

use murk_core::glam::Vec3;
use murk_core::{Area, Backend, FogSubsystem, InstanceDesc, Profile, TeamMask};

/// Instance `i` with `profile`.
pub fn desc(profile: Profile) -> InstanceDesc {
    InstanceDesc {
        name: "i".into(),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: 64,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile,
    }
}

/// A subsystem on `backend` holding instance `i` with `profile`.
pub fn fog(backend: Box<dyn Backend>, profile: Profile) -> FogSubsystem {
    let mut fog = FogSubsystem::new(backend);
    fog.create_instance(desc(profile)).expect("the standard instance is valid");
    fog
}
