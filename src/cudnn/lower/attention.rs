//! Attention lowerings: composite softmax, padding and diagonal-band (causal) masks as pointwise
//! chains, SDPA forward (composite, or the dedicated `OPERATION_SDPA_FWD` where the cuDNN version
//! and the requested features allow it) and SDPA backward (always composite).
//!
//! The composite shapes follow the reference frontend exactly (op order, compute types, the
//! in-place Kᵀ/Vᵀ descriptor swap, the cast of P to Q's dtype before P·V), because the backend's
//! attention runtime-fusion engines pattern-match them.

use crate::cudnn::consts::*;
use crate::cudnn::graph::{
    GraphBuilder, OpSpec, PointwiseParams, ScalarValue, Uid, packed_strides,
};
use crate::error::{Error, Result};

/// Mask fill value for runtime >= 9.10 (the reference uses `-FLT_MAX` before).
pub fn mask_fill(version: usize) -> f32 {
    if version < 9_10_00 {
        f32::MIN
    } else {
        f32::NEG_INFINITY
    }
}

/// Diagonal alignment of a causal/band mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagonalAlignment {
    /// Query i sees keys j <= i.
    TopLeft,
    /// Query i sees keys j <= i + (s_kv - s_q).
    BottomRight,
}

/// Which SDPA forward lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdpaImplementation {
    /// Unified when the version and features allow, else composite.
    Auto,
    /// Always the composite graph.
    Composite,
    /// Always the dedicated backend operation (error if not allowed).
    Unified,
}

/// The attention scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttnScale {
    /// A host value, fused as a by-value FLOAT scalar.
    Value(f32),
    /// A tensor (`[1,1,1,1]` FLOAT).
    Tensor(Uid),
}

/// Dropout (probability form).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropout {
    /// Drop probability p in [0, 1).
    pub probability: f32,
    /// Seed tensor (`[1,1,1,1]` INT64).
    pub seed: Uid,
    /// Offset tensor (`[1,1,1,1]` INT64).
    pub offset: Uid,
}

/// The mask/score options shared by forward and backward.
#[derive(Clone, Debug, Default)]
pub struct ScoreOptions {
    /// Attention scale (none = 1).
    pub attn_scale: Option<AttnScale>,
    /// Additive bias `[b|1, h|1, s_q, s_kv]`.
    pub bias: Option<Uid>,
    /// Causal mask (right bound 0) with this alignment.
    pub causal: Option<DiagonalAlignment>,
    /// Per-batch query lengths `[b,1,1,1]` INT32 (padding mask + matmul overrides).
    pub seq_len_q: Option<Uid>,
    /// Per-batch key/value lengths `[b,1,1,1]` INT32.
    pub seq_len_kv: Option<Uid>,
    /// Dropout.
    pub dropout: Option<Dropout>,
}

/// SDPA forward request. Q `[b,h_q,s_q,d]`, K `[b,h_k,s_kv,d]`, V `[b,h_v,s_kv,d_v]`,
/// O `[b,h_q,s_q,d_v]`; GQA/MQA when `h_k | h_q`. Ragged (THD) tensors carry their offsets in
/// the builder (`set_ragged_offset`).
#[derive(Clone, Debug)]
pub struct SdpaForwardRequest {
    /// Q.
    pub q: Uid,
    /// K.
    pub k: Uid,
    /// V.
    pub v: Uid,
    /// O.
    pub o: Uid,
    /// Stats (natural-log LSE) `[b,h_q,s_q,1]` FLOAT, when requested.
    pub stats: Option<Uid>,
    /// Score options.
    pub options: ScoreOptions,
    /// Implementation choice.
    pub implementation: SdpaImplementation,
}

/// SDPA backward request (inputs of the forward plus O, dO, Stats; outputs dQ, dK, dV).
#[derive(Clone, Debug)]
pub struct SdpaBackwardRequest {
    /// Q.
    pub q: Uid,
    /// K.
    pub k: Uid,
    /// V.
    pub v: Uid,
    /// O.
    pub o: Uid,
    /// dO.
    pub d_o: Uid,
    /// Stats from the forward.
    pub stats: Uid,
    /// dQ.
    pub dq: Uid,
    /// dK.
    pub dk: Uid,
    /// dV.
    pub dv: Uid,
    /// dBias output (same dims as the bias).
    pub dbias: Option<Uid>,
    /// Score options (same as the forward).
    pub options: ScoreOptions,
    /// Deterministic algorithm requested (forces the dP-workspace dQ path).
    pub deterministic: bool,
}

