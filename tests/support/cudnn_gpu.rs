//! Device plumbing shared by the cuDNN GPU tests and benchmarks (tests/gpu_cudnn.rs,
//! tests/gpu_cudnn_perf.rs; included with `#[path]`): the process-wide context, stream and cuDNN
//! handle, zero-filled device buffers freed on drop, and the C ABI calls that create a plan list
//! from an IR document (panicking with the library's last error message on a failing status).

#![allow(dead_code)] // each test binary uses a different subset

use std::ffi::c_void;
use std::sync::OnceLock;

use cudarc::driver::{result as drv, sys as drv_sys};

use dnnplan::cudnn::{handle, loader};

// The C ABI's last-error text by the two-call protocol (`fuzz::last_error`), written once for the
// robustness tests and these.
#[path = "fuzz.rs"]
mod fuzz;

pub mod capi {
    //! The tests and benchmarks drive dnnplan through its C ABI, as a framework would.
    #![allow(unused_imports)] // each test binary uses a different subset
    pub use dnnplan::ffi::diagnostics::dnnp_get_last_error_string;
    pub use dnnplan::ffi::execute::{dnnp_plan_list_execute, dnnp_plan_list_get_operand_uids};
    pub use dnnplan::ffi::handle::{dnnp_handle_create, dnnp_handle_destroy, dnnp_handle_t};
    pub use dnnplan::ffi::plan::{
        dnnp_plan_list_build_plans, dnnp_plan_list_create_execution_plans,
        dnnp_plan_list_create_from_json, dnnp_plan_list_destroy, dnnp_plan_list_get_count,
        dnnp_plan_list_get_plan_name, dnnp_plan_list_get_selected_index,
        dnnp_plan_list_get_workspace_size, dnnp_plan_list_t,
    };
}

pub struct Gpu {
    pub stream: drv_sys::CUstream,
    pub handle: *mut c_void,
}
// SAFETY: tests run with --test-threads=1; the raw stream/handle are process-global.
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

pub fn gpu() -> &'static Gpu {
    static G: OnceLock<Gpu> = OnceLock::new();
    let g = G.get_or_init(|| {
        let info = dnnplan::cuda::probe::driver().expect("CUDA driver");
        eprintln!("device: {:?}", info.devices.first().map(|d| &d.name));
        let lib = loader::library().expect("cuDNN must load on the GPU machine");
        eprintln!(
            "cuDNN {} from {}",
            loader::version_string(lib.version),
            lib.origin
        );
        let dev = drv::device::get(0).unwrap();
        // SAFETY: device 0 exists (probed above).
        let ctx = unsafe { drv::primary_ctx::retain(dev) }.unwrap();
        unsafe { drv::ctx::set_current(ctx) }.unwrap();
        let stream = drv::stream::create(drv::stream::StreamKind::NonBlocking).unwrap();
        let handle = handle::handle_for(0, stream as *mut c_void).expect("cudnn handle");
        Gpu { stream, handle }
    });
    // Every test thread needs the context current.
    let dev = drv::device::get(0).unwrap();
    let ctx = unsafe { drv::primary_ctx::retain(dev) }.unwrap();
    unsafe { drv::ctx::set_current(ctx) }.unwrap();
    g
}

pub struct DevBuf(pub drv_sys::CUdeviceptr);
impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by malloc_sync below.
        let _ = unsafe { drv::free_sync(self.0) };
    }
}

/// Waits for the setup copies and fills of the legacy stream. The tests' work runs on a
/// non-blocking stream, which does not wait for the legacy stream, and a "synchronous" memset or
/// pageable upload may return before it has landed: without this, a kernel can read an input
/// before its upload or see an output's zero fill land after it wrote (seen on the H200 while
/// other processes loaded the GPU).
pub fn settle() {
    drv::ctx::synchronize().unwrap();
}

/// A zero-filled device buffer of `bytes` (at least 256), the fill landed.
pub fn alloc(bytes: usize) -> DevBuf {
    // SAFETY: plain allocation; zero-filled.
    let buf = unsafe {
        let p = drv::malloc_sync(bytes.max(256)).unwrap();
        drv::memset_d8_sync(p, 0, bytes.max(256)).unwrap();
        DevBuf(p)
    };
    settle();
    buf
}

/// Copies `data` to the start of `buf`, the copy landed.
pub fn upload(buf: &DevBuf, data: &[u8]) {
    // SAFETY: the callers size `buf` for `data`.
    unsafe { drv::memcpy_htod_sync(buf.0, data) }.unwrap();
    settle();
}

/// Fills the first `bytes` of `buf` with `byte`, the fill landed.
pub fn fill(buf: &DevBuf, byte: u8, bytes: usize) {
    // SAFETY: the callers pass `buf`'s size or less.
    unsafe { drv::memset_d8_sync(buf.0, byte, bytes) }.unwrap();
    settle();
}

pub fn capi_ok(what: &str, st: i32) {
    if st != 0 {
        panic!("{what}: status {st}: {}", fuzz::last_error());
    }
}

/// A planned (not built) plan list of `doc` with modes [A, FALLBACK]; returns it and the time
/// of validate + plan-list creation in ms.
pub fn plan_list(doc: &str) -> (*mut capi::dnnp_plan_list_t, f64) {
    let text = std::ffi::CString::new(doc).unwrap();
    let modes = [0u32, 2u32]; // DNNP_HEUR_MODE_A, DNNP_HEUR_MODE_FALLBACK
    let mut list = std::ptr::null_mut();
    let t = std::time::Instant::now();
    capi_ok("create_from_json", unsafe {
        capi::dnnp_plan_list_create_from_json(text.as_ptr(), &mut list)
    });
    capi_ok("create_execution_plans", unsafe {
        capi::dnnp_plan_list_create_execution_plans(list, modes.as_ptr(), modes.len())
    });
    (list, t.elapsed().as_secs_f64() * 1e3)
}

/// Median of 5 [`plan_list`] creations of `doc` in ms, each list destroyed before the next.
pub fn creation_median_ms(doc: &str) -> f64 {
    let mut t: Vec<f64> = (0..5)
        .map(|_| {
            let (l, ms) = plan_list(doc);
            unsafe { capi::dnnp_plan_list_destroy(l) };
            ms
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[2]
}
