//! The caller's CUDA context and device, and binding the context a launch needs.
//!
//! dnnplan keeps no ambient device state. The rule, applied by [`ContextGuard::for_stream`]:
//! 1. a real stream (anything but the sentinels `0`, `CU_STREAM_LEGACY` = 1 and
//!    `CU_STREAM_PER_THREAD` = 2) names its context: `cuStreamGetCtx` decides;
//! 2. a default-stream sentinel names no context: the context current on the calling thread is used;
//! 3. with none current, the device the caller names (e.g. the handle's device) decides: its primary
//!    context, retained once per ordinal for the life of the process (never released);
//! 4. otherwise the call fails with `InvalidState` (dnnplan never picks a device by itself).
//!
//! The guard makes that context current for its lifetime (push) and restores the caller's state
//! when dropped (pop), so a launch never changes what the caller sees as current.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::sys::{self, CUcontext, CUstream};

use super::driver::{check, guarded};
use super::probe::{self, DeviceInfo};
use crate::error::{Error, Result};

/// The legacy default stream sentinel (`CU_STREAM_LEGACY`).
pub const STREAM_LEGACY: usize = 1;
/// The per-thread default stream sentinel (`CU_STREAM_PER_THREAD`).
pub const STREAM_PER_THREAD: usize = 2;

/// True for the stream values that name no context (NULL, legacy and per-thread default streams).
pub fn is_default_stream(stream: CUstream) -> bool {
    (stream as usize) <= STREAM_PER_THREAD
}

/// A context and the ordinal of its device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CurrentContext {
    /// The raw `CUcontext`.
    pub context: CUcontext,
    /// The device ordinal of that context.
    pub ordinal: i32,
}

// SAFETY: a CUcontext is a driver handle usable from any thread.
unsafe impl Send for CurrentContext {}
// SAFETY: as above; the struct is plain data.
unsafe impl Sync for CurrentContext {}

impl CurrentContext {
    /// The context current on the calling thread, or `None` when the thread has none.
    pub fn current() -> Result<Option<CurrentContext>> {
        guarded("current context", || {
            let mut ctx: CUcontext = std::ptr::null_mut();
            // SAFETY: writes one handle.
            check("cuCtxGetCurrent", unsafe { sys::cuCtxGetCurrent(&mut ctx) })?;
            if ctx.is_null() {
                return Ok(None);
            }
            Ok(Some(CurrentContext {
                context: ctx,
                ordinal: current_ordinal()?,
            }))
        })
    }

    /// Properties (compute capability, SM count, L2 size, name) of this context's device.
    pub fn device(&self) -> Result<DeviceInfo> {
        device_properties(self.ordinal)
    }
}

/// Properties of device `ordinal`, as probed once per process.
pub fn device_properties(ordinal: i32) -> Result<DeviceInfo> {
    let driver = super::driver::require()?;
    driver
        .devices
        .iter()
        .find(|d| d.ordinal == ordinal)
        .cloned()
        .ok_or_else(|| Error::NotFound {
            what: "CUDA device",
            key: ordinal.to_string(),
        })
}

/// The ordinal of the device of the current context (`cuCtxGetDevice`, mapped back to an ordinal).
fn current_ordinal() -> Result<i32> {
    let mut dev: sys::CUdevice = 0;
    // SAFETY: writes one int; requires a current context, which the callers ensure.
    check("cuCtxGetDevice", unsafe { sys::cuCtxGetDevice(&mut dev) })?;
    let count = probe::driver().map(|d| d.devices.len()).unwrap_or(0) as i32;
    for ordinal in 0..count {
        let mut candidate: sys::CUdevice = 0;
        // SAFETY: writes one int.
        check("cuDeviceGet", unsafe {
            sys::cuDeviceGet(&mut candidate, ordinal)
        })?;
        if candidate == dev {
            return Ok(ordinal);
        }
    }
    Ok(dev)
}

/// The primary context of `ordinal`, retained once per process and never released.
fn primary_context(ordinal: i32) -> Result<CUcontext> {
    static RETAINED: OnceLock<Mutex<HashMap<i32, usize>>> = OnceLock::new();
    let mut map = RETAINED
        .get_or_init(Default::default)
        .lock()
        .map_err(|_| Error::Internal("primary-context table poisoned".into()))?;
    if let Some(&ctx) = map.get(&ordinal) {
        return Ok(ctx as CUcontext);
    }
    device_properties(ordinal)?;
    let mut dev: sys::CUdevice = 0;
    // SAFETY: writes one int.
    check("cuDeviceGet", unsafe {
        sys::cuDeviceGet(&mut dev, ordinal)
    })?;
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle; the retain is intentionally never released.
    check("cuDevicePrimaryCtxRetain", unsafe {
        sys::cuDevicePrimaryCtxRetain(&mut ctx, dev)
    })?;
    map.insert(ordinal, ctx as usize);
    Ok(ctx)
}

/// Keeps a context current for its lifetime; restores the caller's current context on drop.
#[derive(Debug)]
pub struct ContextGuard {
    bound: CurrentContext,
    pushed: bool,
    /// Pushing and popping are per thread: the guard must not move to another one.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl ContextGuard {
    /// Binds the context `stream` implies (see the module rules); `device` is the caller's device
    /// (e.g. the handle's), used only when neither the stream nor the thread names a context.
    ///
    /// # Safety
    /// `stream` must be a default-stream sentinel or a live stream of a live context.
    pub unsafe fn for_stream(stream: CUstream, device: Option<i32>) -> Result<ContextGuard> {
        guarded("binding the stream's context", || {
            let mut current: CUcontext = std::ptr::null_mut();
            // SAFETY: writes one handle.
            check("cuCtxGetCurrent", unsafe {
                sys::cuCtxGetCurrent(&mut current)
            })?;
            let wanted = if !is_default_stream(stream) {
                let mut ctx: CUcontext = std::ptr::null_mut();
                // SAFETY: `stream` is a live stream per the caller's contract; writes one handle.
                check("cuStreamGetCtx", unsafe {
                    sys::cuStreamGetCtx(stream, &mut ctx)
                })?;
                ctx
            } else if !current.is_null() {
                current
            } else if let Some(ordinal) = device {
                primary_context(ordinal)?
            } else {
                return Err(Error::InvalidState(
                    "no CUDA context is current on this thread and the default stream names none: \
                     make a context current (e.g. cudaSetDevice) or pass a device or a stream"
                        .into(),
                ));
            };
            let pushed = wanted != current;
            if pushed {
                // SAFETY: `wanted` is a live context (the stream's, or a retained primary one).
                check("cuCtxPushCurrent", unsafe {
                    sys::cuCtxPushCurrent_v2(wanted)
                })?;
            }
            let ordinal = match current_ordinal() {
                Ok(o) => o,
                Err(e) => {
                    if pushed {
                        let mut popped: CUcontext = std::ptr::null_mut();
                        // SAFETY: undoes the push above.
                        let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
                    }
                    return Err(e);
                }
            };
            Ok(ContextGuard {
                bound: CurrentContext {
                    context: wanted,
                    ordinal,
                },
                pushed,
                _not_send: std::marker::PhantomData,
            })
        })
    }

    /// The bound context and its device.
    pub fn context(&self) -> CurrentContext {
        self.bound
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        if self.pushed {
            let _ = std::panic::catch_unwind(|| {
                let mut popped: CUcontext = std::ptr::null_mut();
                // SAFETY: pops the context this guard pushed (same thread: the guard is !Send).
                let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
            });
        }
    }
}
