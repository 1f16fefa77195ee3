//! The execution context and the handle: what a plan needs besides its variant pack.
//!
//! [`Handle`] wraps a caller's CUDA stream (and, lazily, a backend handle in an opaque slot the
//! cuDNN provider fills). There is no ambient device state: the stream and the device travel with
//! the handle. Device rule (documented in the C API too): when the CUDA driver is present, a
//! supplied stream's context is queried once, at creation, and a failed query is an error, never a
//! fallback to another stream; the NULL stream (and the legacy sentinel 1) is the legacy default
//! stream, whose device is the calling thread's current context at creation (none when no context
//! is current), unless the handle names its device explicitly ([`Handle::on_device`]). When the
//! driver is absent, nothing is queried and the device is unknown (or as given), so handles still
//! work for engines that launch nothing. The per-thread sentinel (2) is refused.
//!
//! [`ExecContext`] is built per execute: stream, workspace (pointer and capacity) and device, plus
//! the handle it came from. Plans carve scratch with [`ExecContext::workspace_region`] and never
//! allocate.

use std::any::Any;
use std::ffi::c_void;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// A raw `CUstream` (NULL = the legacy default stream).
pub type StreamPtr = *mut c_void;

/// `CU_STREAM_LEGACY`: the legacy default stream, like NULL.
pub const STREAM_LEGACY: usize = 1;
/// `CU_STREAM_PER_THREAD`: refused (name the stream itself for framework interop).
pub const STREAM_PER_THREAD: usize = 2;

/// Alignment every workspace region must have (bytes).
pub const WORKSPACE_ALIGN: u64 = 128;

/// A caller's stream, the device it belongs to, and a lazily created backend handle.
pub struct Handle {
    stream: StreamPtr,
    device: Option<i32>,
    backend: OnceLock<Box<dyn Any + Send + Sync>>,
}

// SAFETY: the stream is an opaque token passed back to the driver, never dereferenced here; the
// backend slot is a `OnceLock` of `Send + Sync` contents.
unsafe impl Send for Handle {}
// SAFETY: as above; a `Handle` is immutable after creation except for the `OnceLock`.
unsafe impl Sync for Handle {}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("stream", &self.stream)
            .field("device", &self.device)
            .field("backend_handle", &self.backend.get().is_some())
            .finish()
    }
}

impl Handle {
    /// Wraps `stream` (see the module doc for the device rule).
    pub fn new(stream: StreamPtr) -> Result<Handle> {
        if stream as usize == STREAM_PER_THREAD {
            return Err(Error::bad_param(
                "stream",
                "CU_STREAM_PER_THREAD (2) is not accepted; pass the stream itself",
            ));
        }
        let device = match crate::cuda::probe::driver() {
            Ok(_) => stream_device(stream)?,
            Err(_) => None,
        };
        Ok(Handle {
            stream,
            device,
            backend: OnceLock::new(),
        })
    }

    /// Wraps `stream` on an explicit `device` (for the legacy default stream, whose device
    /// would otherwise come from the thread's current context). With the driver present, the
    /// ordinal must exist and a real stream must belong to it; without a driver it is recorded
    /// as given.
    pub fn on_device(device: i32, stream: StreamPtr) -> Result<Handle> {
        if device < 0 {
            return Err(Error::bad_param(
                "device",
                format!("device ordinal {device} is negative"),
            ));
        }
        if stream as usize == STREAM_PER_THREAD {
            return Err(Error::bad_param(
                "stream",
                "CU_STREAM_PER_THREAD (2) is not accepted; pass the stream itself",
            ));
        }
        if let Ok(info) = crate::cuda::probe::driver() {
            if device as usize >= info.devices.len() {
                return Err(Error::bad_param(
                    "device",
                    format!(
                        "device ordinal {device} does not exist ({} visible)",
                        info.devices.len()
                    ),
                ));
            }
            if !stream.is_null() && stream as usize != STREAM_LEGACY {
                let actual = stream_device(stream)?;
                if actual.is_some_and(|d| d != device) {
                    return Err(Error::bad_param(
                        "stream",
                        format!(
                            "the stream belongs to device {} but device {device} was given",
                            actual.unwrap_or(-1)
                        ),
                    ));
                }
            }
        }
        Ok(Handle::with_device(stream, Some(device)))
    }

