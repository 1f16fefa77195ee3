//! IR graph -> backend graph: every IR tensor becomes a backend tensor with its uid, every node is
//! lowered by its op through the table [`LOWERINGS`] (op name -> lowering function). An op or a
//! feature this build cannot lower is a decline naming the node and the reason, so the plan list
//! simply has no backend entries for the graph.

use crate::cudnn::consts::*;
use crate::cudnn::graph::{
    BackendGraph, ConvGeometry, ConvKind, GraphBuilder, OpSpec, PointwiseParams, ScalarValue,
    TensorSpec, Uid,
};
use crate::cudnn::lower::attention::*;
use crate::cudnn::lower::{self, NormKind};
use crate::error::{Error, Result};
use crate::ir::{DataType, Graph, Node};

/// Name used in backend declines.
const BACKEND: &str = "cudnn_backend";

fn decline(node: &Node, why: impl std::fmt::Display) -> Error {
    Error::Declined {
        engine: BACKEND.to_owned(),
        reason: format!("node `{}` ({}): {why}", node.name, node.op.name()),
    }
}

fn dtype(dt: DataType, what: &str) -> Result<u32> {
    dt.backend_value()
        .map(|v| v as u32)
        .ok_or_else(|| Error::Declined {
            engine: BACKEND.to_owned(),
            reason: format!("{what}: data type {} has no cuDNN equivalent", dt.name()),
        })
}

fn scalar(v: &crate::ir::tensor::ScalarValue) -> ScalarValue {
    use crate::ir::tensor::ScalarValue as S;
    match *v {
        S::Int64(x) => ScalarValue::I64(x),
        S::Int32(x) => ScalarValue::I32(x),
        S::Half(x) | S::Float(x) | S::Bfloat16(x) => ScalarValue::F32(x),
        S::Double(x) => ScalarValue::F64(x),
    }
}

/// One lowering: (builder, IR graph, node, cuDNN version).
type Lowering = fn(&mut GraphBuilder, &Graph, &Node, usize) -> Result<()>;

/// Op name -> lowering (pointwise ops are matched by their table's pointwise mode instead).
pub const LOWERINGS: &[(&str, Lowering)] = &[
    ("matmul", lower_matmul),
    ("reduction", lower_reduction),
    ("layernorm", lower_norm_fwd),
    ("rmsnorm", lower_norm_fwd),
    ("layernorm_backward", lower_norm_bwd),
    ("rmsnorm_backward", lower_norm_bwd),
    ("softmax", lower_softmax),
    ("conv_fprop", lower_conv),
    ("conv_dgrad", lower_conv),
    ("conv_wgrad", lower_conv),
    ("sdpa", lower_sdpa),
    ("sdpa_backward", lower_sdpa_bwd),
];

/// Lowers a validated IR graph for cuDNN `version`.
pub fn lower_graph(ir: &Graph, version: usize) -> Result<BackendGraph> {
    let mut g = GraphBuilder::new();
    g.intermediate = dtype(
        ir.context().effective_intermediate(),
        "graph intermediate type",
    )?;
    g.compute = dtype(ir.context().effective_compute(), "graph compute type")?;
    for t in ir.tensors() {
        if t.dims.is_empty() || t.dims.len() != t.strides.len() {
            return Err(Error::Declined {
                engine: BACKEND.to_owned(),
                reason: format!("tensor `{}` has no inferred dims/strides", t.name),
            });
        }
        g.insert_tensor(TensorSpec {
            uid: t.uid,
            name: t.name.clone(),
            dtype: dtype(t.data_type, &format!("tensor `{}`", t.name))?,
            dims: t.dims.clone(),
            strides: t.strides.clone(),
            is_virtual: t.is_virtual,
            by_value: t.pass_by_value.as_ref().map(scalar),
            alignment: 16,
            ragged_offset: t.ragged_offset_uid,
        })?;
        if t.ragged_offset_multiplier > 1 {
            return Err(Error::Declined {
                engine: BACKEND.to_owned(),
                reason: format!(
                    "tensor `{}`: ragged offset multipliers need cuDNN >= 9.24",
                    t.name
                ),
            });
        }
    }
    for node in ir.nodes() {
        if node.is_python_only() {
            return Err(decline(
                node,
                "python-only op or attribute (no backend lowering)",
            ));
        }
        if let Some(mode) = node.spec().pointwise_mode {
            lower_pointwise(&mut g, ir, node, mode)?;
            continue;
        }
        let f = LOWERINGS
            .iter()
            .find(|(n, _)| *n == node.op.name())
            .map(|(_, f)| *f)
            .ok_or_else(|| decline(node, "no cuDNN lowering for this op in this build"))?;
        f(&mut g, ir, node, version)?;
    }
    // Every IR tensor fits in 64 bits (validation); an intermediate derived from them (e.g. the
    // attention scores [b, h, s_q, s_kv]) may not.
    if let Some(t) = g.graph().tensors.values().find(|t| !t.fits_64_bits()) {
        return Err(Error::Declined {
            engine: BACKEND.to_owned(),
            reason: format!(
                "tensor `{}` (dims {:?}) does not fit in 64 bits",
                t.name, t.dims
            ),
        });
    }
    Ok(g.finish())
}

