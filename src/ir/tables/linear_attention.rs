//! Op rows: the linear-attention family (GDN, KDA, GDN-2, GDP, and Mamba-2): forward, backward,
//! span summary and summary backward of each. All are python-only (no cuDNN backend lowering). Shapes are THD:
//! tokens `[T, H, D]`, gates `[T, HO]` (per-channel families `[T, HO, K]`), state stored V-major
//! `[N, HO, V, K]`; `N = len(cu_seqlens) - 1`.

use super::helpers::*;
use crate::ir::dtype::DataType;
use crate::ir::enums::GATE_DOMAINS;
use crate::ir::op::{
    AttrSpec, Cond, DtypeRule, NodeType as T, OpFamily as F, OpSpec, OutSpec, Rule, ShapeRule as S,
};

/// One family's differences.
struct Family {
    prefix: &'static str,
    types: [T; 4],
    /// Extra input `w` (GDN-2 write gate).
    has_w: bool,
    /// `gate_lower_bound` (channel-gate safe gate: KDA, GDN-2).
    lower_bound: bool,
    /// `beta_guard` (GDN-2).
    beta_guard: bool,
    /// `num_householder` (GDP).
    householder: bool,
    /// dnnplan's `chunk_factors` ports (GDN only, session 37): the forward's
    /// `output_chunk_factors` output, the backward's optional input.
    chunk_factors: bool,
    /// The gate per key channel: `g [T, HO, K]`, `dt_bias [HO, K]` (KDA, GDN-2); else
    /// `g [T, HO]`, `dt_bias [HO]`.
    channel_gate: bool,
    /// `beta [T, HO, K]` (GDN-2's per-key erase gate); else `beta [T, HO]`.
    beta_per_key: bool,
    doc: &'static str,
}

const FAMILIES: [Family; 4] = [
    Family {
        prefix: "gdn",
        types: [T::Gdn, T::GdnBwd, T::GdnSummary, T::GdnSummaryBwd],
        has_w: false,
        lower_bound: false,
        beta_guard: false,
        householder: false,
        chunk_factors: true,
        channel_gate: false,
        beta_per_key: false,
        doc: "gated delta net (scalar gate per head)",
    },
    Family {
        prefix: "kda",
        types: [T::Kda, T::KdaBwd, T::KdaSummary, T::KdaSummaryBwd],
        has_w: false,
        lower_bound: true,
        beta_guard: false,
        householder: false,
        chunk_factors: false,
        channel_gate: true,
        beta_per_key: false,
        doc: "kimi delta attention (per-key-channel gate)",
    },
    Family {
        prefix: "gdn2",
        types: [T::Gdn2, T::Gdn2Bwd, T::Gdn2Summary, T::Gdn2SummaryBwd],
        has_w: true,
        lower_bound: true,
        beta_guard: true,
        householder: false,
        chunk_factors: false,
        channel_gate: true,
        beta_per_key: true,
        doc: "gated delta net 2 (channel gate, per-key erase gate, write gate w)",
    },
    Family {
        prefix: "gdp",
        types: [T::Gdp, T::GdpBwd, T::GdpSummary, T::GdpSummaryBwd],
        has_w: false,
        lower_bound: false,
        beta_guard: false,
        householder: true,
        chunk_factors: false,
        channel_gate: false,
        beta_per_key: false,
        doc: "gated delta product (num_householder updates per token)",
    },
];

const IO: &[DataType] = &[DataType::Half, DataType::Bfloat16];
const GATE: &[DataType] = &[DataType::Float, DataType::Bfloat16, DataType::Half];
const STATE: &[DataType] = &[DataType::Float, DataType::Bfloat16, DataType::Half];
const INDEX: &[DataType] = &[DataType::Int32, DataType::Int64];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Fwd,
    Bwd,
    Summary,
    SummaryBwd,
}

fn flag_attrs(f: &Family) -> Vec<AttrSpec> {
    let mut v = vec![
        a_bool("use_qk_l2norm", false).doc("in-kernel q/k row L2 norm"),
        a_bool("use_beta_sigmoid", false).doc("beta is a raw logit"),
        a_bool("allow_neg_eigval", false).doc("beta = 2 sigmoid(beta_raw); needs use_beta_sigmoid"),
        a_bool("safe_gate", false).doc("g is a raw logit (a_log, dt_bias apply)"),
        a_enum("gate_domain", GATE_DOMAINS, Some("log"))
            .doc("log: alpha = exp(g); linear: alpha = g"),
        a_bool("batch_invariant", false).doc("per-sequence results independent of the batch"),
    ];
    if f.lower_bound {
        v.push(a_float("gate_lower_bound", -5.0).doc("safe-gate lower bound lb"));
    }
    if f.beta_guard {
        v.push(a_bool("beta_guard", false).doc("erase-gate safeguard; needs use_qk_l2norm"));
    }
    if f.householder {
        v.push(a_int("num_householder", 1).doc("sub-token updates per token (n >= 1)"));
    }
    v
}

