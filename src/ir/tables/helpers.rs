//! Compact constructors for op-table rows (ports, outputs, attributes, the op row itself).

use crate::ir::attr::{AttrType, AttrValue};
use crate::ir::dtype::DataType;
use crate::ir::op::{
    AttrSpec, Cond, DtypeRule, NodeType, OpFamily, OpSpec, OutSpec, PortSpec, Rule, ShapeRule,
};

/// A required input.
pub(crate) fn req(name: &'static str) -> PortSpec {
    PortSpec {
        name,
        required: true,
        list: false,
    }
}

/// An optional input.
pub(crate) fn opt(name: &'static str) -> PortSpec {
    PortSpec {
        name,
        required: false,
        list: false,
    }
}

/// A list input (`<name>_0`, `<name>_1`, ...); `required` = at least one item.
pub(crate) fn list(name: &'static str, required: bool) -> PortSpec {
    PortSpec {
        name,
        required,
        list: true,
    }
}

/// Required inputs from names.
pub(crate) fn reqs(names: &[&'static str]) -> Vec<PortSpec> {
    names.iter().map(|n| req(n)).collect()
}

/// Optional inputs from names.
pub(crate) fn opts(names: &[&'static str]) -> Vec<PortSpec> {
    names.iter().map(|n| opt(n)).collect()
}

/// An always-present output named `name` (tensor suffix = name) with a shape rule.
pub(crate) fn out(name: &'static str, shape: ShapeRule) -> OutSpec {
    OutSpec {
        name,
        suffix: name,
        when: Vec::new(),
        caller_provided: false,
        shape,
        dtype: DtypeRule::Context,
    }
}

/// The gradient output `name` of input `of`: `of`'s shape and dtype.
pub(crate) fn grad(name: &'static str, of: &'static str) -> OutSpec {
    out(name, ShapeRule::SameAs(of)).like(of)
}

/// The gradient output `name` of the optional input `of`: present when `of` is bound.
pub(crate) fn opt_grad(name: &'static str, of: &'static str) -> OutSpec {
    grad(name, of).when(Cond::Port(of))
}

impl OutSpec {
    /// Present only when `c` holds.
    pub(crate) fn when(mut self, c: Cond) -> Self {
        self.when.push(c);
        self
    }

    /// Tensor-name suffix differing from the port name.
    pub(crate) fn suffix(mut self, s: &'static str) -> Self {
        self.suffix = s;
        self
    }

    /// Caller passes the tensor (out-kwarg).
    pub(crate) fn caller(mut self) -> Self {
        self.caller_provided = true;
        self
    }

    /// Dtype rule.
    pub(crate) fn dtype(mut self, d: DtypeRule) -> Self {
        self.dtype = d;
        self
    }

    /// FLOAT when unset.
    pub(crate) fn fp32(self) -> Self {
        self.dtype(DtypeRule::Fixed(DataType::Float))
    }

    /// Dtype of an input port.
    pub(crate) fn like(self, port: &'static str) -> Self {
        self.dtype(DtypeRule::SameAs(port))
    }
}

fn attr(name: &'static str, ty: AttrType, default: Option<AttrValue>) -> AttrSpec {
    AttrSpec {
        name,
        ty,
        default,
        doc: "",
    }
}

/// Bool attribute with default.
pub(crate) fn a_bool(name: &'static str, default: bool) -> AttrSpec {
    attr(name, AttrType::Bool, Some(AttrValue::Bool(default)))
}

/// Bool attribute without default (unset is meaningful).
pub(crate) fn a_bool_opt(name: &'static str) -> AttrSpec {
    attr(name, AttrType::Bool, None)
}

/// Int attribute with default.
pub(crate) fn a_int(name: &'static str, default: i64) -> AttrSpec {
    attr(name, AttrType::Int, Some(AttrValue::Int(default)))
}

/// Int attribute without default.
pub(crate) fn a_int_opt(name: &'static str) -> AttrSpec {
    attr(name, AttrType::Int, None)
}

/// Float attribute with default.
pub(crate) fn a_float(name: &'static str, default: f64) -> AttrSpec {
    attr(name, AttrType::Float, Some(AttrValue::Float(default)))
}

/// Float attribute without default.
pub(crate) fn a_float_opt(name: &'static str) -> AttrSpec {
    attr(name, AttrType::Float, None)
}

/// Int-list attribute without default.
pub(crate) fn a_ints(name: &'static str) -> AttrSpec {
    attr(name, AttrType::Ints, None)
}

/// Enum attribute (by reference value name) with optional default.
pub(crate) fn a_enum(
    name: &'static str,
    values: &'static [&'static str],
    default: Option<&'static str>,
) -> AttrSpec {
    attr(
        name,
        AttrType::Enum(values),
        default.map(|d| AttrValue::Str(d.to_owned())),
    )
}

impl AttrSpec {
    /// Adds the one-line meaning.
    pub(crate) fn doc(mut self, doc: &'static str) -> Self {
        self.doc = doc;
        self
    }
}

/// Starts an op row.
pub(crate) fn op(
    name: &'static str,
    node_type: NodeType,
    family: OpFamily,
    doc: &'static str,
) -> OpSpec {
    OpSpec {
        name,
        node_type,
        family,
        pointwise_mode: None,
        inputs: Vec::new(),
        outputs: Vec::new(),
        attrs: Vec::new(),
        rules: Vec::new(),
        backend_lowering: true,
        python_only_when: Vec::new(),
        min_cudnn: None,
        doc,
    }
}

impl OpSpec {
    /// Adds inputs.
    pub(crate) fn ins(mut self, ports: impl IntoIterator<Item = PortSpec>) -> Self {
        self.inputs.extend(ports);
        self
    }

    /// Adds outputs.
    pub(crate) fn outs(mut self, outs: impl IntoIterator<Item = OutSpec>) -> Self {
        self.outputs.extend(outs);
        self
    }

    /// Adds attributes.
    pub(crate) fn attrs(mut self, attrs: impl IntoIterator<Item = AttrSpec>) -> Self {
        self.attrs.extend(attrs);
        self
    }

    /// Adds rules.
    pub(crate) fn rules(mut self, rules: impl IntoIterator<Item = Rule>) -> Self {
        self.rules.extend(rules);
        self
    }

    /// Python-only (no backend lowering).
    pub(crate) fn python_only(mut self) -> Self {
        self.backend_lowering = false;
        self
    }

    /// Conditions that make a node of this op python-only.
    pub(crate) fn python_only_on(mut self, conds: Vec<Cond>) -> Self {
        self.python_only_when.extend(conds);
        self
    }

    /// Minimum cuDNN version for the backend lowering.
    pub(crate) fn min_cudnn(mut self, v: u32) -> Self {
        self.min_cudnn = Some(v);
        self
    }
}

/// The attribute must be set.
pub(crate) fn required_attr(name: &'static str) -> Rule {
    Rule::Msg(
        Box::new(Rule::Implies(Cond::All(vec![]), Cond::Set(name))),
        "attribute is required",
    )
}

/// `a` requires `b`.
pub(crate) fn implies(a: Cond, b: Cond) -> Rule {
    Rule::Implies(a, b)
}

/// `a` and `b` exclude each other.
pub(crate) fn excludes(a: Cond, b: Cond) -> Rule {
    Rule::Excludes(a, b)
}
