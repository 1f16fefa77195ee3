//! Unit tests of the IR: every op's example (inference, validation, JSON round trip), the
//! catalogue's coverage, uid rules, lifecycle, and a failing case per validity rule kind.

use super::examples::example;
use super::*;

fn ctx() -> GraphContext {
    GraphContext::new(DataType::Half, DataType::Float, DataType::Float)
}

fn out_dims(g: &Graph, node: usize, port: &str) -> Vec<i64> {
    let uid = g.nodes()[node]
        .output(port)
        .unwrap_or_else(|| panic!("output `{port}` missing"));
    g.tensor(uid).unwrap().dims.clone()
}

#[test]
fn catalogue_covers_the_reference_surface() {
    let names: Vec<&str> = OpKind::all().map(|k| k.name()).collect();
    let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "op names are unique");
    let count = |f: OpFamily| OpKind::all().filter(|k| k.family() == f).count();
    assert_eq!(count(OpFamily::Pointwise), 54);
    assert_eq!(count(OpFamily::Sdpa), 6);
    assert_eq!(count(OpFamily::LinearAttention), 20);
    for must in [
        "layernorm",
        "layernorm_backward",
        "rmsnorm",
        "rmsnorm_backward",
        "batchnorm",
        "batchnorm_inference",
        "batchnorm_backward",
        "instancenorm",
        "instancenorm_backward",
        "adalayernorm",
        "adalayernorm_backward",
        "conv_fprop",
        "conv_dgrad",
        "conv_wgrad",
        "matmul",
        "matmul_fp8",
        "block_scale_quantize",
        "block_scale_dequantize",
        "moe_grouped_matmul",
        "moe_grouped_matmul_bwd",
        "slice",
        "concatenate",
        "reshape",
        "transpose",
        "rng",
        "genstats",
        "resample",
        "paged_cache_load",
        "rope",
        "rope_backward",
        "diagonal_band_mask",
        "softmax",
        "reduction",
        "sdpa",
        "sdpa_backward",
        "sdpa_fp8",
        "sdpa_fp8_backward",
        "sdpa_mxfp8",
        "sdpa_mxfp8_backward",
        "gdn",
        "gdn_bwd",
        "kda",
        "kda_bwd",
        "gdn2",
        "gdn2_bwd",
        "gdp",
        "gdp_bwd",
        "gdn_summary",
        "gdn_summary_bwd",
        "kda_summary",
        "kda_summary_bwd",
        "gdn2_summary",
        "gdn2_summary_bwd",
        "gdp_summary",
        "gdp_summary_bwd",
    ] {
        assert!(OpKind::from_name(must).is_some(), "missing op {must}");
    }
    // Pointwise modes: every builder maps to a PointwiseMode_t with a backend value; arities.
    let arity = |n: &str| OpKind::from_name(n).unwrap().spec().inputs.len();
    assert_eq!(arity("binary_select"), 3);
    assert_eq!(arity("logical_not"), 1);
    assert_eq!(arity("cmp_ge"), 2);
    assert_eq!(arity("swish_backward"), 2);
    for k in OpKind::all().filter(|k| k.family() == OpFamily::Pointwise) {
        let mode = k.spec().pointwise_mode.unwrap();
        assert!(tables::pointwise_backend_value(mode).is_some(), "{mode}");
    }
    assert_eq!(tables::POINTWISE_MODES.len(), 50);
    assert_eq!(tables::pointwise_backend_value("BINARY_SELECT"), Some(601));
    // Every linear-attention op is python-only; every other op lowers.
    for k in OpKind::all() {
        assert_eq!(
            k.spec().backend_lowering,
            k.family() != OpFamily::LinearAttention,
            "{k}"
        );
    }
}

#[test]
fn every_op_example_infers_the_expected_dims_and_validates() {
    for k in OpKind::all() {
        let mut ex = example(k.name()).unwrap_or_else(|e| panic!("{k}: {e}"));
        ex.graph
            .validate()
            .unwrap_or_else(|e| panic!("example of `{k}` must validate: {e}"));
        for (port, dims) in &ex.expect {
            assert_eq!(
                &out_dims(&ex.graph, ex.node, port),
                dims,
                "op `{k}` output `{port}`"
            );
        }
        for t in ex.graph.tensors() {
            assert!(t.data_type.is_set(), "{k}: tensor {} dtype filled", t.name);
        }
    }
}

#[test]
fn every_op_round_trips_through_json() {
    for k in OpKind::all() {
        let mut ex = example(k.name()).unwrap();
        for validated in [false, true] {
            if validated {
                ex.graph.validate().unwrap();
            }
            let text = ex.graph.to_json();
            let back = Graph::from_json(&text).unwrap_or_else(|e| panic!("{k}: {e}\n{text}"));
            assert_eq!(back.to_json(), text, "{k}: lossless");
            assert_eq!(back.key(), ex.graph.key(), "{k}: key stable");
            assert_eq!(back.nodes(), ex.graph.nodes());
            assert_eq!(back.tensors_by_uid(), ex.graph.tensors_by_uid());
        }
    }
}