/// The sequence and dtype rules every row starts from: `cu_seqlens` a vector of indices, `k` of
/// the I/O dtypes, the gate `g`, its decay `decay` (`a_log` or Mamba-2's `a`) and `dt_bias` of
/// the gate dtypes.
fn seq_dtype_rules(decay: &'static str) -> [Rule; 6] {
    [
        Rule::Rank("cu_seqlens", 1),
        Rule::DtypeIn("cu_seqlens", INDEX),
        Rule::DtypeIn("k", IO),
        Rule::DtypeIn("g", GATE),
        Rule::DtypeIn(decay, GATE),
        Rule::DtypeIn("dt_bias", GATE),
    ]
}

fn flag_rules(f: &Family) -> Vec<Rule> {
    let mut v = vec![
        implies(Cond::Port("a_log"), Cond::True("safe_gate")),
        implies(Cond::Port("dt_bias"), Cond::True("safe_gate")),
        excludes(Cond::Is("gate_domain", "linear"), Cond::True("safe_gate")),
        implies(
            Cond::True("allow_neg_eigval"),
            Cond::True("use_beta_sigmoid"),
        ),
    ];
    v.extend(seq_dtype_rules("a_log"));
    if f.lower_bound {
        v.push(implies(
            Cond::Set("gate_lower_bound"),
            Cond::True("safe_gate"),
        ));
    }
    if f.beta_guard {
        v.push(implies(
            Cond::True("beta_guard"),
            Cond::True("use_qk_l2norm"),
        ));
        v.push(Rule::SameDtype("beta", "k"));
        v.push(Rule::SameDtype("w", "k"));
    }
    if f.householder {
        v.push(Rule::AttrMin("num_householder", 1.0));
    }
    v.extend(rank_rules(f));
    v.extend([Rule::LaHeads, Rule::LaRows]);
    v
}

/// Every port's rank (spec §2.2-2.5), checked before the head and row rules read their axes:
/// token tensors `[T, heads, dim]`, gates `[T, HO]` or per key channel `[T, HO, K]`, states and
/// checkpoints `[rows, HO, V, K]`, per-head parameters `[HO]` or `[HO, K]`; GDP's `k`, `v`, `beta`
/// on the expanded timeline in either form (`[T·n, ...]` or `[T, n, ...]`).
fn rank_rules(f: &Family) -> Vec<Rule> {
    let per_key = |yes: bool| if yes { 3 } else { 2 };
    let mut v = vec![
        Rule::Rank("q", 3),
        Rule::Rank("dO", 3),
        Rule::Rank("g", per_key(f.channel_gate)),
        Rule::Rank("a_log", 1),
        Rule::Rank("dt_bias", per_key(f.channel_gate) - 1),
        Rule::Rank("initial_state", 4),
        Rule::Rank("d_final_state", 4),
        Rule::Rank("state_checkpoints", 4),
    ];
    if f.householder {
        v.extend([
            Rule::RankIn("k", 3, 4),
            Rule::RankIn("v", 3, 4),
            Rule::RankIn("beta", 2, 3),
        ]);
    } else {
        v.extend([
            Rule::Rank("k", 3),
            Rule::Rank("v", 3),
            Rule::Rank("beta", per_key(f.beta_per_key)),
        ]);
    }
    if f.has_w {
        v.push(Rule::Rank("w", 3));
    }
    v
}

fn state_out(name: &'static str, dtype: DtypeRule) -> OutSpec {
    out(name, S::LaState).dtype(dtype)
}

// What every family and Mamba-2 share: the state cadence and aliasing attributes, the forward's
// state outputs, the transition output and the rules on them.

fn every_attr() -> AttrSpec {
    a_int("checkpoint_every_n_tokens", 0).doc("state dump cadence (0: none)")
}

fn overwrite_attr() -> AttrSpec {
    a_bool("overwrite_initial_state", false).doc("the final state may alias the initial state")
}

/// A forward's `final_state` (when `output_final_state`) and `state_checkpoints` (when the
/// cadence is positive, dtype of `io`).
fn fwd_state_outs(io: &'static str, state_dtype: DtypeRule) -> [OutSpec; 2] {
    [
        state_out("final_state", state_dtype).when(Cond::True("output_final_state")),
        out("state_checkpoints", S::LaCheckpoints)
            .like(io)
            .when(Cond::Positive("checkpoint_every_n_tokens")),
    ]
}

