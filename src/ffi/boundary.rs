//! The C boundary: every `extern "C"` entry point runs its body through [`boundary`], which
//! contains panics, turns errors into status codes and keeps the thread-local last-error message.
//! Also the NULL-checking pointer helpers and the opaque-handle casts shared by every entry point.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::{Error, Result};
use crate::status::Status;

use super::types::dnnp_status_t;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Replaces this thread's last-error message.
pub(crate) fn set_last_error(message: String) {
    LAST_ERROR.with(|m| *m.borrow_mut() = message.replace('\0', "\\0"));
}

/// Runs `f` with this thread's last-error message.
pub(crate) fn with_last_error<R>(f: impl FnOnce(&str) -> R) -> R {
    LAST_ERROR.with(|m| f(&m.borrow()))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// Runs an entry point's body: clears the last error, contains panics, maps errors to statuses.
/// A failure (other than the size query's `DNNP_STATUS_BUFFER_TOO_SMALL`) is logged as a warning
/// ([`crate::log`]) with the entry point's source location, its status and its message.
#[track_caller]
pub(crate) fn boundary(f: impl FnOnce() -> Result<()>) -> dnnp_status_t {
    let at = std::panic::Location::caller();
    set_last_error(String::new());
    let outcome = catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(Error::Panic(panic_message(&*payload))));
    match outcome {
        Ok(()) => Status::Success as dnnp_status_t,
        Err(e) => {
            let message = e.to_string();
            let status = e.status();
            if status != Status::BufferTooSmall {
                crate::log::warn(|| {
                    format!(
                        "call at {}:{} returned {}: {message}",
                        at.file(),
                        at.line(),
                        status.name()
                    )
                });
            }
            set_last_error(message);
            status as dnnp_status_t
        }
    }
}

/// Runs a body that cannot report failure (destroy functions): panics are contained and recorded.
pub(crate) fn boundary_void(f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        set_last_error(Error::Panic(panic_message(&*payload)).to_string());
    }
}

/// Borrows `*p`, or fails with `NullArgument(name)`.
///
/// # Safety
/// `p` must be NULL or point to a valid `T` that outlives the returned reference.
pub(crate) unsafe fn deref<'a, T>(p: *const T, name: &'static str) -> Result<&'a T> {
    // SAFETY: the caller guarantees validity when non-NULL.
    unsafe { p.as_ref() }.ok_or(Error::NullArgument(name))
}

/// Mutably borrows `*p`, or fails with `NullArgument(name)`.
///
/// # Safety
/// `p` must be NULL or point to a valid, unaliased `T` that outlives the returned reference.
pub(crate) unsafe fn deref_mut<'a, T>(p: *mut T, name: &'static str) -> Result<&'a mut T> {
    // SAFETY: the caller guarantees validity when non-NULL.
    unsafe { p.as_mut() }.ok_or(Error::NullArgument(name))
}

/// Checks that an output pointer is non-NULL (call this before any work, write it only on success).
pub(crate) fn out_ptr<T>(p: *mut T, name: &'static str) -> Result<*mut T> {
    if p.is_null() {
        Err(Error::NullArgument(name))
    } else {
        Ok(p)
    }
}

/// The one-value output pattern: refuses a NULL `out` (`NullArgument(name)`) before any work, then
/// computes the value and writes it only when that succeeds.
///
/// # Safety
/// `out` must be NULL or valid for one write; `value` runs under the caller's contract.
pub(crate) unsafe fn write_out<T>(
    out: *mut T,
    name: &'static str,
    value: impl FnOnce() -> Result<T>,
) -> Result<()> {
    let out = out_ptr(out, name)?;
    let value = value()?;
    // SAFETY: non-NULL, valid for one write per the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Writes `value` to an optional output: nothing when `out` is NULL.
///
/// # Safety
/// `out` must be NULL or valid for one write.
pub(crate) unsafe fn write_opt<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-NULL, valid for one write per the caller's contract.
        unsafe { out.write(value) };
    }
}

/// Reads a NUL-terminated C string argument as UTF-8.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string valid for the call.
pub(crate) unsafe fn c_str<'a>(p: *const std::ffi::c_char, name: &'static str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Error::NullArgument(name));
    }
    // SAFETY: non-NULL and NUL-terminated per the caller's contract.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Error::bad_param(name, "is not valid UTF-8"))
}

