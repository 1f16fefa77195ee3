//! The seam between dispatch and the IR: the graph type dispatch plans, and the one question
//! dispatch itself asks of it (which op types its nodes have, for classification).
//!
//! PLACEHOLDER until the IR lands: a graph is a list of node op-type names. Engines, analyzers
//! and the backend provider receive this type; after the IR merge it becomes `crate::ir::Graph`.

/// The graph dispatch plans (frozen before analysis).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Op-type name of each node, in node order.
    pub ops: Vec<String>,
}

impl Graph {
    /// A graph whose nodes have these op types.
    pub fn from_ops(ops: &[&str]) -> Graph {
        Graph {
            ops: ops.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

/// Op-type names of the graph's nodes (as the manifest's anchor tables spell them).
pub fn node_op_names(graph: &Graph) -> Vec<String> {
    graph.ops.clone()
}
