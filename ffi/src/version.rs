//! Versions a host checks before it trusts the library it loaded: the
//! crate's version, the C API's, and the formats of what peers and save
//! games exchange (snapshots, the lockstep hash).

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use std::ffi::{c_char, CStr};

/// The version of this C API: bumped when a function, struct or code
/// changes in a way that is not an addition (2: team masks are 64 bits,
/// `uint64_t`, for teams 0..=63; 3: a source says what it detects and its
/// sensor layer, an anti-vision area its layer, a stealth actor whether it
/// is cloaked: the structs grew). A host compiled against
/// `murk.h` compares it with `murk_api_version()` at run time.
pub const MURK_API_VERSION: u32 = 3;

const VERSION: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
    Ok(v) => v,
    Err(_) => panic!("the crate version holds a NUL"),
};

/// murk's version (`0.1.0`), as NUL-terminated text that lives as long as
/// the library.
#[no_mangle]
pub extern "C" fn murk_version() -> *const c_char {
    VERSION.as_ptr()
}

/// The C API version of the loaded library (`MURK_API_VERSION` of the
/// header it was built with).
#[no_mangle]
pub extern "C" fn murk_api_version() -> u32 {
    MURK_API_VERSION
}

/// The snapshot format the library writes and reads: snapshots of another
/// format are refused by `murk_snapshot_load` with a message saying so.
#[no_mangle]
pub extern "C" fn murk_snapshot_format_version() -> u32 {
    murk_core::snapshot::VERSION
}

/// The version of the lockstep hash's definition: peers compare hashes
/// only when their versions are equal.
#[no_mangle]
pub extern "C" fn murk_hash_format_version() -> u32 {
    murk_core::hash::FORMAT_VERSION
}
