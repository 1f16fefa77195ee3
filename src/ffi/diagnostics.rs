//! Version, status names and the thread-local last-error message.

use std::ffi::c_char;

use super::boundary::{boundary, text_out, with_last_error, write_text};
use super::types::dnnp_status_t;
use crate::status::Status;

/// Packed library version: major*10000 + minor*100 + patch (compare with `DNNP_VERSION`).
#[unsafe(no_mangle)]
pub extern "C" fn dnnp_get_version() -> usize {
    crate::version::packed()
}

/// The library version as a static NUL-terminated string, e.g. `"0.1.0"`.
#[unsafe(no_mangle)]
pub extern "C" fn dnnp_get_version_string() -> *const c_char {
    crate::version::VERSION_CSTR.as_ptr()
}

/// The ABI version (SONAME suffix) as a static NUL-terminated string (compare with `DNNP_ABI_VERSION`).
#[unsafe(no_mangle)]
pub extern "C" fn dnnp_get_abi_version() -> *const c_char {
    crate::version::ABI_CSTR.as_ptr()
}

/// The macro name of a status code as a static string (`"DNNP_STATUS_BAD_PARAM"`), or
/// `"DNNP_STATUS_UNKNOWN"` for a value that is not a status code. Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn dnnp_status_name(status: dnnp_status_t) -> *const c_char {
    Status::from_code(status)
        .map_or(c"DNNP_STATUS_UNKNOWN", Status::cname)
        .as_ptr()
}

/// Copies this thread's last-error message (set by the most recent failing dnnplan call on this
/// thread, empty after a success) into `buf` as a NUL-terminated string.
///
/// `*needed` (when `needed` is not NULL) receives the size including the NUL. When `buf` is NULL or
/// `cap` is smaller than that, nothing is copied and `DNNP_STATUS_BUFFER_TOO_SMALL` is returned.
/// This call does not change the last-error message.
///
/// # Safety
/// `buf` must be NULL or valid for writing `cap` bytes; `needed` must be NULL or valid for one
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_get_last_error_string(
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    let message = with_last_error(str::to_owned);
    let status = boundary(|| {
        // SAFETY: the caller passes `buf` valid for `cap` bytes and `needed` valid or NULL.
        unsafe { write_text(&message, buf, cap, needed, "buf") }
    });
    // Reading the message must not replace it.
    super::boundary::set_last_error(message);
    status
}

/// Test hook: panics inside the boundary with `message` (may be NULL) and returns
/// `DNNP_STATUS_INTERNAL_PANIC`; proves that panics never cross the C ABI.
///
/// # Safety
/// `message` must be NULL or point to a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_debug_force_panic(message: *const c_char) -> dnnp_status_t {
    boundary(|| {
        let text = if message.is_null() {
            "forced panic".to_owned()
        } else {
            // SAFETY: non-NULL, NUL-terminated per the contract.
            unsafe { std::ffi::CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        };
        panic!("{text}");
    })
}

/// What dnnplan makes of this process's environment, as JSON (two-call pattern: `buf` NULL gives
/// the size in `*needed`): `{"schema": "dnnplan.settings/1", "set": [...], "known": [...]}`.
/// `set` lists every `DNNPLAN_*` variable set now, each `{name, value, status}` where `status` is
/// `ok`, `not understood: ...` (with `accepts` and `effect`) or `unknown: ...` (with
/// `did_you_mean` when a variable dnnplan reads has a near name); `known` lists every variable
/// dnnplan (and its PyTorch package) reads, each `{name, accepts, effect}`. The same verdicts as
/// `dnnplan env`; an integrator can log them at start-up.
///
/// # Safety
/// `buf` NULL or valid for `cap` bytes; `needed` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_settings_json(
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            Ok(crate::settings::document().to_string())
        })
    })
}
