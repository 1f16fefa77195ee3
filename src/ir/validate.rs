//! Graph validation: node order, required ports, conditional-output presence, compute and tensor
//! dtype fill from the context, shape inference of undeclared outputs, tensor validity, then the
//! op's table rules. The first failure is returned as `InvalidGraph { node, port, rule }`.

use super::cond::holds;
use super::dtype::DataType;
use super::graph::Graph;
use super::infer::infer_output;
use super::node::Node;
use super::op::DtypeRule;
pub use super::rules::{Violation, check_rule};
use super::tensor::Tensor;
use crate::error::{Error, Result};

/// Validates `g` in place (fills dtypes and inferred shapes).
pub(crate) fn validate_graph(g: &mut Graph) -> Result<()> {
    check_order(g)?;
    for i in 0..g.nodes().len() {
        validate_node(g, i)?;
    }
    let compute = g.context().effective_compute();
    for n in g.nodes_internal_mut() {
        if !n.compute_data_type.is_set() {
            n.compute_data_type = compute;
        }
    }
    // Tensors no node touches (graph inputs bound nowhere, ragged offsets, scalars).
    let ctx = g.context().clone();
    let uids: Vec<i64> = g.tensors().iter().map(|t| t.uid).collect();
    for uid in uids {
        let t = known_tensor(g, uid)?;
        if !t.data_type.is_set() {
            t.data_type = ctx.fill_for(t.is_virtual);
        }
        let name = t.name.clone();
        t.check().map_err(|rule| {
            Error::invalid_graph("(graph)", Some(&format!("tensor `{name}`")), rule)
        })?;
    }
    Ok(())
}

