//! IR -> backend lowering checks on the CPU: real validated IR graphs lowered through
//! `cudnn::lower::from_ir` and emitted against the recording backend; declines for what the
//! lowering cannot express; the provider without cuDNN.

#[path = "cudnn_support/backend_graphs.rs"]
mod backend_graphs;
#[path = "support/ir.rs"]
mod ir_support;
mod support;

use backend_graphs::{attribute_names, first_has, recorder};
use dnnplan::cudnn::backend::{AttrValue as BAttr, Recorded, Recorder};
use dnnplan::cudnn::consts::*;
use dnnplan::cudnn::emit::emit;
use dnnplan::cudnn::lower::from_ir::lower_graph;
use dnnplan::ir::tensor::{ScalarValue, Tensor};
use dnnplan::ir::{AttrValue, DataType, Graph, GraphContext};
use ir_support::{add, add_tensor, op, output, tensor};

fn ctx() -> GraphContext {
    GraphContext::new(DataType::Bfloat16, DataType::Float, DataType::Float)
}

fn op_kinds(rec: &Recorder) -> Vec<String> {
    rec.calls()
        .into_iter()
        .filter_map(|c| match c {
            Recorded::Create(_, t)
                if t != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR
                    && DESCRIPTOR_TYPE
                        .iter()
                        .any(|(n, v)| *v == t && n.starts_with("CUDNN_BACKEND_OPERATION_")) =>
            {
                DESCRIPTOR_TYPE.iter().find(|(_, v)| *v == t).map(|(n, _)| {
                    n.trim_start_matches("CUDNN_BACKEND_OPERATION_")
                        .trim_end_matches("_DESCRIPTOR")
                        .to_string()
                })
            }
            _ => None,
        })
        .collect()
}

fn pointwise_modes(rec: &Recorder) -> Vec<u32> {
    rec.calls()
        .into_iter()
        .filter_map(|c| match c {
            Recorded::Set(_, CUDNN_ATTR_POINTWISE_MODE, BAttr::Enum(_, m)) => Some(m),
            _ => None,
        })
        .collect()
}

fn emit_recorded(g: &Graph) -> (&'static Recorder, dnnplan::cudnn::graph::BackendGraph) {
    let bg = lower_graph(g, 91900).expect("lowering");
    let rec = recorder();
    emit(rec, bg.clone(), None).expect("emit");
    (rec, bg)
}

#[test]
fn matmul_bias_relu_chain_from_ir() {
    let mut g = Graph::new(ctx());
    let a = tensor(&mut g, "a", &[1, 64, 32], DataType::Bfloat16);
    let b = tensor(&mut g, "b", &[1, 32, 16], DataType::Bfloat16);
    let bias = tensor(&mut g, "bias", &[1, 1, 16], DataType::Bfloat16);
    let n = add(&mut g, op("matmul").input("A", a).input("B", b));
    let c = output(&g, n, "C");
    let n = add(&mut g, op("bias").input("input", c).input("bias", bias));
    let s = output(&g, n, "OUT_0");
    let n = add(&mut g, op("relu").input("input", s));
    let y = output(&g, n, "OUT_0");
    g.set_output(y, true).unwrap();
    g.validate().unwrap();
    let (rec, bg) = emit_recorded(&g);
    assert_eq!(op_kinds(rec), ["MATMUL", "POINTWISE", "POINTWISE"]);
    assert_eq!(
        pointwise_modes(rec),
        [CUDNN_POINTWISE_ADD, CUDNN_POINTWISE_RELU_FWD]
    );
    assert_eq!(bg.user_uids(), {
        let mut v = vec![a, b, bias, y];
        v.sort_unstable();
        v
    });
    assert!(bg.tensors[&c].is_virtual && bg.tensors[&s].is_virtual);
}

/// Adds bf16 Q, K and V tensors of the same [b, h, s, d] dims.
fn bf16_qkv(g: &mut Graph, dims: [i64; 4]) -> (i64, i64, i64) {
    let mut t = |name: &str| tensor(g, name, &dims, DataType::Bfloat16);
    (t("q"), t("k"), t("v"))
}