struct Dims {
    b: i64,
    h_q: i64,
    s_q: i64,
    s_kv: i64,
}

fn dims_of(g: &GraphBuilder, q: Uid, k: Uid, node: &str) -> Result<Dims> {
    let (qd, kd) = (&g.tensor(q)?.dims, &g.tensor(k)?.dims);
    if qd.len() != 4 || kd.len() != 4 {
        return Err(Error::invalid_graph(
            node,
            Some("Q"),
            "Q and K must be 4-D [b,h,s,d]",
        ));
    }
    if qd[3] != kd[3] {
        return Err(Error::invalid_graph(
            node,
            Some("K"),
            format!("d_qk of Q ({}) and K ({}) differ", qd[3], kd[3]),
        ));
    }
    if kd[1] == 0 || qd[1] % kd[1] != 0 {
        return Err(Error::invalid_graph(
            node,
            Some("K"),
            format!("h_k ({}) must divide h_q ({})", kd[1], qd[1]),
        ));
    }
    Ok(Dims {
        b: qd[0],
        h_q: qd[1],
        s_q: qd[2],
        s_kv: kd[2],
    })
}

/// Swaps the last two dims and strides of a tensor in place (K -> Kᵀ descriptor, same uid).
fn transpose_in_place(g: &mut GraphBuilder, uid: Uid) -> Result<()> {
    let t = g.tensor_mut(uid)?;
    let n = t.dims.len();
    t.dims.swap(n - 1, n - 2);
    t.strides.swap(n - 1, n - 2);
    Ok(())
}

fn int_params(axis: Option<i64>) -> PointwiseParams {
    PointwiseParams {
        axis,
        ..PointwiseParams::default()
    }
}

/// `mode(inputs)` into a new virtual tensor `name` of `dtype` with default parameters (the
/// composite graphs' plain pointwise steps).
fn pw(g: &mut GraphBuilder, name: &str, mode: u32, inputs: &[Uid], dtype: u32) -> Result<Uid> {
    g.pointwise(name, mode, inputs, dtype, PointwiseParams::default())
}

/// `mode(inputs)` into the existing tensor `y` at `compute`, with default parameters.
fn pw_into(g: &mut GraphBuilder, mode: u32, compute: u32, inputs: &[Uid], y: Uid) -> Result<()> {
    g.pointwise_into(mode, compute, inputs, y, PointwiseParams::default())
}

/// `c = a · b` at the graph's compute type with the given GEMM M/N/K overrides (no padding).
fn matmul(
    g: &mut GraphBuilder,
    a: Uid,
    b: Uid,
    c: Uid,
    m_override: Option<Uid>,
    n_override: Option<Uid>,
    k_override: Option<Uid>,
) -> Result<()> {
    let compute = g.compute;
    g.push(OpSpec::Matmul {
        a,
        b,
        c,
        compute,
        m_override,
        n_override,
        k_override,
        padding_value: None,
    })
}

/// The INT32 index of `x`'s elements along `axis`, computed at `compute`, as a new tensor `name`.
fn gen_index(g: &mut GraphBuilder, name: &str, compute: u32, x: Uid, axis: i64) -> Result<Uid> {
    let (mode, int) = (CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32);
    g.pointwise_with(name, mode, compute, &[x], int, int_params(Some(axis)))
}

/// `mode(inputs)` in INT32 (compute and output) on the column axis, as a new tensor `name`.
fn int_op(g: &mut GraphBuilder, name: &str, mode: u32, inputs: &[Uid]) -> Result<Uid> {
    let int = CUDNN_DATA_INT32;
    g.pointwise_with(name, mode, int, inputs, int, int_params(Some(3)))
}

