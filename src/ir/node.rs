//! Nodes of the IR: one op application with its input and output ports (port name → tensor uid),
//! its typed attributes and its compute data type. Also [`NodeBuilder`], the by-name way to
//! assemble a node that the C builder API and the typed helpers share.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::attr::AttrValue;
use super::dtype::DataType;
use super::op::{OpKind, OpSpec};

/// One node of a graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Node name (user name or `<op>.<k>`).
    pub name: String,
    /// The op.
    pub op: OpKind,
    /// Compute data type; `NotSet` is filled from the graph context at validation.
    pub compute_data_type: DataType,
    /// Bound input ports: port name → tensor uid (list ports as `<name>_<i>`).
    pub inputs: BTreeMap<String, i64>,
    /// Bound output ports: port name → tensor uid (absent conditional outputs are not listed).
    pub outputs: BTreeMap<String, i64>,
    /// Explicitly set attributes (unset ones take the table default, see [`Node::attr_or_default`]).
    pub attrs: BTreeMap<String, AttrValue>,
}

impl Node {
    /// The op's table row.
    pub fn spec(&self) -> &'static OpSpec {
        self.op.spec()
    }

    /// True when the cuDNN backend cannot lower this node: a python-only op, or a lowerable op
    /// using a python-only attribute, input or output.
    pub fn is_python_only(&self) -> bool {
        let spec = self.spec();
        !spec.backend_lowering
            || spec
                .python_only_when
                .iter()
                .any(|c| super::cond::holds(c, self))
    }

    /// Uid bound to an input port.
    pub fn input(&self, port: &str) -> Option<i64> {
        self.inputs.get(port).copied()
    }

    /// Uid bound to an output port.
    pub fn output(&self, port: &str) -> Option<i64> {
        self.outputs.get(port).copied()
    }

    /// Uid bound to an input or output port.
    pub fn port(&self, port: &str) -> Option<i64> {
        self.input(port).or_else(|| self.output(port))
    }

    /// The uids of a list port (`<name>_0`, `<name>_1`, ... in index order).
    pub fn list_inputs(&self, port: &str) -> Vec<i64> {
        let mut items: Vec<(u32, i64)> = self
            .inputs
            .iter()
            .filter_map(|(k, uid)| {
                let idx = k
                    .strip_prefix(port)?
                    .strip_prefix('_')?
                    .parse::<u32>()
                    .ok()?;
                Some((idx, *uid))
            })
            .collect();
        items.sort_unstable();
        items.into_iter().map(|(_, uid)| uid).collect()
    }

    /// The explicitly set attribute.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.get(name)
    }

    /// The set attribute, or the table default.
    pub fn attr_or_default(&self, name: &str) -> Option<AttrValue> {
        self.attrs
            .get(name)
            .cloned()
            .or_else(|| self.spec().attr(name).and_then(|a| a.default.clone()))
    }

    /// Boolean attribute (set or default), `false` when neither.
    pub fn attr_bool(&self, name: &str) -> bool {
        self.attr_or_default(name)
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    }

    /// Integer attribute (set or default).
    pub fn attr_int(&self, name: &str) -> Option<i64> {
        self.attr_or_default(name).and_then(|v| v.as_int())
    }

    /// Float attribute (set or default; integers widened).
    pub fn attr_float(&self, name: &str) -> Option<f64> {
        self.attr_or_default(name).and_then(|v| v.as_float())
    }

    /// String/enum attribute (set or default).
    pub fn attr_str(&self, name: &str) -> Option<String> {
        self.attr_or_default(name)
            .and_then(|v| v.as_str().map(str::to_owned))
    }

    /// Integer-list attribute (set or default).
    pub fn attr_ints(&self, name: &str) -> Option<Vec<i64>> {
        self.attr_or_default(name)
            .and_then(|v| v.as_ints().map(<[i64]>::to_vec))
    }

    /// Every uid the node touches (inputs then outputs).
    pub fn uids(&self) -> impl Iterator<Item = i64> + '_ {
        self.inputs.values().chain(self.outputs.values()).copied()
    }
}

/// Assembles a node by port and attribute names; [`super::Graph::add_node`] checks it against the
/// op table, creates its outputs and appends it.
#[derive(Clone, Debug)]
pub struct NodeBuilder {
    /// The op.
    pub op: OpKind,
    /// Node name (`None`: `<op>.<k>`).
    pub name: Option<String>,
    /// Compute data type (`NotSet`: from context).
    pub compute_data_type: DataType,
    /// Input bindings.
    pub inputs: BTreeMap<String, i64>,
    /// Caller-bound output tensors (out-kwargs, or outputs whose dims the caller declares).
    pub outputs: BTreeMap<String, i64>,
    /// Attributes.
    pub attrs: BTreeMap<String, AttrValue>,
}

impl NodeBuilder {
    /// Starts a node of `op`.
    pub fn new(op: OpKind) -> NodeBuilder {
        NodeBuilder {
            op,
            name: None,
            compute_data_type: DataType::NotSet,
            inputs: BTreeMap::new(),
            outputs: BTreeMap::new(),
            attrs: BTreeMap::new(),
        }
    }

    /// Starts a node by op name (`NotFound` for an unknown op).
    pub fn by_name(op: &str) -> crate::Result<NodeBuilder> {
        OpKind::from_name(op)
            .map(NodeBuilder::new)
            .ok_or_else(|| crate::Error::NotFound {
                what: "op",
                key: op.to_owned(),
            })
    }

    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the compute data type.
    pub fn compute(mut self, dt: DataType) -> Self {
        self.compute_data_type = dt;
        self
    }

    /// Binds an input port.
    pub fn input(mut self, port: &str, uid: i64) -> Self {
        self.inputs.insert(port.to_owned(), uid);
        self
    }

    /// Binds an output port to a caller tensor.
    pub fn output(mut self, port: &str, uid: i64) -> Self {
        self.outputs.insert(port.to_owned(), uid);
        self
    }

    /// Sets an attribute.
    pub fn attr(mut self, name: &str, value: AttrValue) -> Self {
        self.attrs.insert(name.to_owned(), value);
        self
    }

    /// Sets a boolean attribute.
    pub fn bool(self, name: &str, v: bool) -> Self {
        self.attr(name, AttrValue::Bool(v))
    }

    /// Sets an integer attribute.
    pub fn int(self, name: &str, v: i64) -> Self {
        self.attr(name, AttrValue::Int(v))
    }

    /// Sets a float attribute.
    pub fn float(self, name: &str, v: f64) -> Self {
        self.attr(name, AttrValue::Float(v))
    }

    /// Sets a string/enum attribute.
    pub fn str(self, name: &str, v: &str) -> Self {
        self.attr(name, AttrValue::Str(v.to_owned()))
    }

    /// Sets an integer-list attribute.
    pub fn ints(self, name: &str, v: &[i64]) -> Self {
        self.attr(name, AttrValue::Ints(v.to_vec()))
    }
}
