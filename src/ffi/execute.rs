//! Execute in the C API, on a built plan list (`dnnp_plan_list_t`), in two forms:
//!
//! - raw device pointers: in the graph's operand order (ascending uid, as the backend's raw
//!   execute takes them; `dnnp_plan_list_get_operand_uids` lists it) or by uid;
//! - DLPack: `const dnnp_dltensor*` per operand, in operand order or by uid (borrowed for the
//!   call; never owned, no deleter is called).
//!
//! Every form takes the handle (stream and device), the workspace (pointer and capacity;
//! `DNNP_WORKSPACE_SIZE_UNKNOWN` when not stated) and optional shape/stride overrides in the
//! graph's axis order. `..._plan_at_index` runs entry `index` without changing the selection.
//!
//! Each call normalizes its buffers into its own variant pack (nothing is shared between calls),
//! so any number of threads may execute one plan list concurrently with different buffers.
//! Executing requires a built plan (`dnnp_plan_list_build_plans` / `..._build_plan_at_index`):
//! execute never mutates the list, and the list must not be mutated (select, build, replay) while
//! executes are in flight. A refused call (an operand too small, of another dtype, a hole
//! the plan needs...) returns `DNNP_STATUS_BAD_PARAM` with a message naming the operand and the
//! rule, and launches nothing.

#![allow(non_camel_case_types)]

use std::ffi::c_void;

use super::boundary::{Opaque, boundary, out_ptr, slice, write_opt, write_out};
use super::dlpack::{dnnp_dltensor, view_of};
use super::handle::dnnp_handle_t;
use super::plan::dnnp_plan_list_t;
use super::types::dnnp_status_t;
use crate::dispatch::context::ExecContext;
use crate::error::{Error, Result};
use crate::pack::executor::{PlanChoice, execute};
use crate::pack::{Buffer, DeclaredLayout, ShapeOverride, VariantPack, normalize};

/// Workspace capacity "not stated": only presence and alignment are checked.
pub const DNNP_WORKSPACE_SIZE_UNKNOWN: usize = !0;

/// One execute-time override: element extents and strides of operand `uid`, in the graph's axis
/// order, `rank` values each.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct dnnp_shape_override {
    /// Tensor uid (must be an operand of the graph).
    pub uid: i64,
    /// Number of axes.
    pub rank: u32,
    /// `rank` extents.
    pub dims: *const i64,
    /// `rank` strides in elements.
    pub strides: *const i64,
}

/// Reads the override array (empty when `n == 0`).
///
/// # Safety
/// `p` must be valid for `n` records whose `dims`/`strides` hold `rank` values each.
unsafe fn read_overrides<'a>(
    p: *const dnnp_shape_override,
    n: usize,
) -> Result<Vec<ShapeOverride<'a>>> {
    // SAFETY: forwarded contract.
    let raw = unsafe { slice(p, n, "overrides") }?;
    raw.iter()
        .map(|o| {
            let r = o.rank as usize;
            // SAFETY: `rank` values each per the contract.
            let dims = unsafe { slice(o.dims, r, "overrides[].dims") }?;
            // SAFETY: as above.
            let strides = unsafe { slice(o.strides, r, "overrides[].strides") }?;
            Ok(ShapeOverride {
                uid: o.uid,
                dims,
                strides,
            })
        })
        .collect()
}

