//! Op rows: the SDPA family (sdpa, sdpa_backward, sdpa_fp8, sdpa_fp8_backward, sdpa_mxfp8,
//! sdpa_mxfp8_backward) with the full kwarg schema of the reference: positional tensors, optional
//! tensor kwargs, attributes, out-kwargs (`rng_dump`, `score_max`, `score_sum_exp`, `dBias`,
//! `dSink_token`, `sf_o`: caller-provided outputs) and conditional outputs.
//!
//! Encodings kept from the reference IR: a float `attn_scale` is the attribute `attn_scale`, a
//! tensor one the input port `attn_scale` (never both). The dropout tuple is flattened: forward
//! `(p, seed, offset)` → attribute `dropout_0` = p, ports `dropout_1` = seed, `dropout_2` = offset;
//! `(mask, scale)` (backward `(mask, scale, scale_inv)`) → ports `dropout_0`, `dropout_1`
//! (`dropout_2`). Callback kwargs (`score_mod`, `score_mod_bprop`, `fn`) are not representable in a
//! serializable graph and are not part of this IR.

use super::helpers::*;
use crate::ir::dtype::DataType;
use crate::ir::enums::*;
use crate::ir::op::{
    AttrSpec, Cond, NodeType as T, OpFamily as F, OpSpec, OutSpec, PortSpec, Rule, ShapeRule as S,
};

/// Mask-attribute names, which differ across the family.
struct Names {
    sliding: Option<&'static str>,
    left: &'static str,
    right: &'static str,
}

const DIAG: Names = Names {
    sliding: Some("sliding_window_length"),
    left: "diagonal_band_left_bound",
    right: "diagonal_band_right_bound",
};
const FP8_FWD: Names = Names {
    sliding: Some("sliding_window"),
    left: "left_bound",
    right: "right_bound",
};
const LR: Names = Names {
    sliding: None,
    left: "left_bound",
    right: "right_bound",
};
const DIAG_NO_SLIDING: Names = Names {
    sliding: None,
    left: "diagonal_band_left_bound",
    right: "diagonal_band_right_bound",
};

/// The optional per-batch sequence-length inputs of the forward ops (padding / ragged).
const LENS: &[&str] = &["seq_len_q", "seq_len_kv", "cu_seq_len_q", "cu_seq_len_kv"];

/// The required inputs of the FP8 and MXFP8 forward ops: `q, k, v` and their descales.
const QKV_DESCALED: &[&str] = &["q", "k", "v", "descale_q", "descale_k", "descale_v"];

fn dropout_set() -> Cond {
    Cond::Any(vec![Cond::Set("dropout_0"), Cond::Port("dropout_0")])
}

fn mask_attrs(n: &Names, alibi: bool) -> Vec<AttrSpec> {
    let mut v = vec![
        a_float_opt("attn_scale")
            .doc("softmax scale as a fused value (or bind the `attn_scale` input)"),
        a_bool("use_padding_mask", false).doc("per-batch lengths from seq_len_* / cu_seq_len_*"),
        a_bool("use_causal_mask", false).doc("causal, top-left aligned (right bound 0)"),
        a_bool("use_causal_mask_bottom_right", false).doc("causal, bottom-right aligned"),
        a_enum("diagonal_alignment", DIAGONAL_ALIGNMENTS, Some("TOP_LEFT")),
        a_int_opt(n.left).doc("band left bound"),
        a_int_opt(n.right).doc("band right bound"),
        a_enum("softmax_precision", SOFTMAX_PRECISIONS, None).doc("python-only: softmax precision"),
        a_bool_opt("attn_scale_prefolded").doc("python-only: q already carries the scale"),
    ];
    if alibi {
        v.push(a_bool("use_alibi_mask", false).doc("ALiBi bias"));
    }
    if let Some(s) = n.sliding {
        v.push(a_int_opt(s).doc("sliding window length (sets the left bound)"));
    }
    v
}

