//! Building a selector [`Request`] from one SDPA-family node of a graph (`sdpa`, `sdpa_fp8`,
//! `sdpa_mxfp8` and their `_backward` twins), so that dispatch's `explain` can show the
//! eligibility reasons of an SDPA graph.
//!
//! Mapping (the inverse of how Transformer Engine lowers its request to cuDNN-frontend):
//! Q/K/V dims are `[b, h, s, d]`; the physical format of each side comes from its strides (the
//! order of the b/h/s strides: BSHD, SBHD or BHSD), a ragged offset makes it THD, page tables
//! make K/V paged (`s_kv` = `paged_attention_max_seq_len_kv`, else page size x blocks per
//! sequence). Masks: `use_padding_mask`, `use_causal_mask`, `use_causal_mask_bottom_right` or a
//! bottom-right `diagonal_alignment`; windows: left bound `L` (or a sliding window length `L`)
//! means `wl = L - 1`, right bound `R` means `wr = R`. A bound `bias` input is a post-scale bias
//! (its shape class read from its dims), `use_alibi_mask` is ALiBi, a `sink_token` is the
//! learnable softmax, `dropout_0` is the probability (a custom dropout mask counts as dropout
//! 0.5: only "on/off" matters to the rules), `score_max` is the max-logit output. Forward nodes
//! are training when they generate stats; backward nodes are training and read
//! `use_deterministic_algorithm` and the `dBias` output.

use super::request::Request;
use super::request::{BiasShape, BiasType, Dtype, Layout, SdpaAttrs};
use crate::error::{Error, Result};
use crate::ir::{DataType, Graph, Node, Tensor};

/// Physical order of a `[b, h, s, d]` tensor.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Side {
    Bshd,
    Sbhd,
    Bhsd,
    Thd,
}

fn side_of(t: &Tensor) -> Side {
    if t.ragged_offset_uid.is_some() {
        return Side::Thd;
    }
    let s = &t.strides;
    if s.len() != 4 {
        return Side::Bhsd;
    }
    // Outer to inner by stride among b (0), h (1), s (2).
    let mut order = [0usize, 1, 2];
    order.sort_by(|&a, &b| s[b].cmp(&s[a]).then(a.cmp(&b)));
    match order {
        [0, 2, 1] => Side::Bshd,
        [2, 0, 1] => Side::Sbhd,
        _ => Side::Bhsd,
    }
}

fn dtype_of(dt: DataType, graph: &Graph, node: &Node) -> Result<Dtype> {
    let dt = if dt == DataType::NotSet {
        graph.context().io_data_type
    } else {
        dt
    };
    Ok(match dt {
        DataType::Half => Dtype::Fp16,
        DataType::Bfloat16 => Dtype::Bf16,
        DataType::Fp8E4m3 => Dtype::Fp8E4m3,
        DataType::Fp8E5m2 => Dtype::Fp8E5m2,
        DataType::Float => Dtype::Fp32,
        other => {
            return Err(Error::invalid_graph(
                &node.name,
                Some("q"),
                format!(
                    "attention eligibility has no rule for {} inputs",
                    other.name()
                ),
            ));
        }
    })
}

fn layout_of(q: Side, kv: Side, paged: bool) -> Option<Layout> {
    use Side::*;
    Some(match (paged, q, kv) {
        (false, Bshd, Bshd) => Layout::BshdBshdBshd,
        (false, Sbhd, Sbhd) => Layout::SbhdSbhdSbhd,
        (false, Thd, Thd) => Layout::ThdThdThd,
        (false, Bhsd, Bhsd) => Layout::BhsdBhsdBhsd,
        (false, Sbhd, Bshd) => Layout::SbhdBshdBshd,
        (false, Bshd, Sbhd) => Layout::BshdSbhdSbhd,
        (false, Thd, Bshd) => Layout::ThdBshdBshd,
        (false, Thd, Sbhd) => Layout::ThdSbhdSbhd,
        (true, Bshd, Bshd | Bhsd) => Layout::PagedKvBshdBshdBshd,
        (true, Bshd, Sbhd) => Layout::PagedKvBshdSbhdSbhd,
        (true, Sbhd, Bshd | Bhsd) => Layout::PagedKvSbhdBshdBshd,
        (true, Sbhd, Sbhd) => Layout::PagedKvSbhdSbhdSbhd,
        (true, Thd, Bshd | Bhsd) => Layout::PagedKvThdBshdBshd,
        (true, Thd, Sbhd) => Layout::PagedKvThdSbhdSbhd,
        _ => return None,
    })
}

fn bias_shape(dims: &[i64], b: i64, h: i64) -> BiasShape {
    match dims {
        [1, 1, 1, _] => BiasShape::OneOneOneS,
        [1, 1, _, _] => BiasShape::OneOneSs,
        [bb, 1, _, _] if *bb == b && b > 1 => BiasShape::B1ss,
        [1, hh, _, _] if *hh == h => BiasShape::OneHss,
        _ => BiasShape::Bhss,
    }
}

fn dim(t: &Tensor, i: usize, node: &Node, port: &str) -> Result<u64> {
    t.dims
        .get(i)
        .and_then(|&d| u64::try_from(d).ok())
        .filter(|&d| d > 0)
        .ok_or_else(|| {
            Error::invalid_graph(
                &node.name,
                Some(port),
                format!(
                    "needs rank-4 [b, h, s, d] dims with positive extents (dims {:?})",
                    t.dims
                ),
            )
        })
}

