//! Cubins loaded into the driver, and kernel lookup by name.
//!
//! A cubin is loaded with `cuLibraryLoadData`: the library is context-independent and the driver
//! loads it into each context on first use there, so one load serves every context and device of
//! the process (the per-context copy is the driver's cache). Loaded modules are cached per process
//! by the blake3 of their bytes and never unloaded (like the CUDA libraries themselves), so a
//! [`Function`] stays valid for the life of the process.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cudarc::driver::sys::{self, CUfunction, CUkernel, CUlibrary};

use super::driver::{check, guarded};
use crate::error::{Error, Result};

/// A loaded cubin.
#[derive(Debug)]
pub struct Module {
    library: CUlibrary,
    /// Where the bytes came from (bundled kernel name, NVRTC entry), for messages.
    origin: String,
    digest: blake3::Hash,
}

// SAFETY: a CUlibrary is a process-wide driver handle, usable from any thread.
unsafe impl Send for Module {}
// SAFETY: as above; lookups through it are thread-safe in the driver.
unsafe impl Sync for Module {}

fn loaded() -> &'static Mutex<HashMap<[u8; 32], Arc<Module>>> {
    static LOADED: OnceLock<Mutex<HashMap<[u8; 32], Arc<Module>>>> = OnceLock::new();
    LOADED.get_or_init(Default::default)
}

impl Module {
    /// Loads a cubin (or returns the module already loaded from the same bytes).
    /// `origin` names it in error messages.
    pub fn load(bytes: &[u8], origin: &str) -> Result<Arc<Module>> {
        let digest = blake3::hash(bytes);
        let mut map = loaded()
            .lock()
            .map_err(|_| Error::Internal("module table poisoned".into()))?;
        if let Some(m) = map.get(digest.as_bytes()) {
            return Ok(m.clone());
        }
        if bytes.len() < 4 || &bytes[..4] != b"\x7fELF" {
            return Err(Error::bad_param(
                origin,
                "is not a cubin (an ELF image is expected)",
            ));
        }
        let library = guarded("loading a cubin", || {
            let mut lib: CUlibrary = std::ptr::null_mut();
            // SAFETY: `bytes` is a complete ELF image that outlives the call (the driver copies it);
            // no JIT or library options are passed.
            check("cuLibraryLoadData", unsafe {
                sys::cuLibraryLoadData(
                    &mut lib,
                    bytes.as_ptr().cast(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                )
            })?;
            Ok(lib)
        })?;
        let module = Arc::new(Module {
            library,
            origin: origin.to_owned(),
            digest,
        });
        map.insert(*digest.as_bytes(), module.clone());
        Ok(module)
    }

    /// The kernel `name` (an `extern "C"` entry point) of this module.
    pub fn function(self: &Arc<Self>, name: &str) -> Result<Function> {
        let cname =
            CString::new(name).map_err(|_| Error::bad_param("kernel name", "contains NUL"))?;
        let kernel = guarded("kernel lookup", || {
            let mut kernel: CUkernel = std::ptr::null_mut();
            // SAFETY: `library` is live (never unloaded); writes one handle.
            let rc = unsafe { sys::cuLibraryGetKernel(&mut kernel, self.library, cname.as_ptr()) };
            if rc == sys::CUresult::CUDA_ERROR_NOT_FOUND {
                return Err(Error::NotFound {
                    what: "kernel function",
                    key: format!("{name} in {}", self.origin),
                });
            }
            check("cuLibraryGetKernel", rc)?;
            Ok(kernel)
        })?;
        Ok(Function {
            kernel,
            name: name.to_owned(),
            prepared: Arc::default(),
            _module: self.clone(),
        })
    }

    /// What the module was loaded from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// blake3 of the loaded bytes.
    pub fn digest(&self) -> blake3::Hash {
        self.digest
    }
}

/// A kernel entry point of a loaded [`Module`].
#[derive(Clone, Debug)]
pub struct Function {
    kernel: CUkernel,
    name: String,
    /// `(CUcontext, CUfunction)` pairs already resolved and prepared (dynamic shared-memory
    /// limit raised to the device's opt-in maximum) by [`Function::prepared_in`]; shared by clones.
    prepared: Arc<RwLock<Vec<(usize, usize)>>>,
    _module: Arc<Module>,
}

// SAFETY: a CUkernel is a context-independent driver handle, usable from any thread.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

impl Function {
    /// The entry point's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The raw context-independent kernel handle.
    pub fn raw_kernel(&self) -> CUkernel {
        self.kernel
    }