fn port(node: &Node, name: &str) -> Result<Uid> {
    node.port(name)
        .ok_or_else(|| Error::invalid_graph(&node.name, Some(name), "port is not bound"))
}

fn compute_of(g: &GraphBuilder, node: &Node) -> Result<u32> {
    if node.compute_data_type == DataType::NotSet {
        Ok(g.compute)
    } else {
        dtype(
            node.compute_data_type,
            &format!("node `{}` compute", node.name),
        )
    }
}

fn lower_pointwise(g: &mut GraphBuilder, _ir: &Graph, node: &Node, mode: &str) -> Result<()> {
    let name = format!("CUDNN_POINTWISE_{mode}");
    let m = POINTWISE_MODE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| decline(node, format!("pointwise mode {mode} unknown to this build")))?;
    let inputs: Vec<Uid> = node
        .spec()
        .inputs
        .iter()
        .filter_map(|p| node.input(p.name))
        .collect();
    let y = port(node, "OUT_0")?;
    let f = |n: &str| node.attr(n).and_then(|_| node.attr_float(n));
    let params = PointwiseParams {
        axis: node
            .attr_int("axis")
            .filter(|_| m == CUDNN_POINTWISE_GEN_INDEX),
        relu_lower_clip: f("lower_clip"),
        relu_upper_clip: f("upper_clip"),
        relu_lower_clip_slope: f("negative_slope"),
        elu_alpha: f("elu_alpha"),
        softplus_beta: f("softplus_beta"),
        swish_beta: f("swish_beta"),
    };
    let compute = compute_of(g, node)?;
    lower::pointwise(g, m, compute, &inputs, y, params)
}

fn lower_matmul(g: &mut GraphBuilder, _: &Graph, node: &Node, _: usize) -> Result<()> {
    let compute = compute_of(g, node)?;
    g.push(OpSpec::Matmul {
        a: port(node, "A")?,
        b: port(node, "B")?,
        c: port(node, "C")?,
        compute,
        m_override: None,
        n_override: None,
        k_override: None,
        padding_value: node.attr_float("padding"),
    })
}

fn lower_reduction(g: &mut GraphBuilder, _: &Graph, node: &Node, _: usize) -> Result<()> {
    if node.input("group_offset").is_some() {
        return Err(decline(
            node,
            "grouped reductions are not lowered by this build",
        ));
    }
    let mode = node.attr_str("mode").unwrap_or_default();
    let m = REDUCE_OP
        .iter()
        .find(|(n, _)| *n == format!("CUDNN_REDUCE_TENSOR_{mode}"))
        .map(|(_, v)| *v)
        .ok_or_else(|| decline(node, format!("reduction mode `{mode}`")))?;
    let det = node
        .attr("is_deterministic")
        .map(|_| node.attr_bool("is_deterministic"));
    let (x, y) = (port(node, "input")?, port(node, "OUT_0")?);
    lower::reduction(g, m, x, y, det)
}