/// `mode(inputs)` as a BOOLEAN op into a new virtual tensor `name` of `dims`.
fn bool_op(
    g: &mut GraphBuilder,
    name: &str,
    mode: u32,
    inputs: &[Uid],
    dims: &[i64],
) -> Result<Uid> {
    let y = g.virtual_tensor(name, CUDNN_DATA_BOOLEAN, dims);
    pw_into(g, mode, CUDNN_DATA_BOOLEAN, inputs, y)?;
    Ok(y)
}

/// Padding mask: keep ⇔ `row < seq_len_q[b]` and `col < seq_len_kv[b]`; else fill.
pub fn padding_mask(
    g: &mut GraphBuilder,
    x: Uid,
    seq_q: Uid,
    seq_kv: Uid,
    fill: f32,
) -> Result<Uid> {
    let row = gen_index(g, "gen_row_idx_padding", CUDNN_DATA_INT32, x, 2)?;
    let col = gen_index(g, "gen_col_idx_padding", CUDNN_DATA_INT32, x, 3)?;
    let dims = g.tensor(x)?.dims.clone();
    let (lt, and) = (CUDNN_POINTWISE_CMP_LT, CUDNN_POINTWISE_LOGICAL_AND);
    let r_ok = bool_op(g, "lt_row_sq_padding", lt, &[row, seq_q], &dims)?;
    let c_ok = bool_op(g, "lt_col_skv_padding", lt, &[col, seq_kv], &dims)?;
    let keep = bool_op(g, "and_row_col_padding", and, &[r_ok, c_ok], &dims)?;
    fill_unless(g, x, keep, fill, ["negative_inf_padding", "select_padding"])
}

/// `keep ? x : fill` in `x`'s dtype (a by-value scalar and a BINARY_SELECT, named by `names`).
fn fill_unless(
    g: &mut GraphBuilder,
    x: Uid,
    keep: Uid,
    fill: f32,
    names: [&str; 2],
) -> Result<Uid> {
    let b = g.scalar(names[0], ScalarValue::F32(fill), 4);
    let dtype = g.tensor(x)?.dtype;
    pw(
        g,
        names[1],
        CUDNN_POINTWISE_BINARY_SELECT,
        &[x, b, keep],
        dtype,
    )
}

/// Causal (right bound 0) diagonal-band mask as the pointwise fallback chain: keep ⇔
/// `col <= row (+ s_kv - s_q for BOTTOM_RIGHT)`; else fill.
pub fn causal_mask(
    g: &mut GraphBuilder,
    x: Uid,
    alignment: DiagonalAlignment,
    seq_q: Option<Uid>,
    seq_kv: Option<Uid>,
    fill: f32,
) -> Result<Uid> {
    let dims = g.tensor(x)?.dims.clone();
    let (s_q, s_kv) = (dims[2], dims[3]);
    let compute = g.compute;
    let mut row = gen_index(g, "gen_row_index", compute, x, 2)?;
    let col = gen_index(g, "gen_col_index", compute, x, 3)?;
    if alignment == DiagonalAlignment::BottomRight {
        let kv = match seq_kv {
            Some(u) => u,
            None => g.scalar("s_kv", ScalarValue::I32(s_kv as i32), 4),
        };
        let q = match seq_q {
            Some(u) => u,
            None => g.scalar("s_q", ScalarValue::I32(s_q as i32), 4),
        };
        row = int_op(g, "row+skv", CUDNN_POINTWISE_ADD, &[row, kv])?;
        row = int_op(g, "row+skv-sq", CUDNN_POINTWISE_SUB, &[row, q])?;
    }
    let keep = g.pointwise_with(
        "row>=col",
        CUDNN_POINTWISE_CMP_GE,
        CUDNN_DATA_BOOLEAN,
        &[row, col],
        CUDNN_DATA_BOOLEAN,
        PointwiseParams::default(),
    )?;
    fill_unless(g, x, keep, fill, ["negative_inf_causal", "binary_select"])
}

