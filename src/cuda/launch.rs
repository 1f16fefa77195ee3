//! Kernel launches on a caller-supplied stream.
//!
//! [`launch`] binds the context the stream implies ([`ContextGuard::for_stream`]), resolves the
//! kernel in that context, raises the dynamic shared-memory limit when the launch asks for more
//! than the 48 KiB default, and calls `cuLaunchKernelEx` with the cluster dimensions as a launch
//! attribute when given. It never synchronizes and never allocates device memory.

use std::ffi::c_void;

use cudarc::driver::sys::{self, CUstream};

use super::context::ContextGuard;
use super::driver::{check, guarded};
use super::module::Function;
use crate::error::{Error, Result};

/// Shared memory a block gets without opting in.
const DEFAULT_DYNAMIC_SMEM: u32 = 48 * 1024;

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
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads, no shared memory, no cluster.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig {
            grid: (grid, 1, 1),
            block: (block, 1, 1),
            shared_mem_bytes: 0,
            cluster: None,
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

/// Kernel parameters, copied by value, in the kernel's parameter order.
#[derive(Default)]
pub struct KernelArgs {
    values: Vec<Box<[Slot]>>,
}

impl KernelArgs {
    /// No parameters yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one parameter by value (a scalar, a device pointer, a POD struct such as a tensor map).
    pub fn push<T: Copy + 'static>(&mut self, value: T) -> &mut Self {
        let size = std::mem::size_of::<T>();
        let mut slots = vec![Slot([0; 64]); size.div_ceil(64).max(1)].into_boxed_slice();
        // SAFETY: the slots hold at least `size` bytes, are 64-byte aligned and `T: Copy`.
        unsafe { std::ptr::write(slots.as_mut_ptr().cast::<T>(), value) };
        self.values.push(slots);
        self
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no parameter was pushed.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    fn pointers(&mut self) -> Vec<*mut c_void> {
        self.values
            .iter_mut()
            .map(|v| v.as_mut_ptr().cast::<c_void>())
            .collect()
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
    // SAFETY: the caller guarantees `stream` is live or a sentinel.
    let _bound = unsafe { ContextGuard::for_stream(stream, device) }?;
    let f = function.in_current_context()?;
    guarded("kernel launch", || {
        if config.shared_mem_bytes > DEFAULT_DYNAMIC_SMEM {
            // SAFETY: `f` is a live function of the bound context.
            check("cuFuncSetAttribute", unsafe {
                sys::cuFuncSetAttribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    config.shared_mem_bytes as i32,
                )
            })?;
        }
        // SAFETY: all-zero is a valid bit pattern for this plain C struct (union of PODs).
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        let mut num_attrs = 0;
        if let Some((x, y, z)) = config.cluster {
            attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr.value.clusterDim.x = x;
            attr.value.clusterDim.y = y;
            attr.value.clusterDim.z = z;
            num_attrs = 1;
        }
        let launch_config = sys::CUlaunchConfig {
            gridDimX: config.grid.0,
            gridDimY: config.grid.1,
            gridDimZ: config.grid.2,
            blockDimX: config.block.0,
            blockDimY: config.block.1,
            blockDimZ: config.block.2,
            sharedMemBytes: config.shared_mem_bytes,
            hStream: stream,
            attrs: &mut attr,
            numAttrs: num_attrs,
        };
        let mut pointers = args.pointers();
        // SAFETY: the config and attribute outlive the call; `pointers` has one entry per kernel
        // parameter (the caller's contract) and each points to a live copy of the value.
        check("cuLaunchKernelEx", unsafe {
            sys::cuLaunchKernelEx(
                &launch_config,
                f,
                pointers.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    })
}
