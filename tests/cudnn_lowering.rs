//! Lowering checks without cuDNN: every lowering runs against the recording backend and the test
//! reads back the descriptor sequence (operation kinds, pointwise/reduction modes, tensor
//! attributes), as the reference frontend would emit it.

use std::collections::HashMap;

#[path = "cudnn_support/backend_graphs.rs"]
mod backend_graphs;

use backend_graphs::{attribute_names, created, first_has, ids_of_type, leaked, matmul, recorder};

use dnnplan::cudnn::backend::{AttrValue, Recorded, Recorder};
use dnnplan::cudnn::consts::*;
use dnnplan::cudnn::emit::emit;
use dnnplan::cudnn::graph::{
    BackendGraph, ConvGeometry, ConvKind, GraphBuilder, PointwiseParams, Uid, packed_strides,
};
use dnnplan::cudnn::lower::attention::*;
use dnnplan::cudnn::lower::{self, MatmulRequest, NormForwardRequest, NormKind};
use dnnplan::cudnn::plan::{engine_config, parse_plan_name, plan_name};

fn name_of(fam: &[(&str, u32)], v: u32) -> String {
    fam.iter()
        .find(|(_, x)| *x == v)
        .map(|(n, _)| n.to_string())
        .unwrap_or_else(|| format!("?{v}"))
}

/// Attributes set per descriptor id.
fn attrs(rec: &Recorder) -> HashMap<usize, Vec<(u32, AttrValue)>> {
    let mut m: HashMap<usize, Vec<(u32, AttrValue)>> = HashMap::new();
    for c in rec.calls() {
        if let Recorded::Set(id, name, v) = c {
            m.entry(id).or_default().push((name, v));
        }
    }
    m
}

fn attr(a: &HashMap<usize, Vec<(u32, AttrValue)>>, id: usize, name: u32) -> Option<AttrValue> {
    a.get(&id)?
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.clone())
}

fn desc_id(v: &AttrValue) -> usize {
    match v {
        AttrValue::Descriptors(d) => d[0] as usize,
        other => panic!("not a descriptor: {other:?}"),
    }
}

/// The operations in creation order, e.g. `MATMUL`, `POINTWISE:ADD`, `REDUCTION:MAX`.
fn op_sequence(rec: &Recorder) -> Vec<String> {
    let a = attrs(rec);
    let mut out = Vec::new();
    for c in rec.calls() {
        let Recorded::Create(id, ty) = c else {
            continue;
        };
        let s = match ty {
            CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR => {
                let pw =
                    desc_id(&attr(&a, id, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR).unwrap());
                match attr(&a, pw, CUDNN_ATTR_POINTWISE_MODE) {
                    Some(AttrValue::Enum(_, m)) => {
                        format!(
                            "PW:{}",
                            name_of(POINTWISE_MODE, m).trim_start_matches("CUDNN_POINTWISE_")
                        )
                    }
                    other => panic!("pointwise without mode: {other:?}"),
                }
            }
            CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR => {
                let r = desc_id(&attr(&a, id, CUDNN_ATTR_OPERATION_REDUCTION_DESC).unwrap());
                match attr(&a, r, CUDNN_ATTR_REDUCTION_OPERATOR) {
                    Some(AttrValue::Enum(_, m)) => {
                        format!(
                            "RED:{}",
                            name_of(REDUCE_OP, m).trim_start_matches("CUDNN_REDUCE_TENSOR_")
                        )
                    }
                    other => panic!("reduction without operator: {other:?}"),
                }
            }
            t if t != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR
                && name_of(DESCRIPTOR_TYPE, t).starts_with("CUDNN_BACKEND_OPERATION_") =>
            {
                name_of(DESCRIPTOR_TYPE, t)
                    .trim_start_matches("CUDNN_BACKEND_OPERATION_")
                    .trim_end_matches("_DESCRIPTOR")
                    .to_string()
            }
            _ => continue,
        };
        out.push(s);
    }
    out
}

/// Tensor descriptor id by uid.
fn tensors(rec: &Recorder) -> HashMap<i64, usize> {
    let a = attrs(rec);
    let mut m = HashMap::new();
    for (id, list) in &a {
        if rec.type_of(*id) == Some(CUDNN_BACKEND_TENSOR_DESCRIPTOR) {
            for (n, v) in list {
                if let (CUDNN_ATTR_TENSOR_UNIQUE_ID, AttrValue::Int64(u)) = (*n, v) {
                    m.insert(u[0], *id);
                }
            }
        }
    }
    m
}

fn bhsd(g: &mut GraphBuilder, uid: Uid, name: &str, dtype: u32, d: [i64; 4]) -> Uid {
    g.user_tensor(uid, name, dtype, &d, &packed_strides(&d))
        .unwrap()
}

/// User tensors `(name, dtype, dims, strides)` with uids `1..=N` in order.
fn users<const N: usize>(
    g: &mut GraphBuilder,
    specs: [(&str, u32, &[i64], &[i64]); N],
) -> [Uid; N] {
    let mut uid = 0;
    specs.map(|(name, dtype, dims, strides)| {
        uid += 1;
        g.user_tensor(uid, name, dtype, dims, strides).unwrap()
    })
}