/// Composite softmax over the last axis: max, sub, exp, sum, log + add → stats, div.
/// The probabilities get `out_dtype`; `stats` (when given) is written as `max + ln(sum)`.
/// Without a caller Stats the LOG/ADD pair still writes a virtual Stats tensor, exactly as the
/// reference frontend does: the backend's attention matcher only recognises the full shape
/// (inference graphs without it get no engine configs on cuDNN 9.19).
pub fn softmax(g: &mut GraphBuilder, x: Uid, stats: Option<Uid>, out_dtype: u32) -> Result<Uid> {
    let mut row_dims = g.tensor(x)?.dims.clone();
    if let Some(last) = row_dims.last_mut() {
        *last = 1;
    }
    let f = g.intermediate;
    let m = g.reduction("softmax::max", CUDNN_REDUCE_TENSOR_MAX, x, &row_dims, f)?;
    let sub = pw(g, "softmax::sub", CUDNN_POINTWISE_SUB, &[x, m], f)?;
    let e = pw(g, "softmax::exp", CUDNN_POINTWISE_EXP, &[sub], f)?;
    let sum = g.reduction("softmax::sum", CUDNN_REDUCE_TENSOR_ADD, e, &row_dims, f)?;
    let stats = match stats {
        Some(s) => s,
        None => g.virtual_tensor("softmax::stats", CUDNN_DATA_FLOAT, &row_dims),
    };
    let l = pw(g, "softmax::log", CUDNN_POINTWISE_LOG, &[sum], f)?;
    let c = g.compute;
    pw_into(g, CUDNN_POINTWISE_ADD, c, &[m, l], stats)?;
    pw(g, "softmax::div", CUDNN_POINTWISE_DIV, &[e, sum], out_dtype)
}

fn scale_uid(g: &mut GraphBuilder, s: AttnScale) -> Uid {
    match s {
        AttnScale::Value(v) => g.scalar("attn_scale", ScalarValue::F32(v), 4),
        AttnScale::Tensor(u) => u,
    }
}

fn check_dropout(d: &Dropout, node: &str) -> Result<()> {
    if !(0.0..1.0).contains(&d.probability) {
        return Err(Error::invalid_graph(
            node,
            Some("dropout"),
            format!("probability {} not in [0, 1)", d.probability),
        ));
    }
    Ok(())
}

/// Whether the dedicated SDPA_FWD operation can serve `r` at effective version `eff`
/// (Ok) or why not (Err with the first failing gate).
pub fn unified_supported(r: &SdpaForwardRequest, eff: usize) -> std::result::Result<(), String> {
    let o = &r.options;
    let gates: [(bool, usize, &str); 5] = [
        (true, 9_13_01, "the SDPA_FWD operation"),
        (
            o.seq_len_q.is_some() || o.seq_len_kv.is_some(),
            9_15_00,
            "padding (sequence lengths)",
        ),
        (o.bias.is_some(), 9_21_00, "bias"),
        (o.causal.is_some(), 9_21_00, "diagonal-band (causal) masks"),
        (
            o.dropout.is_some_and(|d| d.probability != 0.0),
            9_22_00,
            "dropout",
        ),
    ];
    for (used, min, what) in gates {
        if used && eff < min {
            return Err(format!(
                "{what} in the unified SDPA needs cuDNN >= {min}, have {eff}"
            ));
        }
    }
    if o.causal.is_some() || o.bias.is_some() || o.dropout.is_some_and(|d| d.probability != 0.0) {
        // These need the SUBGRAPH form, which this build does not emit yet.
        return Err("bias, masks and dropout are lowered through the composite form".into());
    }
    Ok(())
}

/// The score steps both directions share after `s = Q·Kᵀ`: times the attention scale `scale`
/// (the op named `scale_name`), plus the bias, then the padding mask when both sequence lengths
/// are given.
fn scale_bias_pad(
    g: &mut GraphBuilder,
    s: Uid,
    scale: Option<Uid>,
    scale_name: &str,
    o: &ScoreOptions,
    fill: f32,
) -> Result<Uid> {
    let f = g.intermediate;
    let mut last = s;
    if let Some(su) = scale {
        last = pw(g, scale_name, CUDNN_POINTWISE_MUL, &[last, su], f)?;
    }
    if let Some(bias) = o.bias {
        last = pw(g, "bias", CUDNN_POINTWISE_ADD, &[last, bias], f)?;
    }
    if let (Some(q), Some(kv)) = (o.seq_len_q, o.seq_len_kv) {
        last = padding_mask(g, last, q, kv, fill)?;
    }
    Ok(last)
}

