//! C API of the graph IR, part 1: the graph handle, data-type and reordering constants, graph
//! create/destroy and context data types, tensor creation and setters, validation and lifecycle
//! queries, JSON in/out and the graph key. Op building is in `graph_builder.rs`, typed helpers in
//! `graph_ops.rs`, introspection in `graph_query.rs`.
//!
//! Uids: `-1` asks for an automatic uid; a caller uid wins over an automatic one (the holder is
//! renumbered) and two caller uids colliding is `DNNP_STATUS_BAD_PARAM` naming both tensors.
//! Every mutation of a frozen graph (planning froze it) is `DNNP_STATUS_INVALID_STATE`.

#![allow(non_camel_case_types)]

use std::ffi::c_char;

use super::boundary::{Opaque, boundary, boundary_void, c_str, out_ptr, slice, write_text};
use super::types::dnnp_status_t;
use crate::error::{Error, Result};
use crate::ir::{DataType, Graph, GraphContext, ScalarValue, Tensor, TensorReordering};

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

/// Physical tensor reordering (`DNNP_REORDERING_*`).
pub type dnnp_reordering_t = u32;
/// No reordering.
pub const DNNP_REORDERING_NONE: dnnp_reordering_t = 0;
/// INT8x32.
pub const DNNP_REORDERING_INT8X32: dnnp_reordering_t = 1;
/// F16x16.
pub const DNNP_REORDERING_F16X16: dnnp_reordering_t = 2;
/// F8_128x4 (MXFP8/NVFP4 scale-factor swizzle).
pub const DNNP_REORDERING_F8_128X4: dnnp_reordering_t = 3;

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
    boundary(|| {
        let out = out_ptr(out, "out")?;
        let ctx = GraphContext::new(
            data_type(io, "io")?,
            data_type(intermediate, "intermediate")?,
            data_type(compute, "compute")?,
        );
        // SAFETY: checked non-NULL.
        unsafe { out.write(dnnp_graph_t::into_handle(Graph::new(ctx))) };
        Ok(())
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
            if !p.is_null() {
                // SAFETY: non-NULL output per the contract.
                unsafe { p.write(v.to_c()) };
            }
        }
        Ok(())
    })
}

/// Adds a tensor: `name` (NULL: `tensor_<n>`), data type, `rank` dims, strides (NULL: row-major),
/// `uid` (-1: automatic). The tensor is a non-virtual graph input/output; use the setters for the
/// other properties. Writes the uid to `*out_uid`.
///
/// # Safety
/// `graph` live; `dims` (and `strides` when not NULL) valid for `rank` elements; `name` NULL or a
/// string; `out_uid` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_create(
    graph: *mut dnnp_graph_t,
    name: *const c_char,
    dtype: dnnp_data_type_t,
    rank: usize,
    dims: *const i64,
    strides: *const i64,
    uid: i64,
    out_uid: *mut i64,
) -> dnnp_status_t {
    boundary(|| {
        let out_uid = out_ptr(out_uid, "out_uid")?;
        // SAFETY: per the contract.
        let g = unsafe { graph_mut(graph) }?;
        let name = unsafe { opt_str(name, "name") }?.unwrap_or("");
        let dims = unsafe { slice(dims, rank, "dims") }?;
        let mut t = Tensor::new(name, dims, data_type(dtype, "dtype")?);
        if !strides.is_null() {
            // SAFETY: `strides` has `rank` elements per the contract.
            t = t.with_strides(unsafe { slice(strides, rank, "strides") }?);
        }
        if uid != -1 {
            t = t.with_uid(uid);
        }
        let u = g.add_tensor(t)?;
        // SAFETY: checked non-NULL.
        unsafe { out_uid.write(u) };
        Ok(())
    })
}

fn scalar_from_bytes(dt: DataType, v: *const std::ffi::c_void) -> Result<ScalarValue> {
    // SAFETY (all reads): the caller passes a pointer to one value of the tensor's data type.
    unsafe {
        Ok(match dt {
            DataType::Float => ScalarValue::Float(v.cast::<f32>().read_unaligned()),
            DataType::Double => ScalarValue::Double(v.cast::<f64>().read_unaligned()),
            DataType::Half => {
                ScalarValue::Half(half::f16::from_bits(v.cast::<u16>().read_unaligned()).to_f32())
            }
            DataType::Bfloat16 => ScalarValue::Bfloat16(
                half::bf16::from_bits(v.cast::<u16>().read_unaligned()).to_f32(),
            ),
            DataType::Int32 => ScalarValue::Int32(v.cast::<i32>().read_unaligned()),
            DataType::Int64 => ScalarValue::Int64(v.cast::<i64>().read_unaligned()),
            other => {
                return Err(Error::bad_param(
                    "value",
                    format!(
                        "a fused scalar of data type {other} is not supported (FLOAT, DOUBLE, HALF, BFLOAT16, INT32, INT64)"
                    ),
                ));
            }
        })
    }
}

