//! The thread's last error: the message of the last failed `murk_*` call
//! on this thread, which the caller reads with [`murk_last_error`] or
//! copies with [`murk_last_error_message`].
//!
//! Every call clears it when it starts, so after a success it is empty; the
//! two readers leave it as it is. It is per thread: two threads calling
//! murk each read their own.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::raw;
use crate::status::{MURK_ERR_BUFFER_TOO_SMALL, MURK_OK};
use std::cell::RefCell;
use std::ffi::{c_char, CString};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Forgets the last error (a call starts).
pub(crate) fn clear() {
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::default());
}

/// Records the message of a failed call.
pub(crate) fn set(message: &str) {
    // A NUL inside a message would end it early in C: shown as U+FFFD.
    let text = CString::new(message.replace('\0', "\u{fffd}")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// The message of the last failed `murk_*` call on this thread, as UTF-8
/// text ending in NUL; empty when the last call succeeded. Never null. The
/// text stays valid until the next `murk_*` call on this thread (other than
/// `murk_last_error` and `murk_last_error_message`); copy it to keep it.
#[no_mangle]
pub extern "C" fn murk_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Copies the last error's message (see `murk_last_error`) into `buf` of
/// `capacity` bytes, with a terminating NUL, cut at a character boundary if
/// it does not fit. `out_len`, when not null, receives the whole message's
/// length in bytes (without the NUL). Returns `MURK_OK` when the whole
/// message was copied, `MURK_ERR_BUFFER_TOO_SMALL` when it was cut or
/// `buf` is null or `capacity` 0. Leaves the last error as it is.
#[no_mangle]
pub extern "C" fn murk_last_error_message(buf: *mut c_char, capacity: usize, out_len: *mut usize) -> i32 {
    let outcome = std::panic::catch_unwind(|| {
        LAST_ERROR.with(|e| {
            let e = e.borrow();
            let text = e.to_str().unwrap_or_default();
            if !out_len.is_null() {
                // A failure here (a misaligned `out_len`) leaves it unwritten.
                let _ = raw::write(out_len, text.len(), "out_len");
            }
            raw::copy_truncated(buf, capacity, text)
        })
    });
    match outcome {
        Ok(true) => MURK_OK,
        _ => MURK_ERR_BUFFER_TOO_SMALL,
    }
}

/// The last error's message, for the crate's own tests.
#[cfg(test)]
pub(crate) fn message() -> String {
    LAST_ERROR.with(|e| e.borrow().to_string_lossy().into_owned())
}