fn mask_rules(n: &Names) -> Vec<Rule> {
    let causal = Cond::True("use_causal_mask");
    let br = Cond::True("use_causal_mask_bottom_right");
    let mut v = vec![
        Rule::Msg(
            Box::new(excludes(causal.clone(), br.clone())),
            "use_causal_mask and use_causal_mask_bottom_right are mutually exclusive",
        ),
        excludes(causal, Cond::Set(n.right)),
        excludes(br.clone(), Cond::Set(n.right)),
        Rule::Msg(
            Box::new(excludes(Cond::Port("attn_scale"), Cond::Set("attn_scale"))),
            "attn_scale is given both as a value and as a tensor",
        ),
        excludes(br.clone(), Cond::Port("bias")),
        excludes(br.clone(), Cond::True("use_alibi_mask")),
        excludes(br, dropout_set()),
        Rule::DtypeNot("bias", DataType::Boolean),
        implies(
            Cond::True("use_padding_mask"),
            Cond::Any(vec![Cond::Port("seq_len_q"), Cond::Port("cu_seq_len_q")]),
        ),
        implies(
            Cond::True("use_padding_mask"),
            Cond::Any(vec![Cond::Port("seq_len_kv"), Cond::Port("cu_seq_len_kv")]),
        ),
        implies(Cond::Port("seq_len_q"), Cond::True("use_padding_mask")),
        implies(Cond::Port("seq_len_kv"), Cond::True("use_padding_mask")),
        excludes(Cond::Port("seq_len_q"), Cond::Port("cu_seq_len_q")),
        excludes(Cond::Port("seq_len_kv"), Cond::Port("cu_seq_len_kv")),
    ];
    if let Some(s) = n.sliding {
        v.push(Rule::Msg(
            Box::new(excludes(Cond::Set(s), Cond::Set(n.left))),
            "sliding window and left_bound cannot be set at the same time",
        ));
        v.push(Rule::AttrMin(s, 1.0));
    }
    v
}