/// Q, K, V and O (uids 1..=4, named `q`, `k`, `v`, `o_name`), all packed `dims` of `dtype`.
fn qkvo(g: &mut GraphBuilder, dtype: u32, dims: [i64; 4], o_name: &str) -> [Uid; 4] {
    [(1, "q"), (2, "k"), (3, "v"), (4, o_name)].map(|(uid, name)| bhsd(g, uid, name, dtype, dims))
}

/// A forward request over `[q, k, v, o]` without Stats.
fn forward_request(
    [q, k, v, o]: [Uid; 4],
    options: ScoreOptions,
    implementation: SdpaImplementation,
) -> SdpaForwardRequest {
    SdpaForwardRequest {
        q,
        k,
        v,
        o,
        stats: None,
        options,
        implementation,
    }
}

/// The causal (top-left) score options.
fn causal() -> ScoreOptions {
    ScoreOptions {
        causal: Some(DiagonalAlignment::TopLeft),
        ..Default::default()
    }
}

fn lower_and_emit(g: GraphBuilder) -> (&'static Recorder, BackendGraph) {
    let rec = recorder();
    let graph = g.finish();
    let opg = emit(rec, graph.clone(), None).expect("emit");
    drop(opg);
    (rec, graph)
}

#[test]
fn matmul_bias_relu_is_one_matmul_and_two_fused_pointwise() {
    let mut g = GraphBuilder::new();
    let bf16 = CUDNN_DATA_BFLOAT16;
    let [a, b, bias, out] = users(
        &mut g,
        [
            ("a", bf16, &[1, 64, 32], &[2048, 32, 1]),
            ("b", bf16, &[1, 32, 16], &[512, 16, 1]),
            ("bias", bf16, &[1, 1, 16], &[16, 16, 1]),
            ("out", bf16, &[1, 64, 16], &[1024, 16, 1]),
        ],
    );
    lower::matmul(
        &mut g,
        &MatmulRequest {
            a,
            b,
            bias: Some(bias),
            activation: Some(CUDNN_POINTWISE_RELU_FWD),
            out,
            ..Default::default()
        },
    )
    .unwrap();
    let (rec, graph) = lower_and_emit(g);
    assert_eq!(op_sequence(rec), ["MATMUL", "PW:ADD", "PW:RELU_FWD"]);
    assert_eq!(graph.user_uids(), vec![1, 2, 3, 4]);
    let a_ = attrs(rec);
    let t = tensors(rec);
    // The matmul result and the bias sum are virtual FLOAT; `out` is not virtual.
    let virtuals: Vec<i64> = t
        .iter()
        .filter(|(_, id)| {
            attr(&a_, **id, CUDNN_ATTR_TENSOR_IS_VIRTUAL) == Some(AttrValue::Bool(true))
        })
        .map(|(u, _)| *u)
        .collect();
    assert_eq!(virtuals.len(), 2, "{virtuals:?}");
    for u in virtuals {
        assert_eq!(
            attr(&a_, t[&u], CUDNN_ATTR_TENSOR_DATA_TYPE),
            Some(AttrValue::Enum(CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT))
        );
    }
    assert_eq!(attr(&a_, t[&4], CUDNN_ATTR_TENSOR_IS_VIRTUAL), None);
    // Every created descriptor is destroyed exactly once; every op is finalized.
    let calls = rec.calls();
    let created: Vec<usize> = created(&calls).into_iter().map(|(id, _)| id).collect();
    let mut destroyed: Vec<usize> = calls
        .iter()
        .filter_map(|c| {
            if let Recorded::Destroy(i) = c {
                Some(*i)
            } else {
                None
            }
        })
        .collect();
    destroyed.sort_unstable();
    assert_eq!(created, destroyed);
    let finalized = calls
        .iter()
        .filter(|c| matches!(c, Recorded::Finalize(_)))
        .count();
    assert_eq!(finalized, created.len(), "every descriptor is finalized");
}

#[test]
fn relu_upper_clip_is_clamped_to_flt_max_for_float_compute() {
    let mut g = GraphBuilder::new();
    let x = g.user_tensor(1, "x", CUDNN_DATA_FLOAT, &[4], &[1]).unwrap();
    let y = g.user_tensor(2, "y", CUDNN_DATA_FLOAT, &[4], &[1]).unwrap();
    let params = PointwiseParams {
        relu_upper_clip: Some(f64::MAX),
        ..Default::default()
    };
    lower::pointwise(
        &mut g,
        CUDNN_POINTWISE_RELU_FWD,
        CUDNN_DATA_FLOAT,
        &[x],
        y,
        params,
    )
    .unwrap();
    let (rec, _) = lower_and_emit(g);
    let clip = rec
        .calls()
        .into_iter()
        .find_map(|c| match c {
            Recorded::Set(_, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, v) => Some(v),
            _ => None,
        })
        .unwrap();
    assert_eq!(clip, AttrValue::Float(vec![f32::MAX]));
}

