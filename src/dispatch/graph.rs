//! The seam between dispatch and the IR: the graph type dispatch plans (the IR graph, frozen
//! before analysis) and the one question dispatch itself asks of it, the anchor keys of its nodes.
//!
//! A node's anchor keys are its reference node type (`SDPA`, `GDN_BWD`, `MATMUL`...) and its
//! builder op name (`sdpa`, `gdn_bwd`, `exp`...). Manifest families anchor on node types; the op
//! name lets a family (or a test family) anchor on one op of a shared node type such as POINTWISE.

pub use crate::ir::Graph;

/// Anchor keys of every node, in node order (node type name, then op name, per node).
pub fn node_anchor_keys(graph: &Graph) -> Vec<&'static str> {
    graph
        .nodes()
        .iter()
        .flat_map(|n| [n.op.node_type().name(), n.op.name()])
        .collect()
}