fn tensor_rules(ports: &[&'static str]) -> Vec<Rule> {
    let mut v = Vec::new();
    for p in ports {
        v.push(Rule::Rank(p, 4));
        v.push(Rule::LastStrideOne(p));
    }
    v.extend([
        Rule::DimEq(("k", 0), ("q", 0)),
        Rule::DimEq(("v", 0), ("q", 0)),
        Rule::DimEq(("k", -1), ("q", -1)),
        Rule::DimEq(("v", 2), ("k", 2)),
        Rule::Msg(
            Box::new(Rule::DimDivisible(("q", 1), ("k", 1))),
            "h_q must be a multiple of h_k (GQA/MQA)",
        ),
        Rule::Msg(
            Box::new(Rule::DimDivisible(("q", 1), ("v", 1))),
            "h_q must be a multiple of h_v (GQA/MQA)",
        ),
        Rule::Rank("bias", 4),
    ]);
    v
}

fn dropout_rules(backward: bool) -> Vec<Rule> {
    let mut v = vec![
        Rule::Msg(
            Box::new(excludes(Cond::Set("dropout_0"), Cond::Port("dropout_0"))),
            "dropout: not both a probability and a custom mask",
        ),
        implies(
            Cond::Set("dropout_0"),
            Cond::All(vec![Cond::Port("dropout_1"), Cond::Port("dropout_2")]),
        ),
        implies(Cond::Port("dropout_0"), Cond::Port("dropout_1")),
        Rule::AttrMin("dropout_0", 0.0),
        Rule::Msg(
            Box::new(Rule::AttrBelow("dropout_0", 1.0)),
            "dropout probability 1 is rejected",
        ),
    ];
    if backward {
        v.push(implies(Cond::Port("dropout_0"), Cond::Port("dropout_2")));
    }
    v
}

fn dropout_ports() -> Vec<PortSpec> {
    opts(&["dropout_0", "dropout_1", "dropout_2"])
}

fn dropout_attr() -> AttrSpec {
    a_float_opt("dropout_0").doc("dropout probability (tuple form (p, seed, offset))")
}

fn stats_out() -> OutSpec {
    out("Stats", S::SdpaStats).fp32().when(Cond::Any(vec![
        Cond::True("generate_stats"),
        Cond::SetFalse("is_inference"),
    ]))
}

fn stats_mode_attrs() -> Vec<AttrSpec> {
    vec![
        a_bool_opt("generate_stats")
            .doc("emit Stats (exactly one of generate_stats / is_inference)"),
        a_bool_opt("is_inference").doc("= !generate_stats"),
    ]
}

fn fwd_extras() -> Vec<AttrSpec> {
    vec![
        a_enum("implementation", ATTENTION_IMPLEMENTATIONS, Some("AUTO")),
        a_bool("unfuse_fma", false),
    ]
}

fn paged() -> (Vec<PortSpec>, AttrSpec, Vec<Rule>) {
    (
        opts(&["paged_attention_k_table", "paged_attention_v_table"]),
        a_int_opt("paged_attention_max_seq_len_kv").doc("max kv length under paged attention"),
        vec![
            implies(
                Cond::Port("paged_attention_k_table"),
                Cond::Port("paged_attention_v_table"),
            ),
            implies(
                Cond::Port("paged_attention_v_table"),
                Cond::Port("paged_attention_k_table"),
            ),
            implies(
                Cond::Port("paged_attention_k_table"),
                Cond::All(vec![Cond::Port("seq_len_q"), Cond::Port("seq_len_kv")]),
            ),
            implies(
                Cond::Set("paged_attention_max_seq_len_kv"),
                Cond::Port("paged_attention_k_table"),
            ),
        ],
    )
}

fn ragged_attrs() -> Vec<AttrSpec> {
    vec![
        a_int_opt("max_total_seq_len_q").doc("ragged Q: total tokens bound"),
        a_int_opt("max_total_seq_len_kv").doc("ragged KV: total tokens bound"),
    ]
}

fn amax(name: &'static str) -> OutSpec {
    out(name, S::Scalar4).fp32()
}

fn python_only_common() -> Vec<Cond> {
    vec![
        Cond::Set("softmax_precision"),
        Cond::True("attn_scale_prefolded"),
    ]
}

fn backward_common(o: &mut OpSpec) {
    o.attrs.push(a_bool("use_deterministic_algorithm", false));
    o.outputs
        .push(out("dSink_token", S::SameAs("sink_token")).caller());
    o.rules.push(Rule::Msg(
        Box::new(implies(
            Cond::Output("dSink_token"),
            Cond::Port("sink_token"),
        )),
        "dSink_token requires sink_token",
    ));
    o.rules.push(Rule::DtypeIn("stats", &[DataType::Float]));
}

/// What the FP8 and MXFP8 backward ops share after their required ports and outputs: the
/// optional ports (attn_scale, seq lens, dropout, sink_token), the left/right-bound mask,
/// dropout and ragged attributes, the tensor rules over `tensors`, the mask and dropout rules,
/// then `backward_common`.
fn fp8_backward_common(o: OpSpec, tensors: &[&'static str]) -> OpSpec {
    let mut o = o
        .ins(opts(&["attn_scale", "seq_len_q", "seq_len_kv"]))
        .ins(dropout_ports())
        .ins(opts(&["sink_token"]))
        .attrs(mask_attrs(&LR, false))
        .attrs(vec![dropout_attr()])
        .attrs(ragged_attrs())
        .rules(tensor_rules(tensors))
        .rules(mask_rules(&LR))
        .rules(dropout_rules(true))
        .python_only_on(python_only_common());
    backward_common(&mut o);
    o
}

/// What the FP16/BF16 and FP8 forward ops share after their own inputs: the dropout and paged
/// ports, then `tail` inputs; outputs `O`, `Stats`, then `amax` outputs, then the caller-provided
/// `rng_dump`, `score_max`, `score_sum_exp`; the stats-mode, `mask`, dropout, paged, ragged and
/// implementation attributes; the stats rules, then `own` rules, then the tensor rules over
/// `q, k, v, O`, the `mask`, forward dropout and paged rules.
fn forward_common(
    o: OpSpec,
    mask: &Names,
    tail: &[&'static str],
    amax: Vec<OutSpec>,
    own: Vec<Rule>,
) -> OpSpec {
    let (pports, pattr, prules) = paged();
    let stats_rules = vec![
        Rule::ExactlyOne(Cond::Set("generate_stats"), Cond::Set("is_inference")),
        Rule::DtypeIn("Stats", &[DataType::Float]),
    ];
    o.ins(dropout_ports())
        .ins(pports)
        .ins(opts(tail))
        .outs(vec![out("O", S::SdpaO), stats_out()])
        .outs(amax)
        .outs(vec![
            out("rng_dump", S::Given).caller(),
            out("score_max", S::SdpaStats).fp32().caller(),
            out("score_sum_exp", S::SdpaStats).fp32().caller(),
        ])
        .attrs(stats_mode_attrs())
        .attrs(mask_attrs(mask, true))
        .attrs(vec![dropout_attr(), pattr, a_bool("stats_use_log2", false)])
        .attrs(ragged_attrs())
        .attrs(fwd_extras())
        .rules(stats_rules)
        .rules(own)
        .rules(tensor_rules(&["q", "k", "v", "O"]))
        .rules(mask_rules(mask))
        .rules(dropout_rules(false))
        .rules(prules)
}

fn sdpa() -> OpSpec {
    let o = op(
        "sdpa",
        T::Sdpa,
        F::Sdpa,
        "scaled dot-product attention forward (fp16/bf16)",
    )
    .ins(reqs(&["q", "k", "v"]))
    .ins(opts(&["attn_scale", "bias", "block_mask"]))
    .ins(opts(LENS));
    let own = vec![implies(
        Cond::Port("block_mask"),
        Cond::Not(Box::new(Cond::Is("implementation", "COMPOSITE"))),
    )];
    forward_common(o, &DIAG, &["sink_token", "kv_mask"], vec![], own)
        .python_only_on([python_only_common(), vec![Cond::Port("kv_mask")]].concat())
}

fn sdpa_backward() -> OpSpec {
    let mut o = op(
        "sdpa_backward",
        T::SdpaBwd,
        F::Sdpa,
        "scaled dot-product attention backward (fp16/bf16)",
    )
    .ins(reqs(&["q", "k", "v", "o", "dO", "stats"]))
    .ins(opts(&["attn_scale", "bias", "seq_len_q", "seq_len_kv"]))
    .ins(dropout_ports())
    .ins(opts(&["sink_token"]))
    .outs(vec![
        grad("dQ", "q"),
        grad("dK", "k"),
        grad("dV", "v"),
        out("dBias", S::SameAs("bias")).caller(),
        out("rng_dump", S::Given).caller(),
    ])
    .attrs(mask_attrs(&DIAG, true))
    .attrs(vec![dropout_attr()])
    .attrs(ragged_attrs())
    .rules(tensor_rules(&["q", "k", "v", "o", "dO", "dQ", "dK", "dV"]))
    .rules(mask_rules(&DIAG))
    .rules(dropout_rules(true))
    .rules(vec![
        implies(Cond::Output("dBias"), Cond::Port("bias")),
        Rule::Msg(
            Box::new(Rule::AttrMin("diagonal_band_left_bound", 1.0)),
            "backward left bound must be > 0",
        ),
    ])
    .python_only_on(python_only_common());
    backward_common(&mut o);
    o
}

fn sdpa_fp8() -> OpSpec {
    let o = op(
        "sdpa_fp8",
        T::SdpaFp8,
        F::Sdpa,
        "FP8 scaled dot-product attention forward",
    )
    .ins(reqs(QKV_DESCALED))
    .ins(opts(&["descale_s", "scale_s", "scale_o"]))
    .ins(opts(&["attn_scale", "bias"]))
    .ins(opts(LENS));
    let amax_outs = vec![amax("Amax_S").when(Cond::Port("descale_s")), amax("Amax_O")];
    let own = vec![
        implies(Cond::Port("descale_s"), Cond::Port("scale_s")),
        Rule::Msg(
            Box::new(excludes(Cond::All(vec![]), Cond::Port("bias"))),
            "bias is rejected for FP8",
        ),
    ];
    forward_common(o, &FP8_FWD, &["sink_token"], amax_outs, own)
        .outs(vec![out("sf_o", S::Given).caller()])
        .python_only_on([python_only_common(), vec![Cond::Output("sf_o")]].concat())
}

fn sdpa_fp8_backward() -> OpSpec {
    let o = op(
        "sdpa_fp8_backward",
        T::SdpaFp8Bwd,
        F::Sdpa,
        "FP8 scaled dot-product attention backward",
    )
    .ins(reqs(&[
        "q",
        "k",
        "v",
        "o",
        "dO",
        "stats",
        "descale_q",
        "descale_k",
        "descale_v",
        "descale_o",
        "descale_dO",
        "descale_s",
        "descale_dP",
        "scale_s",
        "scale_dQ",
        "scale_dK",
        "scale_dV",
        "scale_dP",
    ]))
    .outs(vec![
        grad("dQ", "q"),
        grad("dK", "k"),
        grad("dV", "v"),
        amax("amax_dQ"),
        amax("amax_dK"),
        amax("amax_dV"),
        amax("amax_dP"),
    ]);
    fp8_backward_common(o, &["q", "k", "v", "o", "dO", "dQ", "dK", "dV"])
}

fn sdpa_mxfp8() -> OpSpec {
    let (pports, pattr, prules) = paged();
    op(
        "sdpa_mxfp8",
        T::SdpaMxfp8,
        F::Sdpa,
        "MXFP8 scaled dot-product attention forward (E8M0 F8_128x4 descales)",
    )
    .ins(reqs(QKV_DESCALED))
    .ins(opts(&["attn_scale"]))
    .ins(opts(LENS))
    .ins(pports)
    .ins(opts(&["sink_token", "scale_o"]))
    .outs(vec![
        out("O", S::SdpaO),
        out("Stats", S::SdpaStats)
            .fp32()
            .when(Cond::True("generate_stats")),
        amax("Amax_O"),
        out("sf_o", S::Given).caller(),
    ])
    .attrs(vec![
        a_bool_opt("generate_stats").doc("emit Stats (required)"),
    ])
    .attrs(mask_attrs(&DIAG_NO_SLIDING, false))
    .attrs(vec![pattr])
    .attrs(fwd_extras())
    .rules(vec![
        required_attr("generate_stats"),
        Rule::DtypeIn("Stats", &[DataType::Float]),
        Rule::DtypeIn("descale_q", &[DataType::Fp8E8m0]),
        Rule::DtypeIn("descale_k", &[DataType::Fp8E8m0]),
        Rule::DtypeIn("descale_v", &[DataType::Fp8E8m0]),
    ])
    .rules(tensor_rules(&["q", "k", "v", "O"]))
    .rules(mask_rules(&DIAG_NO_SLIDING))
    .rules(prules)
    .python_only_on(
        [
            python_only_common(),
            vec![Cond::Port("scale_o"), Cond::Output("sf_o")],
        ]
        .concat(),
    )
}

fn sdpa_mxfp8_backward() -> OpSpec {
    let o = op(
        "sdpa_mxfp8_backward",
        T::SdpaMxfp8Bwd,
        F::Sdpa,
        "MXFP8 scaled dot-product attention backward",
    )
    .ins(reqs(&[
        "q",
        "q_T",
        "k",
        "k_T",
        "v",
        "o_f16",
        "dO_f16",
        "dO",
        "dO_T",
        "stats",
        "descale_q",
        "descale_q_T",
        "descale_k",
        "descale_k_T",
        "descale_v",
        "descale_dO",
        "descale_dO_T",
    ]))
    .outs(vec![
        out("dQ", S::SameAs("q")).like("o_f16"),
        out("dK", S::SameAs("k")).like("o_f16"),
        out("dV", S::SameAs("v")).like("o_f16"),
        amax("amax_dQ"),
        amax("amax_dK"),
        amax("amax_dV"),
    ]);
    fp8_backward_common(o, &["q", "k", "v", "dO", "dQ", "dK", "dV"])
}

/// The SDPA rows. The mask, dropout and tensor rule sets are shared across the family; each op
/// keeps the rules whose kwargs it has.
pub(crate) fn ops() -> Vec<OpSpec> {
    [
        sdpa(),
        sdpa_backward(),
        sdpa_fp8(),
        sdpa_fp8_backward(),
        sdpa_mxfp8(),
        sdpa_mxfp8_backward(),
    ]
    .into_iter()
    .map(OpSpec::retain_applicable_rules)
    .collect()
}
