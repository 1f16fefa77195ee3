//! The graph: context (data types and graph-level settings), tensors (the uid namespace), nodes,
//! and the lifecycle `Mutable → Validated → Frozen`.
//!
//! Uid rules (reference `_alloc_uid` / `_reuid_tensor`): automatic uids start at 1 and skip every
//! uid in use; a caller-chosen uid wins over an automatic one (the automatic holder is renumbered
//! and every reference to it follows); two caller-chosen uids colliding is an error naming both
//! tensors; setting a tensor's uid to its current value is a no-op (allowed even when frozen).
//!
//! Lifecycle: every mutation checks [`Graph::check_mutable`], which fails once the graph is frozen
//! and otherwise drops a previous validation. [`Graph::freeze`] validates if needed and freezes;
//! it is one-shot (a second call is an error), which is how planning stays one-shot.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::attr::AttrValue;
use super::dtype::DataType;
use super::node::{Node, NodeBuilder};
use super::op::{OpKind, OpSpec};
use super::tensor::{Tensor, row_major_strides};
use super::{cond, infer};
use crate::error::{Error, Result};

/// Graph-level settings and the data types used to fill unset ones (reference `GraphContext`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphContext {
    /// Graph name (debug label).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Dtype of non-virtual tensors with an unset dtype.
    pub io_data_type: DataType,
    /// Dtype of virtual tensors with an unset dtype (unset: io, then FLOAT).
    pub intermediate_data_type: DataType,
    /// Node compute dtype when a node has none (unset: io, then FLOAT).
    pub compute_data_type: DataType,
    /// Heuristics target SM count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_count: Option<i64>,
    /// Target SM version (e.g. 90), skips the device query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_version: Option<i64>,
    /// Dynamic shapes: dims/strides are excluded from the graph key.
    #[serde(default)]
    pub is_dynamic_shape_enabled: bool,
    /// Shape overrides at execute are allowed.
    #[serde(default)]
    pub is_override_shape_enabled: bool,
    /// Ranking hint: the plan will be replayed in a CUDA graph (never forwarded to the backend).
    #[serde(default)]
    pub is_cuda_graph_replay_expected: bool,
}

impl GraphContext {
    /// A context with the three data types (`NotSet` allowed for each).
    pub fn new(io: DataType, intermediate: DataType, compute: DataType) -> GraphContext {
        GraphContext {
            io_data_type: io,
            intermediate_data_type: intermediate,
            compute_data_type: compute,
            ..GraphContext::default()
        }
    }

    fn first_set(a: DataType, b: DataType) -> DataType {
        if a.is_set() { a } else { b }
    }

    /// Effective intermediate dtype: intermediate, else io, else FLOAT.
    pub fn effective_intermediate(&self) -> DataType {
        Self::first_set(
            Self::first_set(self.intermediate_data_type, self.io_data_type),
            DataType::Float,
        )
    }

    /// Effective compute dtype: compute, else io, else FLOAT.
    pub fn effective_compute(&self) -> DataType {
        Self::first_set(
            Self::first_set(self.compute_data_type, self.io_data_type),
            DataType::Float,
        )
    }

    /// The fill for an unset tensor dtype: intermediate if virtual, else io (may be `NotSet`).
    pub fn fill_for(&self, is_virtual: bool) -> DataType {
        if is_virtual {
            self.effective_intermediate()
        } else {
            self.io_data_type
        }
    }
}

/// Lifecycle state of a graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GraphState {
    /// Being built (or changed since the last validation).
    Mutable,
    /// `validate()` passed and nothing changed since.
    Validated,
    /// Frozen by planning: every mutation is an error.
    Frozen,
}

/// The message of every mutation attempted on a frozen graph.
pub const FROZEN_MESSAGE: &str = "graph is frozen (planning is one-shot; build a new graph)";

/// A graph of ops over tensors.
#[derive(Clone, Debug)]
pub struct Graph {
    pub(crate) context: GraphContext,
    pub(crate) tensors: Vec<Tensor>,
    pub(crate) nodes: Vec<Node>,
    uid_index: HashMap<i64, usize>,
    next_uid: i64,
    op_counters: HashMap<&'static str, u32>,
    state: GraphState,
}

