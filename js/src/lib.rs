//! # murk-js
//!
//! murk as an npm package (`murk-fog`): a library API for JavaScript and
//! TypeScript over one world and its fog subsystem. The caller creates a
//! [`Fog`] on the CPU backend (wasm, on the page's thread) or the GPU
//! backend (the browser's WebGPU device), creates instances, spawns
//! sources, blockers, stealth actors and tracked entities from [`Parts`]
//! and keeps their handles (a stale handle is an error, never a crash),
//! loads Moving AI maps as height captures, ticks, and reads final masks,
//! sight sets, stealth states, lockstep hashes, snapshots and explored
//! memory. Nothing waits for a device: on the GPU a tick runs when
//! [`Fog::ready`] holds and reads are prepared a round trip ahead.
//!
//! The native part ([`Fog`] and its types) builds everywhere, so that the
//! native tests drive it; on `wasm32` the crate also exports the
//! JavaScript interface (wasm-bindgen, TypeScript types included).
//! `js/build.sh` builds the package; `docs/npm.md` documents it.

mod fog;
mod handles;
mod parts;
mod versions;

#[cfg(target_arch = "wasm32")]
mod web;

pub use fog::{Fog, InstanceSpec, MapSettings, Read, StealthView, TickOutcome};
pub use parts::Parts;
pub use versions::{Versions, VERSIONS};
