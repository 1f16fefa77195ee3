//! The cuDNN C functions dnnplan calls, as a table of function pointers resolved once from the
//! loaded library with integer types (status = [`CudnnStatus`], every enum = `u32`).
//!
//! Required symbols missing from the library make loading fail with a reason; the optional ones
//! (`cudnnGetLastErrorString` before 9.0, the CUDA-graph entry points before 9.5) are `None` and
//! reported as "not supported by this cuDNN" when used. Every checked call turns a failure into
//! [`Error::Cudnn`] with `cudnnGetLastErrorString` text.

use std::ffi::{CStr, c_char, c_void};

use libloading::Library;

use crate::cudnn::status::{CudnnStatus, cudnn_error};
use crate::error::{Error, Result};

/// `cudnnHandle_t`.
pub type RawHandle = *mut c_void;
/// `cudnnBackendDescriptor_t`.
pub type RawDescriptor = *mut c_void;
/// `cudaStream_t` / `CUstream` (the same object).
pub type RawStream = *mut c_void;
/// `cudaGraph_t` / `CUgraph`.
pub type RawCudaGraph = *mut c_void;

type FnGetVersion = unsafe extern "C" fn() -> usize;
type FnGetErrorString = unsafe extern "C" fn(CudnnStatus) -> *const c_char;
type FnGetLastErrorString = unsafe extern "C" fn(*mut c_char, usize);
type FnCreate = unsafe extern "C" fn(*mut RawHandle) -> CudnnStatus;
type FnDestroy = unsafe extern "C" fn(RawHandle) -> CudnnStatus;
type FnSetStream = unsafe extern "C" fn(RawHandle, RawStream) -> CudnnStatus;
type FnCreateDescriptor = unsafe extern "C" fn(u32, *mut RawDescriptor) -> CudnnStatus;
type FnDescriptor = unsafe extern "C" fn(RawDescriptor) -> CudnnStatus;
type FnSetAttribute =
    unsafe extern "C" fn(RawDescriptor, u32, u32, i64, *const c_void) -> CudnnStatus;
type FnGetAttribute =
    unsafe extern "C" fn(RawDescriptor, u32, u32, i64, *mut i64, *mut c_void) -> CudnnStatus;
type FnExecute = unsafe extern "C" fn(RawHandle, RawDescriptor, RawDescriptor) -> CudnnStatus;
type FnCudaGraph =
    unsafe extern "C" fn(RawHandle, RawDescriptor, RawDescriptor, RawCudaGraph) -> CudnnStatus;

/// The two CUDA-graph entry points of the backend API (cuDNN >= 9.5), which take the same
/// arguments: fill an empty graph with a plan's work, or retarget a graph it filled.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CudaGraphCall {
    /// `cudnnBackendPopulateCudaGraph`.
    Populate,
    /// `cudnnBackendUpdateCudaGraph`.
    Update,
}

impl CudaGraphCall {
    /// The cuDNN symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            CudaGraphCall::Populate => "cudnnBackendPopulateCudaGraph",
            CudaGraphCall::Update => "cudnnBackendUpdateCudaGraph",
        }
    }
}

/// Buffer size for `cudnnGetLastErrorString` (the frontend uses the same).
const LAST_ERROR_CAP: usize = 65535;

/// The resolved entry points of one loaded cuDNN.
#[derive(Clone, Copy)]
pub struct CudnnApi {
    /// `size_t cudnnGetVersion(void)`.
    pub get_version: FnGetVersion,
    /// `const char* cudnnGetErrorString(cudnnStatus_t)`.
    pub get_error_string: FnGetErrorString,
    /// `void cudnnGetLastErrorString(char*, size_t)` (cuDNN >= 9.0).
    pub get_last_error_string: Option<FnGetLastErrorString>,
    /// `cudnnCreate(cudnnHandle_t*)`.
    pub create: FnCreate,
    /// `cudnnDestroy(cudnnHandle_t)`.
    pub destroy: FnDestroy,
    /// `cudnnSetStream(cudnnHandle_t, cudaStream_t)`.
    pub set_stream: FnSetStream,
    /// `cudnnBackendCreateDescriptor(type, desc*)`.
    pub backend_create_descriptor: FnCreateDescriptor,
    /// `cudnnBackendDestroyDescriptor(desc)`.
    pub backend_destroy_descriptor: FnDescriptor,
    /// `cudnnBackendSetAttribute(desc, name, type, count, elements)`.
    pub backend_set_attribute: FnSetAttribute,
    /// `cudnnBackendGetAttribute(desc, name, type, requested, count*, elements)`.
    pub backend_get_attribute: FnGetAttribute,
    /// `cudnnBackendFinalize(desc)`.
    pub backend_finalize: FnDescriptor,
    /// `cudnnBackendExecute(handle, plan, variant_pack)`.
    pub backend_execute: FnExecute,
    /// `cudnnBackendPopulateCudaGraph(handle, plan, variant_pack, graph)` (cuDNN >= 9.5).
    pub backend_populate_cuda_graph: Option<FnCudaGraph>,
    /// `cudnnBackendUpdateCudaGraph(handle, plan, variant_pack, graph)` (cuDNN >= 9.5).
    pub backend_update_cuda_graph: Option<FnCudaGraph>,
}

