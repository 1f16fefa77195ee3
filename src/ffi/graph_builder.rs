//! C API of the graph IR, part 2: the generic op builder, which works for every op of the
//! catalogue by name. `dnnp_op_builder_begin("sdpa")`, then inputs by port name, attributes by
//! name with typed setters (checked against the op table at once), optional caller-bound outputs,
//! `dnnp_op_builder_finish(builder, graph)`, then `dnnp_op_builder_output_uid(builder, "O")`.
//! The builder stays owned by the caller (destroy it after finish, or after a failure).

#![allow(non_camel_case_types)]

use std::collections::BTreeMap;
use std::ffi::c_char;

use super::boundary::{Opaque, boundary, boundary_void, c_str, slice, write_opt, write_out};
use super::graph::{data_type, dnnp_data_type_t, dnnp_graph_t, graph_mut};
use super::types::dnnp_status_t;
use crate::error::{Error, Result};
use crate::ir::{AttrValue, NodeBuilder, OpSpec};

/// Rust side of a builder: the node being assembled, then (after finish) the node and outputs.
pub struct OpBuilder {
    node: NodeBuilder,
    finished: Option<(usize, BTreeMap<String, i64>)>,
}

impl OpBuilder {
    fn spec(&self) -> &'static OpSpec {
        self.node.op.spec()
    }

    fn editable(&mut self) -> Result<&mut NodeBuilder> {
        if self.finished.is_some() {
            return Err(Error::InvalidState(format!(
                "builder of `{}` is already finished",
                self.spec().name
            )));
        }
        Ok(&mut self.node)
    }

    fn set_attr(&mut self, name: &str, value: AttrValue) -> Result<()> {
        let spec = self.spec();
        let a = spec.attr(name).ok_or_else(|| Error::NotFound {
            what: "attribute",
            key: format!("{}.{name}", spec.name),
        })?;
        let v =
            a.ty.coerce(value)
                .map_err(|why| Error::bad_param(format!("{}.{name}", spec.name), why))?;
        self.editable()?.attrs.insert(name.to_owned(), v);
        Ok(())
    }
}

/// Opaque op builder (`dnnp_op_builder_begin`; `dnnp_op_builder_destroy`).
pub struct dnnp_op_builder_t {
    _private: [u8; 0],
}

impl Opaque for dnnp_op_builder_t {
    type Rust = OpBuilder;
}

unsafe fn builder<'a>(b: *mut dnnp_op_builder_t) -> Result<&'a mut OpBuilder> {
    // SAFETY: per the caller's contract.
    unsafe { dnnp_op_builder_t::get_mut(b, "builder") }
}

/// Starts a node of the op named `op` (a catalogue name: `dnnplan ops`), e.g. `"sdpa"`, `"add"`.
/// Unknown names are `DNNP_STATUS_NOT_FOUND`.
///
/// # Safety
/// `op` a NUL-terminated string; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_begin(
    op: *const c_char,
    out: *mut *mut dnnp_op_builder_t,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            let b = OpBuilder {
                node: NodeBuilder::by_name(c_str(op, "op")?)?,
                finished: None,
            };
            Ok(dnnp_op_builder_t::into_handle(b))
        })
    })
}

/// Destroys a builder; NULL is a no-op.
///
/// # Safety
/// `builder` NULL or a live builder, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_destroy(builder: *mut dnnp_op_builder_t) {
    // SAFETY: per the contract.
    boundary_void(|| unsafe { dnnp_op_builder_t::destroy(builder) })
}

/// Names the node (default `<op>.<k>`).
///
/// # Safety
/// `builder` live; `name` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_name(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let name = unsafe { c_str(name, "name") }?;
        // SAFETY: per the contract.
        unsafe { self::builder(builder) }?.editable()?.name = Some(name.to_owned());
        Ok(())
    })
}

/// Sets the node's compute data type (default: the graph context's).
///
/// # Safety
/// `builder` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_compute_data_type(
    builder: *mut dnnp_op_builder_t,
    dtype: dnnp_data_type_t,
) -> dnnp_status_t {
    boundary(|| {
        let dt = data_type(dtype, "dtype")?;
        // SAFETY: per the contract.
        unsafe { self::builder(builder) }?
            .editable()?
            .compute_data_type = dt;
        Ok(())
    })
}

/// Shared body of `dnnp_op_builder_set_input` / `_set_output`: binds the op's input (`output`
/// false) or output port `port` to tensor `uid`; a port the op does not have is `NotFound`.
///
/// # Safety
/// `builder` live; `port` a NUL-terminated string.
#[track_caller]
unsafe fn bind_port(
    builder: *mut dnnp_op_builder_t,
    port: *const c_char,
    uid: i64,
    output: bool,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let port = unsafe { c_str(port, "port") }?;
        // SAFETY: per the contract.
        let b = unsafe { self::builder(builder) }?;
        let spec = b.spec();
        let (known, what) = if output {
            (spec.output(port).is_some(), "output port")
        } else {
            (spec.input(port).is_some(), "input port")
        };
        if !known {
            return Err(Error::NotFound {
                what,
                key: format!("{}.{port}", spec.name),
            });
        }
        let node = b.editable()?;
        let ports = if output {
            &mut node.outputs
        } else {
            &mut node.inputs
        };
        ports.insert(port.to_owned(), uid);
        Ok(())
    })
}