fn lower_norm_fwd(g: &mut GraphBuilder, _: &Graph, node: &Node, _: usize) -> Result<()> {
    let kind = if node.op.name() == "rmsnorm" {
        NormKind::Rms
    } else {
        NormKind::Layer
    };
    let training = node.attr_str("norm_forward_phase").as_deref() == Some("TRAINING");
    g.push(OpSpec::NormForward {
        mode: if kind == NormKind::Rms {
            CUDNN_RMS_NORM
        } else {
            CUDNN_LAYER_NORM
        },
        phase: if training {
            CUDNN_NORM_FWD_TRAINING
        } else {
            CUDNN_NORM_FWD_INFERENCE
        },
        x: port(node, "input")?,
        scale: node.input("scale"),
        bias: node.input("bias"),
        epsilon: node.input("epsilon"),
        mean: if training && kind == NormKind::Layer {
            node.output("mean")
        } else {
            None
        },
        inv_variance: if training {
            node.output("inv_var")
        } else {
            None
        },
        y: port(node, "Y")?,
    })
}

fn lower_norm_bwd(g: &mut GraphBuilder, _: &Graph, node: &Node, _: usize) -> Result<()> {
    let rms = node.op.name() == "rmsnorm_backward";
    g.push(OpSpec::NormBackward {
        mode: if rms {
            CUDNN_RMS_NORM
        } else {
            CUDNN_LAYER_NORM
        },
        x: port(node, "input")?,
        dy: port(node, "grad")?,
        scale: node.input("scale"),
        mean: if rms { None } else { node.input("mean") },
        inv_variance: node.input("inv_variance"),
        epsilon: None,
        dx: port(node, "DX")?,
        dscale: node.output("DScale"),
        dbias: node.output("DBias"),
    })
}

/// Standalone softmax: the unified SOFTMAX operation from cuDNN 9.21. Before 9.21 the
/// composite form (reductions feeding pointwise ops) has no engine outside attention (seen on
/// 9.19: NOT_SUPPORTED_GRAPH_PATTERN), so the backend declines with that reason.
fn lower_softmax(g: &mut GraphBuilder, _: &Graph, node: &Node, version: usize) -> Result<()> {
    if node.input("sink_token").is_some() || node.output("Max").is_some() {
        return Err(decline(
            node,
            "sink and Max/Sum_exp outputs are not lowered by this build",
        ));
    }
    if version < 9_21_00 {
        return Err(decline(
            node,
            format!(
                "standalone softmax needs cuDNN >= 9.21.0 (unified SOFTMAX operation); cuDNN {} has no engine for the composite form outside attention",
                crate::cudnn::loader::version_string(version)
            ),
        ));
    }
    g.push(OpSpec::Softmax {
        x: port(node, "input")?,
        y: port(node, "OUT_0")?,
        stats: node.output("Stats"),
    })
}

fn lower_conv(g: &mut GraphBuilder, _: &Graph, node: &Node, _: usize) -> Result<()> {
    let (kind, x, w, y) = match node.op.name() {
        "conv_fprop" => (
            ConvKind::Fprop,
            port(node, "image")?,
            port(node, "weight")?,
            port(node, "Y")?,
        ),
        "conv_dgrad" => (
            ConvKind::Dgrad,
            port(node, "DX")?,
            port(node, "filter")?,
            port(node, "loss")?,
        ),
        _ => (
            ConvKind::Wgrad,
            port(node, "image")?,
            port(node, "DW")?,
            port(node, "loss")?,
        ),
    };
    let spatial = g.tensor(x)?.dims.len().saturating_sub(2);
    let ints = |n: &str, default: i64| node.attr_ints(n).unwrap_or_else(|| vec![default; spatial]);
    let pad = node.attr_ints("padding");
    let geometry = ConvGeometry {
        pre_padding: node
            .attr_ints("pre_padding")
            .or_else(|| pad.clone())
            .unwrap_or_else(|| vec![0; spatial]),
        post_padding: node
            .attr_ints("post_padding")
            .or(pad)
            .unwrap_or_else(|| vec![0; spatial]),
        stride: ints("stride", 1),
        dilation: ints("dilation", 1),
        mode: if node.attr_str("convolution_mode").as_deref() == Some("CONVOLUTION") {
            CUDNN_CONVOLUTION
        } else {
            CUDNN_CROSS_CORRELATION
        },
    };
    lower::convolution(g, kind, geometry, x, w, y)
}