/// Reads `len` elements from `p` (NULL is allowed only when `len == 0`).
///
/// # Safety
/// When `len > 0`, `p` must point to `len` valid elements for the duration of the call.
pub(crate) unsafe fn slice<'a, T>(p: *const T, len: usize, name: &'static str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::NullArgument(name));
    }
    // SAFETY: non-NULL with `len` valid elements per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Copies `text` into a caller buffer with the two-call pattern: writes `len + 1` to `needed`
/// (when given); writes the NUL-terminated text only when it fits, else `BufferTooSmall`.
///
/// # Safety
/// `buf` must be NULL or valid for `cap` bytes; `needed` must be NULL or valid for one write.
pub(crate) unsafe fn write_text(
    text: &str,
    buf: *mut std::ffi::c_char,
    cap: usize,
    needed: *mut usize,
    name: &'static str,
) -> Result<()> {
    let need = text.len() + 1;
    if buf.is_null() || cap < need {
        if needed.is_null() && buf.is_null() {
            return Err(Error::NullArgument(name));
        }
        if !needed.is_null() {
            // SAFETY: valid for one write per the caller's contract.
            unsafe { needed.write(need) };
        }
        return Err(Error::BufferTooSmall {
            what: name,
            needed: need,
            given: if buf.is_null() { 0 } else { cap },
        });
    }
    // SAFETY: `buf` is valid for `cap >= need` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        buf.add(text.len()).write(0);
        if !needed.is_null() {
            needed.write(need);
        }
    }
    Ok(())
}

/// The two-call text output of an entry point (`buf`, `cap`, `needed`), as [`write_out`] is for
/// one value: computes the text, then copies it with [`write_text`] (errors name `buf`).
///
/// # Safety
/// `buf` must be NULL or valid for `cap` bytes; `needed` must be NULL or valid for one write;
/// `text` runs under the caller's contract.
pub(crate) unsafe fn text_out<S: AsRef<str>>(
    buf: *mut std::ffi::c_char,
    cap: usize,
    needed: *mut usize,
    text: impl FnOnce() -> Result<S>,
) -> Result<()> {
    let text = text()?;
    // SAFETY: forwarded contract.
    unsafe { write_text(text.as_ref(), buf, cap, needed, "buf") }
}

/// Ties an opaque C handle type to the Rust object it points to (always a `Box<Self::Rust>`).
pub(crate) trait Opaque: Sized {
    /// The Rust object behind the handle.
    type Rust;

    /// Moves `value` to the heap and returns the handle.
    fn into_handle(value: Self::Rust) -> *mut Self {
        Box::into_raw(Box::new(value)).cast::<Self>()
    }

    /// Borrows the object behind a handle, or `NullArgument(name)`.
    ///
    /// # Safety
    /// `h` must be NULL or a live handle created by [`Opaque::into_handle`].
    unsafe fn get<'a>(h: *const Self, name: &'static str) -> Result<&'a Self::Rust> {
        // SAFETY: per the contract the handle points to a live `Self::Rust`.
        unsafe { deref(h.cast::<Self::Rust>(), name) }
    }

    /// Mutably borrows the object behind a handle, or `NullArgument(name)`.
    ///
    /// # Safety
    /// As [`Opaque::get`], and no other reference to the object may be live.
    unsafe fn get_mut<'a>(h: *mut Self, name: &'static str) -> Result<&'a mut Self::Rust> {
        // SAFETY: per the contract the handle points to a live, unaliased `Self::Rust`.
        unsafe { deref_mut(h.cast::<Self::Rust>(), name) }
    }

    /// Destroys the object behind a handle; NULL is a no-op.
    ///
    /// # Safety
    /// `h` must be NULL or a live handle created by [`Opaque::into_handle`], not used afterwards.
    unsafe fn destroy(h: *mut Self) {
        if !h.is_null() {
            // SAFETY: created by `Box::into_raw` of the same type in `into_handle`.
            drop(unsafe { Box::from_raw(h.cast::<Self::Rust>()) });
        }
    }
}