impl Default for Graph {
    fn default() -> Self {
        Graph::new(GraphContext::default())
    }
}

impl Graph {
    /// An empty mutable graph.
    pub fn new(context: GraphContext) -> Graph {
        Graph {
            context,
            tensors: Vec::new(),
            nodes: Vec::new(),
            uid_index: HashMap::new(),
            next_uid: 1,
            op_counters: HashMap::new(),
            state: GraphState::Mutable,
        }
    }

    // ----- lifecycle -------------------------------------------------------------------------

    /// Current lifecycle state.
    pub fn state(&self) -> GraphState {
        self.state
    }

    /// True once frozen.
    pub fn is_frozen(&self) -> bool {
        self.state == GraphState::Frozen
    }

    /// True when validated (or frozen) and unchanged since.
    pub fn is_validated(&self) -> bool {
        self.state != GraphState::Mutable
    }

    /// Fails with [`FROZEN_MESSAGE`] once frozen; otherwise drops a previous validation.
    /// Every mutating method calls this first.
    pub fn check_mutable(&mut self) -> Result<()> {
        match self.state {
            GraphState::Frozen => Err(Error::InvalidState(FROZEN_MESSAGE.into())),
            _ => {
                self.state = GraphState::Mutable;
                Ok(())
            }
        }
    }

    /// Validates every node (dtype fill, shape inference, tensor and op rules). Errors name the
    /// node, the port and the rule. A no-op when already validated or frozen.
    pub fn validate(&mut self) -> Result<()> {
        if self.is_validated() {
            return Ok(());
        }
        super::validate::validate_graph(self)?;
        self.state = GraphState::Validated;
        Ok(())
    }

    /// Validates (if needed) and freezes the graph. One-shot: a second call fails with
    /// `InvalidState` (planning is one-shot; build a new graph to re-plan).
    pub fn freeze(&mut self) -> Result<()> {
        if self.is_frozen() {
            return Err(Error::InvalidState(FROZEN_MESSAGE.into()));
        }
        self.validate()?;
        self.state = GraphState::Frozen;
        Ok(())
    }

    /// What the planning layer calls before analysis: freeze (validating first). Same as
    /// [`Graph::freeze`]; named for the call site.
    pub fn begin_planning(&mut self) -> Result<()> {
        self.freeze()
    }

    /// A mutable copy (same context, tensors, uids and nodes; not validated, not frozen): the way
    /// to plan a graph again after planning froze it.
    pub fn mutable_copy(&self) -> Graph {
        let mut g = self.clone();
        g.state = GraphState::Mutable;
        g
    }

    // ----- context ---------------------------------------------------------------------------

    /// The context.
    pub fn context(&self) -> &GraphContext {
        &self.context
    }

    /// Replaces the context (a mutation).
    pub fn set_context(&mut self, context: GraphContext) -> Result<()> {
        self.check_mutable()?;
        self.context = context;
        Ok(())
    }

    /// Sets the io / intermediate / compute data types (`NotSet` clears one).
    pub fn set_data_types(
        &mut self,
        io: DataType,
        intermediate: DataType,
        compute: DataType,
    ) -> Result<()> {
        self.check_mutable()?;
        self.context.io_data_type = io;
        self.context.intermediate_data_type = intermediate;
        self.context.compute_data_type = compute;
        Ok(())
    }

    // ----- tensors ---------------------------------------------------------------------------

    /// Tensors in creation order.
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// Tensors sorted by uid.
    pub fn tensors_by_uid(&self) -> Vec<&Tensor> {
        let mut v: Vec<&Tensor> = self.tensors.iter().collect();
        v.sort_by_key(|t| t.uid);
        v
    }

    /// The tensor with this uid.
    pub fn tensor(&self, uid: i64) -> Option<&Tensor> {
        self.uid_index.get(&uid).map(|&i| &self.tensors[i])
    }

