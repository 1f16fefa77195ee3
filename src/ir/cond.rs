//! Evaluation of [`Cond`] against a node: port bindings and attribute values (set or default).

use super::node::Node;
use super::op::Cond;

/// True when `c` holds for `node`.
pub fn holds(c: &Cond, node: &Node) -> bool {
    match c {
        Cond::Port(p) => node.inputs.contains_key(*p) || has_list_item(node, p),
        Cond::Output(p) => node.outputs.contains_key(*p),
        Cond::Set(a) => node.attrs.contains_key(*a),
        Cond::True(a) => node.attr_bool(a),
        Cond::SetFalse(a) => node.attr(a).and_then(|v| v.as_bool()) == Some(false),
        Cond::Is(a, v) => node.attr_str(a).as_deref() == Some(*v),
        Cond::Positive(a) => node.attr_float(a).is_some_and(|x| x > 0.0),
        Cond::Any(cs) => cs.iter().any(|c| holds(c, node)),
        Cond::All(cs) => cs.iter().all(|c| holds(c, node)),
        Cond::Not(c) => !holds(c, node),
    }
}

fn has_list_item(node: &Node, port: &str) -> bool {
    node.inputs.keys().any(|k| {
        k.strip_prefix(port)
            .and_then(|r| r.strip_prefix('_'))
            .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
    })
}