/// The one body of every execute form: checks and reads the arguments every form shares (the
/// list, the handle, the workspace as (pointer, capacity), the overrides as (array, count)), then
/// the plan (`None` = the selected one, else entry `index`), then lets `pack` normalize the
/// caller's buffers against the declared layout and the overrides, and runs the plan on that pack.
///
/// # Safety
/// As for the entry points; `pack` is called with the entry point's contract in force.
#[inline]
#[track_caller]
unsafe fn execute_form<'a>(
    list: *const dnnp_plan_list_t,
    handle: *const dnnp_handle_t,
    (workspace, workspace_bytes): (*mut c_void, usize),
    (overrides, n_overrides): (*const dnnp_shape_override, usize),
    index: Option<i64>,
    pack: impl FnOnce(&'a DeclaredLayout, &[ShapeOverride<'a>]) -> Result<VariantPack<'a>>,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: NULL or a live plan list.
        let plans = unsafe { dnnp_plan_list_t::get(list, "list") }?;
        // SAFETY: NULL or a live handle.
        let handle = unsafe { dnnp_handle_t::get(handle, "handle") }?;
        let bytes =
            (workspace_bytes != DNNP_WORKSPACE_SIZE_UNKNOWN).then_some(workspace_bytes as u64);
        // The common case skips the fallible collect entirely (measurably faster per call).
        let overrides = if n_overrides == 0 {
            Vec::new()
        } else {
            // SAFETY: forwarded contract.
            unsafe { read_overrides(overrides, n_overrides) }?
        };
        let layout = plans.declared_layout()?;
        let ctx = ExecContext::new(handle, workspace, bytes);
        let choice = match index {
            None => PlanChoice::Selected,
            Some(index) => plan_choice(index)?,
        };
        execute(plans, choice, &pack(layout, &overrides)?, &ctx)
    })
}

fn plan_choice(index: i64) -> Result<PlanChoice> {
    usize::try_from(index)
        .map(PlanChoice::AtIndex)
        .map_err(|_| {
            Error::bad_param(
                "index",
                format!("plan index {index} is negative (indices are 0-based, never from the end)"),
            )
        })
}

/// Raw pointers in operand order.
///
/// # Safety
/// `device_ptrs` valid for `n_ptrs` reads (or NULL with `n_ptrs == 0`).
#[inline]
unsafe fn raw_ordered<'a>(
    layout: &'a DeclaredLayout,
    overrides: &[ShapeOverride<'_>],
    device_ptrs: *const *mut c_void,
    n_ptrs: usize,
) -> Result<VariantPack<'a>> {
    // SAFETY: forwarded contract.
    let ptrs = unsafe { slice(device_ptrs, n_ptrs, "device_ptrs") }?;
    normalize::from_addresses(layout, ptrs, overrides)
}

/// Raw pointers bound by uid.
///
/// # Safety
/// `uids` and `device_ptrs` valid for `n` reads.
unsafe fn raw_by_uid<'a>(
    layout: &'a DeclaredLayout,
    overrides: &[ShapeOverride<'_>],
    uids: *const i64,
    device_ptrs: *const *mut c_void,
    n: usize,
) -> Result<VariantPack<'a>> {
    // SAFETY: forwarded contract.
    let uids = unsafe { slice(uids, n, "uids") }?;
    // SAFETY: forwarded contract.
    let ptrs = unsafe { slice(device_ptrs, n, "device_ptrs") }?;
    let bindings = uids
        .iter()
        .zip(ptrs)
        .map(|(&u, &p)| (u, Buffer::Address(p)));
    normalize::from_bindings(layout, bindings, overrides)
}

/// DLPack records in operand order.
///
/// # Safety
/// `tensors` valid for `n` reads, each NULL or a record valid for the call.
unsafe fn dlpack_ordered<'a>(
    layout: &'a DeclaredLayout,
    overrides: &[ShapeOverride<'_>],
    tensors: *const *const dnnp_dltensor,
    n: usize,
) -> Result<VariantPack<'a>> {
    // SAFETY: forwarded contract.
    let ts = unsafe { slice(tensors, n, "tensors") }?;
    let read = |i: usize| -> Result<Option<Buffer<'_>>> {
        // SAFETY: each entry NULL or a valid record for the call.
        match unsafe { ts[i].as_ref() } {
            None => Ok(None),
            // SAFETY: the record's arrays are valid for the call per the contract.
            Some(t) => Ok(Some(Buffer::View(unsafe { view_of(t, i) }?))),
        }
    };
    normalize::from_ordered(layout, ts.len(), read, overrides)
}

