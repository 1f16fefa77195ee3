//! C API of the graph IR, part 3: introspection — nodes (count, op kind and name, node name, port
//! → uid, attributes as JSON), tensors (count, uid by index, descriptor fields, JSON), and the op
//! catalogue (op kinds by name and index, catalogue JSON).

use std::ffi::c_char;

use serde_json::{Map, Value, json};

use super::boundary::{boundary, c_str, out_ptr, text_out, write_opt, write_out};
use super::graph::{dnnp_data_type_t, dnnp_graph_t, graph_ref};
use super::types::dnnp_status_t;
use crate::error::{Error, Result};
use crate::ir::{Graph, Node, OpKind};

fn node(g: &Graph, index: usize) -> Result<&Node> {
    g.nodes().get(index).ok_or_else(|| Error::NotFound {
        what: "node index",
        key: index.to_string(),
    })
}

/// Writes the number of nodes.
///
/// # Safety
/// `graph` live; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_node_count(
    graph: *const dnnp_graph_t,
    out: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe { write_out(out, "out", || Ok(graph_ref(graph)?.nodes().len())) })
}

/// Writes node `index`'s op kind (its catalogue index: `dnnp_op_kind_from_name`).
///
/// # Safety
/// `graph` live; `out_kind` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_node_op_kind(
    graph: *const dnnp_graph_t,
    index: usize,
    out_kind: *mut u32,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        write_out(out_kind, "out_kind", || {
            Ok(node(graph_ref(graph)?, index)?.op.index())
        })
    })
}

/// Copies node `index`'s op name (e.g. `"sdpa"`), two-call pattern.
///
/// # Safety
/// `graph` live; `buf` NULL or valid for `cap` bytes; `needed` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_node_op_name(
    graph: *const dnnp_graph_t,
    index: usize,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            Ok(node(graph_ref(graph)?, index)?.op.name())
        })
    })
}

/// Copies node `index`'s name (e.g. `"sdpa.0"`), two-call pattern.
///
/// # Safety
/// As `dnnp_graph_node_op_name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_node_name(
    graph: *const dnnp_graph_t,
    index: usize,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            Ok(node(graph_ref(graph)?, index)?.name.as_str())
        })
    })
}

/// Writes the uid bound to port `port` (input or output) of node `index`; an unbound port
/// (or absent conditional output) is `DNNP_STATUS_NOT_FOUND`.
///
/// # Safety
/// `graph` live; `port` a string; `out_uid` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_node_port_uid(
    graph: *const dnnp_graph_t,
    index: usize,
    port: *const c_char,
    out_uid: *mut i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        write_out(out_uid, "out_uid", || {
            let port = c_str(port, "port")?;
            let n = node(graph_ref(graph)?, index)?;
            n.port(port).ok_or_else(|| Error::NotFound {
                what: "bound port",
                key: format!("{}.{port}", n.name),
            })
        })
    })
}

/// Node `index` as JSON: `{"name", "op", "node_type", "compute_data_type", "inputs": {port: uid},
/// "outputs": {port: uid}, "attributes": {name: value}}` where `attributes` holds every attribute
/// with a value (set ones, then table defaults), two-call pattern.
///
/// # Safety
/// As `dnnp_graph_node_op_name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_node_attributes_json(
    graph: *const dnnp_graph_t,
    index: usize,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            let n = node(graph_ref(graph)?, index)?;
            let mut attrs = Map::new();
            for a in &n.spec().attrs {
                if let Some(v) = n.attr_or_default(a.name) {
                    attrs.insert(a.name.to_owned(), v.to_json());
                }
            }
            let doc = json!({
                "name": n.name,
                "op": n.op.name(),
                "node_type": n.op.node_type().name(),
                "compute_data_type": n.compute_data_type,
                "inputs": n.inputs,
                "outputs": n.outputs,
                "attributes": Value::Object(attrs),
            });
            Ok(doc.to_string())
        })
    })
}