// SAFETY: plain function pointers into a library that is never unloaded.
unsafe impl Send for CudnnApi {}
// SAFETY: as above; the functions themselves are thread-safe per cuDNN's documentation.
unsafe impl Sync for CudnnApi {}

/// Resolves `name` as a function pointer of type `T`.
///
/// # Safety
/// `T` must be the symbol's true C signature.
unsafe fn symbol<T: Copy>(lib: &Library, name: &str) -> std::result::Result<T, String> {
    // SAFETY: the caller guarantees `T` matches the symbol.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{name}: {e}"))
}

impl CudnnApi {
    /// Resolves every entry point from `lib`; a missing required symbol is an error naming it.
    pub fn resolve(lib: &Library) -> std::result::Result<CudnnApi, String> {
        // SAFETY: each type below is the documented cuDNN 9 signature with C enums as u32.
        unsafe {
            Ok(CudnnApi {
                get_version: symbol(lib, "cudnnGetVersion")?,
                get_error_string: symbol(lib, "cudnnGetErrorString")?,
                get_last_error_string: symbol(lib, "cudnnGetLastErrorString").ok(),
                create: symbol(lib, "cudnnCreate")?,
                destroy: symbol(lib, "cudnnDestroy")?,
                set_stream: symbol(lib, "cudnnSetStream")?,
                backend_create_descriptor: symbol(lib, "cudnnBackendCreateDescriptor")?,
                backend_destroy_descriptor: symbol(lib, "cudnnBackendDestroyDescriptor")?,
                backend_set_attribute: symbol(lib, "cudnnBackendSetAttribute")?,
                backend_get_attribute: symbol(lib, "cudnnBackendGetAttribute")?,
                backend_finalize: symbol(lib, "cudnnBackendFinalize")?,
                backend_execute: symbol(lib, "cudnnBackendExecute")?,
                backend_populate_cuda_graph: symbol(lib, CudaGraphCall::Populate.symbol()).ok(),
                backend_update_cuda_graph: symbol(lib, CudaGraphCall::Update.symbol()).ok(),
            })
        }
    }

    /// `cudnnGetLastErrorString` (empty when unavailable). Reading it clears cuDNN's record.
    pub fn last_error(&self) -> String {
        let Some(f) = self.get_last_error_string else {
            return String::new();
        };
        let mut buf = vec![0 as c_char; LAST_ERROR_CAP];
        // SAFETY: the buffer holds LAST_ERROR_CAP chars; cuDNN NUL-terminates within it.
        unsafe { f(buf.as_mut_ptr(), buf.len()) };
        // SAFETY: NUL-terminated above (the last byte stays 0 even if cuDNN filled the rest).
        buf[LAST_ERROR_CAP - 1] = 0;
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    /// `cudnnGetErrorString(status)`.
    pub fn error_string(&self, status: CudnnStatus) -> String {
        // SAFETY: returns a static string (or NULL) for any status value.
        let p = unsafe { (self.get_error_string)(status) };
        if p.is_null() {
            return String::new();
        }
        // SAFETY: non-NULL, NUL-terminated static string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// Ok for success, else [`Error::Cudnn`] with the status and cuDNN's messages.
    pub fn check(&self, call: &'static str, status: CudnnStatus) -> Result<()> {
        if status.is_ok() {
            return Ok(());
        }
        Err(cudnn_error(
            call,
            status,
            Some(self.error_string(status)),
            Some(self.last_error()),
        ))
    }

    /// The CUDA-graph entry point `call`, or `NotSupported` on a cuDNN without it.
    pub fn cuda_graph_fn(&self, call: CudaGraphCall) -> Result<FnCudaGraph> {
        let f = match call {
            CudaGraphCall::Populate => self.backend_populate_cuda_graph,
            CudaGraphCall::Update => self.backend_update_cuda_graph,
        };
        f.ok_or_else(|| {
            Error::NotSupported(format!("{} is not supported by this cuDNN", call.symbol()))
        })
    }
}
