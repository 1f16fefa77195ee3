//! `dnnp_handle_t`: a caller's CUDA stream (and, lazily, a backend handle), carried explicitly into
//! every build and execute; dnnplan keeps no ambient device state.
//!
//! Device rule: with the CUDA driver present, the stream's context is queried once at creation and
//! a failed query is an error (never a fallback to another stream); NULL (or `CU_STREAM_LEGACY`, 1)
//! is the legacy default stream, whose device is the calling thread's current context at creation,
//! if any. Without a driver nothing is queried and the device is unknown (-1), so handles work for
//! engines that launch nothing. `CU_STREAM_PER_THREAD` (2) is refused.

#![allow(non_camel_case_types)]

use std::ffi::c_void;

use super::boundary::{Opaque, boundary, boundary_void, write_out};
use super::types::dnnp_status_t;
use crate::dispatch::context::Handle;

/// Opaque handle: a stream and its device (see `dnnp_handle_create`).
pub struct dnnp_handle_t {
    _private: [u8; 0],
}

impl Opaque for dnnp_handle_t {
    type Rust = Handle;
}

/// Wraps the caller's CUDA stream (`CUstream`/`cudaStream_t`; NULL = the legacy default stream)
/// in a new handle, written to `*out` on success. The stream is borrowed, never destroyed; it must
/// outlive the handle. With a CUDA driver present the stream's device is queried now, and a failed
/// query returns `DNNP_STATUS_CUDA_ERROR`; without a driver nothing is queried.
/// `CU_STREAM_PER_THREAD` (2) gives `DNNP_STATUS_BAD_PARAM`.
///
/// # Safety
/// `stream` must be NULL, a sentinel, or a live stream; `out` must be NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_handle_create(
    stream: *mut c_void,
    out: *mut *mut dnnp_handle_t,
) -> dnnp_status_t {
    // SAFETY: `out` NULL or valid for one write per the contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            Ok(dnnp_handle_t::into_handle(Handle::new(stream)?))
        })
    })
}

/// As `dnnp_handle_create`, on an explicit device ordinal: for the legacy default stream (NULL),
/// whose device would otherwise be the calling thread's current context at creation. With a CUDA
/// driver present the ordinal must exist (else `DNNP_STATUS_BAD_PARAM`) and a real stream must
/// belong to it (a mismatch is `DNNP_STATUS_BAD_PARAM`, a failed query `DNNP_STATUS_CUDA_ERROR`);
/// without a driver the ordinal is recorded as given.
///
/// # Safety
/// As `dnnp_handle_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_handle_create_on_device(
    device: i32,
    stream: *mut c_void,
    out: *mut *mut dnnp_handle_t,
) -> dnnp_status_t {
    // SAFETY: `out` NULL or valid for one write per the contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            Ok(dnnp_handle_t::into_handle(Handle::on_device(
                device, stream,
            )?))
        })
    })
}

/// Destroys a handle (NULL is a no-op). The wrapped stream is not touched.
///
/// # Safety
/// `handle` must be NULL or a live handle, not used afterwards (nor concurrently).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_handle_destroy(handle: *mut dnnp_handle_t) {
    // SAFETY: NULL or a live handle from `dnnp_handle_create`, not used afterwards.
    boundary_void(|| unsafe { dnnp_handle_t::destroy(handle) })
}

/// Writes the wrapped stream to `*stream`.
///
/// # Safety
/// `handle` must be NULL or live; `stream` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_handle_get_stream(
    handle: *const dnnp_handle_t,
    stream: *mut *mut c_void,
) -> dnnp_status_t {
    // SAFETY: `handle` NULL or live, `stream` NULL or valid for one write.
    boundary(|| unsafe {
        write_out(stream, "stream", || {
            Ok(dnnp_handle_t::get(handle, "handle")?.stream())
        })
    })
}

/// Writes the stream's device ordinal to `*device`, or -1 when unknown (no CUDA driver, or the
/// legacy default stream with no current context at creation).
///
/// # Safety
/// `handle` must be NULL or live; `device` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_handle_get_device(
    handle: *const dnnp_handle_t,
    device: *mut i32,
) -> dnnp_status_t {
    // SAFETY: `handle` NULL or live, `device` NULL or valid for one write.
    boundary(|| unsafe {
        write_out(device, "device", || {
            Ok(dnnp_handle_t::get(handle, "handle")?.device().unwrap_or(-1))
        })
    })
}