/// The dropout keep-mask (Bernoulli with keep probability `1 - p`) as a new tensor `rng`.
fn dropout_mask(g: &mut GraphBuilder, dr: &Dropout, dtype: u32, dims: &[i64]) -> Result<Uid> {
    let mask = g.virtual_tensor("rng", dtype, dims);
    g.push(OpSpec::Rng {
        probability: 1.0 - dr.probability as f64,
        y: mask,
        seed: dr.seed,
        offset: dr.offset,
    })?;
    Ok(mask)
}

/// The by-value dropout scale `1 / (1 - p)`.
fn dropout_scale(g: &mut GraphBuilder, dr: &Dropout) -> Uid {
    g.scalar(
        "dropout_scale",
        ScalarValue::F32(1.0 / (1.0 - dr.probability)),
        4,
    )
}

/// SDPA forward. Returns which implementation was used.
pub fn sdpa_forward(
    g: &mut GraphBuilder,
    r: &SdpaForwardRequest,
    version: usize,
) -> Result<SdpaImplementation> {
    let node = g.tensor(r.o)?.name.clone();
    let d = dims_of(g, r.q, r.k, &node)?;
    if let Some(dr) = &r.options.dropout {
        check_dropout(dr, &node)?;
    }
    let qdt = g.tensor(r.q)?.dtype;
    let unified = match r.implementation {
        SdpaImplementation::Composite => false,
        SdpaImplementation::Unified => {
            unified_supported(r, version).map_err(|why| Error::invalid_graph(&node, None, why))?;
            true
        }
        SdpaImplementation::Auto => {
            unified_supported(r, version).is_ok()
                && matches!(qdt, CUDNN_DATA_HALF | CUDNN_DATA_BFLOAT16)
        }
    };
    if unified {
        let scale = r.options.attn_scale.map(|s| scale_uid(g, s));
        g.push(OpSpec::SdpaForward {
            q: r.q,
            k: r.k,
            v: r.v,
            o: r.o,
            stats: r.stats,
            scale,
            seq_len_q: r.options.seq_len_q,
            seq_len_kv: r.options.seq_len_kv,
        })?;
        return Ok(SdpaImplementation::Unified);
    }
    let o = &r.options;
    let fill = mask_fill(version);
    let f = g.intermediate;
    transpose_in_place(g, r.k)?;
    let score_dims = [d.b, d.h_q, d.s_q, d.s_kv];
    let s = g.virtual_tensor("bmm1", f, &score_dims);
    matmul(g, r.q, r.k, s, o.seq_len_q, o.seq_len_kv, None)?;
    let su = o.attn_scale.map(|sc| scale_uid(g, sc));
    let mut last = scale_bias_pad(g, s, su, "attn_scale", o, fill)?;
    if let Some(al) = o.causal {
        last = causal_mask(g, last, al, o.seq_len_q, o.seq_len_kv, fill)?;
    }
    let dropout = o.dropout.filter(|d| d.probability != 0.0);
    let p_dtype = if dropout.is_some() { f } else { qdt };
    let mut p = softmax(g, last, r.stats, p_dtype)?;
    if let Some(dr) = dropout {
        let mask = dropout_mask(g, &dr, f, &score_dims)?;
        p = pw(g, "dropout_mask_mul", CUDNN_POINTWISE_MUL, &[p, mask], f)?;
        let sc = dropout_scale(g, &dr);
        p = pw(g, "dropout_scale", CUDNN_POINTWISE_MUL, &[p, sc], qdt)?;
    }
    matmul(g, p, r.v, r.o, o.seq_len_q, None, o.seq_len_kv)?;
    Ok(SdpaImplementation::Composite)
}