/// Writes the number of tensors.
///
/// # Safety
/// `graph` live; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_count(
    graph: *const dnnp_graph_t,
    out: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe { write_out(out, "out", || Ok(graph_ref(graph)?.tensors().len())) })
}

/// Writes the uid of the `index`-th tensor in ascending uid order.
///
/// # Safety
/// `graph` live; `out_uid` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_uid_at(
    graph: *const dnnp_graph_t,
    index: usize,
    out_uid: *mut i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        write_out(out_uid, "out_uid", || {
            let tensors = graph_ref(graph)?.tensors_by_uid();
            tensors
                .get(index)
                .map(|t| t.uid)
                .ok_or_else(|| Error::NotFound {
                    what: "tensor index",
                    key: index.to_string(),
                })
        })
    })
}

/// Reads a tensor's descriptor: data type, rank, dims and strides (`cap` elements each, written
/// only when `rank <= cap`; `*rank` is always written so a first call with `cap = 0` sizes the
/// arrays), virtual and pass-by-value flags, ragged offset uid (-1: none). Every output but `rank`
/// may be NULL. `DNNP_STATUS_BUFFER_TOO_SMALL` when `dims`/`strides` are given but `cap < rank`.
///
/// # Safety
/// `graph` live; `dims`/`strides` NULL or valid for `cap` elements; other outputs NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_get(
    graph: *const dnnp_graph_t,
    uid: i64,
    dtype: *mut dnnp_data_type_t,
    rank: *mut usize,
    dims: *mut i64,
    strides: *mut i64,
    cap: usize,
    is_virtual: *mut bool,
    is_pass_by_value: *mut bool,
    ragged_offset_uid: *mut i64,
) -> dnnp_status_t {
    boundary(|| {
        let rank = out_ptr(rank, "rank")?;
        // SAFETY: per the contract.
        let t = unsafe { graph_ref(graph) }?.get_tensor(uid)?;
        let r = t.dims.len();
        unsafe { rank.write(r) };
        let wants_arrays = !dims.is_null() || !strides.is_null();
        if wants_arrays && cap < r {
            return Err(Error::BufferTooSmall {
                what: "dims",
                needed: r,
                given: cap,
            });
        }
        // SAFETY: each array valid for `cap >= r` elements when non-NULL.
        unsafe {
            if !dims.is_null() {
                std::ptr::copy_nonoverlapping(t.dims.as_ptr(), dims, r);
            }
            if !strides.is_null() {
                std::ptr::copy_nonoverlapping(t.strides.as_ptr(), strides, t.strides.len().min(r));
            }
            write_opt(dtype, t.data_type.to_c());
            write_opt(is_virtual, t.is_virtual);
            write_opt(is_pass_by_value, t.is_pass_by_value);
            write_opt(ragged_offset_uid, t.ragged_offset_uid.unwrap_or(-1));
        }
        Ok(())
    })
}

/// The tensor as JSON (every field, as in the graph JSON), two-call pattern.
///
/// # Safety
/// `graph` live; `buf` NULL or valid for `cap` bytes; `needed` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_tensor_json(
    graph: *const dnnp_graph_t,
    uid: i64,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            Ok(serde_json::to_string(graph_ref(graph)?.get_tensor(uid)?)?)
        })
    })
}

/// Writes the op kind (catalogue index) of the op named `name`; unknown is `NOT_FOUND`.
///
/// # Safety
/// `name` a string; `out_kind` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_kind_from_name(
    name: *const c_char,
    out_kind: *mut u32,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        write_out(out_kind, "out_kind", || {
            let name = c_str(name, "name")?;
            let kind = OpKind::from_name(name).ok_or_else(|| Error::NotFound {
                what: "op",
                key: name.to_owned(),
            })?;
            Ok(kind.index())
        })
    })
}

/// The op catalogue (every op with ports, outputs, attributes, rules) as JSON, two-call pattern.
/// The same document `dnnplan ops --json` prints.
///
/// # Safety
/// `buf` NULL or valid for `cap` bytes; `needed` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_catalogue_json(
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            Ok(crate::ir::catalogue_json().to_string())
        })
    })
}
