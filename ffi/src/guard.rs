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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{MURK_ERR_INVALID_HANDLE, MURK_ERR_PANIC};

    #[test]
    fn a_panic_becomes_a_status_code_and_its_message() {
        assert_eq!(call(|| panic!("boom at {}", 7)), MURK_ERR_PANIC);
        assert_eq!(last_error::message(), "murk panicked: boom at 7");
        assert_eq!(call(|| Ok(())), MURK_OK);
        assert_eq!(last_error::message(), "", "a success clears the message");
        assert_eq!(call(|| Err(FfiError::InvalidHandle(5))), MURK_ERR_INVALID_HANDLE);
        assert_eq!(last_error::message(), "fog handle 0x5 is not live: 0, never given out, or freed");
    }
}
