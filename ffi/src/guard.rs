//! The boundary every `murk_*` call runs inside: no panic crosses it, and
//! each failure becomes a status code plus the thread's last error.

use crate::last_error;
use crate::status::{FfiError, Result, MURK_OK};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of a `murk_*` call: clears the last error, runs `body`,
/// and turns its error, or a panic inside it, into a status code with the
/// message recorded as the last error.
///
/// `AssertUnwindSafe` is sound here because nothing `body` may leave half
/// changed is seen again: a fog handle's state sits behind a mutex that a
/// panic poisons (later calls on it answer `MURK_ERR_PANIC`), and the
/// registry's own updates cannot panic halfway.
pub(crate) fn call(body: impl FnOnce() -> Result<()>) -> i32 {
    last_error::clear();
    let error = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return MURK_OK,
        Ok(Err(e)) => e,
        Err(payload) => {
            let message = match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
                (Some(s), _) => (*s).to_string(),
                (_, Some(s)) => s.clone(),
                _ => "a panic without a message".to_string(),
            };
            FfiError::Panic(message)
        }
    };
    last_error::set(&error.to_string());
    error.code()
}