/// The verdicts on every SDPA-family node of `graph` in `env`, as `(node name, verdicts)` in
/// node order (what `dnnplan explain` shows for an SDPA graph). Nodes of other ops are skipped.
pub fn evaluate_graph(
    graph: &Graph,
    env: &super::env::Environment,
) -> Result<Vec<(String, super::evaluate::Verdicts)>> {
    graph
        .nodes()
        .iter()
        .filter(|n| n.op.name().starts_with("sdpa"))
        .map(|n| {
            let request = Request::from_sdpa_node(graph, n)?;
            Ok((n.name.clone(), super::evaluate::evaluate(&request, env)?))
        })
        .collect()
}

impl Request {
    /// The selector request of SDPA-family node `node` of `graph` (see the module docs for the
    /// mapping). Fails with `InvalidGraph` when the node is not an SDPA-family node, lacks Q/K/V,
    /// or has a layout TE cannot express.
    pub fn from_sdpa_node(graph: &Graph, node: &Node) -> Result<Request> {
        let op = node.op.name();
        let backward = match op {
            "sdpa" | "sdpa_fp8" | "sdpa_mxfp8" => false,
            "sdpa_backward" | "sdpa_fp8_backward" | "sdpa_mxfp8_backward" => true,
            other => {
                return Err(Error::invalid_graph(
                    &node.name,
                    None,
                    format!("`{other}` is not an SDPA-family op"),
                ));
            }
        };
        let tensor = |port: &str| {
            graph.port_tensor(node, port).ok_or_else(|| {
                Error::invalid_graph(&node.name, Some(port), "is not bound".to_owned())
            })
        };
        let (q, k, v) = (tensor("q")?, tensor("k")?, tensor("v")?);
        let paged = node.input("paged_attention_k_table").is_some();
        let b = dim(q, 0, node, "q")?;
        let h_q = dim(q, 1, node, "q")?;
        let s_q = dim(q, 2, node, "q")?;
        let d_qk = dim(q, 3, node, "q")?;
        let h_kv = dim(k, 1, node, "k")?;
        let d_v = dim(v, 3, node, "v")?;
        let (s_kv, page_size) = if paged {
            let page = dim(k, 2, node, "k")?;
            let from_attr = node
                .attr_int("paged_attention_max_seq_len_kv")
                .and_then(|s| u64::try_from(s).ok());
            let from_table = graph
                .port_tensor(node, "paged_attention_k_table")
                .and_then(|t| t.dims.get(2).copied())
                .and_then(|n| u64::try_from(n).ok())
                .map(|n| n * page);
            (from_attr.or(from_table).unwrap_or(page), Some(page))
        } else {
            (dim(k, 2, node, "k")?, None)
        };
        let dtype = dtype_of(q.data_type, graph, node)?;
        let o_dtype = if backward {
            None
        } else {
            graph
                .port_tensor(node, "O")
                .filter(|t| t.data_type != DataType::NotSet)
                .map(|t| dtype_of(t.data_type, graph, node))
                .transpose()?
        };
        let layout = layout_of(side_of(q), side_of(k), paged).ok_or_else(|| {
            Error::invalid_graph(
                &node.name,
                Some("k"),
                format!(
                    "Q as {:?} with K/V as {:?}{} has no NVTE layout",
                    side_of(q),
                    side_of(k),
                    if paged { " (paged)" } else { "" }
                ),
            )
        })?;
        let left = node
            .attr_int("diagonal_band_left_bound")
            .or_else(|| node.attr_int("left_bound"))
            .or_else(|| node.attr_int("sliding_window_length"))
            .or_else(|| node.attr_int("sliding_window"));
        let right = node
            .attr_int("diagonal_band_right_bound")
            .or_else(|| node.attr_int("right_bound"));
        let bottom_right = node.attr_bool("use_causal_mask_bottom_right")
            || node.attr_str("diagonal_alignment").as_deref() == Some("BOTTOM_RIGHT");
        let causal = node.attr_bool("use_causal_mask")
            || node.attr_bool("use_causal_mask_bottom_right")
            || right == Some(0);
        let dropout = if node.input("dropout_0").is_some() {
            0.5
        } else {
            node.attr_float("dropout_0").unwrap_or(0.0)
        };
        let training = backward
            || node.attr_bool("generate_stats")
            || node.attr("is_inference").and_then(|a| a.as_bool()) == Some(false);
        let attrs = SdpaAttrs {
            dtype,
            o_dtype,
            b,
            h_q,
            h_kv,
            s_q,
            s_kv,
            d_qk,
            d_v,
            causal,
            bottom_right,
            left_bound: left,
            right_bound: if causal && right == Some(0) {
                None
            } else {
                right
            },
            padding: node.attr_bool("use_padding_mask"),
            ragged: false,
            paged,
            page_size,
            head_major: false,
            has_bias: node.input("bias").is_some(),
            has_dbias: backward && node.output("dBias").is_some(),
            alibi: node.attr_bool("use_alibi_mask"),
            has_sink: node.input("sink_token").is_some(),
            dropout,
            training,
            deterministic: backward && node.attr_bool("use_deterministic_algorithm"),
            return_max_logit: node.output("score_max").is_some(),
        };
        let mut r = Request::from_sdpa_attrs(&attrs);
        r.layout = layout;
        if r.bias == BiasType::PostScaleBias
            && let Some(t) = graph.port_tensor(node, "bias")
        {
            r.bias_shape = bias_shape(&t.dims, b as i64, h_q as i64);
        }
        if op.contains("mxfp8") {
            r.fp8_recipe = super::request::Fp8Recipe::Mxfp8;
        }
        Ok(r)
    }
}