    /// The tensor with this uid, or `NotFound`.
    pub fn get_tensor(&self, uid: i64) -> Result<&Tensor> {
        self.tensor(uid).ok_or_else(|| Error::NotFound {
            what: "tensor uid",
            key: uid.to_string(),
        })
    }

    /// The tensor named `name` when exactly one tensor has that name.
    pub fn tensor_by_name(&self, name: &str) -> Option<&Tensor> {
        let mut it = self.tensors.iter().filter(|t| t.name == name);
        let first = it.next()?;
        it.next().is_none().then_some(first)
    }

    /// The smallest positive uid not in use (what C++ `assign_uids` gives internal tensors).
    pub fn smallest_free_uid(&self) -> i64 {
        (1..)
            .find(|u| !self.uid_index.contains_key(u))
            .unwrap_or(i64::MAX)
    }

    fn alloc_uid(&mut self) -> i64 {
        while self.uid_index.contains_key(&self.next_uid) {
            self.next_uid += 1;
        }
        let uid = self.next_uid;
        self.next_uid += 1;
        uid
    }

    /// Makes room for caller uid `uid`: renumbers an automatic holder, fails on a caller holder.
    fn reserve_user_uid(&mut self, uid: i64, claimant: &str) -> Result<()> {
        if uid < 0 {
            return Err(Error::bad_param(
                format!("uid of tensor `{claimant}`"),
                format!("must be >= 0 (got {uid}; -1 means automatic)"),
            ));
        }
        if let Some(&idx) = self.uid_index.get(&uid) {
            let holder = &self.tensors[idx];
            if holder.uid_assigned {
                return Err(Error::bad_param(
                    format!("uid {uid}"),
                    format!(
                        "tensor `{claimant}` asks for uid {uid}, already chosen by tensor `{}`",
                        holder.name
                    ),
                ));
            }
            let fresh = self.alloc_uid();
            self.renumber(uid, fresh);
        }
        Ok(())
    }

    /// Moves the tensor at `old` to `new` (free) and rewrites every reference.
    fn renumber(&mut self, old: i64, new: i64) {
        let Some(idx) = self.uid_index.remove(&old) else {
            return;
        };
        self.tensors[idx].uid = new;
        self.uid_index.insert(new, idx);
        for t in &mut self.tensors {
            if t.ragged_offset_uid == Some(old) {
                t.ragged_offset_uid = Some(new);
            }
        }
        for n in &mut self.nodes {
            for v in n.inputs.values_mut().chain(n.outputs.values_mut()) {
                if *v == old {
                    *v = new;
                }
            }
        }
    }

    /// Adds a tensor and returns its uid. `tensor.uid_assigned` (or `uid >= 0`) asks for that uid
    /// under the uid rules; otherwise an automatic uid is allocated. A ragged offset uid must name
    /// an existing tensor.
    pub fn add_tensor(&mut self, mut tensor: Tensor) -> Result<i64> {
        self.check_mutable()?;
        if let Some(r) = tensor.ragged_offset_uid {
            self.get_tensor(r)?;
        }
        if tensor.uid >= 0 || tensor.uid_assigned {
            self.reserve_user_uid(tensor.uid, &tensor.name)?;
            tensor.uid_assigned = true;
        } else {
            tensor.uid = self.alloc_uid();
        }
        if tensor.name.is_empty() {
            tensor.name = format!("tensor_{}", self.tensors.len());
        }
        let uid = tensor.uid;
        self.uid_index.insert(uid, self.tensors.len());
        self.tensors.push(tensor);
        Ok(uid)
    }

    /// Gives the tensor at `uid` the caller uid `new_uid` (uid rules apply; same uid = no-op,
    /// allowed even when frozen). References (ports, ragged offsets) follow.
    pub fn set_uid(&mut self, uid: i64, new_uid: i64) -> Result<()> {
        self.get_tensor(uid)?;
        if uid == new_uid {
            return Ok(());
        }
        self.check_mutable()?;
        let name = self.get_tensor(uid)?.name.clone();
        self.reserve_user_uid(new_uid, &name)?;
        self.renumber(uid, new_uid);
        if let Some(&idx) = self.uid_index.get(&new_uid) {
            self.tensors[idx].uid_assigned = true;
        }
        Ok(())
    }