#[test]
fn json_carries_schema_version_and_refuses_newer_ones() {
    let g = example("matmul").unwrap().graph;
    let mut v = g.to_json_value();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["format"], "dnnplan.graph");
    v["schema_version"] = serde_json::json!(99);
    let err = Graph::from_json_value(v).unwrap_err().to_string();
    assert!(err.contains("schema_version 99"), "{err}");
}

#[test]
fn key_changes_with_content_and_ignores_dims_under_dynamic_shapes() {
    let a = example("matmul").unwrap().graph;
    let mut b = example("matmul").unwrap().graph;
    assert_eq!(a.key(), b.key());
    assert_eq!(a.key_hex().len(), 64);
    b.set_dims(1, &[2, 8, 17]).unwrap();
    assert_ne!(a.key(), b.key());
    let mut c = a.clone();
    let mut d = b.clone();
    let mut dyn_ctx = a.context().clone();
    dyn_ctx.is_dynamic_shape_enabled = true;
    c.set_context(dyn_ctx.clone()).unwrap();
    d.set_context(dyn_ctx).unwrap();
    assert_eq!(c.key(), d.key());
}

#[test]
fn automatic_uids_start_at_one_and_user_uids_win() {
    let mut g = Graph::new(ctx());
    let a = g
        .add_tensor(Tensor::new("a", &[2, 2], DataType::Half))
        .unwrap();
    let b = g
        .add_tensor(Tensor::new("b", &[2, 2], DataType::Half))
        .unwrap();
    assert_eq!((a, b), (1, 2));
    let n = g
        .add_node(
            NodeBuilder::by_name("add")
                .unwrap()
                .input("a", a)
                .input("b", b),
        )
        .unwrap();
    let out = g.nodes()[n].output("OUT_0").unwrap();
    assert_eq!(out, 3);
    // A user uid equal to an automatic one: the automatic holder is renumbered, references follow.
    let c = g
        .add_tensor(Tensor::new("c", &[2, 2], DataType::Half).with_uid(1))
        .unwrap();
    assert_eq!(c, 1);
    assert_eq!(g.tensor(1).unwrap().name, "c");
    let a_new = g.tensor_by_name("a").unwrap().uid;
    assert_ne!(a_new, 1);
    assert_eq!(g.nodes()[n].input("a"), Some(a_new));
    // Two user uids colliding: an error naming both tensors.
    let err = g
        .add_tensor(Tensor::new("d", &[2, 2], DataType::Half).with_uid(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`d`") && err.contains("`c`"), "{err}");
    // set_uid: onto an automatic holder renumbers it; onto a user uid fails; same uid is a no-op.
    g.set_uid(out, 2).unwrap();
    assert_eq!(g.nodes()[n].output("OUT_0"), Some(2));
    assert!(g.tensor(2).unwrap().uid_assigned);
    assert!(g.tensor_by_name("b").unwrap().uid != 2);
    let err = g.set_uid(2, 1).unwrap_err().to_string();
    assert!(err.contains("already chosen"), "{err}");
    g.freeze().unwrap();
    g.set_uid(2, 2).unwrap();
    assert!(g.set_uid(2, 50).is_err());
    // Negative uids other than the automatic sentinel are rejected.
    let mut h = Graph::new(ctx());
    let mut t = Tensor::new("x", &[1], DataType::Half);
    t.uid_assigned = true;
    t.uid = -5;
    assert!(h.add_tensor(t).is_err());
}

#[test]
fn lifecycle_validate_invalidate_freeze_one_shot() {
    let mut g = example("matmul").unwrap().graph;
    assert_eq!(g.state(), GraphState::Mutable);
    g.validate().unwrap();
    assert!(g.is_validated());
    // A mutation after validate invalidates it.
    g.set_output(3, true).unwrap();
    assert!(!g.is_validated());
    g.begin_planning().unwrap();
    assert!(g.is_frozen());
    // One-shot planning and frozen mutations.
    let err = g.freeze().unwrap_err();
    assert!(matches!(err, crate::Error::InvalidState(_)));
    assert!(err.to_string().contains(FROZEN_MESSAGE));
    for e in [
        g.add_tensor(Tensor::new("z", &[1], DataType::Half))
            .unwrap_err(),
        g.set_dims(1, &[1, 1]).unwrap_err(),
        g.set_data_types(DataType::Float, DataType::Float, DataType::Float)
            .unwrap_err(),
        g.set_attr(0, "padding", AttrValue::Float(1.0)).unwrap_err(),
        g.add_node(NodeBuilder::by_name("relu").unwrap().input("input", 1))
            .unwrap_err(),
    ] {
        assert!(e.to_string().contains("frozen"), "{e}");
    }
    g.validate().unwrap();
    // Re-planning goes through a mutable copy.
    let mut copy = g.mutable_copy();
    assert!(!copy.is_frozen() && !copy.is_validated());
    assert_eq!(copy.key(), g.key());
    copy.begin_planning().unwrap();
}

#[test]
fn dtype_fill_follows_the_context() {
    let mut g = Graph::new(GraphContext::new(
        DataType::Bfloat16,
        DataType::NotSet,
        DataType::NotSet,
    ));
    let a = g
        .add_tensor(Tensor::new("a", &[4, 8], DataType::NotSet))
        .unwrap();
    let b = g
        .add_tensor(Tensor::new("b", &[8, 2], DataType::Bfloat16))
        .unwrap();
    let n = g
        .add_node(
            NodeBuilder::by_name("matmul")
                .unwrap()
                .input("A", a)
                .input("B", b),
        )
        .unwrap();
    let r = g
        .add_node(
            NodeBuilder::by_name("relu")
                .unwrap()
                .input("input", g.nodes()[n].output("C").unwrap()),
        )
        .unwrap();
    let y = g.nodes()[r].output("OUT_0").unwrap();
    g.set_output(y, true).unwrap();
    g.validate().unwrap();
    let c = g.nodes()[n].output("C").unwrap();
    assert_eq!(g.tensor(a).unwrap().data_type, DataType::Bfloat16, "io");
    assert_eq!(
        g.tensor(c).unwrap().data_type,
        DataType::Bfloat16,
        "virtual: intermediate = io"
    );
    assert_eq!(
        g.tensor(y).unwrap().data_type,
        DataType::Bfloat16,
        "output: io"
    );
    assert_eq!(
        g.nodes()[n].compute_data_type,
        DataType::Bfloat16,
        "compute = io"
    );
    // SDPA Stats is FP32 whatever the context says.
    let mut s = example("sdpa").unwrap();
    s.graph.validate().unwrap();
    let stats = s.graph.nodes()[s.node].output("Stats").unwrap();
    assert_eq!(s.graph.tensor(stats).unwrap().data_type, DataType::Float);
    assert_eq!(s.graph.tensor(stats).unwrap().name, "sdpa.0::Stats");
}

#[test]
fn conditional_outputs_follow_attributes_and_inputs() {
    let ex = example("layernorm").unwrap();
    let mut g = Graph::new(ctx());
    let x = g
        .add_tensor(Tensor::new("x", &[4, 32, 1, 1], DataType::Half))
        .unwrap();
    let s = g
        .add_tensor(Tensor::new("s", &[1, 32, 1, 1], DataType::Float))
        .unwrap();
    let e = g
        .add_tensor(Tensor::scalar("eps", ScalarValue::Float(1e-5)))
        .unwrap();
    let n = g
        .add_node(
            NodeBuilder::by_name("layernorm")
                .unwrap()
                .input("input", x)
                .input("scale", s)
                .input("epsilon", e)
                .str("norm_forward_phase", "INFERENCE"),
        )
        .unwrap();
    assert!(g.nodes()[n].output("mean").is_none());
    assert!(ex.graph.nodes()[ex.node].output("mean").is_some());
    assert_eq!(
        ex.graph
            .tensor(ex.graph.nodes()[ex.node].output("inv_var").unwrap())
            .unwrap()
            .name,
        "layernorm.0::INV_VARIANCE"
    );
    // sdpa: is_inference = true means no Stats.
    let mut g = example("sdpa").unwrap().graph;
    let node = &g.nodes()[0];
    assert!(node.output("Stats").is_some());
    let gb = NodeBuilder::by_name("sdpa")
        .unwrap()
        .input("q", node.input("q").unwrap())
        .input("k", node.input("k").unwrap())
        .input("v", node.input("v").unwrap())
        .bool("is_inference", true);
    let n2 = g.add_node(gb).unwrap();
    assert!(g.nodes()[n2].output("Stats").is_none());
    assert!(g.nodes()[n2].output("O").is_some());
    // gdn_bwd: parameter gradients iff the parameter is given.
    let ex = example("gdn_bwd").unwrap();
    let node = &ex.graph.nodes()[ex.node];
    assert!(node.output("d_initial_state").is_some());
    assert!(node.output("d_a_log").is_none());
}

#[test]
fn python_only_nodes_are_reported() {
    assert!(example("gdn").unwrap().graph.has_python_only_ops());
    let mut g = example("sdpa").unwrap().graph;
    assert!(!g.has_python_only_ops());
    g.set_attr(0, "softmax_precision", AttrValue::Str("FLOAT".into()))
        .unwrap();
    assert!(g.has_python_only_ops());
}

/// Applies `mutate` to an op's example and expects validation to fail naming `port` with a
/// message containing `needle`.
fn expect_rule(op: &str, mutate: impl FnOnce(&mut Graph, usize), port: Option<&str>, needle: &str) {
    let mut ex = example(op).unwrap();
    mutate(&mut ex.graph, ex.node);
    let err = ex
        .graph
        .validate()
        .expect_err(&format!("{op}: `{needle}` must fail"));
    match &err {
        crate::Error::InvalidGraph {
            node,
            port: p,
            rule,
        } => {
            assert_eq!(
                node,
                &ex.graph.nodes()[ex.node].name,
                "{op}: node named ({err})"
            );
            assert_eq!(p.as_deref(), port, "{op}: port named ({err})");
            assert!(
                rule.contains(needle),
                "{op}: message `{rule}` lacks `{needle}`"
            );
        }
        other => panic!("{op}: expected InvalidGraph, got {other}"),
    }
    assert!(!ex.graph.is_validated());
}

fn port_uid(g: &Graph, node: usize, port: &str) -> i64 {
    g.nodes()[node].port(port).unwrap()
}

fn set_attr(g: &mut Graph, n: usize, name: &str, v: AttrValue) {
    g.set_attr(n, name, v).unwrap();
}

#[test]
fn every_rule_kind_fails_with_node_port_and_message() {
    use AttrValue::*;
    // Required input.
    expect_rule(
        "matmul",
        |g, n| g.unbind_input(n, "B").unwrap(),
        Some("B"),
        "required input",
    );
    // Required attribute (Msg over Implies).
    expect_rule(
        "reduction",
        |g, n| g.clear_attr(n, "mode").unwrap(),
        Some("mode"),
        "attribute is required",
    );
    // Implies.
    expect_rule(
        "moe_grouped_matmul",
        |g, n| set_attr(g, n, "mode", Str("GATHER".into())),
        Some("token_index"),
        "requires",
    );
    // Excludes with the reference message.
    expect_rule(
        "sdpa",
        |g, n| set_attr(g, n, "use_causal_mask_bottom_right", Bool(true)),
        Some("use_causal_mask_bottom_right"),
        "mutually exclusive",
    );
    expect_rule(
        "sdpa",
        |g, n| {
            set_attr(g, n, "sliding_window_length", Int(16));
            set_attr(g, n, "diagonal_band_left_bound", Int(4));
        },
        Some("diagonal_band_left_bound"),
        "sliding window and left_bound cannot be set at the same time",
    );
    expect_rule(
        "sdpa",
        |g, n| set_attr(g, n, "diagonal_band_right_bound", Int(0)),
        Some("diagonal_band_right_bound"),
        "cannot both hold",
    );
    expect_rule(
        "sdpa",
        |g, n| {
            let s = g
                .add_tensor(Tensor::scalar("scale", ScalarValue::Float(0.1)))
                .unwrap();
            g.bind_input(n, "attn_scale", s).unwrap();
        },
        Some("attn_scale"),
        "both as a value and as a tensor",
    );
    // ExactlyOne.
    expect_rule(
        "sdpa",
        |g, n| set_attr(g, n, "is_inference", Bool(false)),
        Some("generate_stats"),
        "exactly one of",
    );
    // Padding needs lengths.
    expect_rule(
        "sdpa",
        |g, n| set_attr(g, n, "use_padding_mask", Bool(true)),
        Some("seq_len_q"),
        "requires",
    );
    // Dropout: p == 1 rejected; prob + mask rejected.
    expect_rule(
        "sdpa",
        |g, n| {
            let s = g
                .add_tensor(Tensor::new("seed", &[1, 1, 1, 1], DataType::Int64))
                .unwrap();
            let o = g
                .add_tensor(Tensor::new("off", &[1, 1, 1, 1], DataType::Int64))
                .unwrap();
            g.bind_input(n, "dropout_1", s).unwrap();
            g.bind_input(n, "dropout_2", o).unwrap();
            set_attr(g, n, "dropout_0", Float(1.0));
        },
        Some("dropout_0"),
        "dropout probability 1 is rejected",
    );
    // Rank.
    expect_rule(
        "sdpa",
        |g, n| {
            let q = port_uid(g, n, "q");
            g.set_dims(q, &[2, 4, 128]).unwrap();
        },
        Some("q"),
        "must have rank 4",
    );
    // RankIn.
    expect_rule(
        "conv_fprop",
        |g, n| {
            let x = port_uid(g, n, "image");
            g.set_dims(x, &[2, 8]).unwrap();
        },
        Some("Y"),
        "rank >= 3",
    );
    // DimEq.
    expect_rule(
        "sdpa",
        |g, n| {
            let k = port_uid(g, n, "k");
            g.set_dims(k, &[2, 2, 256, 32]).unwrap();
        },
        Some("k"),
        "must equal dim -1 of `q`",
    );
    // DimDivisible (GQA).
    expect_rule(
        "sdpa",
        |g, n| {
            for p in ["k", "v"] {
                let u = port_uid(g, n, p);
                g.set_dims(u, &[2, 3, 256, 64]).unwrap();
            }
        },
        Some("q"),
        "h_q must be a multiple of h_k",
    );
    // LastStrideOne.
    expect_rule(
        "sdpa",
        |g, n| {
            let q = port_uid(g, n, "q");
            g.set_strides(q, &[64, 1, 256, 2]).unwrap();
        },
        Some("q"),
        "innermost stride must be 1",
    );
    // DtypeIn.
    expect_rule(
        "gdn",
        |g, n| {
            let c = port_uid(g, n, "cu_seqlens");
            g.set_data_type(c, DataType::Float).unwrap();
        },
        Some("cu_seqlens"),
        "is not one of INT32, INT64",
    );
    expect_rule(
        "sdpa",
        |g, n| {
            let s = port_uid(g, n, "Stats");
            g.set_data_type(s, DataType::Half).unwrap();
        },
        Some("Stats"),
        "is not one of FLOAT",
    );
    // DtypeNot.
    expect_rule(
        "sdpa",
        |g, n| {
            let b = g
                .add_tensor(Tensor::new("bias", &[1, 1, 128, 256], DataType::Boolean))
                .unwrap();
            g.bind_input(n, "bias", b).unwrap();
        },
        Some("bias"),
        "BOOLEAN is not allowed",
    );
    // SameDtype.
    expect_rule(
        "gdn",
        |g, n| {
            let v = port_uid(g, n, "v");
            g.set_data_type(v, DataType::Half).unwrap();
        },
        Some("v"),
        "must equal that of `q`",
    );
    // AttrMin.
    expect_rule(
        "gdn_bwd",
        |g, n| set_attr(g, n, "checkpoint_every_n_tokens", Int(-1)),
        Some("checkpoint_every_n_tokens"),
        "must be >= 0",
    );
    expect_rule(
        "gdp",
        |g, n| set_attr(g, n, "num_householder", Int(0)),
        Some("num_householder"),
        "must be >= 1",
    );
    // ListLenIsRank.
    expect_rule(
        "transpose",
        |g, n| set_attr(g, n, "permutation", Ints(vec![1, 0])),
        Some("OUT_0"),
        "permutation must name every axis once",
    );
    // MatmulShapes.
    expect_rule(
        "matmul",
        |g, n| {
            let b = port_uid(g, n, "B");
            g.set_dims(b, &[1, 8, 32]).unwrap();
        },
        Some("B"),
        "inner dims differ",
    );
    // Broadcastable (inference reports it on the output).
    expect_rule(
        "add",
        |g, n| {
            let b = port_uid(g, n, "b");
            g.set_dims(b, &[1, 5, 1]).unwrap();
        },
        Some("OUT_0"),
        "do not broadcast",
    );
    // ConcatShapes.
    expect_rule(
        "concatenate",
        |g, n| {
            let c = port_uid(g, n, "inputs_1");
            g.set_dims(c, &[3, 5]).unwrap();
        },
        Some("inputs_1"),
        "must match inputs_0",
    );
    // OutputVirtual.
    expect_rule(
        "block_scale_dequantize",
        |g, n| {
            let o = port_uid(g, n, "OUT_0");
            g.set_output(o, true).unwrap();
        },
        Some("OUT_0"),
        "must stay virtual",
    );
    // SameElementCount.
    expect_rule(
        "reshape",
        |g, n| {
            let o = port_uid(g, n, "OUT_0");
            g.set_dims(o, &[5, 4]).unwrap();
        },
        Some("OUT_0"),
        "elements must equal",
    );
    // LaHeads.
    expect_rule(
        "gdn",
        |g, n| {
            let k = port_uid(g, n, "k");
            g.set_dims(k, &[64, 3, 32]).unwrap();
        },
        Some("k"),
        "heads of k (3)",
    );
    // LaRows.
    expect_rule(
        "gdp",
        |g, n| {
            let k = port_uid(g, n, "k");
            g.set_dims(k, &[64, 4, 32]).unwrap();
        },
        Some("k"),
        "expanded rows",
    );
    // LaGradPresence (presence mismatch: d_initial_state without initial_state).
    expect_rule(
        "gdn_bwd",
        |g, n| g.unbind_input(n, "initial_state").unwrap(),
        Some("d_initial_state"),
        "output exists only when input `initial_state` bound",
    );
    // Analyzer rules: a_log without safe_gate; linear + safe_gate; neg eigval without sigmoid; gate_lower_bound.
    expect_rule(
        "gdn",
        |g, n| {
            let a = g
                .add_tensor(Tensor::new("a_log", &[4], DataType::Float))
                .unwrap();
            g.bind_input(n, "a_log", a).unwrap();
        },
        Some("safe_gate"),
        "input `a_log` bound requires `safe_gate` true",
    );
    expect_rule(
        "gdn",
        |g, n| {
            set_attr(g, n, "safe_gate", Bool(true));
            set_attr(g, n, "gate_domain", Str("linear".into()));
        },
        Some("safe_gate"),
        "cannot both hold",
    );
    expect_rule(
        "kda",
        |g, n| set_attr(g, n, "gate_lower_bound", Float(-3.0)),
        Some("safe_gate"),
        "requires",
    );
    expect_rule(
        "gdn",
        |g, n| set_attr(g, n, "allow_neg_eigval", Bool(true)),
        Some("use_beta_sigmoid"),
        "requires",
    );
    expect_rule(
        "gdn_bwd",
        |g, n| g.unbind_input(n, "state_checkpoints").unwrap(),
        Some("state_checkpoints"),
        "requires input `state_checkpoints` bound",
    );
    expect_rule(
        "gdn2",
        |g, n| set_attr(g, n, "beta_guard", Bool(true)),
        Some("use_qk_l2norm"),
        "requires",
    );
    // Output presence: a required output removed is reported; conditional output inconsistent.
    expect_rule(
        "gdn",
        |g, n| set_attr(g, n, "output_final_state", Bool(false)),
        Some("final_state"),
        "output exists only when",
    );
    // Given dims missing (an output of a node with a `Given` shape rule left undeclared).
    let mut g = Graph::new(ctx());
    let x = g
        .add_tensor(Tensor::new("x", &[2, 3], DataType::Half))
        .unwrap();
    g.add_node(
        NodeBuilder::by_name("reduction")
            .unwrap()
            .input("input", x)
            .str("mode", "MAX"),
    )
    .unwrap();
    let e = g.validate().unwrap_err().to_string();
    assert!(
        e.contains("node `reduction.0`, port `OUT_0`: output dims cannot be inferred"),
        "{e}"
    );
    // Node order: reading a tensor produced by a later node.
    let mut g = Graph::new(ctx());
    let x = g
        .add_tensor(Tensor::new("x", &[2, 3], DataType::Half))
        .unwrap();
    let y = g
        .add_tensor(Tensor::new("y", &[2, 3], DataType::Half))
        .unwrap();
    g.add_node(NodeBuilder::by_name("exp").unwrap().input("input", y))
        .unwrap();
    g.add_node(
        NodeBuilder::by_name("exp")
            .unwrap()
            .input("input", x)
            .output("OUT_0", y),
    )
    .unwrap();
    let e = g.validate().unwrap_err().to_string();
    assert!(
        e.contains("node `exp.0`, port `input`") && e.contains("not earlier"),
        "{e}"
    );
    // Tensor validity (dims > 0).
    expect_rule(
        "matmul",
        |g, n| {
            let a = port_uid(g, n, "A");
            g.set_dims(a, &[2, 0, 16]).unwrap();
        },
        Some("A"),
        "every dim must be > 0",
    );
    // Geometry past 64 bits, refused on the input before shape inference multiplies it (a matmul
    // output [M, N] and a conv's padded extent would otherwise overflow).
    expect_rule(
        "matmul",
        |g, n| {
            let a = port_uid(g, n, "A");
            g.set_dims(a, &[2, 1 << 40, 1 << 30]).unwrap();
        },
        Some("A"),
        "the element count (the product of dims [2, 1099511627776, 1073741824]) must fit in 64 bits",
    );
    expect_rule(
        "conv_fprop",
        |g, n| {
            let x = port_uid(g, n, "image");
            let dims = g.tensor(x).unwrap().dims.clone();
            let mut strides = row_major_strides(&dims);
            (strides[0], strides[1]) = (i64::MAX / 2, i64::MAX / 4);
            g.set_strides(x, &strides).unwrap();
        },
        Some("image"),
        "the last element's offset",
    );
    // Attributes that overflow the conv's extent are an error, not a wrapped size.
    expect_rule(
        "conv_fprop",
        |g, n| set_attr(g, n, "padding", Ints(vec![i64::MAX, i64::MAX])),
        Some("Y"),
        "padding, dilation and sizes overflow 64 bits",
    );
}

#[test]
fn builder_errors_name_op_port_and_attribute() {
    let mut g = Graph::new(ctx());
    let a = g
        .add_tensor(Tensor::new("a", &[2, 2], DataType::Half))
        .unwrap();
    let e = g
        .add_node(NodeBuilder::by_name("relu").unwrap().input("x", a))
        .unwrap_err()
        .to_string();
    assert!(e.contains("has no input port `x`"), "{e}");
    let e = g
        .add_node(
            NodeBuilder::by_name("relu")
                .unwrap()
                .input("input", a)
                .float("alpha", 1.0),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("has no attribute `alpha`"), "{e}");
    let e = g
        .add_node(
            NodeBuilder::by_name("reduction")
                .unwrap()
                .input("input", a)
                .str("mode", "SUM"),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("`SUM` is not one of"), "{e}");
    let e = g
        .add_node(
            NodeBuilder::by_name("relu")
                .unwrap()
                .input("input", a)
                .str("lower_clip", "x"),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("expects float"), "{e}");
    let e = g
        .add_node(NodeBuilder::by_name("relu").unwrap().input("input", 99))
        .unwrap_err()
        .to_string();
    assert!(e.contains("uid 99 is not in this graph"), "{e}");
    assert!(NodeBuilder::by_name("nope").is_err());
    // Integer widening to float attributes.
    let n = g
        .add_node(
            NodeBuilder::by_name("relu")
                .unwrap()
                .input("input", a)
                .int("upper_clip", 6),
        )
        .unwrap();
    assert_eq!(
        g.nodes()[n].attr("upper_clip"),
        Some(&AttrValue::Float(6.0))
    );
    assert_eq!(
        g.nodes()[n].attr_float("lower_clip"),
        Some(0.0),
        "default from the table"
    );
}

#[test]
fn shape_inference_details() {
    // Pointwise copies the strides of the input with identical dims.
    let mut g = Graph::new(ctx());
    let a = g
        .add_tensor(Tensor::new("a", &[2, 3], DataType::Half).with_strides(&[1, 2]))
        .unwrap();
    let n = g
        .add_node(NodeBuilder::by_name("exp").unwrap().input("input", a))
        .unwrap();
    let o = g.nodes()[n].output("OUT_0").unwrap();
    assert_eq!(g.tensor(o).unwrap().strides, vec![1, 2]);
    // Slice scales strides by the step.
    let ex = example("slice").unwrap();
    let o = ex.graph.nodes()[ex.node].output("OUT_0").unwrap();
    assert_eq!(ex.graph.tensor(o).unwrap().strides, vec![8, 2]);
    // conv_fprop output strides are NHWC-ordered.
    let ex = example("conv_fprop").unwrap();
    let y = ex.graph.nodes()[ex.node].output("Y").unwrap();
    assert_eq!(
        ex.graph.tensor(y).unwrap().strides,
        vec![16 * 64, 1, 16 * 8, 16]
    );
    // Declared dims of an output are kept, and must be what the op produces.
    let mut ex = example("matmul").unwrap();
    let c = ex.graph.nodes()[ex.node].output("C").unwrap();
    ex.graph.set_dims(c, &[2, 8, 32]).unwrap();
    assert!(ex.graph.tensor(c).unwrap().dims_assigned);
    ex.graph.validate().unwrap();
    ex.graph.set_dims(c, &[2, 8, 31]).unwrap();
    let e = ex.graph.validate().unwrap_err().to_string();
    assert!(
        e.contains(
            "port `C`: declared dims [2, 8, 31] differ from the dims the op produces [2, 8, 32]"
        ),
        "{e}"
    );
}

#[test]
fn non_finite_floats_round_trip_through_json() {
    let mut ex = example("diagonal_band_mask").unwrap();
    ex.graph
        .set_attr(ex.node, "mask_value", AttrValue::Float(f64::NEG_INFINITY))
        .unwrap();
    ex.graph
        .add_tensor(Tensor::scalar("inf", ScalarValue::Float(f32::INFINITY)))
        .unwrap();
    let text = ex.graph.to_json();
    assert!(text.contains("\"-Infinity\""), "{text}");
    let back = Graph::from_json(&text).unwrap();
    assert_eq!(
        back.nodes()[ex.node].attr("mask_value"),
        Some(&AttrValue::Float(f64::NEG_INFINITY))
    );
    assert_eq!(back.to_json(), text);
    // Lists of floats and ints keep their type through the table.
    let v = AttrValue::from_json(&serde_json::json!([1.5, "NaN"])).unwrap();
    assert!(matches!(v, AttrValue::Floats(ref f) if f.len() == 2 && f[1].is_nan()));
}

#[test]
fn fused_scalars_take_the_rank_of_the_node() {
    let mut ex = example("layernorm").unwrap();
    let eps = ex.graph.nodes()[ex.node].input("epsilon").unwrap();
    assert_eq!(ex.graph.tensor(eps).unwrap().dims, vec![1]);
    ex.graph.validate().unwrap();
    let t = ex.graph.tensor(eps).unwrap();
    assert_eq!(
        (t.dims.clone(), t.strides.clone()),
        (vec![1, 1, 1, 1], vec![1, 1, 1, 1])
    );
}

#[test]
fn key_ignores_builder_bookkeeping() {
    // Same structure, one with caller uids and declared strides, one with automatic ones.
    let build = |explicit: bool| {
        let mut g = Graph::new(ctx());
        let mk = |name: &str, uid: i64| {
            let t = Tensor::new(name, &[2, 2], DataType::Half);
            if explicit {
                t.with_uid(uid).with_strides(&[2, 1])
            } else {
                t
            }
        };
        let a = g.add_tensor(mk("a", 1)).unwrap();
        let b = g.add_tensor(mk("b", 2)).unwrap();
        g.add_node(
            NodeBuilder::by_name("add")
                .unwrap()
                .input("a", a)
                .input("b", b),
        )
        .unwrap();
        g
    };
    assert_eq!(build(true).key(), build(false).key());
    assert_ne!(
        build(true).to_json(),
        build(false).to_json(),
        "JSON keeps the flags"
    );
}

#[test]
fn state_indices_must_have_one_row_per_sequence() {
    let mut ex = example("gdn").unwrap();
    let g = &mut ex.graph;
    let init = g
        .add_tensor(Tensor::new("pool", &[8, 4, 16, 32], DataType::Float))
        .unwrap();
    let idx = g
        .add_tensor(Tensor::new("idx", &[3], DataType::Int32))
        .unwrap();
    g.bind_input(ex.node, "initial_state", init).unwrap();
    g.bind_input(ex.node, "state_indices", idx).unwrap();
    let e = g.validate().unwrap_err().to_string();
    assert!(
        e.contains("port `state_indices`: state_indices must be [N]"),
        "{e}"
    );
    g.set_dims(idx, &[2]).unwrap();
    g.validate().unwrap();
    // With a state pool, final_state has the pool's dims.
    let fin = g.nodes()[ex.node].output("final_state").unwrap();
    assert_eq!(g.tensor(fin).unwrap().dims, vec![8, 4, 16, 32]);
    assert_eq!(g.smallest_free_uid(), g.tensors().len() as i64 + 1);
}

#[test]
fn gdn_chunk_factors_follow_their_attribute_and_take_the_declared_size() {
    use crate::ir::infer::{GDN_CHUNK_FACTOR_BYTES, gdn_chunk_factor_rows};
    let mut ex = example("gdn").unwrap();
    let g = &mut ex.graph;
    assert!(g.nodes()[ex.node].output("chunk_factors").is_none());
    // A second node on the example's inputs, saving the factors.
    let mut b = NodeBuilder::by_name("gdn")
        .unwrap()
        .name("gdn.saving")
        .bool("output_chunk_factors", true);
    for (port, uid) in g.nodes()[ex.node].inputs.clone() {
        b = b.input(&port, uid);
    }
    let saving = g.add_node(b).unwrap();
    g.validate().unwrap();
    let u = g.nodes()[saving].output("chunk_factors").expect("created");
    let node = &g.nodes()[saving];
    let dims = |p: &str| g.tensor(node.input(p).unwrap()).unwrap().dims.clone();
    let (t, n, ho) = (dims("q")[0], dims("cu_seqlens")[0] - 1, dims("g")[1]);
    let f = g.tensor(u).unwrap();
    assert_eq!(f.data_type, DataType::Uint8);
    assert_eq!(
        f.dims,
        vec![gdn_chunk_factor_rows(t, n), ho, GDN_CHUNK_FACTOR_BYTES]
    );
    assert_eq!(gdn_chunk_factor_rows(0, 0), 1);
    // Only GDN has them.
    let mut kda = example("kda").unwrap();
    assert!(
        kda.graph
            .set_attr(kda.node, "output_chunk_factors", AttrValue::Bool(true))
            .is_err()
    );
    // The backward's input is bytes (without the example's state checkpoints).
    expect_rule(
        "gdn_bwd",
        |g, n| {
            g.unbind_input(n, "state_checkpoints").unwrap();
            set_attr(g, n, "checkpoint_every_n_tokens", AttrValue::Int(0));
            let f = g
                .add_tensor(Tensor::new("factors", &[4, 4, 16], DataType::Float))
                .unwrap();
            g.bind_input(n, "chunk_factors", f).unwrap();
        },
        Some("chunk_factors"),
        "UINT8",
    );
    // With state checkpoints too (the example binds them): which pairs an engine serves is its
    // own rule, not the graph's.
    let mut bwd = example("gdn_bwd").unwrap();
    let f = bwd
        .graph
        .add_tensor(Tensor::new("factors", &[4, 4, 16], DataType::Uint8))
        .unwrap();
    bwd.graph.bind_input(bwd.node, "chunk_factors", f).unwrap();
    bwd.graph.validate().unwrap();
}

#[test]
fn gdn_chunk_factors_hold_the_u_tiles_when_the_forward_checkpoints_every_chunk() {
    use crate::ir::infer::{GDN_CHUNK_FACTOR_BYTES, gdn_chunk_factor_bytes};
    for (every, extra) in [(0, false), (64, true), (128, false), (192, false)] {
        let mut ex = example("gdn").unwrap();
        let g = &mut ex.graph;
        let mut b = NodeBuilder::by_name("gdn")
            .unwrap()
            .name("gdn.saving")
            .bool("output_chunk_factors", true)
            .int("checkpoint_every_n_tokens", every);
        for (port, uid) in g.nodes()[ex.node].inputs.clone() {
            b = b.input(&port, uid);
        }
        let saving = g.add_node(b).unwrap();
        g.validate().unwrap();
        let node = &g.nodes()[saving];
        let v = g.tensor(node.input("v").unwrap()).unwrap().dims[2];
        let u = node.output("chunk_factors").expect("created");
        let bytes = g.tensor(u).unwrap().dims[2];
        assert_eq!(bytes, gdn_chunk_factor_bytes(v, every), "every = {every}");
        assert_eq!(
            bytes == GDN_CHUNK_FACTOR_BYTES + 64 * v * 2,
            extra,
            "every = {every}"
        );
    }
}

#[test]
fn graphs_are_shareable_and_bad_json_is_an_error() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Graph>();
    assert_send_sync::<OpKind>();
    for bad in [
        "",
        "{",
        "[]",
        "{\"schema_version\": 1}",
        "{\"schema_version\": 1, \"format\": \"x\"}",
    ] {
        assert!(Graph::from_json(bad).is_err(), "{bad}");
    }
    // A node naming a tensor the document lacks.
    let mut v = example("matmul").unwrap().graph.to_json_value();
    v["nodes"][0]["inputs"]["A"] = serde_json::json!(999);
    let e = Graph::from_json_value(v).unwrap_err().to_string();
    assert!(e.contains("uid 999 is not in this graph"), "{e}");
}
