//! `Request::from_sdpa_node`: an SDPA graph built with the IR becomes the selector request that
//! dispatch's `explain` evaluates, with the same verdicts as the equivalent hand-written request.

#[path = "support/ir.rs"]
mod ir_support;

use dnnplan::ir::{DataType, Graph, GraphContext, NodeBuilder, Tensor};
use dnnplan::select::{
    BiasShape, BiasType, CudnnVer, Dtype, Environment, Layout, Mask, Request, SoftmaxType, evaluate,
};
use ir_support::{add, op, tensor};

/// `[b, h, s, d]` dims with BSHD strides.
fn bshd(name: &str, b: i64, h: i64, s: i64, d: i64, dt: DataType) -> Tensor {
    Tensor::new(name, &[b, h, s, d], dt).with_strides(&[s * h * d, d, h * d, 1])
}

struct Built {
    graph: Graph,
    node: usize,
}

fn sdpa(op: &str, f: impl FnOnce(&mut Graph, NodeBuilder) -> NodeBuilder, q_dt: DataType) -> Built {
    let mut g = Graph::new(GraphContext::new(
        DataType::Half,
        DataType::Float,
        DataType::Float,
    ));
    let q = g.add_tensor(bshd("q", 2, 32, 4096, 128, q_dt)).unwrap();
    let k = g.add_tensor(bshd("k", 2, 8, 4096, 128, q_dt)).unwrap();
    let v = g.add_tensor(bshd("v", 2, 8, 4096, 128, q_dt)).unwrap();
    let b = NodeBuilder::by_name(op)
        .unwrap()
        .input("q", q)
        .input("k", k)
        .input("v", v);
    let b = f(&mut g, b);
    let node = g.add_node(b).unwrap();
    Built { graph: g, node }
}

fn request(b: &Built) -> Request {
    Request::from_sdpa_node(&b.graph, &b.graph.nodes()[b.node]).unwrap()
}

fn env(cudnn: &str) -> Environment {
    Environment::new(90, CudnnVer::parse(cudnn))
}

#[test]
fn causal_training_forward() {
    let b = sdpa(
        "sdpa",
        |_, n| n.bool("generate_stats", true).bool("use_causal_mask", true),
        DataType::Bfloat16,
    );
    let r = request(&b);
    assert_eq!(r.q_dtype, Dtype::Bf16);
    assert_eq!(r.layout, Layout::BshdBshdBshd);
    assert_eq!(r.mask, Mask::Causal);
    assert!(r.training);
    assert_eq!(
        (r.b, r.h_q, r.h_kv, r.s_q, r.s_kv, r.d_qk, r.d_v),
        (2, 32, 8, 4096, 4096, 128, 128)
    );
    let v = evaluate(&r, &env("9.8.0")).unwrap();
    assert!(v.f16().eligible, "{:?}", v.f16().rejections);
    // Same verdict as the hand-written request of spec row 1.
    let mut hand = Request::new(2, 32, 8, 4096, 4096, 128, 128);
    hand.mask = Mask::Causal;
    hand.training = true;
    assert_eq!(
        evaluate(&hand, &env("9.10.1")).unwrap().f16().rule_ids(),
        evaluate(&r, &env("9.10.1")).unwrap().f16().rule_ids()
    );
}

#[test]
fn padding_bias_window_sink_and_bottom_right() {
    let b = sdpa(
        "sdpa",
        |g, n| {
            let bias = tensor(g, "bias", &[1, 32, 4096, 4096], DataType::Half);
            let sink = tensor(g, "sink", &[1, 32, 1, 1], DataType::Float);
            let sq = tensor(g, "sq", &[2, 1, 1, 1], DataType::Int32);
            let skv = tensor(g, "skv", &[2, 1, 1, 1], DataType::Int32);
            n.bool("is_inference", true)
                .bool("use_padding_mask", true)
                .input("seq_len_q", sq)
                .input("seq_len_kv", skv)
                .input("bias", bias)
                .input("sink_token", sink)
                .int("diagonal_band_left_bound", 129)
                .float("dropout_0", 0.0)
        },
        DataType::Half,
    );
    let r = request(&b);
    assert_eq!(r.mask, Mask::Padding);
    assert_eq!(r.bias, BiasType::PostScaleBias);
    assert_eq!(r.bias_shape, BiasShape::OneHss);
    assert_eq!(r.softmax, SoftmaxType::Learnable);
    // A left bound alone: the right side is unbounded, spelled s_kv for TE.
    assert_eq!(r.window, Some((128, 4096)));
    assert!(!r.training);
    // Post-scale bias with a padding mask: TE's F16.BIAS_PADDING.
    let v = evaluate(&r, &env("9.19.0")).unwrap();
    assert!(
        v.f16().rejected_by("F16.BIAS_PADDING").is_some(),
        "{:?}",
        v.f16().rule_ids()
    );

    let br = sdpa(
        "sdpa",
        |_, n| {
            n.bool("generate_stats", true)
                .bool("use_causal_mask_bottom_right", true)
        },
        DataType::Half,
    );
    assert_eq!(request(&br).mask, Mask::CausalBottomRight);
}

