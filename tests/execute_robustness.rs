//! Malformed execute calls through the C ABI: no call may panic (a contained panic is
//! `DNNP_STATUS_INTERNAL_PANIC`, a bug), and every refusal leaves a last-error message.
//!
//! The plan list is the no-op test engine's (`DNNP_EXEC_TEST_ENGINE_NOOP`: four operands, uids
//! 1..=4, each `[1, 128, 64]` bf16 with strides `[8192, 64, 1]`; the plan checks its guards and
//! launches nothing, so no pointer is ever dereferenced). A seeded PRNG draws, per call, one of
//! the execute forms — DLPack records in operand order or by uid, raw pointers by uid — with
//! records of random rank (0..=6, and -1), extents and strides at the edges of 64 bits (NULL
//! strides too), random dtype codes, widths and lanes, byte offsets, device types and NULL data,
//! uid arrays with duplicates, negatives and non-operands, and random shape overrides; the
//! declared record, unchanged, is mixed in so that calls also pass. Every array handed over is as
//! long as the count beside it says (the contract the library relies on).
//!
//! `DNNPLAN_EXECUTE_ROBUSTNESS_CASES` sets the number of calls (default 20,000).

use std::ffi::c_void;
use std::ptr;

use dnnplan::ffi::dlpack::{dnnp_dldatatype, dnnp_dldevice, dnnp_dltensor};
use dnnplan::ffi::execute::{
    DNNP_EXEC_TEST_ENGINE_NOOP, DNNP_WORKSPACE_SIZE_UNKNOWN, dnnp_debug_plan_list_create_exec_test,
    dnnp_plan_list_execute_by_uid, dnnp_plan_list_execute_dlpack,
    dnnp_plan_list_execute_dlpack_by_uid, dnnp_shape_override,
};
use dnnplan::ffi::handle::{dnnp_handle_create, dnnp_handle_destroy, dnnp_handle_t};
use dnnplan::ffi::plan::{dnnp_plan_list_destroy, dnnp_plan_list_t};
use dnnplan::ffi::{DNNP_STATUS_SUCCESS, dnnp_status_t};
use support::fuzz::{Rng, Tally, env_count, rng};

mod support;

const OPERANDS: usize = 4;

/// Extents and strides at the edges of the widths the pack layer computes with.
const EDGES: [i64; 18] = [
    0,
    1,
    -1,
    2,
    64,
    128,
    8192,
    16384,
    i32::MAX as i64,
    1 << 32,
    1 << 40,
    1 << 62,
    i64::MAX,
    i64::MIN,
    -8192,
    3,
    4096,
    1 << 20,
];

/// One drawn DLPack record with the arrays it points into (kept alive beside it).
struct Record {
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    tensor: dnnp_dltensor,
}

fn declared() -> Record {
    Record {
        shape: vec![1, 128, 64],
        strides: None,
        tensor: dnnp_dltensor {
            data: 0x7000_0000_0000usize as *mut c_void,
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
            shape: ptr::null_mut(),
            strides: ptr::null_mut(),
            byte_offset: 0,
        },
    }
}

fn draw_record(rng: &mut Rng) -> Record {
    let mut r = declared();
    if rng.chance(4) {
        return r; // as declared: the call may pass
    }
    let rank = rng.pick(&[0usize, 1, 2, 3, 3, 3, 4, 6]);
    r.shape = (0..rank)
        .map(|i| {
            if rng.chance(2) {
                [1, 128, 64].get(i).copied().unwrap_or(1)
            } else {
                rng.pick(&EDGES)
            }
        })
        .collect();
    if rng.chance(2) {
        r.strides = Some((0..rank).map(|_| rng.pick(&EDGES)).collect());
    }
    r.tensor.ndim = if rng.chance(20) { -1 } else { rank as i32 };
    if rng.chance(3) {
        r.tensor.dtype = dnnp_dldatatype {
            code: rng.pick(&[0u8, 1, 2, 4, 6, 7, 17, 18, 255]),
            bits: rng.pick(&[0u8, 1, 4, 8, 16, 32, 64, 255]),
            lanes: rng.pick(&[0u16, 1, 2, 4, u16::MAX]),
        };
    }
    if rng.chance(4) {
        r.tensor.byte_offset = rng.pick(&[1u64, 2, 16, 1 << 40, u64::MAX, i64::MAX as u64]);
    }
    if rng.chance(6) {
        r.tensor.device.device_type = rng.pick(&[1, 3, 13, 99, -1]);
    }
    if rng.chance(8) {
        r.tensor.data = ptr::null_mut();
    }
    r
}

/// Points each record at its own arrays (after the vectors stopped moving).
fn fix_pointers(records: &mut [Record]) {
    for r in records {
        r.tensor.shape = if r.tensor.ndim > 0 || !r.shape.is_empty() {
            r.shape.as_mut_ptr()
        } else {
            ptr::null_mut()
        };
        r.tensor.strides = r
            .strides
            .as_mut()
            .map_or(ptr::null_mut(), |s| s.as_mut_ptr());
    }
}

