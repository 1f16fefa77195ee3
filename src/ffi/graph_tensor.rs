//! C API of the graph IR, part 2: tensors — creation (explicit or automatic uid, dims, strides,
//! data type) and setters (virtual, pass-by-value with an optional fused value, dims, strides,
//! data type, uid, ragged offset, reordering).
//!
//! Uids: `-1` asks for an automatic uid; a caller uid wins over an automatic one (the holder is
//! renumbered, references follow) and two caller uids colliding is `DNNP_STATUS_BAD_PARAM` naming
//! both tensors. Every setter is a mutation (it fails on a frozen graph and drops a validation).

#![allow(non_camel_case_types)]

use std::ffi::c_char;

use super::boundary::{boundary, slice, write_out};
use super::graph::{data_type, dnnp_data_type_t, dnnp_graph_t, graph_mut, opt_str};
use super::types::dnnp_status_t;
use crate::error::{Error, Result};
use crate::ir::{DataType, ScalarValue, Tensor, TensorReordering};

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
    // SAFETY: per the contract (`dims`, and `strides` when not NULL, hold `rank` elements).
    boundary(|| unsafe {
        write_out(out_uid, "out_uid", || {
            let g = graph_mut(graph)?;
            let name = opt_str(name, "name")?.unwrap_or("");
            let dims = slice(dims, rank, "dims")?;
            let mut t = Tensor::new(name, dims, data_type(dtype, "dtype")?);
            if !strides.is_null() {
                t = t.with_strides(slice(strides, rank, "strides")?);
            }
            if uid != -1 {
                t = t.with_uid(uid);
            }
            g.add_tensor(t)
        })
    })
}

/// Reads one element of `dt` at `v` as tensor `uid`'s fused scalar (`uid` names it when refused).
///
/// # Safety
/// `v` must point to one readable element of `dt` (any alignment).
unsafe fn scalar_from_bytes(
    uid: i64,
    dt: DataType,
    v: *const std::ffi::c_void,
) -> Result<ScalarValue> {
    // SAFETY (all reads): `v` points to one element of `dt` per the contract.
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
                        "tensor uid {uid}: a fused scalar of data type {other} is not supported (FLOAT, DOUBLE, HALF, BFLOAT16, INT32, INT64)"
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
            // SAFETY: non-NULL, one element of the tensor's data type per the contract.
            Some(unsafe { scalar_from_bytes(uid, dt, value) }?)
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