/// Makes a tensor pass-by-value (a host scalar). With `value` NULL the caller passes a host pointer
/// at execute; otherwise `value` points to one element of the tensor's data type (HALF/BFLOAT16 as
/// their 16-bit patterns) and the graph keeps its own copy (a fused scalar).
///
/// # Safety
/// `graph` live; `value` NULL or valid for one element of the tensor's data type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_set_pass_by_value(
    graph: *mut dnnp_graph_t,
    uid: i64,
    value: *const std::ffi::c_void,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let g = unsafe { graph_mut(graph) }?;
        let dt = g.get_tensor(uid)?.data_type;
        let v = if value.is_null() {
            None
        } else {
            Some(scalar_from_bytes(dt, value)?)
        };
        g.update_tensor(uid, |t| {
            t.is_pass_by_value = true;
            t.pass_by_value = v;
        })
    })
}

/// Sets whether a tensor is virtual (an intermediate, never in the variant pack). Op outputs start
/// virtual; `is_virtual = false` makes one a graph output.
///
/// # Safety
/// `graph` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_set_virtual(
    graph: *mut dnnp_graph_t,
    uid: i64,
    is_virtual: bool,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe { graph_mut(graph) }?.set_output(uid, !is_virtual))
}

/// Declares a tensor's dims (strides become row-major unless declared).
///
/// # Safety
/// `graph` live; `dims` valid for `rank` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_set_dims(
    graph: *mut dnnp_graph_t,
    uid: i64,
    rank: usize,
    dims: *const i64,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let dims = unsafe { slice(dims, rank, "dims") }?;
        unsafe { graph_mut(graph) }?.set_dims(uid, dims)
    })
}

/// Declares a tensor's strides.
///
/// # Safety
/// `graph` live; `strides` valid for `rank` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_set_strides(
    graph: *mut dnnp_graph_t,
    uid: i64,
    rank: usize,
    strides: *const i64,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let strides = unsafe { slice(strides, rank, "strides") }?;
        unsafe { graph_mut(graph) }?.set_strides(uid, strides)
    })
}

/// Sets a tensor's data type.
///
/// # Safety
/// `graph` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_set_data_type(
    graph: *mut dnnp_graph_t,
    uid: i64,
    dtype: dnnp_data_type_t,
) -> dnnp_status_t {
    boundary(|| {
        let dt = data_type(dtype, "dtype")?;
        // SAFETY: per the contract.
        unsafe { graph_mut(graph) }?.set_data_type(uid, dt)
    })
}

/// Gives a tensor a caller-chosen uid (uid rules apply; references follow; same uid is a no-op).
///
/// # Safety
/// `graph` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_set_uid(
    graph: *mut dnnp_graph_t,
    uid: i64,
    new_uid: i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe { graph_mut(graph) }?.set_uid(uid, new_uid))
}

/// Attaches a ragged-offset tensor (per-batch element offsets of a packed layout) with its
/// `multiplier` (elements per offset unit, > 0; usually 1). `offset_uid = -1` removes it.
///
/// # Safety
/// `graph` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_set_ragged_offset(
    graph: *mut dnnp_graph_t,
    uid: i64,
    offset_uid: i64,
    multiplier: i64,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let g = unsafe { graph_mut(graph) }?;
        g.update_tensor(uid, |t| {
            t.ragged_offset_uid = (offset_uid != -1).then_some(offset_uid);
            t.ragged_offset_multiplier = multiplier;
        })
    })
}

/// Sets a tensor's physical reordering (`DNNP_REORDERING_*`).
///
/// # Safety
/// `graph` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_set_reordering(
    graph: *mut dnnp_graph_t,
    uid: i64,
    reordering: dnnp_reordering_t,
) -> dnnp_status_t {
    boundary(|| {
        let r = TensorReordering::from_c(reordering).ok_or(Error::UnknownEnumValue {
            what: "reordering",
            value: reordering as i64,
        })?;
        // SAFETY: per the contract.
        unsafe { graph_mut(graph) }?.update_tensor(uid, |t| t.reordering_type = r)
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
        if !is_validated.is_null() {
            // SAFETY: non-NULL output.
            unsafe { is_validated.write(g.is_validated()) };
        }
        if !is_frozen.is_null() {
            // SAFETY: non-NULL output.
            unsafe { is_frozen.write(g.is_frozen()) };
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
    boundary(|| {
        // SAFETY: per the contract.
        let text = unsafe { graph_ref(graph) }?.to_json();
        unsafe { write_text(&text, buf, cap, needed, "buf") }
    })
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
    boundary(|| {
        let out = out_ptr(out, "out")?;
        // SAFETY: per the contract.
        let text = unsafe { c_str(json, "json") }?;
        let g = Graph::from_json(text)?;
        // SAFETY: checked non-NULL.
        unsafe { out.write(dnnp_graph_t::into_handle(g)) };
        Ok(())
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