#[test]
fn backward_fp8_and_layouts() {
    let b = sdpa(
        "sdpa_backward",
        |g, n| {
            let o = g
                .add_tensor(bshd("o", 2, 32, 4096, 128, DataType::Half))
                .unwrap();
            let d_o = g
                .add_tensor(bshd("dO", 2, 32, 4096, 128, DataType::Half))
                .unwrap();
            let st = tensor(g, "stats", &[2, 32, 4096, 1], DataType::Float);
            n.input("o", o)
                .input("dO", d_o)
                .input("stats", st)
                .bool("use_causal_mask", true)
                .bool("use_deterministic_algorithm", true)
        },
        DataType::Half,
    );
    let r = request(&b);
    assert!(r.training && r.deterministic);
    assert_eq!(r.q_dtype, Dtype::Fp16);

    let f = sdpa(
        "sdpa_fp8",
        |g, mut n| {
            for p in ["descale_q", "descale_k", "descale_v"] {
                let t = tensor(g, p, &[1, 1, 1, 1], DataType::Float);
                n = n.input(p, t);
            }
            n.bool("generate_stats", true).bool("use_causal_mask", true)
        },
        DataType::Fp8E4m3,
    );
    let r = request(&f);
    assert_eq!(r.q_dtype, Dtype::Fp8E4m3);
    let v = evaluate(&r, &env("9.8.0")).unwrap();
    assert!(v.fp8().eligible, "{:?}", v.fp8().rejections);

    // Row-major [b, h, s, d] strides are BHSD.
    let mut g = Graph::new(GraphContext::new(
        DataType::Half,
        DataType::Float,
        DataType::Float,
    ));
    let q = tensor(&mut g, "q", &[1, 8, 256, 64], DataType::Half);
    let k = tensor(&mut g, "k", &[1, 8, 256, 64], DataType::Half);
    let v = tensor(&mut g, "v", &[1, 8, 256, 64], DataType::Half);
    let n = add(
        &mut g,
        op("sdpa")
            .input("q", q)
            .input("k", k)
            .input("v", v)
            .bool("is_inference", true),
    );
    let r = Request::from_sdpa_node(&g, &g.nodes()[n]).unwrap();
    assert_eq!(r.layout, Layout::BhsdBhsdBhsd);
}

#[test]
fn evaluate_graph_covers_every_sdpa_node() {
    let b = sdpa(
        "sdpa",
        |_, n| n.bool("generate_stats", true).bool("use_causal_mask", true),
        DataType::Bfloat16,
    );
    let all = dnnplan::select::evaluate_graph(&b.graph, &env("9.10.1")).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].0, b.graph.nodes()[b.node].name);
    assert_eq!(all[0].1.f16().rule_ids(), vec!["F16.BADVER"]);
}

#[test]
fn non_sdpa_node_is_an_error() {
    let mut g = Graph::new(GraphContext::new(
        DataType::Half,
        DataType::Float,
        DataType::Float,
    ));
    let a = tensor(&mut g, "a", &[1, 4, 4], DataType::Half);
    let b = tensor(&mut g, "b", &[1, 4, 4], DataType::Half);
    let n = add(&mut g, op("matmul").input("A", a).input("B", b));
    let err = Request::from_sdpa_node(&g, &g.nodes()[n]).unwrap_err();
    assert!(err.to_string().contains("not an SDPA-family op"), "{err}");
}