fn draw_uids(rng: &mut Rng, n: usize) -> Vec<i64> {
    (0..n)
        .map(|i| {
            if rng.chance(3) {
                rng.pick(&[0, -1, 5, 1, 1, i64::MAX, i64::MIN])
            } else {
                i as i64 + 1
            }
        })
        .collect()
}

/// Random shape overrides with the arrays they point into.
struct Overrides {
    dims: Vec<Vec<i64>>,
    strides: Vec<Vec<i64>>,
    records: Vec<dnnp_shape_override>,
}

fn draw_overrides(rng: &mut Rng) -> Overrides {
    let n = if rng.chance(4) { 1 + rng.below(3) } else { 0 };
    let mut o = Overrides {
        dims: Vec::new(),
        strides: Vec::new(),
        records: Vec::new(),
    };
    for _ in 0..n {
        let rank = rng.pick(&[0usize, 1, 3, 3, 5]);
        o.dims.push((0..rank).map(|_| rng.pick(&EDGES)).collect());
        o.strides
            .push((0..rank).map(|_| rng.pick(&EDGES)).collect());
    }
    for i in 0..n {
        o.records.push(dnnp_shape_override {
            uid: rng.pick(&[1, 2, 4, 0, -3, 77]),
            rank: o.dims[i].len() as u32,
            dims: o.dims[i].as_ptr(),
            strides: o.strides[i].as_ptr(),
        });
    }
    o
}

#[test]
fn malformed_execute_calls_never_panic_and_every_refusal_says_why() {
    let cases: usize = env_count("DNNPLAN_EXECUTE_ROBUSTNESS_CASES", 20_000);
    let mut list: *mut dnnp_plan_list_t = ptr::null_mut();
    let mut handle: *mut dnnp_handle_t = ptr::null_mut();
    // SAFETY: out-pointers valid for one write each.
    unsafe {
        assert_eq!(
            dnnp_debug_plan_list_create_exec_test(DNNP_EXEC_TEST_ENGINE_NOOP, OPERANDS, &mut list),
            DNNP_STATUS_SUCCESS
        );
        assert_eq!(
            dnnp_handle_create(ptr::null_mut(), &mut handle),
            DNNP_STATUS_SUCCESS
        );
    }
    let mut rng = rng(0x243f_6a88_85a3_08d3);
    let mut tally = Tally::default();
    for case in 0..cases {
        let n = if rng.chance(10) {
            rng.pick(&[0usize, 1, 3, 5, 8])
        } else {
            OPERANDS
        };
        let mut records: Vec<Record> = (0..n).map(|_| draw_record(&mut rng)).collect();
        fix_pointers(&mut records);
        let mut tensors: Vec<*const dnnp_dltensor> =
            records.iter().map(|r| &r.tensor as *const _).collect();
        if rng.chance(12) && n > 0 {
            let i = rng.below(n);
            tensors[i] = ptr::null();
        }
        let uids = draw_uids(&mut rng, n);
        let pointers: Vec<*mut c_void> = (0..n)
            .map(|i| 0x7000_0000_0000usize.wrapping_add(i << 20) as *mut c_void)
            .collect();
        let ov = draw_overrides(&mut rng);
        let ws = rng.pick(&[DNNP_WORKSPACE_SIZE_UNKNOWN, 0, 256]);
        let form = rng.below(3);
        // SAFETY: every array is as long as the count passed beside it; the records' shape and
        // strides arrays hold `ndim` values (or the record's rank is 0 / -1 with NULL shape).
        let status: dnnp_status_t = unsafe {
            match form {
                0 => dnnp_plan_list_execute_dlpack(
                    list,
                    handle,
                    tensors.as_ptr(),
                    n,
                    ptr::null_mut(),
                    ws,
                    ov.records.as_ptr(),
                    ov.records.len(),
                ),
                1 => dnnp_plan_list_execute_dlpack_by_uid(
                    list,
                    handle,
                    uids.as_ptr(),
                    tensors.as_ptr(),
                    n,
                    ptr::null_mut(),
                    ws,
                    ov.records.as_ptr(),
                    ov.records.len(),
                ),
                _ => dnnp_plan_list_execute_by_uid(
                    list,
                    handle,
                    uids.as_ptr(),
                    pointers.as_ptr(),
                    n,
                    ptr::null_mut(),
                    ws,
                    ov.records.as_ptr(),
                    ov.records.len(),
                ),
            }
        };
        let call = ["execute_dlpack", "execute_dlpack_by_uid", "execute_by_uid"][form];
        tally.record(format_args!("case {case}"), call, status);
    }
    // SAFETY: live objects from the calls above.
    unsafe {
        dnnp_plan_list_destroy(list);
        dnnp_handle_destroy(handle);
    }
    assert!(
        tally.passed > 0 && tally.refused > 0,
        "the draw reaches both outcomes"
    );
    tally.assert_clean(&format!("{cases} execute calls"));
}