#[test]
fn sdpa_causal_with_stats_from_ir_is_the_composite() {
    let mut g = Graph::new(ctx());
    let (q, k, v) = bf16_qkv(&mut g, [2, 4, 128, 64]);
    let n = add(
        &mut g,
        op("sdpa")
            .input("q", q)
            .input("k", k)
            .input("v", v)
            .attr("attn_scale", AttrValue::Float(0.125))
            .attr("use_causal_mask", AttrValue::Bool(true))
            .attr("generate_stats", AttrValue::Bool(true)),
    );
    let node = g.nodes()[n].clone();
    let (o, stats) = (node.output("O").unwrap(), node.output("Stats").unwrap());
    g.set_output(o, true).unwrap();
    g.set_output(stats, true).unwrap();
    g.validate().unwrap();
    let (rec, bg) = emit_recorded(&g);
    let kinds = op_kinds(rec);
    assert_eq!(kinds.first().map(String::as_str), Some("MATMUL"));
    assert_eq!(kinds.last().map(String::as_str), Some("MATMUL"));
    assert_eq!(
        kinds.iter().filter(|k| *k == "REDUCTION").count(),
        2,
        "{kinds:?}"
    );
    let modes = pointwise_modes(rec);
    assert!(
        modes.contains(&CUDNN_POINTWISE_CMP_GE) && modes.contains(&CUDNN_POINTWISE_BINARY_SELECT)
    );
    // K is lowered as Kᵀ.
    assert_eq!(bg.tensors[&k].dims, vec![2, 4, 64, 128]);
    let mut want = vec![q, k, v, o, stats];
    want.sort_unstable();
    assert_eq!(bg.user_uids(), want);
}

#[test]
fn intermediates_past_64_bits_decline_naming_the_tensor() {
    // GQA with 2^53 query tokens: q fits in 64 bits (2^62 elements), the composite's full-head
    // intermediates [b, h_q, s_q, s_kv] do not: the lowering declines instead of overflowing
    // (found by tests/json_robustness.rs).
    let mut g = Graph::new(ctx());
    let q = tensor(&mut g, "q", &[2, 4, 1 << 53, 64], DataType::Bfloat16);
    let k = tensor(&mut g, "k", &[2, 2, 256, 64], DataType::Bfloat16);
    let v = tensor(&mut g, "v", &[2, 2, 256, 64], DataType::Bfloat16);
    let n = add(
        &mut g,
        op("sdpa")
            .input("q", q)
            .input("k", k)
            .input("v", v)
            .attr("attn_scale", AttrValue::Float(0.125))
            .attr("generate_stats", AttrValue::Bool(true)),
    );
    let node = g.nodes()[n].clone();
    for port in ["O", "Stats"] {
        g.set_output(node.output(port).unwrap(), true).unwrap();
    }
    g.validate().expect("every IR tensor fits");
    // cuDNN 9.0: the composite lowering (no dedicated SDPA operation).
    let e = lower_graph(&g, 90_000).unwrap_err().to_string();
    assert!(e.contains("does not fit in 64 bits"), "{e}");
}

#[test]
fn layernorm_training_from_ir() {
    let mut g = Graph::new(ctx());
    let x = tensor(&mut g, "x", &[32, 256, 1, 1], DataType::Bfloat16);
    let scale = tensor(&mut g, "scale", &[1, 256, 1, 1], DataType::Float);
    let bias = tensor(&mut g, "bias", &[1, 256, 1, 1], DataType::Float);
    let eps = add_tensor(&mut g, Tensor::scalar("eps", ScalarValue::Float(1e-5)));
    let n = add(
        &mut g,
        op("layernorm")
            .input("input", x)
            .input("scale", scale)
            .input("bias", bias)
            .input("epsilon", eps)
            .attr("norm_forward_phase", AttrValue::Str("TRAINING".into())),
    );
    let node = g.nodes()[n].clone();
    for p in ["Y", "mean", "inv_var"] {
        g.set_output(node.output(p).unwrap(), true).unwrap();
    }
    g.validate().unwrap();
    let (rec, bg) = emit_recorded(&g);
    assert_eq!(op_kinds(rec), ["NORM_FORWARD"]);
    assert!(bg.tensors[&eps].by_value.is_some());
    assert!(
        !bg.user_uids().contains(&eps),
        "by-value epsilon is pre-filled, not a caller pointer"
    );
    assert!(first_has(
        &rec.calls(),
        CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR,
        CUDNN_ATTR_OPERATION_NORM_FWD_PHASE,
        BAttr::Enum(CUDNN_TYPE_NORM_FWD_PHASE, CUDNN_NORM_FWD_TRAINING)
    ));
}