#[test]
fn pointwise_arity_is_checked_and_every_mode_has_one() {
    for (name, mode) in POINTWISE_MODE {
        assert!(
            lower::pointwise_arity(*mode).is_some(),
            "{name} has no arity"
        );
    }
    let mut g = GraphBuilder::new();
    let x = g.user_tensor(1, "x", CUDNN_DATA_FLOAT, &[4], &[1]).unwrap();
    let y = g
        .user_tensor(2, "sum_out", CUDNN_DATA_FLOAT, &[4], &[1])
        .unwrap();
    let e = lower::pointwise(
        &mut g,
        CUDNN_POINTWISE_ADD,
        CUDNN_DATA_FLOAT,
        &[x],
        y,
        Default::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("sum_out") && e.to_string().contains("takes 2 inputs"),
        "{e}"
    );
    // Backward activations use the DY/X/DX form.
    let dy = g
        .user_tensor(3, "dy", CUDNN_DATA_FLOAT, &[4], &[1])
        .unwrap();
    lower::pointwise(
        &mut g,
        CUDNN_POINTWISE_RELU_BWD,
        CUDNN_DATA_FLOAT,
        &[dy, x],
        y,
        Default::default(),
    )
    .unwrap();
    let (rec, _) = lower_and_emit(g);
    let names = attribute_names(rec);
    assert!(names.contains(&CUDNN_ATTR_OPERATION_POINTWISE_DYDESC));
    assert!(names.contains(&CUDNN_ATTR_OPERATION_POINTWISE_DXDESC));
}

#[test]
fn composite_softmax_sequence_with_stats() {
    let mut g = GraphBuilder::new();
    let x = bhsd(&mut g, 1, "x", CUDNN_DATA_FLOAT, [2, 4, 8, 16]);
    let stats = bhsd(&mut g, 2, "stats", CUDNN_DATA_FLOAT, [2, 4, 8, 1]);
    let p = softmax(&mut g, x, Some(stats), CUDNN_DATA_FLOAT).unwrap();
    let y = bhsd(&mut g, 3, "y", CUDNN_DATA_FLOAT, [2, 4, 8, 16]);
    g.pointwise_into(
        CUDNN_POINTWISE_IDENTITY,
        CUDNN_DATA_FLOAT,
        &[p],
        y,
        Default::default(),
    )
    .unwrap();
    let (rec, _) = lower_and_emit(g);
    assert_eq!(
        op_sequence(rec),
        [
            "RED:MAX",
            "PW:SUB",
            "PW:EXP",
            "RED:ADD",
            "PW:LOG",
            "PW:ADD",
            "PW:DIV",
            "PW:IDENTITY"
        ]
    );
}

fn sdpa_graph(
    causal: Option<DiagonalAlignment>,
    padding: bool,
    implementation: SdpaImplementation,
    version: usize,
) -> (GraphBuilder, SdpaImplementation) {
    let mut g = GraphBuilder::new();
    let q = bhsd(&mut g, 1, "q", CUDNN_DATA_BFLOAT16, [2, 8, 128, 64]);
    let k = bhsd(&mut g, 2, "k", CUDNN_DATA_BFLOAT16, [2, 2, 256, 64]);
    let v = bhsd(&mut g, 3, "v", CUDNN_DATA_BFLOAT16, [2, 2, 256, 64]);
    let o = bhsd(&mut g, 4, "o", CUDNN_DATA_BFLOAT16, [2, 8, 128, 64]);
    let stats = bhsd(&mut g, 5, "stats", CUDNN_DATA_FLOAT, [2, 8, 128, 1]);
    let (sq, skv) = if padding {
        (
            Some(bhsd(&mut g, 6, "seq_q", CUDNN_DATA_INT32, [2, 1, 1, 1])),
            Some(bhsd(&mut g, 7, "seq_kv", CUDNN_DATA_INT32, [2, 1, 1, 1])),
        )
    } else {
        (None, None)
    };
    let r = SdpaForwardRequest {
        q,
        k,
        v,
        o,
        stats: Some(stats),
        options: ScoreOptions {
            attn_scale: Some(AttnScale::Value(0.125)),
            causal,
            seq_len_q: sq,
            seq_len_kv: skv,
            ..Default::default()
        },
        implementation,
    };
    let used = sdpa_forward(&mut g, &r, version).unwrap();
    (g, used)
}