/// GDN's `chunk_factors` (dnnplan's extension, session 37): a training forward with
/// `output_chunk_factors` writes the chunks' factors (an opaque UINT8 tensor, `[max(T / 64 + N,
/// 1), HO, gdn_chunk_factor_bytes(V, checkpoint_every_n_tokens)]`), and its backward, given them
/// as the optional input `chunk_factors`, skips recomputing them. With checkpoints at every chunk
/// (`checkpoint_every_n_tokens = 64`, session 38) the buffer also holds each chunk's `U` tile,
/// and a backward given both the checkpoints and the factors replays nothing. Only the same
/// dnnplan build's forward of the same inputs and attributes may fill the buffer a backward
/// reads; which combinations an engine serves is the engine's rule.
fn chunk_factor_ports(o: OpSpec, kind: Kind) -> OpSpec {
    const BYTES: &[DataType] = &[DataType::Uint8];
    match kind {
        Kind::Fwd => o
            .outs(vec![
                out("chunk_factors", S::LaChunkFactors)
                    .dtype(DtypeRule::Fixed(DataType::Uint8))
                    .when(Cond::True("output_chunk_factors")),
            ])
            .attrs(vec![a_bool("output_chunk_factors", false).doc(
                "emit chunk_factors (dnnplan: the backward's factors, saved for it)",
            )]),
        Kind::Bwd => o
            .ins(opts(&["chunk_factors"]))
            .rules(vec![Rule::DtypeIn("chunk_factors", BYTES)]),
        Kind::Summary | Kind::SummaryBwd => o,
    }
}

/// A summary's optional `transition` output of shape `shape`.
fn transition_out(shape: S) -> OutSpec {
    out("transition", shape)
        .fp32()
        .when(Cond::True("output_transition"))
}

/// A forward's cadence and state-index rules.
fn fwd_state_rules() -> [Rule; 3] {
    [
        Rule::AttrMin("checkpoint_every_n_tokens", 0.0),
        implies(Cond::Port("state_indices"), Cond::Port("initial_state")),
        Rule::Rank("state_indices", 1),
    ]
}

/// A backward's cadence rules: a positive cadence reads `state_checkpoints`.
fn bwd_state_rules() -> [Rule; 2] {
    [
        Rule::AttrMin("checkpoint_every_n_tokens", 0.0),
        implies(
            Cond::Positive("checkpoint_every_n_tokens"),
            Cond::Port("state_checkpoints"),
        ),
    ]
}

/// `overwrite_initial_state` needs `a` and `b`.
fn overwrite_needs(a: Cond, b: Cond) -> Rule {
    implies(Cond::True("overwrite_initial_state"), Cond::All(vec![a, b]))
}