/// Binds input port `port` (the reference kwarg name; list ports as `<name>_<i>`) to tensor `uid`.
/// An unknown port is `DNNP_STATUS_NOT_FOUND` naming the op and the port.
///
/// # Safety
/// `builder` live; `port` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_input(
    builder: *mut dnnp_op_builder_t,
    port: *const c_char,
    uid: i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe { bind_port(builder, port, uid, false) }
}

/// Binds output port `port` to a caller tensor (required for out-kwargs such as `rng_dump`,
/// optional otherwise: it lets the caller declare the output's dims, strides and dtype).
///
/// # Safety
/// `builder` live; `port` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_output(
    builder: *mut dnnp_op_builder_t,
    port: *const c_char,
    uid: i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe { bind_port(builder, port, uid, true) }
}

/// Shared body of the typed attribute setters: reads `name`, then the value, then sets it.
///
/// # Safety
/// `builder` live; `name` a NUL-terminated string.
#[track_caller]
unsafe fn set_attr_with(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
    value: impl FnOnce() -> Result<AttrValue>,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let name = unsafe { c_str(name, "name") }?;
        let value = value()?;
        // SAFETY: per the contract.
        unsafe { self::builder(builder) }?.set_attr(name, value)
    })
}

/// Shared body of the list attribute setters: the `count` values at `values` as `wrap(values)`.
///
/// # Safety
/// `builder` live; `name` a NUL-terminated string; `values` valid for `count` elements.
unsafe fn set_attr_list<T: Copy>(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
    values: *const T,
    count: usize,
    wrap: fn(Vec<T>) -> AttrValue,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe {
        set_attr_with(builder, name, || {
            Ok(wrap(slice(values, count, "values")?.to_vec()))
        })
    }
}

/// Sets a boolean attribute by name (type-checked against the op table).
///
/// # Safety
/// `builder` live; `name` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_attr_bool(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
    value: bool,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe { set_attr_with(builder, name, || Ok(AttrValue::Bool(value))) }
}

/// Sets an integer attribute by name (also accepted by float attributes).
///
/// # Safety
/// `builder` live; `name` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_attr_int(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
    value: i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe { set_attr_with(builder, name, || Ok(AttrValue::Int(value))) }
}

/// Sets a float attribute by name.
///
/// # Safety
/// `builder` live; `name` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_attr_float(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
    value: f64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe { set_attr_with(builder, name, || Ok(AttrValue::Float(value))) }
}

/// Sets a string or enum attribute by name (enum values by reference name, e.g. `"TRAINING"`).
///
/// # Safety
/// `builder` live; `name` a NUL-terminated string; `value` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_attr_string(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
    value: *const c_char,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe {
        set_attr_with(builder, name, || {
            Ok(AttrValue::Str(c_str(value, "value")?.to_owned()))
        })
    }
}

/// Sets an integer-list attribute by name (`count` values).
///
/// # Safety
/// `builder` live; `name` a string; `values` valid for `count` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_attr_ints(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
    values: *const i64,
    count: usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe { set_attr_list(builder, name, values, count, AttrValue::Ints) }
}

/// Sets a float-list attribute by name (`count` values).
///
/// # Safety
/// `builder` live; `name` a string; `values` valid for `count` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_set_attr_floats(
    builder: *mut dnnp_op_builder_t,
    name: *const c_char,
    values: *const f64,
    count: usize,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe { set_attr_list(builder, name, values, count, AttrValue::Floats) }
}

/// Adds the node to `graph`: checks it against the op table, creates its outputs (virtual, named
/// `<node>::<port>`, dims inferred when possible) and writes the node index to `*out_node`
/// (may be NULL). A builder finishes once.
///
/// # Safety
/// `builder` and `graph` live; `out_node` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_finish(
    builder: *mut dnnp_op_builder_t,
    graph: *mut dnnp_graph_t,
    out_node: *mut usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let b = unsafe { self::builder(builder) }?;
        // SAFETY: per the contract.
        let g = unsafe { graph_mut(graph) }?;
        let node = b.editable()?.clone();
        let idx = g.add_node(node)?;
        b.finished = Some((idx, g.nodes()[idx].outputs.clone()));
        // SAFETY: NULL or valid for one write per the contract.
        unsafe { write_opt(out_node, idx) };
        Ok(())
    })
}

/// After finish: the uid of output port `port`. An absent conditional output (e.g. `Stats` with
/// `generate_stats = false`) is `DNNP_STATUS_NOT_FOUND`.
///
/// # Safety
/// `builder` live; `port` a string; `out_uid` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_op_builder_output_uid(
    builder: *mut dnnp_op_builder_t,
    port: *const c_char,
    out_uid: *mut i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    boundary(|| unsafe {
        write_out(out_uid, "out_uid", || {
            let port = c_str(port, "port")?;
            let b = self::builder(builder)?;
            let name = b.spec().name;
            let (_, outputs) = b.finished.as_ref().ok_or_else(|| {
                Error::InvalidState(format!("builder of `{name}` is not finished"))
            })?;
            outputs.get(port).copied().ok_or_else(|| Error::NotFound {
                what: "output",
                key: format!("{name}.{port}"),
            })
        })
    })
}