/// DLPack records bound by uid; every record is read before any is bound, and a NULL record is
/// refused.
///
/// # Safety
/// `uids` and `tensors` valid for `n` reads, each record NULL or valid for the call.
unsafe fn dlpack_by_uid<'a>(
    layout: &'a DeclaredLayout,
    overrides: &[ShapeOverride<'_>],
    uids: *const i64,
    tensors: *const *const dnnp_dltensor,
    n: usize,
) -> Result<VariantPack<'a>> {
    // SAFETY: forwarded contract.
    let uids = unsafe { slice(uids, n, "uids") }?;
    // SAFETY: forwarded contract.
    let ts = unsafe { slice(tensors, n, "tensors") }?;
    let mut bindings = Vec::with_capacity(n);
    for (i, (&uid, &t)) in uids.iter().zip(ts).enumerate() {
        // SAFETY: NULL or a valid record for the call.
        let t = unsafe { t.as_ref() }.ok_or(Error::NullArgument("tensors[]"))?;
        // SAFETY: the record's arrays are valid for the call per the contract.
        bindings.push((uid, Buffer::View(unsafe { view_of(t, i) }?)));
    }
    normalize::from_bindings(layout, bindings, overrides)
}

/// Executes the SELECTED plan with raw device pointers in the graph's operand order
/// (`n_ptrs` must equal the operand count; a NULL pointer leaves that operand unbound, allowed only
/// for optional ports of graphs that never lower). Bare addresses lend the declaration: each
/// operand is read with its declared shape, strides and dtype.
///
/// `workspace` must be 128-byte aligned when the plan needs one; `workspace_bytes` is its capacity
/// or `DNNP_WORKSPACE_SIZE_UNKNOWN`. `overrides` (may be NULL with `n_overrides == 0`) give
/// execute-time element extents/strides in the graph's axis order.
///
/// The selected plan must be built (`dnnp_plan_list_build_plans`). Any number of threads may
/// execute one list concurrently, each with its own buffers; none may mutate it meanwhile. A
/// refused call launches nothing and its message names the operand and the rule.
///
/// # Safety
/// `list` and `handle` must be live; `device_ptrs` valid for `n_ptrs` reads; `overrides` valid for
/// `n_overrides` records; the pointers must address buffers the plan may access on the handle's
/// device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_execute(
    list: *const dnnp_plan_list_t,
    handle: *const dnnp_handle_t,
    device_ptrs: *const *mut c_void,
    n_ptrs: usize,
    workspace: *mut c_void,
    workspace_bytes: usize,
    overrides: *const dnnp_shape_override,
    n_overrides: usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract; the closure runs inside the call.
    unsafe {
        execute_form(
            list,
            handle,
            (workspace, workspace_bytes),
            (overrides, n_overrides),
            None,
            |l, o| raw_ordered(l, o, device_ptrs, n_ptrs),
        )
    }
}

/// As `dnnp_plan_list_execute`, on plan `index` of the list without changing the selection. The
/// plan must be built (`dnnp_plan_list_prepare_plan_at_index` builds it without selecting it;
/// unbuilt is `DNNP_STATUS_INVALID_STATE`). A negative, out-of-range or deselected index is
/// `DNNP_STATUS_BAD_PARAM`.
///
/// # Safety
/// As `dnnp_plan_list_execute`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_execute_plan_at_index(
    list: *const dnnp_plan_list_t,
    handle: *const dnnp_handle_t,
    index: i64,
    device_ptrs: *const *mut c_void,
    n_ptrs: usize,
    workspace: *mut c_void,
    workspace_bytes: usize,
    overrides: *const dnnp_shape_override,
    n_overrides: usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract; the closure runs inside the call.
    unsafe {
        execute_form(
            list,
            handle,
            (workspace, workspace_bytes),
            (overrides, n_overrides),
            Some(index),
            |l, o| raw_ordered(l, o, device_ptrs, n_ptrs),
        )
    }
}

/// Executes the selected plan with raw device pointers bound by tensor uid: `uids[i]` gets
/// `device_ptrs[i]`, any order; a duplicate uid or a uid that is not an operand is
/// `DNNP_STATUS_BAD_PARAM`.
///
/// # Safety
/// As `dnnp_plan_list_execute`; `uids` and `device_ptrs` valid for `n` reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_execute_by_uid(
    list: *const dnnp_plan_list_t,
    handle: *const dnnp_handle_t,
    uids: *const i64,
    device_ptrs: *const *mut c_void,
    n: usize,
    workspace: *mut c_void,
    workspace_bytes: usize,
    overrides: *const dnnp_shape_override,
    n_overrides: usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract; the closure runs inside the call.
    unsafe {
        execute_form(
            list,
            handle,
            (workspace, workspace_bytes),
            (overrides, n_overrides),
            None,
            |l, o| raw_by_uid(l, o, uids, device_ptrs, n),
        )
    }
}

