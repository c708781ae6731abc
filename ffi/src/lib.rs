//! # murk-ffi
//!
//! murk's C ABI: a shared library (`libmurk_ffi.so`, `murk_ffi.dll`,
//! `libmurk_ffi.dylib`), a static one (`libmurk_ffi.a`), and the header
//! `include/murk.h` that cbindgen writes from this crate (a test fails
//! when the committed header is stale). Game engines in C, C++ and C#
//! (Unreal, Unity, Godot) drive murk's fog subsystem through it.
//!
//! The API is small and flat: a fog handle (`uint64_t`) owns a `hecs`
//! world and a `murk_core::FogSubsystem` over it; entity handles
//! (`uint64_t`, generational) name the entities the caller spawns in that
//! world and gives vision sources, blockers, stealth actors, tracking and
//! height captures; instances are named by UTF-8 text with a length. Every
//! call returns a status code (`MURK_OK`, `MURK_ERR_*`) and leaves its
//! message in the thread's last error (`murk_last_error`); outputs go
//! through pointers, buffers come with their capacity, and an answer of
//! any size can be asked for its size first. A null or freed handle, a
//! null pointer, a wrong length or a panic inside murk is an error code,
//! never undefined behaviour: the raw pointers are read in one module
//! (`raw`), after checks, and every call runs inside `catch_unwind`.
//!
//! `docs/ffi.md` is the guide: ownership, errors, threads, versions, and
//! loading the library from Unreal, Unity and Godot.

// The C API, in the order murk.h lists it: versions, status codes and
// the last error, fog handles, instances, entities and what they carry,
// height captures, reading textures, events and sight sets, the questions
// beside the tick, snapshots and explored memory.
mod version;

mod last_error;
mod status;

mod fog;

mod instance;

mod entity;

mod source;

mod blocker;

mod actor;

mod capture;

mod image;
mod stage;

mod events;
mod queries;

mod snapshot;

mod memory;

// Behind the API: the call boundary (`catch_unwind`), the handle registry
// and what a handle owns, and the one module that reads raw pointers.
mod guard;
mod handle;
mod raw;
mod registry;

pub use actor::*;
pub use blocker::*;
pub use capture::*;
pub use entity::*;
pub use events::*;
pub use fog::*;
pub use image::*;
pub use instance::*;
pub use last_error::*;
pub use memory::*;
pub use queries::*;
pub use snapshot::*;
pub use source::*;
pub use stage::*;
pub use status::*;
pub use version::*;
