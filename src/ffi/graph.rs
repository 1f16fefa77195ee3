//! C API of the graph IR, part 1: the graph handle, data-type constants, graph create/clone/
//! destroy, context data types and settings, validation and lifecycle queries, JSON in/out and
//! the graph key. Tensors are in `graph_tensor.rs`, op building in `graph_builder.rs`, typed
//! helpers in `graph_ops.rs`, introspection in `graph_query.rs`.
//!
//! Every mutation of a frozen graph (planning froze it) is `DNNP_STATUS_INVALID_STATE`.

#![allow(non_camel_case_types)]

use std::ffi::c_char;

use super::boundary::{
    Opaque, boundary, boundary_void, c_str, out_ptr, text_out, write_opt, write_out,
};
use super::types::dnnp_status_t;
use crate::error::{Error, Result};
use crate::ir::{DataType, Graph, GraphContext};

/// Opaque graph handle (`dnnp_graph_create`, `dnnp_graph_from_json`; `dnnp_graph_destroy`).
/// Not thread-safe while being built; a frozen graph may be read from several threads.
pub struct dnnp_graph_t {
    _private: [u8; 0],
}

impl Opaque for dnnp_graph_t {
    type Rust = Graph;
}

/// Element data type (`DNNP_DATA_TYPE_*`; values follow the reference `DataType_t` order).
pub type dnnp_data_type_t = u32;
/// Not set: filled from the graph context at validation.
pub const DNNP_DATA_TYPE_NOT_SET: dnnp_data_type_t = 0;
/// 32-bit float.
pub const DNNP_DATA_TYPE_FLOAT: dnnp_data_type_t = 1;
/// 64-bit float.
pub const DNNP_DATA_TYPE_DOUBLE: dnnp_data_type_t = 2;
/// IEEE half.
pub const DNNP_DATA_TYPE_HALF: dnnp_data_type_t = 3;
/// 8-bit integer.
pub const DNNP_DATA_TYPE_INT8: dnnp_data_type_t = 4;
/// 32-bit integer.
pub const DNNP_DATA_TYPE_INT32: dnnp_data_type_t = 5;
/// INT8x4 vector.
pub const DNNP_DATA_TYPE_INT8X4: dnnp_data_type_t = 6;
/// 8-bit unsigned integer.
pub const DNNP_DATA_TYPE_UINT8: dnnp_data_type_t = 7;
/// UINT8x4 vector.
pub const DNNP_DATA_TYPE_UINT8X4: dnnp_data_type_t = 8;
/// INT8x32 vector.
pub const DNNP_DATA_TYPE_INT8X32: dnnp_data_type_t = 9;
/// bfloat16.
pub const DNNP_DATA_TYPE_BFLOAT16: dnnp_data_type_t = 10;
/// 64-bit integer.
pub const DNNP_DATA_TYPE_INT64: dnnp_data_type_t = 11;
/// Boolean (bit).
pub const DNNP_DATA_TYPE_BOOLEAN: dnnp_data_type_t = 12;
/// Boolean (byte).
pub const DNNP_DATA_TYPE_BYTE_BOOLEAN: dnnp_data_type_t = 13;
/// FP8 E4M3.
pub const DNNP_DATA_TYPE_FP8_E4M3: dnnp_data_type_t = 14;
/// FP8 E5M2.
pub const DNNP_DATA_TYPE_FP8_E5M2: dnnp_data_type_t = 15;
/// Fast float for FP8.
pub const DNNP_DATA_TYPE_FAST_FLOAT_FOR_FP8: dnnp_data_type_t = 16;
/// FP8 E8M0 (MX scales).
pub const DNNP_DATA_TYPE_FP8_E8M0: dnnp_data_type_t = 17;
/// FP8 E5M3.
pub const DNNP_DATA_TYPE_FP8_E5M3: dnnp_data_type_t = 18;
/// FP4 E2M1.
pub const DNNP_DATA_TYPE_FP4_E2M1: dnnp_data_type_t = 19;
/// 4-bit integer.
pub const DNNP_DATA_TYPE_INT4: dnnp_data_type_t = 20;
/// Complex of two floats.
pub const DNNP_DATA_TYPE_COMPLEX_FP32: dnnp_data_type_t = 21;
/// Complex of two doubles.
pub const DNNP_DATA_TYPE_COMPLEX_FP64: dnnp_data_type_t = 22;

