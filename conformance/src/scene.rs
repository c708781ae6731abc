//! The scenes the behaviour tests build, on any backend: the standard
//! instance `i` (64x64 texels over world `[0, 64]^2`, slab z in `[0, 10]`, one
//! texel per unit) and a subsystem holding it.

use murk_core::glam::Vec3;
use murk_core::{Area, Backend, FogSubsystem, InstanceDesc, MaskAnswer, Profile, QueryHandle, TeamMask};

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

/// Polls a mask query until its readback lands (at once on the CPU, after
/// the device catches up on the GPU), without ticking.
pub fn landed(fog: &mut FogSubsystem, handle: QueryHandle) -> Vec<MaskAnswer> {
    let start = std::time::Instant::now();
    loop {
        if let Some(answers) = fog.poll_mask_query(handle).expect("a live handle") {
            return answers;
        }
        assert!(start.elapsed().as_secs() < 60, "query {} did not land in a minute", handle.0);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