fn check_order(g: &Graph) -> Result<()> {
    let mut produced_by: std::collections::HashMap<i64, usize> = Default::default();
    for (i, n) in g.nodes().iter().enumerate() {
        for (port, uid) in &n.outputs {
            if let Some(j) = produced_by.insert(*uid, i) {
                return Err(Error::invalid_graph(
                    &n.name,
                    Some(port),
                    format!(
                        "tensor uid {uid} is also produced by node `{}`",
                        g.nodes()[j].name
                    ),
                ));
            }
        }
    }
    for (i, n) in g.nodes().iter().enumerate() {
        for (port, uid) in &n.inputs {
            if let Some(&j) = produced_by.get(uid)
                && j >= i
            {
                return Err(Error::invalid_graph(
                    &n.name,
                    Some(port),
                    format!(
                        "reads tensor uid {uid} produced by node `{}`, which is not earlier (graphs are acyclic and built in order)",
                        g.nodes()[j].name
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn validate_node(g: &mut Graph, i: usize) -> Result<()> {
    let node = g.nodes()[i].clone();
    let spec = node.spec();
    let fail = |port: Option<&str>, rule: String| Error::invalid_graph(&node.name, port, rule);

    for p in &spec.inputs {
        let bound = holds(&super::op::Cond::Port(p.name), &node);
        if p.required && !bound {
            return Err(fail(Some(p.name), "required input is not bound".into()));
        }
    }
    for o in &spec.outputs {
        let present = node.outputs.contains_key(o.name);
        let wanted = o.when.iter().all(|c| holds(c, &node));
        if o.caller_provided {
            continue;
        }
        if wanted && !present {
            return Err(fail(
                Some(o.name),
                "output is required here but not bound".into(),
            ));
        }
        if !wanted && present {
            let why: Vec<String> = o.when.iter().map(|c| c.describe()).collect();
            return Err(fail(
                Some(o.name),
                format!("output exists only when {}", why.join(" and ")),
            ));
        }
    }

    // The inputs' geometry first: shape inference multiplies and adds their dims and strides.
    // (A fused scalar without dims gets them below; every tensor is checked in full after that.)
    for (port, &uid) in &node.inputs {
        let t = g.get_tensor(uid)?;
        t.check_inference_input()
            .map_err(|rule| fail(Some(port), format!("tensor `{}`: {rule}", t.name)))?;
    }
    // Shape inference and dtype fill of outputs.
    let ctx = g.context().clone();
    for (port, &uid) in &node.outputs {
        let Some(o) = spec.output(port) else { continue };
        let t = g.get_tensor(uid)?.clone();
        if !t.dims_assigned {
            match infer_output(g, &node, o).map_err(|why| fail(Some(port), why))? {
                Some((dims, strides)) => {
                    let t = known_tensor(g, uid)?;
                    t.dims = dims;
                    if !t.strides_assigned {
                        t.strides = strides;
                    }
                }
                None if t.dims.is_empty() => {
                    return Err(fail(
                        Some(port),
                        "output dims cannot be inferred: declare them (bind a tensor with dims)"
                            .into(),
                    ));
                }
                None => {}
            }
        } else if o.shape.is_exact()
            && let Ok(Some((dims, _))) = infer_output(g, &node, o)
            && dims != t.dims
        {
            return Err(fail(
                Some(port),
                format!(
                    "declared dims {:?} differ from the dims the op produces {:?}",
                    t.dims, dims
                ),
            ));
        }
        let fill = match o.dtype {
            DtypeRule::Context => DataType::NotSet,
            DtypeRule::Fixed(d) => d,
            DtypeRule::SameAs(p) => g
                .port_tensor(&node, p)
                .map(|t| t.data_type)
                .unwrap_or_default(),
            DtypeRule::SameAsOr(p, d) => g
                .port_tensor(&node, p)
                .map(|t| t.data_type)
                .filter(|d| d.is_set())
                .unwrap_or(d),
        };
        let t = known_tensor(g, uid)?;
        if !t.data_type.is_set() {
            t.data_type = if fill.is_set() {
                fill
            } else {
                ctx.fill_for(t.is_virtual)
            };
        }
    }
    for &uid in node.inputs.values() {
        let t = known_tensor(g, uid)?;
        if !t.data_type.is_set() {
            t.data_type = ctx.fill_for(t.is_virtual);
        }
    }
    expand_fused_scalars(g, &node);
    for (port, &uid) in node.inputs.iter().chain(node.outputs.iter()) {
        let t = g.get_tensor(uid)?;
        t.check()
            .map_err(|rule| fail(Some(port), format!("tensor `{}`: {rule}", t.name)))?;
    }
    for rule in &spec.rules {
        if let Some((port, msg)) = check_rule(g, &node, rule) {
            return Err(fail(port.as_deref(), msg));
        }
    }
    Ok(())
}

/// The tensor `uid`, which an earlier step of validation found in the graph (a miss is a bug in
/// validation, reported as an internal error rather than a panic).
fn known_tensor(g: &mut Graph, uid: i64) -> Result<&mut Tensor> {
    g.tensor_internal_mut(uid)
        .ok_or_else(|| Error::Internal(format!("validation lost track of tensor uid {uid}")))
}

/// Fused-scalar rank expansion (reference `fill_from_context`): every fused scalar input of a node
/// gets all-ones dims and strides of the rank of the node's first non-scalar input (else first
/// output; else rank 1).
fn expand_fused_scalars(g: &mut Graph, node: &Node) {
    let is_fused = |g: &Graph, uid: i64| {
        g.tensor(uid)
            .is_some_and(|t| t.pass_by_value.is_some() && t.element_count() <= 1)
    };
    let spec = node.spec();
    let ordered_inputs: Vec<i64> = spec
        .inputs
        .iter()
        .flat_map(|p| {
            if p.list {
                node.list_inputs(p.name)
            } else {
                node.input(p.name).into_iter().collect()
            }
        })
        .collect();
    let rank = ordered_inputs
        .iter()
        .chain(node.outputs.values())
        .filter(|&&u| !is_fused(g, u))
        .find_map(|&u| g.tensor(u).map(|t| t.dims.len()).filter(|r| *r > 0))
        .unwrap_or(1);
    for uid in ordered_inputs {
        if !is_fused(g, uid) {
            continue;
        }
        if let Some(t) = g.tensor_internal_mut(uid)
            && t.dims.len() != rank
        {
            t.dims = vec![1; rank];
            t.strides = vec![1; rank];
        }
    }
}