#[test]
fn sdpa_forward_composite_bottom_right_causal() {
    let (g, used) = sdpa_graph(
        Some(DiagonalAlignment::BottomRight),
        false,
        SdpaImplementation::Auto,
        91900,
    );
    assert_eq!(
        used,
        SdpaImplementation::Composite,
        "masks need >= 9.21 in the unified op"
    );
    let graph = g.graph().clone();
    let (rec, _) = lower_and_emit(g);
    assert_eq!(
        op_sequence(rec),
        [
            "MATMUL",
            "PW:MUL", // Q·Kᵀ, attn scale
            "PW:GEN_INDEX",
            "PW:GEN_INDEX",
            "PW:ADD",
            "PW:SUB",
            "PW:CMP_GE",
            "PW:BINARY_SELECT",
            "RED:MAX",
            "PW:SUB",
            "PW:EXP",
            "RED:ADD",
            "PW:LOG",
            "PW:ADD",
            "PW:DIV", // softmax + stats
            "MATMUL", // P·V
        ]
    );
    // K's descriptor is Kᵀ: [b, h_k, d, s_kv] with swapped strides; same uid.
    let a = attrs(rec);
    let k = tensors(rec)[&2];
    assert_eq!(
        attr(&a, k, CUDNN_ATTR_TENSOR_DIMENSIONS),
        Some(AttrValue::Int64(vec![2, 2, 64, 256]))
    );
    assert_eq!(
        attr(&a, k, CUDNN_ATTR_TENSOR_STRIDES),
        Some(AttrValue::Int64(vec![32768, 16384, 1, 64]))
    );
    // The scores are [b, h_q, s_q, s_kv]; fixed lengths become int32 by-value scalars s_kv, s_q.
    let scalars: Vec<_> = graph.tensors.values().filter_map(|t| t.by_value).collect();
    use dnnplan::cudnn::graph::ScalarValue::*;
    assert!(scalars.contains(&F32(0.125)));
    assert!(scalars.contains(&I32(256)) && scalars.contains(&I32(128)));
    assert!(scalars.contains(&F32(f32::NEG_INFINITY)));
    assert_eq!(graph.user_uids(), vec![1, 2, 3, 4, 5]);
}

