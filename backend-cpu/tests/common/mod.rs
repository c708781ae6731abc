//! The instance most tests use.

use murk_core::glam::Vec3;
use murk_core::{Area, FogSubsystem, InstanceDesc, Profile, TeamMask};
use murk_cpu::CpuBackend;

/// Instance `i`: 64x64 texels over world [0, 64]^2, slab z in [0, 10], one texel per unit.
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

/// A CPU subsystem (2 threads) holding instance `i`.
pub fn fog(profile: Profile) -> FogSubsystem {
    let mut fog = FogSubsystem::new(Box::new(CpuBackend::new(2).unwrap()));
    fog.create_instance(desc(profile)).unwrap();
    fog
}