fn row(f: &Family, kind: Kind) -> OpSpec {
    let (name, ty, doc): (String, T, &str) = match kind {
        Kind::Fwd => (f.prefix.into(), f.types[0], "forward"),
        Kind::Bwd => (format!("{}_bwd", f.prefix), f.types[1], "backward"),
        Kind::Summary => (
            format!("{}_summary", f.prefix),
            f.types[2],
            "span summary (final state, transition)",
        ),
        Kind::SummaryBwd => (
            format!("{}_summary_bwd", f.prefix),
            f.types[3],
            "span summary backward",
        ),
    };
    let name: &'static str = Box::leak(name.into_boxed_str());
    let doc: &'static str = Box::leak(format!("{}: {doc}", f.doc).into_boxed_str());
    let mut o = op(name, ty, F::LinearAttention, doc).python_only();
    let mut ins: Vec<&'static str> = match kind {
        Kind::Fwd | Kind::Bwd => vec!["q", "k", "v", "g", "beta"],
        Kind::Summary => vec!["k", "v", "g", "beta"],
        Kind::SummaryBwd => vec!["q", "k", "g", "beta"],
    };
    if f.has_w && matches!(kind, Kind::Fwd | Kind::Bwd | Kind::Summary) {
        ins.push("w");
    }
    ins.push("cu_seqlens");
    if matches!(kind, Kind::Bwd | Kind::SummaryBwd) {
        ins.push("dO");
    }
    o = o.ins(reqs(&ins));
    o = o.ins(opts(match kind {
        Kind::Fwd => &["initial_state", "a_log", "dt_bias", "state_indices"],
        Kind::Bwd => &[
            "state_checkpoints",
            "initial_state",
            "d_final_state",
            "a_log",
            "dt_bias",
        ],
        Kind::Summary => &["initial_state", "a_log", "dt_bias"],
        Kind::SummaryBwd => &["d_final_state", "a_log", "dt_bias"],
    }));
    o = o.attrs(flag_attrs(f)).rules(flag_rules(f));
    if f.chunk_factors {
        o = chunk_factor_ports(o, kind);
    }
    let scale = a_float_opt("scale").doc("q scale (default 1/sqrt(K))");
    let (every, overwrite) = (every_attr(), overwrite_attr());
    let transition = a_bool("output_transition", false).doc("emit transition [N, HO, K, K]");
    let state_dtype = DtypeRule::SameAsOr("initial_state", DataType::Float);
    match kind {
        Kind::Fwd => {
            o = o
                .outs(vec![out("O", S::LaOutput).like("q")])
                .outs(fwd_state_outs("q", state_dtype))
                .attrs(vec![
                    scale,
                    a_bool("output_final_state", false).doc("emit final_state"),
                    every,
                    overwrite,
                ])
                .rules(fwd_state_rules())
                .rules(vec![
                    Rule::Msg(
                        Box::new(Rule::DimEqOffset(
                            ("state_indices", 0),
                            ("cu_seqlens", 0),
                            -1,
                        )),
                        "state_indices must be [N] with N = len(cu_seqlens) - 1",
                    ),
                    Rule::DtypeIn("state_indices", &[DataType::Int32]),
                    overwrite_needs(
                        Cond::Port("initial_state"),
                        Cond::True("output_final_state"),
                    ),
                    Rule::DtypeIn("q", IO),
                    Rule::SameDtype("k", "q"),
                    Rule::SameDtype("v", "q"),
                    Rule::DtypeIn("initial_state", STATE),
                    Rule::SameDtype("final_state", "initial_state"),
                ]);
        }
        Kind::Bwd => {
            let mut outs = vec![
                grad("dQ", "q"),
                grad("dK", "k"),
                grad("dV", "v"),
                grad("dG", "g"),
                grad("dBeta", "beta"),
            ];
            if f.has_w {
                outs.push(grad("dW", "w"));
            }
            outs.extend([
                opt_grad("d_initial_state", "initial_state"),
                opt_grad("d_a_log", "a_log"),
                opt_grad("d_dt_bias", "dt_bias"),
            ]);
            o = o
                .outs(outs)
                .attrs(vec![scale, every, overwrite])
                .rules(bwd_state_rules())
                .rules(vec![
                    overwrite_needs(Cond::Port("d_final_state"), Cond::Port("initial_state")),
                    Rule::DtypeIn("q", IO),
                    Rule::SameDtype("k", "q"),
                    Rule::SameDtype("v", "q"),
                    Rule::SameDtype("dO", "q"),
                    Rule::DtypeIn("initial_state", STATE),
                    Rule::SameDtype("d_final_state", "initial_state"),
                    Rule::LaGradPresence,
                ]);
        }
        Kind::Summary => {
            o = o
                .outs(vec![
                    state_out("final_state", state_dtype),
                    transition_out(S::LaTransition),
                ])
                .attrs(vec![transition])
                .rules(vec![
                    Rule::SameDtype("v", "k"),
                    Rule::DtypeIn("initial_state", STATE),
                ]);
        }
        Kind::SummaryBwd => {
            o = o
                .outs(vec![
                    state_out(
                        "d_initial_state",
                        DtypeRule::SameAsOr("d_final_state", DataType::Float),
                    ),
                    transition_out(S::LaTransition),
                ])
                .attrs(vec![scale, transition])
                .rules(vec![
                    Rule::SameDtype("q", "k"),
                    Rule::SameDtype("dO", "k"),
                    Rule::DtypeIn("d_final_state", STATE),
                ]);
        }
    }
    o
}

fn mamba2_attrs() -> Vec<AttrSpec> {
    vec![
        a_bool("dt_softplus", true).doc("dt = softplus(dt_raw + dt_bias)"),
        a_float("dt_min", 0.0).doc("dt clamp lower bound"),
        a_float("dt_max", f64::INFINITY).doc("dt clamp upper bound"),
        a_bool("batch_invariant", false).doc("per-sequence results independent of the batch"),
    ]
}

fn mamba2_rules() -> Vec<Rule> {
    let mut v = seq_dtype_rules("a").to_vec();
    v.extend([Rule::LaHeads, Rule::LaRows]);
    v
}