    /// A handle with an explicit device and no driver query (tests and callers that know it).
    pub fn with_device(stream: StreamPtr, device: Option<i32>) -> Handle {
        Handle {
            stream,
            device,
            backend: OnceLock::new(),
        }
    }

    /// The wrapped stream.
    #[inline]
    pub fn stream(&self) -> StreamPtr {
        self.stream
    }

    /// The stream's device, when known.
    #[inline]
    pub fn device(&self) -> Option<i32> {
        self.device
    }

    /// The backend handle slot: the cuDNN provider creates its handle on first use with
    /// `get_or_init` and downcasts on later uses. Dropped (and destroyed) with the handle.
    #[inline]
    pub fn backend_slot(&self) -> &OnceLock<Box<dyn Any + Send + Sync>> {
        &self.backend
    }
}

/// The device of a stream, asked of the driver (present). Errors are never papered over.
fn stream_device(stream: StreamPtr) -> Result<Option<i32>> {
    use cudarc::driver::sys;
    let cuda = |call: &'static str, r: sys::CUresult| -> Result<()> {
        r.result().map_err(|e| Error::Cuda {
            call,
            message: format!("{e:?}"),
        })
    };
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    if stream.is_null() || stream as usize == STREAM_LEGACY {
        // SAFETY: writes one context handle.
        cuda("cuCtxGetCurrent", unsafe { sys::cuCtxGetCurrent(&mut ctx) })?;
        if ctx.is_null() {
            return Ok(None);
        }
        let mut dev: sys::CUdevice = 0;
        // SAFETY: a context is current; writes one device.
        cuda("cuCtxGetDevice", unsafe { sys::cuCtxGetDevice(&mut dev) })?;
        return Ok(Some(dev));
    }
    // SAFETY: the caller vouches that `stream` is a live CUstream; the driver validates it.
    cuda("cuStreamGetCtx", unsafe {
        sys::cuStreamGetCtx(stream as sys::CUstream, &mut ctx)
    })?;
    // SAFETY: `ctx` came from the driver; push/pop leaves the thread's context stack unchanged.
    cuda("cuCtxPushCurrent", unsafe { sys::cuCtxPushCurrent_v2(ctx) })?;
    let mut dev: sys::CUdevice = 0;
    // SAFETY: writes one device of the context just pushed.
    let got = unsafe { sys::cuCtxGetDevice(&mut dev) };
    let mut popped: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: pops the context pushed above.
    cuda("cuCtxPopCurrent", unsafe {
        sys::cuCtxPopCurrent_v2(&mut popped)
    })?;
    cuda("cuCtxGetDevice", got)?;
    Ok(Some(dev))
}

/// What one execute call runs with: stream, workspace and device (plus the handle, if any).
#[derive(Copy, Clone, Debug)]
pub struct ExecContext<'a> {
    /// The handle the call came with (`None` for handle-less Rust callers).
    pub handle: Option<&'a Handle>,
    /// The stream to launch on (NULL = legacy default stream).
    pub stream: StreamPtr,
    /// Workspace base (NULL = none given).
    pub workspace: *mut c_void,
    /// Workspace capacity in bytes; `None` = not stated (a bare address).
    pub workspace_bytes: Option<u64>,
    /// The device the stream belongs to, when known.
    pub device: Option<i32>,
}

impl<'a> ExecContext<'a> {
    /// The context of a call on `handle` with the caller's workspace.
    pub fn new(handle: &'a Handle, workspace: *mut c_void, workspace_bytes: Option<u64>) -> Self {
        ExecContext {
            handle: Some(handle),
            stream: handle.stream,
            workspace,
            workspace_bytes,
            device: handle.device,
        }
    }

    /// A context on the legacy default stream, device unknown, without a handle.
    pub fn detached(workspace: *mut c_void, workspace_bytes: Option<u64>) -> Self {
        ExecContext {
            handle: None,
            stream: std::ptr::null_mut(),
            workspace,
            workspace_bytes,
            device: None,
        }
    }