/// Executes the selected plan with DLPack records in the graph's operand order (`n` must equal the
/// operand count; a NULL entry leaves that operand unbound). Each record is read as the producer
/// describes it, then normalized against the declaration (a dense buffer of other extents that
/// covers the declared bytes is read as the declaration; a smaller one keeps its own description
/// and a plan needing the declared extent refuses it, naming the operand).
///
/// # Safety
/// As `dnnp_plan_list_execute`; `tensors` valid for `n` reads, each NULL or a record whose
/// `shape` (and non-NULL `strides`) hold `ndim` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_execute_dlpack(
    list: *const dnnp_plan_list_t,
    handle: *const dnnp_handle_t,
    tensors: *const *const dnnp_dltensor,
    n: usize,
    workspace: *mut c_void,
    workspace_bytes: usize,
    overrides: *const dnnp_shape_override,
    n_overrides: usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract; the closure runs inside the call.
    unsafe {
        execute_form(
            list,
            handle,
            (workspace, workspace_bytes),
            (overrides, n_overrides),
            None,
            |l, o| dlpack_ordered(l, o, tensors, n),
        )
    }
}

/// As `dnnp_plan_list_execute_dlpack`, on plan `index` (built), without changing the selection.
///
/// # Safety
/// As `dnnp_plan_list_execute_dlpack`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_execute_dlpack_plan_at_index(
    list: *const dnnp_plan_list_t,
    handle: *const dnnp_handle_t,
    index: i64,
    tensors: *const *const dnnp_dltensor,
    n: usize,
    workspace: *mut c_void,
    workspace_bytes: usize,
    overrides: *const dnnp_shape_override,
    n_overrides: usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract; the closure runs inside the call.
    unsafe {
        execute_form(
            list,
            handle,
            (workspace, workspace_bytes),
            (overrides, n_overrides),
            Some(index),
            |l, o| dlpack_ordered(l, o, tensors, n),
        )
    }
}

/// Executes the selected plan with DLPack records bound by tensor uid (`uids[i]` gets
/// `tensors[i]`; duplicates and non-operands are refused; a NULL record is refused).
///
/// # Safety
/// As `dnnp_plan_list_execute_dlpack`; `uids` valid for `n` reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_execute_dlpack_by_uid(
    list: *const dnnp_plan_list_t,
    handle: *const dnnp_handle_t,
    uids: *const i64,
    tensors: *const *const dnnp_dltensor,
    n: usize,
    workspace: *mut c_void,
    workspace_bytes: usize,
    overrides: *const dnnp_shape_override,
    n_overrides: usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract; the closure runs inside the call.
    unsafe {
        execute_form(
            list,
            handle,
            (workspace, workspace_bytes),
            (overrides, n_overrides),
            None,
            |l, o| dlpack_by_uid(l, o, uids, tensors, n),
        )
    }
}

/// Builds plan `index` if it is not built yet, WITHOUT changing the selection (unlike
/// `dnnp_plan_list_build_plan_at_index`, which selects it), so `..._execute_plan_at_index` can run
/// it. A mutation: no execute may be in flight on the list. A decline is
/// `DNNP_STATUS_NOT_SUPPORTED`; a barred or out-of-range index is `DNNP_STATUS_BAD_PARAM`.
///
/// # Safety
/// `list` must be a live plan list, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_prepare_plan_at_index(
    list: *mut dnnp_plan_list_t,
    index: usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { dnnp_plan_list_t::get_mut(list, "list") }?
            .plan_at(index)
            .map(|_| ())
    })
}