    /// Changes a tensor through `f` (a mutation). The uid cannot be changed this way
    /// (use [`Graph::set_uid`]); a ragged offset must name an existing tensor.
    pub fn update_tensor(&mut self, uid: i64, f: impl FnOnce(&mut Tensor)) -> Result<()> {
        self.check_mutable()?;
        let idx = *self.uid_index.get(&uid).ok_or_else(|| Error::NotFound {
            what: "tensor uid",
            key: uid.to_string(),
        })?;
        let mut t = self.tensors[idx].clone();
        f(&mut t);
        t.uid = uid;
        if let Some(r) = t.ragged_offset_uid
            && (r == uid || !self.uid_index.contains_key(&r))
        {
            return Err(Error::bad_param(
                format!("ragged offset of tensor `{}`", t.name),
                format!("uid {r} is not another tensor of this graph"),
            ));
        }
        self.tensors[idx] = t;
        Ok(())
    }

    /// Declares a tensor's dims (and row-major strides unless strides were declared).
    pub fn set_dims(&mut self, uid: i64, dims: &[i64]) -> Result<()> {
        self.update_tensor(uid, |t| {
            t.dims = dims.to_vec();
            t.dims_assigned = true;
            if !t.strides_assigned || t.strides.len() != dims.len() {
                t.strides = row_major_strides(dims);
            }
        })
    }

    /// Declares a tensor's strides.
    pub fn set_strides(&mut self, uid: i64, strides: &[i64]) -> Result<()> {
        self.update_tensor(uid, |t| {
            t.strides = strides.to_vec();
            t.strides_assigned = true;
        })
    }

    /// Sets a tensor's data type.
    pub fn set_data_type(&mut self, uid: i64, dt: DataType) -> Result<()> {
        self.update_tensor(uid, |t| t.data_type = dt)
    }

    /// Marks an op output as a graph output (`is_virtual = !is_output`).
    pub fn set_output(&mut self, uid: i64, is_output: bool) -> Result<()> {
        self.update_tensor(uid, |t| t.is_virtual = !is_output)
    }

    // ----- nodes -----------------------------------------------------------------------------

