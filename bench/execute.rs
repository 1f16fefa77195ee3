//! Host time per execute through the C ABI, with the no-op test engine (guards checked, nothing
//! launched), for 4, 8 and 16 operands, in the raw-pointer and the DLPack form (plus by-uid).
//!
//! Run: `cargo bench --bench execute` (optionally `-- --bursts 400 --calls 5000`). Each figure is
//! the MINIMUM over bursts of (burst wall time / calls per burst): the floor the code allows on
//! this machine, robust to the noise of a shared 2-core box. Results are recorded in
//! bench/RESULTS.md. Targets (8 operands): raw <= 0.3 us, DLPack <= 1 us.

use std::ffi::c_void;
use std::hint::black_box;
use std::time::Instant;

use dnnplan::ffi::dlpack::{dnnp_dldatatype, dnnp_dldevice, dnnp_dltensor};
use dnnplan::ffi::execute::{
    DNNP_EXEC_TEST_ENGINE_NOOP, DNNP_WORKSPACE_SIZE_UNKNOWN, dnnp_debug_plan_list_create_exec_test,
    dnnp_plan_list_execute, dnnp_plan_list_execute_by_uid, dnnp_plan_list_execute_dlpack,
};
use dnnplan::ffi::handle::{dnnp_handle_create, dnnp_handle_destroy, dnnp_handle_t};
use dnnplan::ffi::plan::{dnnp_plan_list_destroy, dnnp_plan_list_t};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Minimum over `bursts` of the mean ns per call within a burst of `calls`.
fn min_ns_per_call(bursts: usize, calls: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..calls {
        f(); // warm up
    }
    let mut best = f64::INFINITY;
    for _ in 0..bursts {
        let t = Instant::now();
        for _ in 0..calls {
            f();
        }
        best = best.min(t.elapsed().as_nanos() as f64 / calls as f64);
    }
    best
}

fn main() {
    let bursts = arg("--bursts", 300);
    let calls = arg("--calls", 2000);
    println!(
        "host time per execute through the C ABI, no-op engine; min over {bursts} bursts of {calls} calls"
    );
    println!(
        "{:>8} | {:>10} | {:>10} | {:>10}",
        "operands", "raw (ns)", "by uid", "DLPack"
    );
    let mut handle: *mut dnnp_handle_t = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    assert_eq!(
        unsafe { dnnp_handle_create(std::ptr::null_mut(), &mut handle) },
        0
    );
    for n in [4usize, 8, 16] {
        let mut list: *mut dnnp_plan_list_t = std::ptr::null_mut();
        // SAFETY: valid out pointer.
        let st = unsafe {
            dnnp_debug_plan_list_create_exec_test(DNNP_EXEC_TEST_ENGINE_NOOP, n, &mut list)
        };
        assert_eq!(st, 0, "creating the test plan list");
        let ptrs: Vec<*mut c_void> = (0..n)
            .map(|i| (0x7f00_0000_0000 + (i << 20)) as *mut c_void)
            .collect();
        let uids: Vec<i64> = (1..=n as i64).collect();
        let mut shape = [1i64, 128, 64];
        let mut strides = [8192i64, 64, 1];
        let tensors: Vec<dnnp_dltensor> = ptrs
            .iter()
            .map(|&p| dnnp_dltensor {
                data: p,
                device: dnnp_dldevice {
                    device_type: 2,
                    device_id: 0,
                },
                ndim: 3,
                dtype: dnnp_dldatatype {
                    code: 4,
                    bits: 16,
                    lanes: 1,
                },
                shape: shape.as_mut_ptr(),
                strides: strides.as_mut_ptr(),
                byte_offset: 0,
            })
            .collect();
        let tp: Vec<*const dnnp_dltensor> = tensors.iter().map(|t| t as *const _).collect();
        let ws = DNNP_WORKSPACE_SIZE_UNKNOWN;
        let (l, h) = (
            list as *const dnnp_plan_list_t,
            handle as *const dnnp_handle_t,
        );
        let raw = min_ns_per_call(bursts, calls, || {
            // SAFETY: live list and handle, arrays of n entries.
            let st = unsafe {
                dnnp_plan_list_execute(
                    black_box(l),
                    h,
                    ptrs.as_ptr(),
                    n,
                    std::ptr::null_mut(),
                    ws,
                    std::ptr::null(),
                    0,
                )
            };
            assert_eq!(black_box(st), 0);
        });
        let by_uid = min_ns_per_call(bursts, calls, || {
            // SAFETY: as above.
            let st = unsafe {
                dnnp_plan_list_execute_by_uid(
                    black_box(l),
                    h,
                    uids.as_ptr(),
                    ptrs.as_ptr(),
                    n,
                    std::ptr::null_mut(),
                    ws,
                    std::ptr::null(),
                    0,
                )
            };
            assert_eq!(black_box(st), 0);
        });
        let dlpack = min_ns_per_call(bursts, calls, || {
            // SAFETY: as above; records valid for the call.
            let st = unsafe {
                dnnp_plan_list_execute_dlpack(
                    black_box(l),
                    h,
                    tp.as_ptr(),
                    n,
                    std::ptr::null_mut(),
                    ws,
                    std::ptr::null(),
                    0,
                )
            };
            assert_eq!(black_box(st), 0);
        });
        println!("{n:>8} | {raw:>10.1} | {by_uid:>10.1} | {dlpack:>10.1}");
        // SAFETY: created above, not used afterwards.
        unsafe { dnnp_plan_list_destroy(list) };
    }
    // SAFETY: created above.
    unsafe { dnnp_handle_destroy(handle) };
}
