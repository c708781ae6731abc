//! Raw pointers from C: the one module of the crate that holds `unsafe`.
//!
//! Every pointer a caller hands over is read or written here, after the
//! checks a Rust reference needs and a C caller can get wrong: not null
//! (where a value is needed), aligned for its type, and a length whose
//! bytes fit in `isize`. What cannot be checked is the caller's promise,
//! stated in `murk.h`: a non-null pointer with a length points to that
//! many items, initialized for inputs and writable for outputs, for the
//! duration of the call, and an output does not overlap another argument.
//!
//! Outputs that can be any size (bytes, entities, events, text) follow one
//! rule, [`fill`]: the needed length is always written to the length
//! output; a null buffer with capacity 0 asks only for that length; a
//! buffer smaller than the answer gets nothing and the call fails with
//! `MURK_ERR_BUFFER_TOO_SMALL`.

#![expect(unsafe_code, reason = "this module turns the C caller's pointers into references, after checking them")]

use crate::status::{FfiError, Result};
use std::ffi::c_char;

/// Whether `ptr` may be turned into a reference to `len` items of `T`:
/// aligned, and not more bytes than `isize::MAX`.
fn check_span<T>(ptr: *const T, len: usize, name: &'static str) -> Result<()> {
    if !ptr.is_aligned() {
        return Err(FfiError::invalid(name, format!("{ptr:p}"), format!("must be aligned to {} bytes", align_of::<T>())));
    }
    let fits = len.checked_mul(size_of::<T>()).is_some_and(|bytes| bytes <= isize::MAX as usize);
    if !fits {
        return Err(FfiError::invalid(name, len, "is too long: its bytes exceed isize::MAX"));
    }
    Ok(())
}

/// The `len` items at `ptr`. A length of 0 needs no pointer (null is an
/// empty slice); otherwise a null pointer is an error naming `name`.
pub(crate) fn slice<'a, T>(ptr: *const T, len: usize, name: &'static str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(FfiError::NullPointer(name));
    }
    check_span(ptr, len, name)?;
    // SAFETY: not null, aligned, and a size within isize were checked
    // above; that `len` initialized items live at `ptr` for the call is
    // the caller's promise (murk.h).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// UTF-8 text of `len` bytes at `ptr` (no terminating NUL needed). A null
/// pointer is an error even with length 0: text arguments name something.
pub(crate) fn text<'a>(ptr: *const c_char, len: usize, name: &'static str) -> Result<&'a str> {
    if ptr.is_null() {
        return Err(FfiError::NullPointer(name));
    }
    let bytes = slice(ptr.cast::<u8>(), len, name)?;
    std::str::from_utf8(bytes).map_err(|e| FfiError::invalid(name, String::from_utf8_lossy(bytes), format!("is not UTF-8: {e}")))
}

/// Text that may be left out: a null pointer with length 0 is `None`.
pub(crate) fn optional_text<'a>(ptr: *const c_char, len: usize, name: &'static str) -> Result<Option<&'a str>> {
    if ptr.is_null() && len == 0 {
        return Ok(None);
    }
    text(ptr, len, name).map(Some)
}

/// The value at `ptr`.
pub(crate) fn read<T: Copy>(ptr: *const T, name: &'static str) -> Result<T> {
    if ptr.is_null() {
        return Err(FfiError::NullPointer(name));
    }
    check_span(ptr, 1, name)?;
    // SAFETY: not null and aligned (checked above); an initialized `T`
    // there is the caller's promise.
    Ok(unsafe { ptr.read() })
}

/// Writes `value` to the output `ptr`.
pub(crate) fn write<T>(ptr: *mut T, value: T, name: &'static str) -> Result<()> {
    if ptr.is_null() {
        return Err(FfiError::NullPointer(name));
    }
    check_span(ptr.cast_const(), 1, name)?;
    // SAFETY: not null and aligned (checked above); writable memory for a
    // `T` there is the caller's promise. `T` is plain data (no drop of
    // the old value is needed: `write` does not read it).
    unsafe { ptr.write(value) };
    Ok(())
}

/// What [`fill`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Filled {
    /// The caller asked for the length only (null buffer, capacity 0).
    Queried,
    /// The items were copied into the buffer.
    Copied,
}

/// Copies `items` into the caller's buffer `out` of `capacity` items, and
/// writes their number to `out_len` in any case (see the module docs).
pub(crate) fn fill<T: Copy>(out: *mut T, capacity: usize, items: &[T], out_len: *mut usize, name: &'static str) -> Result<Filled> {
    write(out_len, items.len(), "out_len")?;
    if out.is_null() {
        return if capacity == 0 { Ok(Filled::Queried) } else { Err(FfiError::NullPointer(name)) };
    }
    check_span(out.cast_const(), capacity, name)?;
    if capacity < items.len() {
        return Err(FfiError::BufferTooSmall { name, capacity, needed: items.len() });
    }
    // SAFETY: `out` is not null, aligned, and holds `capacity >= items.len()`
    // writable items (checked above, and the caller's promise); `items` is
    // murk's own memory, which a caller's buffer cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), out, items.len()) };
    Ok(Filled::Copied)
}

/// [`fill`] for text: the bytes and a terminating NUL; `out_len` gets the
/// length without the NUL, and the buffer must hold one more byte.
pub(crate) fn fill_text(out: *mut c_char, capacity: usize, text: &str, out_len: *mut usize, name: &'static str) -> Result<Filled> {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend(text.bytes().map(|b| b as c_char));
    bytes.push(0);
    let filled = fill(out, capacity, &bytes, out_len, name);
    if matches!(filled, Ok(_) | Err(FfiError::BufferTooSmall { .. })) {
        write(out_len, text.len(), "out_len")?;
    }
    filled
}

/// Copies as much of `text` as fits into `out` (cut at a character
/// boundary) and a NUL; whether all of it fitted. Never fails: it serves
/// the error message itself.
pub(crate) fn copy_truncated(out: *mut c_char, capacity: usize, text: &str) -> bool {
    if out.is_null() || capacity == 0 || check_span(out.cast_const(), capacity, "buf").is_err() {
        return false;
    }
    let mut end = text.len().min(capacity - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    // SAFETY: `out` is not null and holds `capacity > end` writable bytes
    // (checked above, and the caller's promise); `text` is murk's memory.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), out.cast::<u8>(), end);
        out.add(end).write(0);
    }
    end == text.len()
}