/// The score options of an SDPA node (forward or backward); unsupported features decline.
fn score_options(node: &Node) -> Result<ScoreOptions> {
    for p in [
        "block_mask",
        "cu_seq_len_q",
        "cu_seq_len_kv",
        "sink_token",
        "paged_attention_k_table",
        "paged_attention_v_table",
    ] {
        if node.input(p).is_some() {
            return Err(decline(node, format!("`{p}` is not lowered by this build")));
        }
    }
    if node.attr_bool("use_alibi_mask") {
        return Err(decline(node, "ALiBi is not lowered by this build"));
    }
    if node.attr_int("diagonal_band_left_bound").is_some()
        || node.attr_int("sliding_window_length").is_some()
    {
        return Err(decline(
            node,
            "left-bound (sliding window) masks are not lowered by this build",
        ));
    }
    let right = node.attr_int("diagonal_band_right_bound");
    if right.is_some_and(|r| r != 0) {
        return Err(decline(
            node,
            "right bounds other than 0 are not lowered by this build",
        ));
    }
    let bottom_right_attr = node.attr_str("diagonal_alignment").as_deref() == Some("BOTTOM_RIGHT");
    let causal = if node.attr_bool("use_causal_mask_bottom_right") {
        Some(DiagonalAlignment::BottomRight)
    } else if node.attr_bool("use_causal_mask") {
        Some(DiagonalAlignment::TopLeft)
    } else if right == Some(0) {
        Some(if bottom_right_attr {
            DiagonalAlignment::BottomRight
        } else {
            DiagonalAlignment::TopLeft
        })
    } else {
        None
    };
    let attn_scale = match (node.input("attn_scale"), node.attr_float("attn_scale")) {
        (Some(u), _) => Some(AttnScale::Tensor(u)),
        (None, Some(v)) if node.attr("attn_scale").is_some() => Some(AttnScale::Value(v as f32)),
        _ => None,
    };
    let dropout = match (
        node.attr_float("dropout_0"),
        node.input("dropout_1"),
        node.input("dropout_2"),
    ) {
        (Some(p), Some(seed), Some(offset)) if node.attr("dropout_0").is_some() => Some(Dropout {
            probability: p as f32,
            seed,
            offset,
        }),
        _ if node.input("dropout_0").is_some() => {
            return Err(decline(
                node,
                "custom dropout masks are not lowered by this build",
            ));
        }
        _ => None,
    };
    let padding = node.attr_bool("use_padding_mask");
    Ok(ScoreOptions {
        attn_scale,
        bias: node.input("bias"),
        causal,
        seq_len_q: if padding {
            node.input("seq_len_q")
        } else {
            None
        },
        seq_len_kv: if padding {
            node.input("seq_len_kv")
        } else {
            None
        },
        dropout,
    })
}

fn lower_sdpa(g: &mut GraphBuilder, _: &Graph, node: &Node, version: usize) -> Result<()> {
    for p in ["rng_dump", "score_max", "score_sum_exp"] {
        if node.output(p).is_some() {
            return Err(decline(
                node,
                format!("output `{p}` is not lowered by this build"),
            ));
        }
    }
    let implementation = match node.attr_str("implementation").as_deref() {
        Some("COMPOSITE") => SdpaImplementation::Composite,
        Some("UNIFIED") => SdpaImplementation::Unified,
        _ => SdpaImplementation::Auto,
    };
    let r = SdpaForwardRequest {
        q: port(node, "q")?,
        k: port(node, "k")?,
        v: port(node, "v")?,
        o: port(node, "O")?,
        stats: node.output("Stats"),
        options: score_options(node)?,
        implementation,
    };
    sdpa_forward(g, &r, version)
        .map(|_| ())
        .map_err(|e| match e {
            Error::InvalidGraph { rule, .. } => decline(node, rule),
            other => other,
        })
}

fn lower_sdpa_bwd(g: &mut GraphBuilder, _: &Graph, node: &Node, version: usize) -> Result<()> {
    if node.output("rng_dump").is_some() || node.output("dSink_token").is_some() {
        return Err(decline(
            node,
            "rng_dump / dSink outputs are not lowered by this build",
        ));
    }
    let r = SdpaBackwardRequest {
        q: port(node, "q")?,
        k: port(node, "k")?,
        v: port(node, "v")?,
        o: port(node, "o")?,
        d_o: port(node, "dO")?,
        stats: port(node, "stats")?,
        dq: port(node, "dQ")?,
        dk: port(node, "dK")?,
        dv: port(node, "dV")?,
        dbias: node.output("dBias"),
        options: score_options(node)?,
        deterministic: node.attr_bool("use_deterministic_algorithm"),
    };
    sdpa_backward(g, &r, version)
}
