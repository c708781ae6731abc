//! The versions this build speaks: the package's, and the formats whose
//! bytes it shares with other builds of murk (native or in a browser).

/// This build's versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Versions {
    /// The package and crate version (`murk-js`, the npm package): one
    /// number, the workspace's.
    pub package: &'static str,
    /// The snapshot container format (`murk_core::snapshot::VERSION`): fog
    /// snapshots, run snapshots and explored-memory blobs of this format
    /// restore here, others are refused by number.
    pub snapshot_format: u32,
    /// The hash definition (`murk_core::hash::FORMAT_VERSION`): builds that speak
    /// the same version give the same lockstep hash of the same state.
    pub hash_format: u32,
}

/// The versions of this build.
pub const VERSIONS: Versions =
    Versions { package: env!("CARGO_PKG_VERSION"), snapshot_format: murk_core::snapshot::VERSION, hash_format: murk_core::hash::FORMAT_VERSION };