/// Reads a C data type value.
pub(crate) fn data_type(v: dnnp_data_type_t, what: &'static str) -> Result<DataType> {
    DataType::from_c(v).ok_or(Error::UnknownEnumValue {
        what,
        value: v as i64,
    })
}

/// Borrows the graph behind a handle.
///
/// # Safety
/// `g` must be NULL or a live graph handle.
pub(crate) unsafe fn graph_ref<'a>(g: *const dnnp_graph_t) -> Result<&'a Graph> {
    // SAFETY: per the contract.
    unsafe { dnnp_graph_t::get(g, "graph") }
}

/// Mutably borrows the graph behind a handle.
///
/// # Safety
/// `g` must be NULL or a live graph handle not used concurrently.
pub(crate) unsafe fn graph_mut<'a>(g: *mut dnnp_graph_t) -> Result<&'a mut Graph> {
    // SAFETY: per the contract.
    unsafe { dnnp_graph_t::get_mut(g, "graph") }
}

/// Reads an optional C string (NULL → None).
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
pub(crate) unsafe fn opt_str<'a>(p: *const c_char, what: &'static str) -> Result<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: non-NULL per the contract.
        unsafe { c_str(p, what) }.map(Some)
    }
}

/// Creates an empty graph with the context data types `io`, `intermediate`, `compute`
/// (`DNNP_DATA_TYPE_NOT_SET` allowed for each: unset intermediate/compute fall back to io, then
/// FLOAT).
///
/// # Safety
/// `out` must be valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_create(
    io: dnnp_data_type_t,
    intermediate: dnnp_data_type_t,
    compute: dnnp_data_type_t,
    out: *mut *mut dnnp_graph_t,
) -> dnnp_status_t {
    // SAFETY: `out` NULL or valid for one write per the contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            let ctx = GraphContext::new(
                data_type(io, "io")?,
                data_type(intermediate, "intermediate")?,
                data_type(compute, "compute")?,
            );
            Ok(dnnp_graph_t::into_handle(Graph::new(ctx)))
        })
    })
}

/// Creates a mutable copy of `graph` (same tensors, uids, nodes; not validated, not frozen): the
/// way to plan again after planning froze a graph.
///
/// # Safety
/// `graph` must be a live handle; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_clone(
    graph: *const dnnp_graph_t,
    out: *mut *mut dnnp_graph_t,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            Ok(dnnp_graph_t::into_handle(graph_ref(graph)?.mutable_copy()))
        })
    })
}

/// Destroys a graph; NULL is a no-op.
///
/// # Safety
/// `graph` must be NULL or a live handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_destroy(graph: *mut dnnp_graph_t) {
    // SAFETY: per the contract.
    boundary_void(|| unsafe { dnnp_graph_t::destroy(graph) })
}

/// Sets the context data types (a mutation).
///
/// # Safety
/// `graph` must be a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_set_data_types(
    graph: *mut dnnp_graph_t,
    io: dnnp_data_type_t,
    intermediate: dnnp_data_type_t,
    compute: dnnp_data_type_t,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let g = unsafe { graph_mut(graph) }?;
        g.set_data_types(
            data_type(io, "io")?,
            data_type(intermediate, "intermediate")?,
            data_type(compute, "compute")?,
        )
    })
}

/// Reads the context data types as set (NOT_SET where unset). Any output pointer may be NULL.
///
/// # Safety
/// `graph` must be a live handle; non-NULL outputs valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_get_data_types(
    graph: *const dnnp_graph_t,
    io: *mut dnnp_data_type_t,
    intermediate: *mut dnnp_data_type_t,
    compute: *mut dnnp_data_type_t,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let c = unsafe { graph_ref(graph) }?.context();
        for (p, v) in [
            (io, c.io_data_type),
            (intermediate, c.intermediate_data_type),
            (compute, c.compute_data_type),
        ] {
            // SAFETY: NULL or valid for one write per the contract.
            unsafe { write_opt(p, v.to_c()) };
        }
        Ok(())
    })
}

/// A boolean graph setting (`DNNP_GRAPH_FLAG_*`).
pub type dnnp_graph_flag_t = u32;
/// Dynamic shapes: dims and strides are left out of the graph key.
pub const DNNP_GRAPH_FLAG_DYNAMIC_SHAPE: dnnp_graph_flag_t = 0;
/// Shape overrides at execute are allowed.
pub const DNNP_GRAPH_FLAG_OVERRIDE_SHAPE: dnnp_graph_flag_t = 1;
/// Ranking hint: the plan will be replayed in a CUDA graph (never changes numerics or support).
pub const DNNP_GRAPH_FLAG_CUDA_GRAPH_REPLAY_EXPECTED: dnnp_graph_flag_t = 2;