#[test]
fn unsupported_features_decline_naming_the_node() {
    let mut g = Graph::new(ctx());
    let (q, k, v) = bf16_qkv(&mut g, [1, 2, 64, 64]);
    let n = add(
        &mut g,
        op("sdpa")
            .name("attn")
            .input("q", q)
            .input("k", k)
            .input("v", v)
            .attr("use_alibi_mask", AttrValue::Bool(true))
            .attr("use_causal_mask", AttrValue::Bool(true))
            .attr("generate_stats", AttrValue::Bool(false)),
    );
    let o = output(&g, n, "O");
    g.set_output(o, true).unwrap();
    g.validate().unwrap();
    let e = lower_graph(&g, 91900).unwrap_err();
    assert_eq!(e.status(), dnnplan::Status::NotSupported);
    let text = e.to_string();
    assert!(
        text.contains("cudnn_backend") && text.contains("`attn`") && text.contains("ALiBi"),
        "{text}"
    );
}

#[cfg(not(feature = "gpu-tests"))]
#[test]
fn provider_without_cudnn_declines_with_the_loader_reason() {
    use dnnplan::dispatch::target::Target;
    use std::sync::Arc;
    let p = dnnplan::cudnn::provider::provider();
    if dnnplan::cudnn::loader::library().is_ok() {
        return;
    }
    let mut g = Graph::new(ctx());
    let a = tensor(&mut g, "a", &[2, 3], DataType::Bfloat16);
    let n = add(&mut g, op("exp").input("input", a));
    let y = output(&g, n, "OUT_0");
    g.set_output(y, true).unwrap();
    g.validate().unwrap();
    g.freeze().unwrap();
    let e = p
        .lower(&Arc::new(g), &Target::no_device("test"))
        .err()
        .expect("declines");
    let text = e.to_string();
    assert!(text.contains("libcudnn.so.9"), "{text}");
    assert_eq!(e.status(), dnnplan::Status::NotSupported);
}

#[test]
fn standalone_softmax_is_unified_from_9_21_and_declined_before() {
    let mut g = Graph::new(ctx());
    let x = tensor(&mut g, "scores", &[2, 4, 64, 128], DataType::Float);
    let n = add(
        &mut g,
        op("softmax")
            .name("sm")
            .input("input", x)
            .attr("use_stats", AttrValue::Bool(true)),
    );
    let node = g.nodes()[n].clone();
    let (y, stats) = (node.output("OUT_0").unwrap(), node.output("Stats").unwrap());
    g.set_output(y, true).unwrap();
    g.set_output(stats, true).unwrap();
    g.validate().unwrap();
    let e = lower_graph(&g, 91900).unwrap_err().to_string();
    assert!(
        e.contains("`sm`") && e.contains("9.21.0") && e.contains("9.19.0"),
        "{e}"
    );
    let bg = lower_graph(&g, 92100).unwrap();
    let rec = recorder();
    emit(rec, bg, None).unwrap();
    assert_eq!(op_kinds(rec), ["SOFTMAX"]);
    let names = attribute_names(rec);
    for a in [
        CUDNN_ATTR_OPERATION_SOFTMAX_XDESC,
        CUDNN_ATTR_OPERATION_SOFTMAX_YDESC,
        CUDNN_ATTR_OPERATION_SOFTMAX_STATS_DESC,
    ] {
        assert!(names.contains(&a));
    }
}

fn outputs_of(g: &mut Graph, n: usize) {
    let node = g.nodes()[n].clone();
    for uid in node.outputs.values() {
        g.set_output(*uid, true).unwrap();
    }
}