#[test]
fn sdpa_forward_padding_uses_overrides_and_the_padding_chain() {
    let (g, _) = sdpa_graph(
        Some(DiagonalAlignment::TopLeft),
        true,
        SdpaImplementation::Composite,
        91900,
    );
    let (rec, graph) = lower_and_emit(g);
    let seq = op_sequence(rec);
    assert_eq!(
        &seq[..10],
        [
            "MATMUL",
            "PW:MUL",
            "PW:GEN_INDEX",
            "PW:GEN_INDEX",
            "PW:CMP_LT",
            "PW:CMP_LT",
            "PW:LOGICAL_AND",
            "PW:BINARY_SELECT",
            "PW:GEN_INDEX",
            "PW:GEN_INDEX"
        ]
    );
    assert_eq!(seq[10], "PW:CMP_GE", "top-left causal has no length shift");
    let a = attrs(rec);
    let t = tensors(rec);
    let mm = ids_of_type(&rec.calls(), CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    let m_override =
        |id| attr(&a, id, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC).map(|v| desc_id(&v));
    assert_eq!(m_override(mm[0]), Some(t[&6]));
    assert_eq!(
        attr(&a, mm[0], CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC).map(|v| desc_id(&v)),
        Some(t[&7])
    );
    assert_eq!(
        attr(&a, mm[1], CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC).map(|v| desc_id(&v)),
        Some(t[&7])
    );
    assert_eq!(graph.user_uids(), vec![1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn sdpa_forward_auto_picks_the_unified_op_when_allowed() {
    let (g, used) = sdpa_graph(None, true, SdpaImplementation::Auto, 91900);
    assert_eq!(used, SdpaImplementation::Unified);
    let (rec, _) = lower_and_emit(g);
    assert_eq!(op_sequence(rec), ["SDPA_FWD"]);
    let (_, used) = sdpa_graph(None, false, SdpaImplementation::Auto, 91200);
    assert_eq!(
        used,
        SdpaImplementation::Composite,
        "below 9.13.1 there is no SDPA_FWD op"
    );
    let mut g = GraphBuilder::new();
    let qkvo = qkvo(&mut g, CUDNN_DATA_HALF, [1, 1, 8, 8], "attn_out");
    let r = forward_request(qkvo, causal(), SdpaImplementation::Unified);
    let e = sdpa_forward(&mut g, &r, 91900).unwrap_err().to_string();
    assert!(e.contains("attn_out") && e.contains("92100"), "{e}");
}

#[test]
fn sdpa_forward_dropout_casts_after_the_scale() {
    let mut g = GraphBuilder::new();
    let qkvo = qkvo(&mut g, CUDNN_DATA_HALF, [1, 2, 16, 64], "o");
    let seed = bhsd(&mut g, 5, "seed", CUDNN_DATA_INT64, [1, 1, 1, 1]);
    let offset = bhsd(&mut g, 6, "offset", CUDNN_DATA_INT64, [1, 1, 1, 1]);
    let options = ScoreOptions {
        dropout: Some(Dropout {
            probability: 0.25,
            seed,
            offset,
        }),
        ..Default::default()
    };
    let r = forward_request(qkvo, options, SdpaImplementation::Auto);
    assert_eq!(
        sdpa_forward(&mut g, &r, 91900).unwrap(),
        SdpaImplementation::Composite
    );
    let graph = g.graph().clone();
    let (rec, _) = lower_and_emit(g);
    let seq = op_sequence(rec);
    assert_eq!(&seq[seq.len() - 4..], ["RNG", "PW:MUL", "PW:MUL", "MATMUL"]);
    // The dropout-scaled probabilities (bmm2's A operand) are in Q's dtype.
    let bmm2_a = graph.ops.last().map(|op| match op {
        dnnplan::cudnn::graph::OpSpec::Matmul { a, .. } => *a,
        _ => panic!(),
    });
    assert_eq!(graph.tensors[&bmm2_a.unwrap()].dtype, CUDNN_DATA_HALF);
    let rng_p = rec.calls().into_iter().find_map(|c| match c {
        Recorded::Set(_, CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, v) => Some(v),
        _ => None,
    });
    assert_eq!(
        rng_p,
        Some(AttrValue::Double(vec![0.75])),
        "Bernoulli keeps with 1 - p"
    );
}

fn sdpa_bwd(h_k: i64, with_dbias: bool) -> (&'static Recorder, BackendGraph) {
    let mut g = GraphBuilder::new();
    let (b, hq, s, d) = (2, 4, 64, 64);
    let q = bhsd(&mut g, 1, "q", CUDNN_DATA_BFLOAT16, [b, hq, s, d]);
    let k = bhsd(&mut g, 2, "k", CUDNN_DATA_BFLOAT16, [b, h_k, s, d]);
    let v = bhsd(&mut g, 3, "v", CUDNN_DATA_BFLOAT16, [b, h_k, s, d]);
    let o = bhsd(&mut g, 4, "o", CUDNN_DATA_BFLOAT16, [b, hq, s, d]);
    let d_o = bhsd(&mut g, 5, "dO", CUDNN_DATA_BFLOAT16, [b, hq, s, d]);
    let stats = bhsd(&mut g, 6, "stats", CUDNN_DATA_FLOAT, [b, hq, s, 1]);
    let dq = bhsd(&mut g, 7, "dQ", CUDNN_DATA_BFLOAT16, [b, hq, s, d]);
    let dk = bhsd(&mut g, 8, "dK", CUDNN_DATA_BFLOAT16, [b, h_k, s, d]);
    let dv = bhsd(&mut g, 9, "dV", CUDNN_DATA_BFLOAT16, [b, h_k, s, d]);
    let (bias, dbias) = if with_dbias {
        (
            Some(bhsd(&mut g, 10, "bias", CUDNN_DATA_BFLOAT16, [1, hq, s, s])),
            Some(bhsd(
                &mut g,
                11,
                "dbias",
                CUDNN_DATA_BFLOAT16,
                [1, hq, s, s],
            )),
        )
    } else {
        (None, None)
    };
    let r = SdpaBackwardRequest {
        q,
        k,
        v,
        o,
        d_o,
        stats,
        dq,
        dk,
        dv,
        dbias,
        options: ScoreOptions {
            attn_scale: Some(AttnScale::Value(0.125)),
            causal: Some(DiagonalAlignment::TopLeft),
            bias,
            ..Default::default()
        },
        deterministic: false,
    };
    sdpa_backward(&mut g, &r, 91900).unwrap();
    lower_and_emit(g)
}

#[test]
fn sdpa_backward_composite_sequence() {
    let (rec, graph) = sdpa_bwd(4, false);
    assert_eq!(
        op_sequence(rec),
        [
            "PW:MUL",
            "RED:ADD",
            "PW:MUL", // D = rowsum(dO*O) -> softmax_sum
            "MATMUL",
            "PW:MUL",
            "PW:SUB", // s = Q·Kᵀ·scale - LSE
            "PW:GEN_INDEX",
            "PW:GEN_INDEX",
            "PW:CMP_GE",
            "PW:BINARY_SELECT",
            "PW:EXP", // P
            "RESHAPE",
            "MATMUL", // dV = Pᵀ·dO
            "MATMUL",
            "PW:SUB",
            "PW:MUL",
            "PW:MUL", // dS = (dP - D)·P·scale
            "RESHAPE",
            "MATMUL", // dK = dSᵀ·Q
            "RESHAPE",
            "MATMUL",
            "PW:IDENTITY", // dQ via the FP32 accumulator
        ]
    );
    // softmax_sum and dQ_accum live in the frontend workspace, not in the caller's pointers.
    assert_eq!(graph.fe_workspace.len(), 2);
    assert_eq!(
        graph.fe_workspace_bytes(),
        2 * 4 * 64 * 4 + 2 * 4 * 64 * 64 * 4
    );
    assert_eq!(graph.user_uids(), (1..=9).collect::<Vec<_>>());
}

#[test]
fn sdpa_backward_gqa_reduces_heads_and_dbias_uses_dp_workspace() {
    let (rec, graph) = sdpa_bwd(1, true);
    let seq = op_sequence(rec);
    // dV and dK at h_q heads, then summed over the group.
    let reductions = seq.iter().filter(|s| *s == "RED:ADD").count();
    assert_eq!(reductions, 4, "rowsum, dV group, dbias, dK group: {seq:?}");
    assert_eq!(
        seq.last().map(String::as_str),
        Some("MATMUL"),
        "dbias forces dQ without accumulator"
    );
    assert_eq!(graph.fe_workspace.len(), 1);
}

#[test]
fn norms_and_convolutions() {
    let mut g = GraphBuilder::new();
    let (half, float) = (CUDNN_DATA_HALF, CUDNN_DATA_FLOAT);
    let [x, scale, y, inv] = users(
        &mut g,
        [
            ("x", half, &[32, 256, 1, 1], &[256, 1, 1, 1]),
            ("scale", float, &[1, 256, 1, 1], &[256, 1, 1, 1]),
            ("y", half, &[32, 256, 1, 1], &[256, 1, 1, 1]),
            ("inv_var", float, &[32, 1, 1, 1], &[1, 1, 1, 1]),
        ],
    );
    lower::norm_forward(
        &mut g,
        &NormForwardRequest {
            kind: NormKind::Rms,
            x,
            scale: Some(scale),
            bias: None,
            epsilon: 1e-5,
            y,
            mean: None,
            inv_variance: Some(inv),
        },
    )
    .unwrap();
    let (rec, graph) = lower_and_emit(g);
    assert_eq!(op_sequence(rec), ["NORM_FORWARD"]);
    assert!(first_has(
        &rec.calls(),
        CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR,
        CUDNN_ATTR_OPERATION_NORM_FWD_PHASE,
        AttrValue::Enum(CUDNN_TYPE_NORM_FWD_PHASE, CUDNN_NORM_FWD_TRAINING)
    ));
    let eps = graph
        .tensors
        .values()
        .find(|t| t.by_value.is_some())
        .unwrap();
    assert_eq!(eps.dims, vec![1, 1, 1, 1]);

    for (kind, ty) in [
        (ConvKind::Fprop, "CONVOLUTION_FORWARD"),
        (ConvKind::Dgrad, "CONVOLUTION_BACKWARD_DATA"),
        (ConvKind::Wgrad, "CONVOLUTION_BACKWARD_FILTER"),
    ] {
        let mut g = GraphBuilder::new();
        let [x, w, y] = users(
            &mut g,
            [
                ("x", half, &[8, 64, 16, 16], &[16384, 1, 1024, 64]),
                ("w", half, &[32, 64, 3, 3], &[576, 1, 192, 64]),
                ("y", half, &[8, 32, 16, 16], &[8192, 1, 512, 32]),
            ],
        );
        let geo = ConvGeometry {
            pre_padding: vec![1, 1],
            post_padding: vec![1, 1],
            stride: vec![1, 1],
            dilation: vec![1, 1],
            mode: CUDNN_CROSS_CORRELATION,
        };
        lower::convolution(&mut g, kind, geo, x, w, y).unwrap();
        let (rec, _) = lower_and_emit(g);
        assert_eq!(op_sequence(rec), [ty]);
    }
}

#[test]
fn finalize_failures_name_the_operation() {
    let rec = leaked(Recorder::rejecting(vec![
        CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
    ]));
    let e = emit(rec, matmul(8, 8, 8, CUDNN_DATA_HALF), None).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("operation #0 (MATMUL)") && text.contains("CUDNN_STATUS_NOT_SUPPORTED"),
        "{text}"
    );
}

#[test]
fn plan_names_and_replay() {
    assert_eq!(
        plan_name(8, &[(14, 3), (2, 1), (42, 0)]),
        "eng8_k2=1_k14=3_k42=0"
    );
    assert_eq!(plan_name(0, &[]), "eng0");
    assert_eq!(
        parse_plan_name("eng8_k2=1_k14=3_k42=0").unwrap(),
        (8, vec![(2, 1), (14, 3), (42, 0)])
    );
    assert_eq!(parse_plan_name("eng-1").unwrap(), (-1, vec![]));
    assert!(parse_plan_name("engx").is_err());
    assert!(parse_plan_name("eng1_k2").is_err());
    assert!(parse_plan_name("plan3").is_err());

    let rec = recorder();
    let opg = emit(rec, matmul(8, 8, 8, CUDNN_DATA_HALF), None).unwrap();
    let before = rec.calls().len();
    let cfg = engine_config(&opg, 8, &[(2, 1), (14, 3)]).unwrap();
    assert_eq!(cfg.descriptor_type(), CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    let after: Vec<Recorded> = rec.calls()[before..].to_vec();
    let created: Vec<u32> = created(&after).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        created,
        [
            CUDNN_BACKEND_ENGINE_DESCRIPTOR,
            CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
            CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
            CUDNN_BACKEND_ENGINECFG_DESCRIPTOR
        ]
    );
    assert!(after.iter().any(|c| matches!(c, Recorded::Set(_, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, AttrValue::Int64(v)) if v == &vec![8])));
    assert!(after.iter().any(|c| matches!(
        c,
        Recorded::Set(
            _,
            CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
            AttrValue::Enum(CUDNN_TYPE_KNOB_TYPE, 14)
        )
    )));
}

#[test]
fn heuristics_count_query_passes_a_null_array() {
    // cuDNN reports the available count only for a NULL array (as the reference frontend calls it).
    let rec = recorder();
    let opg = emit(rec, matmul(8, 8, 8, CUDNN_DATA_HALF), None).unwrap();
    let e = dnnplan::cudnn::plan::query_mode(&opg, dnnplan::cudnn::plan::HeurMode::A).unwrap_err();
    assert!(e.to_string().contains("RESULTS"), "{e}");
    let gets: Vec<Recorded> = rec
        .calls()
        .into_iter()
        .filter(|c| matches!(c, Recorded::Get(..)))
        .collect();
    assert_eq!(gets.len(), 1);
    assert!(
        matches!(
            gets[0],
            Recorded::Get(_, CUDNN_ATTR_ENGINEHEUR_RESULTS, 0, true)
        ),
        "{gets:?}"
    );
    // The heuristics descriptor got the graph and the mode before finalize.
    assert!(rec.calls().iter().any(|c| matches!(
        c,
        Recorded::Set(
            _,
            CUDNN_ATTR_ENGINEHEUR_MODE,
            AttrValue::Enum(CUDNN_TYPE_HEUR_MODE, CUDNN_HEUR_MODE_A)
        )
    )));
}

#[test]
fn sdpa_inference_still_writes_a_virtual_stats() {
    // The reference frontend's composite softmax emits LOG + ADD into a virtual Stats even for
    // inference; the backend's attention matcher needs that shape.
    let mut g = GraphBuilder::new();
    let qkvo = qkvo(&mut g, CUDNN_DATA_BFLOAT16, [1, 2, 64, 64], "o");
    let r = forward_request(qkvo, causal(), SdpaImplementation::Auto);
    sdpa_forward(&mut g, &r, 91900).unwrap();
    let graph = g.graph().clone();
    let (rec, _) = lower_and_emit(g);
    let seq = op_sequence(rec);
    assert_eq!(
        &seq[seq.len() - 5..],
        ["RED:ADD", "PW:LOG", "PW:ADD", "PW:DIV", "MATMUL"]
    );
    let stats_add = graph.ops.iter().rev().find_map(|op| match op {
        dnnplan::cudnn::graph::OpSpec::Pointwise {
            mode: CUDNN_POINTWISE_ADD,
            y,
            ..
        } => Some(*y),
        _ => None,
    });
    let t = &graph.tensors[&stats_add.unwrap()];
    assert!(t.is_virtual && t.dtype == CUDNN_DATA_FLOAT && t.dims == vec![1, 2, 64, 1]);
    assert_eq!(graph.user_uids(), vec![1, 2, 3, 4]);
}

#[test]
fn variant_pack_layout_user_slots_then_scalars_then_frontend_workspace() {
    use dnnplan::cudnn::plan::BackendPlan;
    use std::ffi::c_void;
    use std::sync::Arc;
    let rec = recorder();
    let mut g = GraphBuilder::new();
    let (b, hq, s, d) = (1, 2, 64, 64);
    let mut ids = Vec::new();
    for (uid, name, dt, dims) in [
        (1, "q", CUDNN_DATA_HALF, [b, hq, s, d]),
        (2, "k", CUDNN_DATA_HALF, [b, hq, s, d]),
        (3, "v", CUDNN_DATA_HALF, [b, hq, s, d]),
        (4, "o", CUDNN_DATA_HALF, [b, hq, s, d]),
        (5, "dO", CUDNN_DATA_HALF, [b, hq, s, d]),
        (6, "stats", CUDNN_DATA_FLOAT, [b, hq, s, 1]),
        (7, "dQ", CUDNN_DATA_HALF, [b, hq, s, d]),
        (8, "dK", CUDNN_DATA_HALF, [b, hq, s, d]),
        (9, "dV", CUDNN_DATA_HALF, [b, hq, s, d]),
    ] {
        ids.push(bhsd(&mut g, uid, name, dt, dims));
    }
    let r = SdpaBackwardRequest {
        q: 1,
        k: 2,
        v: 3,
        o: 4,
        d_o: 5,
        stats: 6,
        dq: 7,
        dk: 8,
        dv: 9,
        dbias: None,
        options: ScoreOptions {
            attn_scale: Some(AttnScale::Value(0.125)),
            ..Default::default()
        },
        deterministic: false,
    };
    sdpa_backward(&mut g, &r, 91900).unwrap();
    let graph = g.finish();
    let fe: Vec<(Uid, usize)> = graph.fe_workspace.clone();
    let opg = Arc::new(emit(rec, graph.clone(), None).unwrap());
    let cfg = engine_config(&opg, 0, &[]).unwrap();
    let plan = BackendPlan::build(opg, &cfg, std::ptr::null_mut(), "eng0".into()).unwrap();
    assert_eq!(plan.user_uids, ids);
    assert_eq!(plan.workspace_size(), graph.fe_workspace_bytes());
    let ptrs: Vec<*mut c_void> = (1..=9).map(|i| (i * 0x1000) as *mut c_void).collect();
    // Wrong pointer count and a NULL workspace are refused with the plan's name.
    let e = plan
        .variant_pack(&ptrs[..8], 0x9000_0000 as *mut c_void)
        .unwrap_err()
        .to_string();
    assert!(e.contains("8 pointers") && e.contains("eng0"), "{e}");
    let e = plan
        .variant_pack(&ptrs, std::ptr::null_mut())
        .unwrap_err()
        .to_string();
    assert!(e.contains("workspace") && e.contains("NULL"), "{e}");
    let before = rec.calls().len();
    let ws = 0x9000_0000usize;
    let _vp = plan.variant_pack(&ptrs, ws as *mut c_void).unwrap();
    let sets: Vec<(u32, AttrValue)> = rec.calls()[before..]
        .iter()
        .filter_map(|c| {
            if let Recorded::Set(_, n, v) = c {
                Some((*n, v.clone()))
            } else {
                None
            }
        })
        .collect();
    let uids = match &sets
        .iter()
        .find(|(n, _)| *n == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS)
        .unwrap()
        .1
    {
        AttrValue::Int64(v) => v.clone(),
        other => panic!("{other:?}"),
    };
    let data = match &sets
        .iter()
        .find(|(n, _)| *n == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS)
        .unwrap()
        .1
    {
        AttrValue::Pointers(v) => v.iter().map(|p| *p as usize).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(uids.len(), data.len());
    assert_eq!(&uids[..9], &ids[..]);
    assert_eq!(
        &data[..9],
        &ptrs.iter().map(|p| *p as usize).collect::<Vec<_>>()[..]
    );
    // By-value scalars point at host copies inside the plan; frontend-workspace tensors at
    // workspace + offset (softmax_sum first, then dQ_accum, 256-byte aligned).
    let n_fe = fe.len();
    let fe_uids: Vec<i64> = fe.iter().map(|(u, _)| *u).collect();
    assert_eq!(&uids[uids.len() - n_fe..], &fe_uids[..]);
    assert_eq!(data[data.len() - n_fe], ws);
    assert_eq!(data[data.len() - 1], ws + fe[0].1.div_ceil(256) * 256);
    let n_scalars = uids.len() - 9 - n_fe;
    assert!(n_scalars >= 2, "one and attn_scale at least");
    assert_eq!(
        sets.iter()
            .find(|(n, _)| *n == CUDNN_ATTR_VARIANT_PACK_WORKSPACE)
            .map(|(_, v)| v.clone()),
        Some(AttrValue::Pointers(vec![std::ptr::null_mut()])),
        "the recording backend reports no plan workspace, so the plan part is NULL"
    );
}

#[test]
fn ragged_thd_offsets_are_emitted_before_their_tensors_and_join_the_pack() {
    let mut g = GraphBuilder::new();
    let (b, h, s, d) = (2i64, 4i64, 128i64, 64i64);
    // THD: tokens of all batches packed along s, heads interleaved: strides [s*h*d, d, h*d, 1].
    let thd = [s * h * d, d, h * d, 1];
    let user = |g: &mut GraphBuilder, uid, name| {
        g.user_tensor(uid, name, CUDNN_DATA_BFLOAT16, &[b, h, s, d], &thd)
            .unwrap()
    };
    let (q, k, v, o) = (
        user(&mut g, 1, "q"),
        user(&mut g, 2, "k"),
        user(&mut g, 3, "v"),
        user(&mut g, 4, "o"),
    );
    // INT32 `[n, 1, 1, 1]`: the ragged offsets (b + 1) and the sequence lengths (b).
    let per_batch = |g: &mut GraphBuilder, uid, name, n| {
        g.user_tensor(uid, name, CUDNN_DATA_INT32, &[n, 1, 1, 1], &[1, 1, 1, 1])
            .unwrap()
    };
    let off_q = per_batch(&mut g, 10, "ragged_q", b + 1);
    let off_kv = per_batch(&mut g, 11, "ragged_kv", b + 1);
    for (t, off) in [(q, off_q), (o, off_q), (k, off_kv), (v, off_kv)] {
        g.set_ragged_offset(t, off).unwrap();
    }
    let sq = per_batch(&mut g, 12, "seq_q", b);
    let skv = per_batch(&mut g, 13, "seq_kv", b);
    let r = SdpaForwardRequest {
        q,
        k,
        v,
        o,
        stats: None,
        options: ScoreOptions {
            causal: Some(DiagonalAlignment::BottomRight),
            seq_len_q: Some(sq),
            seq_len_kv: Some(skv),
            ..Default::default()
        },
        implementation: SdpaImplementation::Composite,
    };
    sdpa_forward(&mut g, &r, 91900).unwrap();
    let (rec, graph) = lower_and_emit(g);
    assert_eq!(graph.user_uids(), vec![1, 2, 3, 4, 10, 11, 12, 13]);
    let a = attrs(rec);
    let t = tensors(rec);
    for (uid, off) in [(1, 10), (2, 11), (3, 11), (4, 10)] {
        let got = attr(&a, t[&uid], CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC).map(|v| desc_id(&v));
        assert_eq!(got, Some(t[&off]), "tensor {uid}");
        assert!(
            t[&off] < t[&uid],
            "offset descriptor {off} is created before tensor {uid}"
        );
    }
    // Bottom-right with length tensors shifts by the per-batch lengths, not by fixed scalars.
    let seq = op_sequence(rec);
    let add = seq.iter().position(|s| s == "PW:ADD").unwrap();
    assert_eq!(&seq[add..add + 3], ["PW:ADD", "PW:SUB", "PW:CMP_GE"]);
    assert!(
        !graph
            .tensors
            .values()
            .any(|t| matches!(t.by_value, Some(dnnplan::cudnn::graph::ScalarValue::I32(_))))
    );
}