/// Sets a boolean graph setting (a mutation).
///
/// # Safety
/// `graph` must be a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_set_flag(
    graph: *mut dnnp_graph_t,
    flag: dnnp_graph_flag_t,
    value: bool,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let g = unsafe { graph_mut(graph) }?;
        let mut ctx = g.context().clone();
        match flag {
            DNNP_GRAPH_FLAG_DYNAMIC_SHAPE => ctx.is_dynamic_shape_enabled = value,
            DNNP_GRAPH_FLAG_OVERRIDE_SHAPE => ctx.is_override_shape_enabled = value,
            DNNP_GRAPH_FLAG_CUDA_GRAPH_REPLAY_EXPECTED => ctx.is_cuda_graph_replay_expected = value,
            other => {
                return Err(Error::UnknownEnumValue {
                    what: "flag",
                    value: other as i64,
                });
            }
        }
        g.set_context(ctx)
    })
}

/// Sets the graph's name (NULL clears it) and its heuristics target: `sm_count` and `sm_version`
/// (e.g. 90; either `-1` for "the device's").
///
/// # Safety
/// `graph` live; `name` NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_set_target(
    graph: *mut dnnp_graph_t,
    name: *const c_char,
    sm_count: i64,
    sm_version: i64,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let g = unsafe { graph_mut(graph) }?;
        let name = unsafe { opt_str(name, "name") }?.unwrap_or("").to_owned();
        for (what, v) in [("sm_count", sm_count), ("sm_version", sm_version)] {
            if v != -1 && v <= 0 {
                return Err(Error::bad_param(
                    what,
                    format!("must be > 0 or -1 (got {v})"),
                ));
            }
        }
        let mut ctx = g.context().clone();
        ctx.name = name;
        ctx.sm_count = (sm_count != -1).then_some(sm_count);
        ctx.sm_version = (sm_version != -1).then_some(sm_version);
        g.set_context(ctx)
    })
}

/// Validates the graph: dtype fill, shape inference, tensor and op rules.
/// `DNNP_STATUS_INVALID_GRAPH` with a message naming the node, the port and the rule.
///
/// # Safety
/// `graph` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_validate(graph: *mut dnnp_graph_t) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe { graph_mut(graph) }?.validate())
}

/// Writes whether the graph is validated (and unchanged since) and whether it is frozen
/// (planning froze it; every mutation fails). Either output may be NULL.
///
/// # Safety
/// `graph` live; non-NULL outputs valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_get_state(
    graph: *const dnnp_graph_t,
    is_validated: *mut bool,
    is_frozen: *mut bool,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let g = unsafe { graph_ref(graph) }?;
        // SAFETY: each NULL or valid for one write per the contract.
        unsafe {
            write_opt(is_validated, g.is_validated());
            write_opt(is_frozen, g.is_frozen());
        }
        Ok(())
    })
}

/// Writes the graph as JSON (lossless, with `schema_version`) with the two-call pattern.
///
/// # Safety
/// `graph` live; `buf` NULL or valid for `cap` bytes; `needed` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_to_json(
    graph: *const dnnp_graph_t,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe { text_out(buf, cap, needed, || Ok(graph_ref(graph)?.to_json())) })
}

/// Reads a graph from JSON written by `dnnp_graph_to_json` (the result is mutable).
///
/// # Safety
/// `json` a NUL-terminated string; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_from_json(
    json: *const c_char,
    out: *mut *mut dnnp_graph_t,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            let g = Graph::from_json(c_str(json, "json")?)?;
            Ok(dnnp_graph_t::into_handle(g))
        })
    })
}

/// Writes the graph key (blake3 of the canonical serialization, 32 bytes) to `key`.
///
/// # Safety
/// `graph` live; `key` valid for 32 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_key(graph: *const dnnp_graph_t, key: *mut u8) -> dnnp_status_t {
    boundary(|| {
        let key = out_ptr(key, "key")?;
        // SAFETY: per the contract.
        let k = unsafe { graph_ref(graph) }?.key();
        // SAFETY: `key` valid for 32 bytes.
        unsafe { std::ptr::copy_nonoverlapping(k.as_ptr(), key, 32) };
        Ok(())
    })
}