    /// Nodes in insertion (topological) order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The node named `name` (first match).
    pub fn node_by_name(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The node (index) that produces `uid`.
    pub fn producer_of(&self, uid: i64) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.outputs.values().any(|&u| u == uid))
    }

    /// The nodes (indices) that read `uid`.
    pub fn consumers_of(&self, uid: i64) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].inputs.values().any(|&u| u == uid))
            .collect()
    }

    /// The tensor bound to a node's port (input or output).
    pub fn port_tensor(&self, node: &Node, port: &str) -> Option<&Tensor> {
        node.port(port).and_then(|uid| self.tensor(uid))
    }

    fn check_binding(
        &self,
        spec: &OpSpec,
        node_name: &str,
        port: &str,
        uid: i64,
        is_output: bool,
    ) -> Result<()> {
        let known = if is_output {
            spec.output(port).is_some()
        } else {
            spec.input(port).is_some()
        };
        if !known {
            let dir = if is_output { "output" } else { "input" };
            return Err(Error::invalid_graph(
                node_name,
                Some(port),
                format!("op `{}` has no {dir} port `{port}`", spec.name),
            ));
        }
        if self.tensor(uid).is_none() {
            return Err(Error::invalid_graph(
                node_name,
                Some(port),
                format!("tensor uid {uid} is not in this graph"),
            ));
        }
        if is_output && self.producer_of(uid).is_some() {
            return Err(Error::invalid_graph(
                node_name,
                Some(port),
                format!("tensor uid {uid} is already produced by another node"),
            ));
        }
        Ok(())
    }

    /// Checks a builder against its op table, creates the outputs that exist for its attributes
    /// and inputs (virtual, named `<node>::<suffix>`, dims inferred when possible), appends the
    /// node and returns its index.
    pub fn add_node(&mut self, b: NodeBuilder) -> Result<usize> {
        self.check_mutable()?;
        let spec = b.op.spec();
        let name = match b.name {
            Some(n) => n,
            None => {
                let k = self.op_counters.entry(spec.name).or_insert(0);
                let n = format!("{}.{}", spec.name, *k);
                *k += 1;
                n
            }
        };
        for (port, &uid) in &b.inputs {
            self.check_binding(spec, &name, port, uid, false)?;
        }
        for (port, &uid) in &b.outputs {
            self.check_binding(spec, &name, port, uid, true)?;
        }
        let attrs = coerce_attrs(spec, &name, b.attrs)?;
        let mut node = Node {
            name,
            op: b.op,
            compute_data_type: b.compute_data_type,
            inputs: b.inputs,
            outputs: b.outputs,
            attrs,
        };
        for out in &spec.outputs {
            if out.caller_provided
                || node.outputs.contains_key(out.name)
                || !out.when.iter().all(|c| cond::holds(c, &node))
            {
                continue;
            }
            let uid = self.add_tensor(Tensor::virtual_output(format!(
                "{}::{}",
                node.name, out.suffix
            )))?;
            node.outputs.insert(out.name.to_owned(), uid);
        }
        // Output dims are inferred here only from inputs of valid geometry (validation checks
        // them first, and refuses the rest naming the port): inference multiplies their dims.
        let inputs_valid = node.inputs.values().all(|uid| {
            self.tensor(*uid)
                .is_none_or(|t| t.check_inference_input().is_ok())
        });
        for (port, &uid) in &node.outputs {
            if let Some(out) = spec.output(port)
                && inputs_valid
                && let Ok(Some((dims, strides))) = infer::infer_output(self, &node, out)
            {
                let idx = self.uid_index[&uid];
                let t = &mut self.tensors[idx];
                if !t.dims_assigned {
                    t.dims = dims;
                    if !t.strides_assigned {
                        t.strides = strides;
                    }
                }
            }
        }
        self.nodes.push(node);
        Ok(self.nodes.len() - 1)
    }

    fn node_index(&self, node: usize) -> Result<usize> {
        (node < self.nodes.len())
            .then_some(node)
            .ok_or_else(|| Error::NotFound {
                what: "node index",
                key: node.to_string(),
            })
    }

    /// Sets (or replaces) an attribute of a node (type-checked against the table).
    pub fn set_attr(&mut self, node: usize, name: &str, value: AttrValue) -> Result<()> {
        self.check_mutable()?;
        let i = self.node_index(node)?;
        let n = &self.nodes[i];
        let mut one = BTreeMap::new();
        one.insert(name.to_owned(), value);
        let coerced = coerce_attrs(n.spec(), &n.name, one)?;
        self.nodes[i].attrs.extend(coerced);
        Ok(())
    }

    /// Removes an attribute of a node (it takes its default again).
    pub fn clear_attr(&mut self, node: usize, name: &str) -> Result<()> {
        self.check_mutable()?;
        let i = self.node_index(node)?;
        self.nodes[i].attrs.remove(name);
        Ok(())
    }

    /// Binds (or rebinds) an input port of a node.
    pub fn bind_input(&mut self, node: usize, port: &str, uid: i64) -> Result<()> {
        self.check_mutable()?;
        let i = self.node_index(node)?;
        let n = &self.nodes[i];
        self.check_binding(n.spec(), &n.name, port, uid, false)?;
        self.nodes[i].inputs.insert(port.to_owned(), uid);
        Ok(())
    }

    /// Binds an output port of a node to a caller tensor (e.g. an out-kwarg such as `rng_dump`).
    pub fn bind_output(&mut self, node: usize, port: &str, uid: i64) -> Result<()> {
        self.check_mutable()?;
        let i = self.node_index(node)?;
        let n = &self.nodes[i];
        self.check_binding(n.spec(), &n.name, port, uid, true)?;
        self.nodes[i].outputs.insert(port.to_owned(), uid);
        Ok(())
    }

    /// Unbinds an input port of a node.
    pub fn unbind_input(&mut self, node: usize, port: &str) -> Result<()> {
        self.check_mutable()?;
        let i = self.node_index(node)?;
        self.nodes[i].inputs.remove(port);
        Ok(())
    }

    /// Inserts an already-checked tensor list and node list (JSON loading); rebuilds the index.
    pub(crate) fn from_parts(
        context: GraphContext,
        tensors: Vec<Tensor>,
        nodes: Vec<Node>,
    ) -> Result<Graph> {
        let mut g = Graph::new(context);
        for t in tensors {
            if g.uid_index.contains_key(&t.uid) {
                return Err(Error::bad_param(
                    format!("uid {}", t.uid),
                    format!("appears twice (tensor `{}`)", t.name),
                ));
            }
            g.uid_index.insert(t.uid, g.tensors.len());
            g.tensors.push(t);
        }
        for t in &g.tensors {
            if let Some(r) = t.ragged_offset_uid {
                g.get_tensor(r)?;
            }
        }
        for n in nodes {
            let spec = n.op.spec();
            for (port, &uid) in &n.inputs {
                g.check_binding(spec, &n.name, port, uid, false)?;
            }
            for (port, &uid) in &n.outputs {
                g.check_binding(spec, &n.name, port, uid, true)?;
            }
            let attrs = coerce_attrs(spec, &n.name, n.attrs)?;
            *g.op_counters.entry(spec.name).or_insert(0) += 1;
            g.nodes.push(Node { attrs, ..n });
        }
        Ok(g)
    }

    /// Internal write access for validation (dtype fill and shape inference are not mutations).
    pub(crate) fn tensor_internal_mut(&mut self, uid: i64) -> Option<&mut Tensor> {
        self.uid_index.get(&uid).map(|&i| &mut self.tensors[i])
    }

    /// Internal write access to nodes for validation (compute dtype fill).
    pub(crate) fn nodes_internal_mut(&mut self) -> &mut [Node] {
        &mut self.nodes
    }

    /// The op kinds used by the graph, in node order (duplicates kept).
    pub fn op_kinds(&self) -> Vec<OpKind> {
        self.nodes.iter().map(|n| n.op).collect()
    }

    /// True when the cuDNN backend cannot lower node `index`: [`Node::is_python_only`], or a
    /// `block_scale_dequantize` with a rank-5 `block_size` in a graph that has a `conv_fprop`.
    pub fn is_python_only_node(&self, index: usize) -> bool {
        let Some(n) = self.nodes.get(index) else {
            return false;
        };
        if n.is_python_only() {
            return true;
        }
        n.op.node_type() == super::op::NodeType::BlockScaleDequantize
            && n.attr_ints("block_size").is_some_and(|b| b.len() == 5)
            && self
                .nodes
                .iter()
                .any(|m| m.op.node_type() == super::op::NodeType::ConvFprop)
    }

    /// True when some node has no cuDNN backend lowering (see [`Graph::is_python_only_node`]).
    pub fn has_python_only_ops(&self) -> bool {
        (0..self.nodes.len()).any(|i| self.is_python_only_node(i))
    }
}

/// Checks attribute names and types against the table (integers widen to floats, enums checked).
fn coerce_attrs(
    spec: &OpSpec,
    node: &str,
    attrs: BTreeMap<String, AttrValue>,
) -> Result<BTreeMap<String, AttrValue>> {
    let mut out = BTreeMap::new();
    for (k, v) in attrs {
        let Some(a) = spec.attr(&k) else {
            return Err(Error::invalid_graph(
                node,
                None,
                format!("op `{}` has no attribute `{k}`", spec.name),
            ));
        };
        let v = a
            .ty
            .coerce(v)
            .map_err(|why| Error::invalid_graph(node, None, format!("attribute `{k}` {why}")))?;
        out.insert(k, v);
    }
    Ok(out)
}
