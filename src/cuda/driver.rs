//! The guard around every CUDA driver call.
//!
//! cudarc resolves libcuda and each entry point lazily and panics when either is missing, so every
//! driver use in dnnplan goes through [`guarded`]: it first requires a successful [`probe::driver`]
//! (a missing libcuda becomes [`Error::CudaUnavailable`] without touching cudarc), then runs the
//! body under `catch_unwind` as a last guard (a missing symbol becomes `CudaUnavailable` too).
//! [`check`] turns a `CUresult` into [`Error::Cuda`] with the driver's error name.

use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};

use cudarc::driver::sys;

use super::probe;
use crate::error::{Error, Result};

/// The probed driver, or `CudaUnavailable` with the probe's reason.
pub fn require() -> Result<&'static probe::DriverInfo> {
    probe::driver().map_err(|e| match e {
        Error::CudaUnavailable(why) => Error::CudaUnavailable(why.clone()),
        other => Error::CudaUnavailable(other.to_string()),
    })
}

/// Runs `body` (which calls the driver) after the probe succeeded; a panic from cudarc (a missing
/// entry point) becomes `CudaUnavailable` naming `what`.
pub fn guarded<T>(what: &str, body: impl FnOnce() -> Result<T>) -> Result<T> {
    require()?;
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let detail = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        Err(Error::CudaUnavailable(format!(
            "{what}: the CUDA driver lacks a required entry point ({detail})"
        )))
    })
}

/// `Ok(())` for `CUDA_SUCCESS`, else [`Error::Cuda`] naming the call and the driver's error.
/// Call only inside [`guarded`] (it asks the driver for the error's name).
pub fn check(call: &'static str, result: sys::CUresult) -> Result<()> {
    if result == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: writes one pointer to a static string (or leaves it NULL on failure).
    let named = unsafe { sys::cuGetErrorName(result, &mut name) };
    let message = if named == sys::CUresult::CUDA_SUCCESS && !name.is_null() {
        // SAFETY: the driver returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    } else {
        format!("{result:?}")
    };
    Err(Error::Cuda { call, message })
}