    /// The `CUfunction` of this kernel in the context current on the calling thread (the driver
    /// loads the module into that context on first use). Call inside a bound context.
    pub fn in_current_context(&self) -> Result<CUfunction> {
        guarded("kernel function for the current context", || {
            let mut f: CUfunction = std::ptr::null_mut();
            // SAFETY: the kernel handle is live; writes one handle.
            check("cuKernelGetFunction", unsafe {
                sys::cuKernelGetFunction(&mut f, self.kernel)
            })?;
            Ok(f)
        })
    }

    /// Asks the driver to run this kernel on device `ordinal` with the largest shared-memory
    /// carveout (`CU_SHAREDMEM_CARVEOUT_MAX_SHARED`), in every context (`cuKernelSetAttribute`):
    /// for a kernel whose blocks must leave room beside them for another kernel's blocks on the
    /// same SMs (an SM changes its carveout only when it is empty, and by default the driver
    /// sizes it to the one kernel's own occupancy).
    pub fn prefer_max_shared_memory(&self, ordinal: i32) -> Result<()> {
        guarded("shared-memory carveout preference", || {
            let mut dev: sys::CUdevice = 0;
            // SAFETY: writes one device handle.
            check("cuDeviceGet", unsafe {
                sys::cuDeviceGet(&mut dev, ordinal)
            })?;
            // SAFETY: the kernel handle is live; sets one attribute.
            check("cuKernelSetAttribute", unsafe {
                sys::cuKernelSetAttribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                    sys::CUshared_carveout::CU_SHAREDMEM_CARVEOUT_MAX_SHARED as i32,
                    self.kernel,
                    dev,
                )
            })
        })
    }

    /// The `CUfunction` of this kernel in `context`, which must be current on the calling thread,
    /// prepared for launches: its dynamic shared-memory limit raised once to the device's opt-in
    /// maximum (so no launch sets an attribute again). The first call per context resolves and
    /// prepares; later calls are a read-locked lookup.
    pub fn prepared_in(&self, context: sys::CUcontext) -> Result<CUfunction> {
        let key = context as usize;
        if let Ok(list) = self.prepared.read()
            && let Some(&(_, f)) = list.iter().find(|(c, _)| *c == key)
        {
            return Ok(f as CUfunction);
        }
        let f = self.in_current_context()?;
        guarded("preparing a kernel function", || {
            let mut dev: sys::CUdevice = 0;
            // SAFETY: writes one int; the caller made `context` current.
            check("cuCtxGetDevice", unsafe { sys::cuCtxGetDevice(&mut dev) })?;
            let mut optin = 0;
            // SAFETY: writes one int.
            check("cuDeviceGetAttribute", unsafe {
                sys::cuDeviceGetAttribute(
                    &mut optin,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                    dev,
                )
            })?;
            let mut static_smem = 0;
            // SAFETY: `f` is a live function of the current context; writes one int.
            check("cuFuncGetAttribute", unsafe {
                sys::cuFuncGetAttribute(
                    &mut static_smem,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                    f,
                )
            })?;
            // SAFETY: as above; the limit is what the device allows beside the static part.
            check("cuFuncSetAttribute", unsafe {
                sys::cuFuncSetAttribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    (optin - static_smem).max(0),
                )
            })
        })?;
        if let Ok(mut list) = self.prepared.write()
            && !list.iter().any(|(c, _)| *c == key)
        {
            list.push((key, f as usize));
        }
        Ok(f)
    }
}
