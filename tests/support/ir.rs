//! Shared helpers for the integration tests that build IR graphs by hand: add a tensor, start a
//! node by op name, add it, read an output's uid. They panic on failure (test setup).

#![allow(dead_code)] // each test binary uses a different subset

use dnnplan::ir::tensor::Tensor;
use dnnplan::ir::{DataType, Graph, NodeBuilder};

/// Adds `t` to `g` and returns its uid.
pub fn add_tensor(g: &mut Graph, t: Tensor) -> i64 {
    g.add_tensor(t).expect("add_tensor")
}

/// Adds a packed tensor `name` of `dims` and `dtype` and returns its uid.
pub fn tensor(g: &mut Graph, name: &str, dims: &[i64], dtype: DataType) -> i64 {
    add_tensor(g, Tensor::new(name, dims, dtype))
}

/// A node builder for the op named `name`.
pub fn op(name: &str) -> NodeBuilder {
    NodeBuilder::by_name(name).expect("op name")
}

/// Adds the node `b` to `g` and returns its index.
pub fn add(g: &mut Graph, b: NodeBuilder) -> usize {
    g.add_node(b).expect("add_node")
}

/// The uid of output `port` of node `n`.
pub fn output(g: &Graph, n: usize, port: &str) -> i64 {
    g.nodes()[n].output(port).expect("output port")
}