    /// Device pinning: a plan built for device `built_for` refuses a call whose stream is on
    /// another device (both known), naming both; unknown on either side passes.
    pub fn check_device(&self, built_for: Option<i32>, owner: &str) -> Result<()> {
        match (built_for, self.device) {
            (Some(b), Some(d)) if b != d => Err(Error::bad_param(
                "handle",
                format!(
                    "{owner} was built for cuda:{b} but the handle's stream is on cuda:{d}; \
                     build the plan for that device"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The workspace base after checking that `required` bytes are available: present when
    /// `required > 0`, stated capacity at least `required`, base aligned to [`WORKSPACE_ALIGN`].
    /// `owner` names the plan in the message (formatted only when the check fails).
    pub fn workspace_region(
        &self,
        required: u64,
        owner: impl std::fmt::Display,
    ) -> Result<*mut c_void> {
        if required == 0 {
            return Ok(self.workspace);
        }
        if self.workspace.is_null() {
            return Err(Error::bad_param(
                "workspace",
                format!(
                    "{owner} requires a {required}-byte workspace but execute received none; \
                     allocate the plan's workspace size"
                ),
            ));
        }
        if let Some(have) = self.workspace_bytes
            && have < required
        {
            return Err(Error::bad_param(
                "workspace",
                format!("{owner} requires {required} workspace bytes but {have} were given"),
            ));
        }
        if !(self.workspace as u64).is_multiple_of(WORKSPACE_ALIGN) {
            return Err(Error::bad_param(
                "workspace",
                format!(
                    "{owner}: the workspace address {:p} is not {WORKSPACE_ALIGN}-byte aligned",
                    self.workspace
                ),
            ));
        }
        Ok(self.workspace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_without_driver_and_sentinels() {
        // This machine has no driver: creation queries nothing and succeeds for any stream.
        if crate::cuda::probe::driver().is_err() {
            let h = Handle::new(0x1234 as StreamPtr).unwrap();
            assert_eq!(h.stream() as usize, 0x1234);
            assert_eq!(h.device(), None);
            assert!(Handle::new(std::ptr::null_mut()).is_ok());
        }
        let e = Handle::new(STREAM_PER_THREAD as StreamPtr).unwrap_err();
        assert!(e.to_string().contains("PER_THREAD"));
        if crate::cuda::probe::driver().is_err() {
            let h = Handle::on_device(3, std::ptr::null_mut()).unwrap();
            assert_eq!(h.device(), Some(3));
        }
        assert!(Handle::on_device(-1, std::ptr::null_mut()).is_err());
        assert!(Handle::on_device(0, STREAM_PER_THREAD as StreamPtr).is_err());
    }

    #[test]
    fn workspace_rules() {
        let h = Handle::with_device(std::ptr::null_mut(), Some(0));
        let none = ExecContext::new(&h, std::ptr::null_mut(), None);
        assert!(none.workspace_region(0, "p").is_ok());
        assert!(
            none.workspace_region(64, "p")
                .unwrap_err()
                .to_string()
                .contains("received none")
        );
        let small = ExecContext::new(&h, 0x1000 as *mut c_void, Some(32));
        assert!(
            small
                .workspace_region(64, "p")
                .unwrap_err()
                .to_string()
                .contains("32 were given")
        );
        let misaligned = ExecContext::new(&h, 0x1010 as *mut c_void, None);
        assert!(
            misaligned
                .workspace_region(64, "p")
                .unwrap_err()
                .to_string()
                .contains("aligned")
        );
        let ok = ExecContext::new(&h, 0x1000 as *mut c_void, Some(64));
        assert_eq!(ok.workspace_region(64, "p").unwrap() as usize, 0x1000);
        assert_eq!(ok.device, Some(0));
        assert!(ok.check_device(Some(0), "p").is_ok());
        assert!(ok.check_device(None, "p").is_ok());
        let e = ok.check_device(Some(1), "plan x").unwrap_err().to_string();
        assert!(
            e.contains("plan x was built for cuda:1") && e.contains("cuda:0"),
            "{e}"
        );
        assert!(
            ExecContext::detached(std::ptr::null_mut(), None)
                .check_device(Some(1), "p")
                .is_ok()
        );
    }
}
