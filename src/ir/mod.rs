//! Graph IR: tensors, nodes, op tables, shape inference, validation, JSON and the graph key.
//!
//! # IR API for other helpers
//!
//! * Build: [`Graph::new`]`(`[`GraphContext`]`)`, [`Graph::add_tensor`]`(`[`Tensor::new`]`(..))`
//!   → uid, [`Graph::add_node`]`(`[`NodeBuilder::by_name`]`("sdpa")?.input("q", uid)...)` → node
//!   index; the node's outputs are created automatically (read them with [`Node::output`]).
//! * Iterate nodes: `for node in graph.nodes()` (insertion = topological order). The op identity
//!   is `node.op` ([`OpKind`]): `node.op.name()` (builder name, e.g. `"sdpa"`),
//!   `node.op.node_type()` ([`NodeType`], e.g. `NodeType::Sdpa`), `node.op.family()`,
//!   `node.spec()` (the [`OpSpec`] table row).
//! * Read a port's tensor: `node.input("q")` / `node.output("O")` → uid;
//!   [`Graph::port_tensor`]`(node, "q")` → `&Tensor` (dims, strides, data_type, is_virtual,
//!   ragged_offset_uid...); [`Graph::tensor`]`(uid)`; list ports via [`Node::list_inputs`].
//! * Read an attribute: [`Node::attr`] (explicitly set), [`Node::attr_or_default`],
//!   typed: [`Node::attr_bool`], [`Node::attr_int`], [`Node::attr_float`], [`Node::attr_str`]
//!   (enum values are reference names, e.g. `"TRAINING"`), [`Node::attr_ints`].
//! * Lifecycle: [`Graph::validate`] (fills dtypes and inferred dims; errors name node/port/rule),
//!   [`Graph::freeze`] / [`Graph::begin_planning`] (one-shot; the second call is `InvalidState`),
//!   [`Graph::is_frozen`], [`Graph::is_validated`]. Every mutation after freeze fails.
//! * Identity: [`Graph::key`] / [`Graph::key_hex`] (blake3 of the canonical JSON),
//!   [`Graph::to_json`] / [`Graph::from_json`]. [`Graph::has_python_only_ops`] says whether the
//!   cuDNN backend can lower the graph at all.
//! * Catalogue: [`OpKind::all`], [`OpKind::from_name`], [`catalogue_json`]; pointwise backend
//!   mode values: [`tables::pointwise_backend_value`]; one valid example graph per op:
//!   [`examples::example`].
//! * SDPA masks: [`sdpa_mask::sdpa_mask`] (effective alignment and bounds under the reference
//!   precedence; reads the family's differing kwarg names).
//! * Python-only nodes (no cuDNN lowering): [`Node::is_python_only`] (a python-only op, or a
//!   lowerable op using a python-only kwarg such as `softmax_precision` or `kv_mask`).
//! * Mutation after building: [`Graph::set_attr`], [`Graph::clear_attr`], [`Graph::bind_input`],
//!   [`Graph::bind_output`], [`Graph::set_dims`], [`Graph::set_uid`], [`Graph::update_tensor`];
//!   re-planning: [`Graph::mutable_copy`]. Internal tensors a lowering creates take
//!   [`Graph::smallest_free_uid`] upward.
//!
//! Encodings kept from the reference IR: list ports are `<name>_0`, `<name>_1`, ... (concatenate
//! `inputs`, batchnorm `peer_stats`); SDPA `attn_scale` is an attribute (float) or an input port
//! (tensor), never both; the SDPA dropout tuple is flattened into `dropout_0` (probability
//! attribute or mask port), `dropout_1`, `dropout_2` ports; enum attributes hold reference value
//! names; `slice.slices` is flattened `(start, limit, step)` per axis.

pub mod attr;
pub mod catalogue;
pub mod cond;
pub mod dtype;
pub mod enums;
pub mod examples;
pub mod graph;
pub mod infer;
pub mod node;
pub mod op;
pub mod op_rules;
pub mod rules;
pub mod sdpa_mask;
pub mod serde;
pub mod tables;
pub mod tensor;
pub mod validate;

pub use attr::{AttrType, AttrValue};
pub use catalogue::{catalogue_json, catalogue_text, op_catalogue_json};
pub use dtype::DataType;
pub use enums::{ScalarKind, TensorReordering};
pub use graph::{FROZEN_MESSAGE, Graph, GraphContext, GraphState};
pub use node::{Node, NodeBuilder};
pub use op::{
    Cond, DtypeRule, NodeType, OpFamily, OpKind, OpSpec, OutSpec, PortSpec, Rule, ShapeRule,
};
pub use tensor::{
    ScalarValue, Tensor, checked_element_count, checked_last_offset, row_major_strides,
    saturating_element_count,
};

#[cfg(test)]
mod rule_tests;
#[cfg(test)]
mod tests;