/// SDPA backward, composite (the reference's `CompositeSDPABackwardNode`).
pub fn sdpa_backward(g: &mut GraphBuilder, r: &SdpaBackwardRequest, version: usize) -> Result<()> {
    let node = g.tensor(r.dq)?.name.clone();
    let d = dims_of(g, r.q, r.k, &node)?;
    let o = &r.options;
    if let Some(dr) = &o.dropout {
        check_dropout(dr, &node)?;
    }
    let (h_k, h_v) = (g.tensor(r.k)?.dims[1], g.tensor(r.v)?.dims[1]);
    let d_qk = g.tensor(r.q)?.dims[3];
    let d_v = g.tensor(r.v)?.dims[3];
    let qdt = g.tensor(r.q)?.dtype;
    let kdt = g.tensor(r.k)?.dtype;
    let f = g.intermediate;
    let fill = mask_fill(version);
    let (b, h_q, s_q, s_kv) = (d.b, d.h_q, d.s_q, d.s_kv);
    let score_dims = [b, h_q, s_q, s_kv];
    let row_dims = [b, h_q, s_q, 1];
    transpose_in_place(g, r.k)?;
    transpose_in_place(g, r.v)?;
    let dropout = o.dropout.filter(|d| d.probability != 0.0);
    let (drop_scale, drop_scale_inv, mask) = match dropout {
        Some(dr) => {
            let sc = dropout_scale(g, &dr);
            let inv = g.scalar(
                "dropout_scale_inv",
                ScalarValue::F32(1.0 - dr.probability),
                4,
            );
            let mask = dropout_mask(g, &dr, f, &score_dims)?;
            (Some(sc), Some(inv), Some(mask))
        }
        None => (None, None, None),
    };
    let one = g.scalar("one", ScalarValue::F32(1.0), 4);
    let attn_scale = o.attn_scale.map(|s| scale_uid(g, s));
    // D = rowsum(dO * O), scaled by (1 - p), stored as softmax_sum in the frontend workspace.
    let do_o = pw(g, "mul_dO_O", CUDNN_POINTWISE_MUL, &[r.d_o, r.o], f)?;
    let dsum = g.reduction("reduce_dO_o", CUDNN_REDUCE_TENSOR_ADD, do_o, &row_dims, f)?;
    let softmax_sum = g.workspace_tensor("softmax_sum", CUDNN_DATA_FLOAT, &row_dims);
    let c = g.compute;
    pw_into(
        g,
        CUDNN_POINTWISE_MUL,
        c,
        &[dsum, drop_scale_inv.unwrap_or(one)],
        softmax_sum,
    )?;
    // Recompute P = exp(s - LSE) with the forward's score pipeline and masks.
    let s = g.virtual_tensor("matmul_Q_KT", f, &score_dims);
    matmul(g, r.q, r.k, s, o.seq_len_q, o.seq_len_kv, None)?;
    let mut last = scale_bias_pad(g, s, attn_scale, "mul_s_attn_scale", o, fill)?;
    last = pw(g, "sub_s_m", CUDNN_POINTWISE_SUB, &[last, r.stats], f)?;
    if let Some(al) = o.causal {
        last = causal_mask(g, last, al, o.seq_len_q, o.seq_len_kv, fill)?;
    }
    let exp_s = pw(g, "exp_s", CUDNN_POINTWISE_EXP, &[last], f)?;
    last = exp_s;
    if let Some(m) = mask {
        last = pw(g, "mul_p_dropout_mask", CUDNN_POINTWISE_MUL, &[last, m], f)?;
    }
    if let Some(sc) = drop_scale {
        last = pw(
            g,
            "mul_p_dropout_scale",
            CUDNN_POINTWISE_MUL,
            &[last, sc],
            f,
        )?;
    }
    let transposed_strides = vec![h_q * s_q * s_kv, s_q * s_kv, 1, s_kv];
    let pt = reshape_to(
        g,
        last,
        "reshape_p",
        qdt,
        &[b, h_q, s_kv, s_q],
        &transposed_strides,
    )?;
    // dV = Pᵀ · dO (GQA: at h_q heads, then summed per group).
    head_reduced_matmul(
        g,
        pt,
        r.d_o,
        r.dv,
        h_v,
        [b, h_q, s_kv, d_v],
        qdt,
        o.seq_len_kv,
        o.seq_len_q,
        "dV",
    )?;
    // dP = dO · Vᵀ.
    let dp = g.virtual_tensor("matmul_dO_VT", f, &score_dims);
    matmul(g, r.d_o, r.v, dp, o.seq_len_q, o.seq_len_kv, None)?;
    last = dp;
    if let Some(m) = mask {
        last = pw(g, "dP_dropout_mask", CUDNN_POINTWISE_MUL, &[last, m], f)?;
    }
    last = pw(
        g,
        "sub_dP_softmax_sum",
        CUDNN_POINTWISE_SUB,
        &[last, softmax_sum],
        f,
    )?;
    last = pw(g, "mul_dP_exp_s", CUDNN_POINTWISE_MUL, &[last, exp_s], f)?;
    if let Some(sc) = drop_scale {
        last = pw(
            g,
            "mul_dS_dropout_scale",
            CUDNN_POINTWISE_MUL,
            &[last, sc],
            f,
        )?;
    }
    if let Some(db) = r.dbias {
        g.push(OpSpec::Reduction {
            mode: CUDNN_REDUCE_TENSOR_ADD,
            compute: c,
            x: last,
            y: db,
            deterministic: None,
        })?;
    }
    if let Some(su) = attn_scale {
        last = pw(g, "mul_dS_attn_scale", CUDNN_POINTWISE_MUL, &[last, su], f)?;
    }
    let ds = last;
    let dst = reshape_to(
        g,
        ds,
        "reshape_dS",
        qdt,
        &[b, h_q, s_kv, s_q],
        &transposed_strides,
    )?;
    head_reduced_matmul(
        g,
        dst,
        r.q,
        r.dk,
        h_k,
        [b, h_q, s_kv, d_qk],
        qdt,
        o.seq_len_kv,
        o.seq_len_q,
        "dK",
    )?;
    // K back to [b,h_k,s_kv,d] (keeps its ragged offset), then dQ = dS · K.
    let kt = g.tensor(r.k)?.clone();
    let mut kd = kt.dims.clone();
    kd.swap(2, 3);
    let mut ks = kt.strides.clone();
    ks.swap(2, 3);
    let k_back = reshape_to(g, r.k, "reshape_k", kdt, &kd, &ks)?;
    if let Some(ro) = kt.ragged_offset {
        g.set_ragged_offset(k_back, ro)?;
    }
    // Without the dP workspace dQ accumulates in FLOAT in the frontend workspace, then is copied.
    let use_dp_workspace = r.dbias.is_some() || r.deterministic;
    let dq = if use_dp_workspace {
        r.dq
    } else {
        g.workspace_tensor("dQ_accum", CUDNN_DATA_FLOAT, &[b, h_q, s_q, d_qk])
    };
    matmul(g, ds, k_back, dq, o.seq_len_q, None, o.seq_len_kv)?;
    if dq != r.dq {
        pw_into(g, CUDNN_POINTWISE_IDENTITY, c, &[dq], r.dq)?;
    }
    Ok(())
}

