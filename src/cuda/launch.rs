//! Kernel launches on a caller-supplied stream.
//!
//! [`Launcher::bind`] binds the context the stream implies ([`ContextGuard::for_stream`]) once;
//! [`Launcher::launch_raw`] then resolves the kernel in that context (cached per function and
//! context, with the dynamic shared-memory limit raised once to the device's opt-in maximum,
//! [`Function::prepared_in`]) and calls `cuLaunchKernelEx` with the cluster dimensions as a launch
//! attribute when given. [`launch`] is the one-shot form. Nothing here synchronizes or allocates
//! (host or device) on the launch path: [`KernelArgs`] keeps its values inline.

use std::ffi::c_void;

use cudarc::driver::sys::{self, CUstream};

use super::context::ContextGuard;
use super::driver::{check, guarded};
use super::module::Function;
use crate::error::{Error, Result};

/// Grid, block, dynamic shared memory and (optionally) cluster shape of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Grid dimensions in blocks (x, y, z); each at least 1.
    pub grid: (u32, u32, u32),
    /// Block dimensions in threads (x, y, z); each at least 1.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block in bytes.
    pub shared_mem_bytes: u32,
    /// Thread-block cluster dimensions (sm_90+); each must divide the grid's. `None`: no cluster.
    pub cluster: Option<(u32, u32, u32)>,
    /// Programmatic dependent launch (sm_90+): the kernel may start before the previous kernel on
    /// the stream has finished, once every block of that kernel has executed
    /// `griddepcontrol.launch_dependents` (or exited). Only for a consumer written for it
    /// (`kernels/include/dnnp_overlap.cuh` states the contract); `false` keeps stream order.
    pub programmatic: bool,
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads, no shared memory, no cluster.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig {
            grid: (grid, 1, 1),
            block: (block, 1, 1),
            shared_mem_bytes: 0,
            cluster: None,
            programmatic: false,
        }
    }

    fn validate(&self, kernel: &str) -> Result<()> {
        let (g, b) = (self.grid, self.block);
        if [g.0, g.1, g.2, b.0, b.1, b.2].contains(&0) {
            return Err(Error::bad_param(
                format!("launch of {kernel}"),
                "grid and block dimensions must be at least 1",
            ));
        }
        if let Some(c) = self.cluster
            && ([c.0, c.1, c.2].contains(&0) || g.0 % c.0 != 0 || g.1 % c.1 != 0 || g.2 % c.2 != 0)
        {
            return Err(Error::bad_param(
                format!("launch of {kernel}"),
                format!("cluster {c:?} must be at least 1 and divide the grid {g:?}"),
            ));
        }
        Ok(())
    }
}

/// One 64-byte-aligned parameter slot (large enough and aligned enough for a `CUtensorMap`).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot([u8; 64]);

/// Most parameters a [`KernelArgs`] holds.
pub const MAX_KERNEL_ARGS: usize = 24;
/// Most 64-byte slots the parameters of one [`KernelArgs`] occupy together.
const MAX_SLOTS: usize = 32;

/// Kernel parameters, copied by value, in the kernel's parameter order. Stored inline (no heap):
/// at most [`MAX_KERNEL_ARGS`] parameters in `MAX_SLOTS` 64-byte slots; pushing past that is
/// reported by the launch as `BadParam`.
pub struct KernelArgs {
    slots: [Slot; MAX_SLOTS],
    /// First slot of each parameter.
    starts: [u8; MAX_KERNEL_ARGS],
    len: usize,
    used_slots: usize,
    overflow: bool,
}

impl Default for KernelArgs {
    fn default() -> Self {
        KernelArgs {
            slots: [Slot([0; 64]); MAX_SLOTS],
            starts: [0; MAX_KERNEL_ARGS],
            len: 0,
            used_slots: 0,
            overflow: false,
        }
    }
}