#[test]
fn norm_backward_conv_reduction_and_sdpa_backward_from_ir() {
    // layernorm_backward
    let mut g = Graph::new(ctx());
    let dy = tensor(&mut g, "dy", &[32, 256, 1, 1], DataType::Bfloat16);
    let x = tensor(&mut g, "x", &[32, 256, 1, 1], DataType::Bfloat16);
    let scale = tensor(&mut g, "scale", &[1, 256, 1, 1], DataType::Float);
    let mean = tensor(&mut g, "mean", &[32, 1, 1, 1], DataType::Float);
    let inv = tensor(&mut g, "inv", &[32, 1, 1, 1], DataType::Float);
    let n = add(
        &mut g,
        op("layernorm_backward")
            .input("grad", dy)
            .input("input", x)
            .input("scale", scale)
            .input("mean", mean)
            .input("inv_variance", inv),
    );
    outputs_of(&mut g, n);
    g.validate().unwrap();
    let (rec, bg) = emit_recorded(&g);
    assert_eq!(op_kinds(rec), ["NORM_BACKWARD"]);
    assert_eq!(bg.user_uids().len(), 5 + g.nodes()[0].outputs.len());

    // conv_fprop, NHWC strides
    let mut g = Graph::new(ctx());
    let img = g
        .add_tensor(
            Tensor::new("img", &[8, 64, 16, 16], DataType::Bfloat16)
                .with_strides(&[16384, 1, 1024, 64]),
        )
        .unwrap();
    let w = g
        .add_tensor(
            Tensor::new("w", &[32, 64, 3, 3], DataType::Bfloat16).with_strides(&[576, 1, 192, 64]),
        )
        .unwrap();
    let n = add(
        &mut g,
        op("conv_fprop")
            .input("image", img)
            .input("weight", w)
            .attr("padding", AttrValue::Ints(vec![1, 1])),
    );
    outputs_of(&mut g, n);
    g.validate().unwrap();
    let (rec, _) = emit_recorded(&g);
    assert_eq!(op_kinds(rec), ["CONVOLUTION_FORWARD"]);
    assert!(first_has(
        &rec.calls(),
        CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR,
        CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
        BAttr::Int64(vec![1, 1])
    ));

    // reduction
    let mut g = Graph::new(ctx());
    let x = tensor(&mut g, "x", &[4, 8, 16], DataType::Float);
    let n = add(
        &mut g,
        op("reduction")
            .input("input", x)
            .attr("mode", AttrValue::Str("MAX".into())),
    );
    let out = output(&g, n, "OUT_0");
    g.set_dims(out, &[4, 8, 1]).unwrap();
    g.set_output(out, true).unwrap();
    g.validate().unwrap();
    let (rec, _) = emit_recorded(&g);
    assert_eq!(op_kinds(rec), ["REDUCTION"]);
    assert!(rec.calls().iter().any(|c| matches!(
        c,
        Recorded::Set(
            _,
            CUDNN_ATTR_REDUCTION_OPERATOR,
            BAttr::Enum(_, CUDNN_REDUCE_TENSOR_MAX)
        )
    )));

    // sdpa_backward, causal
    let mut g = Graph::new(ctx());
    let t = |g: &mut Graph, name: &str, last: i64, dt| tensor(g, name, &[1, 2, 64, last], dt);
    let (q, k, v, o, d_o) = (
        t(&mut g, "q", 64, DataType::Bfloat16),
        t(&mut g, "k", 64, DataType::Bfloat16),
        t(&mut g, "v", 64, DataType::Bfloat16),
        t(&mut g, "o", 64, DataType::Bfloat16),
        t(&mut g, "dO", 64, DataType::Bfloat16),
    );
    let stats = t(&mut g, "stats", 1, DataType::Float);
    let n = add(
        &mut g,
        op("sdpa_backward")
            .input("q", q)
            .input("k", k)
            .input("v", v)
            .input("o", o)
            .input("dO", d_o)
            .input("stats", stats)
            .attr("attn_scale", AttrValue::Float(0.125))
            .attr("use_causal_mask", AttrValue::Bool(true)),
    );
    outputs_of(&mut g, n);
    g.validate().unwrap();
    let (rec, bg) = emit_recorded(&g);
    let kinds = op_kinds(rec);
    assert_eq!(
        kinds.iter().filter(|k| *k == "MATMUL").count(),
        5,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| *k == "RESHAPE").count(),
        3,
        "{kinds:?}"
    );
    assert_eq!(bg.fe_workspace.len(), 2);
}

#[test]
fn every_shipped_example_graph_lowers_or_declines_with_a_reason() {
    // examples/graphs/ holds the project's reference graphs (from the IR); the backend lowers the
    // ones it serves and declines the linear-attention ones (python-only in the reference).
    // (support::repo: also where a test executable staged on the GPU machine finds them.)
    let dir = support::repo().join("examples/graphs");
    let mut seen = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for p in paths {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let mut g = Graph::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap();
        g.validate().unwrap();
        match lower_graph(&g, 91900) {
            Ok(bg) => {
                let rec = recorder();
                emit(rec, bg, None).unwrap_or_else(|e| panic!("{name}: {e}"));
                seen.push((name, op_kinds(rec).len()));
            }
            Err(e) => {
                assert_eq!(e.status(), dnnplan::Status::NotSupported, "{name}: {e}");
                assert!(name.starts_with("gdn"), "{name} should lower: {e}");
                seen.push((name, 0));
            }
        }
    }
    let lowered: Vec<&str> = seen
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(
        lowered,
        [
            "layernorm",
            "matmul_bias_relu",
            "sdpa_backward",
            "sdpa_forward"
        ],
        "{seen:?}"
    );
}