fn reshape_to(
    g: &mut GraphBuilder,
    x: Uid,
    name: &str,
    dtype: u32,
    dims: &[i64],
    strides: &[i64],
) -> Result<Uid> {
    let y = g.virtual_tensor(name, dtype, dims);
    g.tensor_mut(y)?.strides = strides.to_vec();
    g.push(OpSpec::Reshape { x, y })?;
    Ok(y)
}

/// `out = a · b`, computed at `full_dims` heads and ADD-reduced to `out`'s heads when they differ.
#[allow(clippy::too_many_arguments)]
fn head_reduced_matmul(
    g: &mut GraphBuilder,
    a: Uid,
    b: Uid,
    out: Uid,
    out_heads: i64,
    full_dims: [i64; 4],
    dtype: u32,
    m_override: Option<Uid>,
    k_override: Option<Uid>,
    what: &str,
) -> Result<()> {
    let target = if out_heads == full_dims[1] {
        out
    } else {
        let t = g.virtual_tensor(&format!("{what}_fullhead"), dtype, &full_dims);
        g.tensor_mut(t)?.strides = packed_strides(&full_dims);
        t
    };
    matmul(g, a, b, target, m_override, None, k_override)?;
    if target != out {
        g.push(OpSpec::Reduction {
            mode: CUDNN_REDUCE_TENSOR_ADD,
            compute: g.compute,
            x: target,
            y: out,
            deterministic: None,
        })?;
    }
    Ok(())
}