/// Writes the number of operands (the length of the ordered forms' arrays) to `*count`. The plan
/// list must be planned.
///
/// # Safety
/// `list` must be live; `count` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_get_operand_count(
    list: *const dnnp_plan_list_t,
    count: *mut usize,
) -> dnnp_status_t {
    // SAFETY: `list` NULL or live, `count` NULL or valid for one write.
    boundary(|| unsafe {
        write_out(count, "count", || {
            Ok(dnnp_plan_list_t::get(list, "list")?
                .declared_layout()?
                .len())
        })
    })
}

/// Copies the operand uids in operand order (ascending) into `uids` (capacity `cap`); `*needed`
/// (when not NULL) receives the count. When `cap` is too small nothing is copied and
/// `DNNP_STATUS_BUFFER_TOO_SMALL` is returned.
///
/// # Safety
/// `list` must be live; `uids` valid for `cap` writes (or NULL with `cap == 0`); `needed` NULL or
/// valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_get_operand_uids(
    list: *const dnnp_plan_list_t,
    uids: *mut i64,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: NULL or a live plan list.
        let plans = unsafe { dnnp_plan_list_t::get(list, "list") }?;
        let order = plans.declared_layout()?.uids();
        // SAFETY: NULL or valid for one write.
        unsafe { write_opt(needed, order.len()) };
        if order.is_empty() {
            return Ok(());
        }
        if uids.is_null() || cap < order.len() {
            if uids.is_null() && needed.is_null() {
                return Err(Error::NullArgument("uids"));
            }
            return Err(Error::BufferTooSmall {
                what: "uids",
                needed: order.len(),
                given: cap,
            });
        }
        // SAFETY: `uids` valid for `cap >= len` writes.
        unsafe { std::ptr::copy_nonoverlapping(order.as_ptr(), uids, order.len()) };
        Ok(())
    })
}

/// Test engines for `dnnp_debug_plan_list_create_exec_test` (`DNNP_EXEC_TEST_ENGINE_*`).
pub type dnnp_exec_test_engine_t = u32;
/// A plan that checks its guards (every operand bound, declared extent, declared dtype) and
/// launches nothing; the list has two such entries (index 0 is selected and built).
pub const DNNP_EXEC_TEST_ENGINE_NOOP: dnnp_exec_test_engine_t = 0;
/// As NOOP, then reads a `uint64_t` at operand 0 and writes `value + i` into operand `i`
/// (HOST memory: test programs pass host buffers).
pub const DNNP_EXEC_TEST_ENGINE_RECORDING: dnnp_exec_test_engine_t = 1;
/// As NOOP, with a plan that needs a 256-byte workspace.
pub const DNNP_EXEC_TEST_ENGINE_WORKSPACE: dnnp_exec_test_engine_t = 2;

/// Test hook: a planned and built plan list whose graph is a chain of `n_operands - 1` unary ops
/// over a `[1,128,64]` bf16 tensor (operand uids `1..=n_operands`, all `[1,128,64]` bf16,
/// strides `[8192,64,1]`), served by a test engine (no backend). For execute tests and the
/// host-overhead benchmark.
///
/// # Safety
/// `out` must be valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_debug_plan_list_create_exec_test(
    engine: dnnp_exec_test_engine_t,
    n_operands: usize,
    out: *mut *mut dnnp_plan_list_t,
) -> dnnp_status_t {
    use crate::pack::testing::{NOOP_OP, RECORDING_OP, WORKSPACE_OP, chain_graph, test_plan_list};
    boundary(|| {
        let out = out_ptr(out, "out")?;
        let op = match engine {
            DNNP_EXEC_TEST_ENGINE_NOOP => NOOP_OP,
            DNNP_EXEC_TEST_ENGINE_RECORDING => RECORDING_OP,
            DNNP_EXEC_TEST_ENGINE_WORKSPACE => WORKSPACE_OP,
            v => {
                return Err(Error::UnknownEnumValue {
                    what: "engine",
                    value: i64::from(v),
                });
            }
        };
        if !(1..=64).contains(&n_operands) {
            return Err(Error::bad_param("n_operands", "must be in 1..=64"));
        }
        let plans = test_plan_list(chain_graph(op, n_operands)?)?;
        // SAFETY: checked non-NULL, valid for one write.
        unsafe { out.write(dnnp_plan_list_t::into_handle(plans)) };
        Ok(())
    })
}