/// Mamba-2 rows: `q = C [T,G,K]`, `k = B [T,G,K]`, `v = x [T,H,V]`, `g = dt [T,H]`, `a = A [H]`.
fn mamba2_rows() -> Vec<OpSpec> {
    let doc = "mamba-2 state-space recurrence";
    let state_dtype = DtypeRule::SameAsOr("initial_state", DataType::Float);
    let transition =
        || a_bool("output_transition", false).doc("emit transition [N, HO] (log2 decay)");
    let fwd = op("mamba2", T::Mamba2, F::LinearAttention, doc)
        .python_only()
        .ins(reqs(&["q", "k", "v", "g", "a", "cu_seqlens"]))
        .ins(opts(&[
            "initial_state",
            "dt_bias",
            "d",
            "z",
            "state_indices",
        ]))
        .outs(vec![out("O", S::LaOutput).like("v")])
        .outs(fwd_state_outs("v", state_dtype))
        .outs(vec![
            out("O_pre", S::LaOutput)
                .like("v")
                .when(Cond::True("output_pre_gate")),
        ])
        .attrs(vec![
            a_bool("output_final_state", false).doc("emit final_state"),
            every_attr(),
            a_bool("output_pre_gate", false)
                .doc("emit O_pre (the pre-gate output, for the z backward)"),
            overwrite_attr(),
        ])
        .attrs(mamba2_attrs())
        .rules(mamba2_rules())
        .rules(fwd_state_rules())
        .rules(vec![overwrite_needs(
            Cond::Port("initial_state"),
            Cond::True("output_final_state"),
        )]);
    let bwd = op("mamba2_bwd", T::Mamba2Bwd, F::LinearAttention, doc)
        .python_only()
        .ins(reqs(&["q", "k", "v", "g", "a", "cu_seqlens", "dO"]))
        .ins(opts(&[
            "state_checkpoints",
            "initial_state",
            "d_final_state",
            "dt_bias",
            "d",
            "z",
            "O_pre",
        ]))
        .outs(vec![
            grad("dQ", "q"),
            grad("dK", "k"),
            grad("dV", "v"),
            grad("dG", "g"),
            grad("dA", "a"),
            opt_grad("d_initial_state", "initial_state"),
            opt_grad("d_dt_bias", "dt_bias"),
            opt_grad("dD", "d"),
            opt_grad("dZ", "z"),
        ])
        .attrs(vec![every_attr(), overwrite_attr()])
        .attrs(mamba2_attrs())
        .rules(mamba2_rules())
        .rules(bwd_state_rules())
        .rules(vec![
            Rule::Msg(
                Box::new(implies(Cond::Port("z"), Cond::Port("O_pre"))),
                "the z backward needs O_pre",
            ),
            Rule::LaGradPresence,
        ]);
    let summary = op("mamba2_summary", T::Mamba2Summary, F::LinearAttention, doc)
        .python_only()
        .ins(reqs(&["k", "v", "g", "a", "cu_seqlens"]))
        .ins(opts(&["initial_state", "dt_bias"]))
        .outs(vec![
            state_out("final_state", state_dtype),
            transition_out(S::LaTransitionScalar),
        ])
        .attrs(vec![transition()])
        .attrs(mamba2_attrs())
        .rules(mamba2_rules());
    let summary_bwd = op(
        "mamba2_summary_bwd",
        T::Mamba2SummaryBwd,
        F::LinearAttention,
        doc,
    )
    .python_only()
    .ins(reqs(&["q", "k", "g", "a", "cu_seqlens", "dO"]))
    .ins(opts(&["d_final_state", "dt_bias"]))
    .outs(vec![
        state_out(
            "d_initial_state",
            DtypeRule::SameAsOr("d_final_state", DataType::Float),
        ),
        transition_out(S::LaTransitionScalar),
    ])
    .attrs(vec![transition()])
    .attrs(mamba2_attrs())
    .rules(mamba2_rules());
    vec![fwd, bwd, summary, summary_bwd]
}

/// The linear-attention rows (per family: fwd, bwd, summary, summary_bwd; Mamba-2 last).
pub(crate) fn ops() -> Vec<OpSpec> {
    let mut v: Vec<OpSpec> = FAMILIES
        .iter()
        .flat_map(|f| [Kind::Fwd, Kind::Bwd, Kind::Summary, Kind::SummaryBwd].map(|k| row(f, k)))
        .collect();
    v.extend(mamba2_rows());
    // The flag and dtype rule sets are shared across fwd/bwd/summary ops; each keeps its own.
    v.into_iter().map(OpSpec::retain_applicable_rules).collect()
}