impl KernelArgs {
    /// No parameters yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one parameter by value (a scalar, a device pointer, a POD struct such as a tensor map).
    pub fn push<T: Copy + 'static>(&mut self, value: T) -> &mut Self {
        let need = std::mem::size_of::<T>().div_ceil(64).max(1);
        if self.len == MAX_KERNEL_ARGS || self.used_slots + need > MAX_SLOTS {
            self.overflow = true;
            return self;
        }
        // SAFETY: slots `used_slots..used_slots + need` hold at least `size_of::<T>()` bytes, are
        // 64-byte aligned (so aligned for any `T` up to 64) and `T: Copy`.
        unsafe {
            std::ptr::write_unaligned(
                self.slots[self.used_slots..].as_mut_ptr().cast::<T>(),
                value,
            )
        };
        self.starts[self.len] = self.used_slots as u8;
        self.len += 1;
        self.used_slots += need;
        self
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no parameter was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// One pointer per parameter (the first `len` entries), into this struct's storage.
    fn pointers(&mut self) -> [*mut c_void; MAX_KERNEL_ARGS] {
        let mut out = [std::ptr::null_mut(); MAX_KERNEL_ARGS];
        let base = self.slots.as_mut_ptr();
        for (o, &s) in out.iter_mut().zip(&self.starts[..self.len]) {
            // SAFETY: `s < MAX_SLOTS`, so the offset stays inside `slots`.
            *o = unsafe { base.add(usize::from(s)) }.cast::<c_void>();
        }
        out
    }
}

/// The context a stream implies, bound once for a sequence of launches (see the module doc):
/// an engine binds one per execute and launches all its kernels through it.
pub struct Launcher {
    guard: ContextGuard,
    stream: CUstream,
}

impl Launcher {
    /// Binds the context of `stream` (or the caller's current one, or `device`'s primary one) for
    /// the launcher's lifetime; the caller's current context is restored on drop.
    ///
    /// # Safety
    /// `stream` must be a live stream (or a default-stream sentinel) for the launcher's lifetime.
    pub unsafe fn bind(stream: CUstream, device: Option<i32>) -> Result<Launcher> {
        // SAFETY: forwarded contract.
        let guard = unsafe { ContextGuard::for_stream(stream, device) }?;
        Ok(Launcher { guard, stream })
    }

    /// Resolves and prepares `function` in the bound context now (what the first launch there
    /// would do), so that building a plan does it and executing does not.
    pub fn prepare(&self, function: &Function) -> Result<()> {
        function
            .prepared_in(self.guard.context().context)
            .map(|_| ())
    }

    /// Launches `function` with `params` (one pointer per kernel parameter, each to a live copy
    /// of the value). Resolving the function in the bound context and raising its shared-memory
    /// limit happen once per (function, context), not per launch; nothing is allocated.
    ///
    /// # Safety
    /// `params` must match the kernel's parameter list exactly; device pointers reachable from
    /// them must be valid for what the kernel accesses. The kernel runs asynchronously.
    pub unsafe fn launch_raw(
        &self,
        function: &Function,
        config: &LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        config.validate(function.name())?;
        let f = function.prepared_in(self.guard.context().context)?;
        guarded("kernel launch", || {
            // SAFETY: all-zero is a valid bit pattern for this plain C struct (union of PODs).
            let mut attrs: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
            let mut num_attrs = 0;
            if let Some((x, y, z)) = config.cluster {
                let a = &mut attrs[num_attrs];
                a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
                a.value.clusterDim.x = x;
                a.value.clusterDim.y = y;
                a.value.clusterDim.z = z;
                num_attrs += 1;
            }
            if config.programmatic {
                let a = &mut attrs[num_attrs];
                a.id =
                    sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
                a.value.programmaticStreamSerializationAllowed = 1;
                num_attrs += 1;
            }
            let launch_config = sys::CUlaunchConfig {
                gridDimX: config.grid.0,
                gridDimY: config.grid.1,
                gridDimZ: config.grid.2,
                blockDimX: config.block.0,
                blockDimY: config.block.1,
                blockDimZ: config.block.2,
                sharedMemBytes: config.shared_mem_bytes,
                hStream: self.stream,
                attrs: attrs.as_mut_ptr(),
                numAttrs: num_attrs as u32,
            };
            // SAFETY: the config and attribute outlive the call; `params` has one entry per
            // kernel parameter (the caller's contract) and each points to a live copy.
            check("cuLaunchKernelEx", unsafe {
                sys::cuLaunchKernelEx(&launch_config, f, params.as_mut_ptr(), std::ptr::null_mut())
            })
        })
    }

    /// Sets `count` 32-bit words at device address `dst` to `value`, in stream order
    /// (`cuMemsetD32Async`; capturable in a CUDA graph). Zeroes the hand-over flags of an
    /// overlapped producer/consumer pair before the producer starts.
    ///
    /// # Safety
    /// `dst` must be a 4-byte-aligned device allocation of at least `count` words, not in use by
    /// other work that is not ordered with this stream.
    pub unsafe fn memset_u32(&self, dst: u64, value: u32, count: usize) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        if !dst.is_multiple_of(4) {
            return Err(Error::bad_param(
                "memset of hand-over flags",
                format!("address {dst:#x} is not 4-byte aligned"),
            ));
        }
        guarded("memset", || {
            // SAFETY: the caller's contract; the call only enqueues the fill on the stream.
            check("cuMemsetD32Async", unsafe {
                sys::cuMemsetD32Async(dst, value, count, self.stream)
            })
        })
    }

    /// [`Launcher::launch_raw`] with the parameters of `args`.
    ///
    /// # Safety
    /// As for [`Launcher::launch_raw`].
    pub unsafe fn launch(
        &self,
        function: &Function,
        config: &LaunchConfig,
        args: &mut KernelArgs,
    ) -> Result<()> {
        if args.overflow {
            return Err(Error::bad_param(
                format!("launch of {}", function.name()),
                format!(
                    "more than {MAX_KERNEL_ARGS} parameters or {} bytes of parameters",
                    MAX_SLOTS * 64
                ),
            ));
        }
        let len = args.len;
        let mut pointers = args.pointers();
        // SAFETY: forwarded contract; the pointers index `args`, alive for the call.
        unsafe { self.launch_raw(function, config, &mut pointers[..len]) }
    }
}

/// Launches `function` on `stream` (see the module doc). `device` is the caller's device, used
/// only when neither the stream nor the calling thread names a context.
///
/// # Safety
/// `stream` must be a live stream (or a default-stream sentinel) and `args` must match the
/// kernel's parameter list exactly; device pointers in `args` must be valid for what the kernel
/// accesses. The kernel runs asynchronously.
pub unsafe fn launch(
    function: &Function,
    config: &LaunchConfig,
    stream: CUstream,
    device: Option<i32>,
    args: &mut KernelArgs,
) -> Result<()> {
    config.validate(function.name())?;
    // SAFETY: forwarded contract.
    let launcher = unsafe { Launcher::bind(stream, device) }?;
    // SAFETY: forwarded contract.
    unsafe { launcher.launch(function, config, args) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_args_store_values_inline_in_order() {
        let mut a = KernelArgs::new();
        a.push(7i64).push(2.5f32).push([1u8; 100]).push(9u16);
        assert_eq!(a.len(), 4);
        let p = a.pointers();
        // SAFETY: each pointer addresses the value pushed at that position.
        unsafe {
            assert_eq!(*(p[0] as *const i64), 7);
            assert_eq!(*(p[1] as *const f32), 2.5);
            assert_eq!(*(p[2] as *const [u8; 100]), [1u8; 100]);
            assert_eq!(*(p[3] as *const u16), 9);
        }
        assert!((p[3] as usize - p[2] as usize) == 128 && (p[0] as usize).is_multiple_of(64));
        assert!(!a.overflow);
    }

    #[test]
    fn kernel_args_past_capacity_are_flagged_not_written() {
        let mut a = KernelArgs::new();
        for i in 0..MAX_KERNEL_ARGS + 3 {
            a.push(i as u64);
        }
        assert_eq!(a.len(), MAX_KERNEL_ARGS);
        assert!(a.overflow);
        let mut b = KernelArgs::new();
        b.push([0u8; 64 * MAX_SLOTS]).push(1u8);
        assert_eq!(b.len(), 1);
        assert!(b.overflow);
    }
}
