//! Transformer Engine's F16/BF16 arbitrary-seqlen sub-backend rule (`NVTE_F16_arbitrary_seqlen`),
//! spec section 2.2, one entry per table row, plus the two execution-time preconditions the rule
//! does not check (`F16.PAGED_NEEDS_PADDING`, `F16.THD_NEEDS_PADDING`, frontend layer).
//!
//! TE quirks reproduced on purpose (spec section 7), each with a golden test:
//! 1. cuDNN 9.2.0-9.5.x reject padding masks, THD, and causal with bias or dropout: clause `w2`
//!    allows full attention only with NO_MASK and `w1` stops at 9.2.0 (so paged KV, `m5` from
//!    9.5.0, cannot pass on 9.5.x either).
//! 2. Above the `d1`/`d2` caps, inference clause `d4` excludes non-paged `s_q == 1` with
//!    top-left causal masks; bottom-right decode is allowed.
//! 3. `F16.HOPPER_MLA_BWD` rejects e.g. (256,128) and (160,128) training on SM90 from 9.11.0
//!    but keeps (192,128) and (128,64).
//! 4. `F16.RAGGED64` computes offsets from max sequence lengths and uses `d_qk` for O.
//! 5. `F16.BW_TRAIN` rejects non-deterministic Blackwell training with dropout AND bias.

use super::{Clause, F16, FE_SRC, INF, Kind, Layer, Rule, Scope, TE_SRC, TRAIN, ge, lt, v};
use crate::select::predicate::{Cmp, Flag, IntField as I, P, Side};
use crate::select::request::{
    BiasType as B, Dtype, Format as F, Layout as L, Mask as M, SoftmaxType,
};

const NO_BIAS: P = P::Bias(&[B::NoBias]);
const NO_DROPOUT: P = P::Not(&P::Is(Flag::DropoutOn));
const SQ64: P = P::DivBy(I::Sq, 64);
const SKV64: P = P::DivBy(I::Skv, 64);
const SQ_LE_SKV: P = P::IntCmp(I::Sq, Cmp::Le, I::Skv);
const DQK8: P = P::DivBy(I::Dqk, 8);
const DV8: P = P::DivBy(I::Dv, 8);
const BSHD_SBHD: P = P::Fmt(Side::Qkv, &[F::Sbhd, F::Bshd]);
const PADDING_FAMILY: &[M] = &[M::Padding, M::PaddingCausal, M::PaddingCausalBottomRight];
const CAUSAL_FAMILY: &[M] = &[
    M::Causal,
    M::PaddingCausal,
    M::CausalBottomRight,
    M::PaddingCausalBottomRight,
];
const WR_M1_OR_0: P = P::All(&[P::Int(I::Wr, Cmp::Ge, -1), P::Int(I::Wr, Cmp::Le, 0)]);
const F16_SCOPE: Scope = Scope::Targets(F16);

const fn rule(id: &'static str, layer: Layer, kind: Kind, message: &'static str) -> Rule {
    Rule::row(id, (F16_SCOPE, layer, TE_SRC), P::True, kind, message)
}

/// The rows of spec 2.2, in table order.
pub static RULES: &[Rule] = &[
    Rule {
        gate: true,
        ..rule(
            "F16.DTYPE",
            Layer::TePolicy,
            Kind::Check(P::QDtype(&[Dtype::Fp16, Dtype::Bf16])),
            "the F16 arbitrary-seqlen sub-backend takes FP16/BF16 inputs, not {q_dtype} (TE never falls back from the FP8 rule to this one)",
        )
    },
    rule(
        "F16.ARCH",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "a1: cuDNN < 8.9.3 on SM80 or SM90",
                when: P::All(&[
                    lt(8, 9, 3),
                    P::Any(&[P::Sm(Cmp::Eq, 80), P::Sm(Cmp::Eq, 90)]),
                ]),
            },
            Clause {
                label: "a2: cuDNN >= 8.9.3 on SM80-SM99",
                when: P::All(&[ge(8, 9, 3), P::Sm(Cmp::Ge, 80), P::Sm(Cmp::Lt, 100)]),
            },
            Clause {
                label: "a3: cuDNN >= 9.7.0 on SM100+",
                when: P::All(&[ge(9, 7, 0), P::Sm(Cmp::Ge, 100)]),
            },
        ]),
        "SM{sm} is not supported by the F16 sub-backend on cuDNN {cudnn}",
    ),
    rule(
        "F16.SEQ",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "s1: cuDNN < 9.0.0 with s_q and s_kv multiples of 64",
                when: P::All(&[lt(9, 0, 0), SQ64, SKV64]),
            },
            Clause {
                label: "s2: cuDNN >= 9.0.0, any lengths",
                when: ge(9, 0, 0),
            },
        ]),
        "sequence lengths ({s_q}, {s_kv}) must be multiples of 64 before cuDNN 9.0.0",
    ),
    rule(
        "F16.HEADS",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "h1: cuDNN < 8.9.7 with h_q == h_kv",
                when: P::All(&[lt(8, 9, 7), P::IntCmp(I::Hq, Cmp::Eq, I::Hkv)]),
            },
            Clause {
                label: "h2: cuDNN >= 8.9.7 (GQA/MQA)",
                when: ge(8, 9, 7),
            },
        ]),
        "GQA/MQA (h_q {h_q}, h_kv {h_kv}) needs cuDNN >= 8.9.7",
    ),
    rule(
        "F16.HDIM",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "d1: d_qk <= 128 and d_v <= 128",
                when: P::All(&[
                    DQK8,
                    DV8,
                    P::Int(I::Dqk, Cmp::Le, 128),
                    P::Int(I::Dv, Cmp::Le, 128),
                ]),
            },
            Clause {
                label: "d2: SM90, d <= 256 (inference cuDNN >= 9.1.0, training >= 9.5.0)",
                when: P::All(&[
                    DQK8,
                    DV8,
                    P::Sm(Cmp::Eq, 90),
                    P::Int(I::Dqk, Cmp::Le, 256),
                    P::Int(I::Dv, Cmp::Le, 256),
                    P::Any(&[P::All(&[INF, ge(9, 1, 0)]), P::All(&[TRAIN, ge(9, 5, 0)])]),
                ]),
            },
            Clause {
                label: "d3: cuDNN >= 9.9.0, SM100+, inference, s_q > 1, not paged, any d",
                when: P::All(&[
                    DQK8,
                    DV8,
                    ge(9, 9, 0),
                    P::Sm(Cmp::Ge, 100),
                    INF,
                    P::Int(I::Sq, Cmp::Gt, 1),
                    P::Not(&P::Is(Flag::Paged)),
                ]),
            },
            Clause {
                label: "d4: cuDNN >= 9.10.2, inference, any d (paged, s_q > 1, or decode without top-left causal)",
                when: P::All(&[
                    DQK8,
                    DV8,
                    ge(9, 10, 2),
                    INF,
                    P::Any(&[
                        P::Is(Flag::Paged),
                        P::Int(I::Sq, Cmp::Gt, 1),
                        P::Not(&P::Mask(&[M::Causal, M::PaddingCausal])),
                    ]),
                ]),
            },
            Clause {
                label: "d5: cuDNN >= 9.11.0, SM100+, training, (192,128)",
                when: P::All(&[
                    DQK8,
                    DV8,
                    ge(9, 11, 0),
                    P::Sm(Cmp::Ge, 100),
                    TRAIN,
                    P::Dims(192, 128),
                ]),
            },
            Clause {
                label: "d6: SM100-109 training (256,256), cuDNN >= 9.23.0 (9.25.0 with THD), plain features",
                when: P::All(&[
                    DQK8,
                    DV8,
                    P::Sm(Cmp::Ge, 100),
                    P::Sm(Cmp::Lt, 110),
                    TRAIN,
                    P::Dims(256, 256),
                    P::Any(&[
                        P::All(&[P::Not(&P::Is(Flag::Thd)), ge(9, 23, 0)]),
                        P::All(&[P::Is(Flag::Thd), ge(9, 25, 0)]),
                    ]),
                    P::Not(&P::Is(Flag::Paged)),
                    NO_BIAS,
                    NO_DROPOUT,
                    P::Softmax(&[SoftmaxType::Vanilla]),
                    P::Any(&[
                        P::All(&[P::Int(I::Wl, Cmp::Eq, -1), P::Int(I::Wr, Cmp::Eq, -1)]),
                        P::All(&[P::Mask(CAUSAL_FAMILY), WR_M1_OR_0]),
                    ]),
                ]),
            },
        ]),
        "head dims ({d_qk}, {d_v}) are not supported for {phase} on SM{sm} with cuDNN {cudnn}",
    ),
    rule(
        "F16.HOPPER_MLA_BWD",
        Layer::KnownBug,
        Kind::Veto(P::All(&[
            ge(9, 11, 0),
            P::Sm(Cmp::Eq, 90),
            TRAIN,
            P::Int(I::Dqk, Cmp::Ge, 128),
            P::Int(I::Dv, Cmp::Ge, 128),
            P::IntCmp(I::Dqk, Cmp::Ne, I::Dv),
            P::Not(&P::Dims(192, 128)),
        ])),
        "SM90 training with unequal head dims ({d_qk}, {d_v}), both >= 128 and not (192,128), is blocked from cuDNN 9.11.0 (a cuDNN bug; TE's version gate is temporary)",
    ),
    rule(
        "F16.BIAS",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "b1: cuDNN < 8.9.6, no bias",
                when: P::All(&[lt(8, 9, 6), NO_BIAS]),
            },
            Clause {
                label: "b2: cuDNN >= 8.9.6: no bias, ALiBi with causal/causal_bottom_right on SM90+, or post-scale bias on SM90+",
                when: P::All(&[
                    ge(8, 9, 6),
                    P::Any(&[
                        NO_BIAS,
                        P::All(&[
                            P::Bias(&[B::Alibi]),
                            P::Mask(&[M::Causal, M::CausalBottomRight]),
                            P::Sm(Cmp::Ge, 90),
                        ]),
                        P::All(&[P::Bias(&[B::PostScaleBias]), P::Sm(Cmp::Ge, 90)]),
                    ]),
                ]),
            },
            Clause {
                label: "b3: cuDNN >= 9.0.0, SM80+, post-scale bias",
                when: P::All(&[
                    ge(9, 0, 0),
                    P::Sm(Cmp::Ge, 80),
                    P::Bias(&[B::PostScaleBias]),
                ]),
            },
        ]),
        "bias {bias} with mask {mask} is not supported on SM{sm} with cuDNN {cudnn} (pre-scale bias never is)",
    ),
    rule(
        "F16.MASK",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "m1: cuDNN < 8.9.6, causal only",
                when: P::All(&[lt(8, 9, 6), P::Mask(&[M::Causal])]),
            },
            Clause {
                label: "m2: cuDNN >= 8.9.6, BSHD/SBHD, no_mask/causal/padding/padding_causal",
                when: P::All(&[
                    ge(8, 9, 6),
                    BSHD_SBHD,
                    P::Mask(&[M::NoMask, M::Causal, M::Padding, M::PaddingCausal]),
                ]),
            },
            Clause {
                label: "m3: cuDNN >= 9.1.0, THD, padding/padding_causal",
                when: P::All(&[
                    ge(9, 1, 0),
                    P::Fmt(Side::Qkv, &[F::Thd]),
                    P::Mask(&[M::Padding, M::PaddingCausal]),
                ]),
            },
            Clause {
                label: "m4: cuDNN >= 9.3.0, BSHD/SBHD causal_bottom_right, lengths % 64, s_q <= s_kv, no bias/dropout",
                when: P::All(&[
                    ge(9, 3, 0),
                    BSHD_SBHD,
                    P::Mask(&[M::CausalBottomRight]),
                    SQ64,
                    SKV64,
                    SQ_LE_SKV,
                    NO_BIAS,
                    NO_DROPOUT,
                ]),
            },
            Clause {
                label: "m5: cuDNN >= 9.5.0, paged, padding masks, no bias/dropout",
                when: P::All(&[
                    ge(9, 5, 0),
                    P::Is(Flag::Paged),
                    P::Any(&[
                        P::Mask(&[M::Padding, M::PaddingCausal]),
                        P::All(&[
                            P::Mask(&[M::PaddingCausalBottomRight]),
                            SQ64,
                            SKV64,
                            SQ_LE_SKV,
                        ]),
                    ]),
                    NO_BIAS,
                    NO_DROPOUT,
                ]),
            },
            Clause {
                label: "m6: cuDNN >= 9.6.0, padding_causal_bottom_right, lengths % 64, s_q <= s_kv, no bias/dropout",
                when: P::All(&[
                    ge(9, 6, 0),
                    P::Mask(&[M::PaddingCausalBottomRight]),
                    SQ64,
                    SKV64,
                    SQ_LE_SKV,
                    NO_BIAS,
                    NO_DROPOUT,
                ]),
            },
            Clause {
                label: "m7: cuDNN >= 9.7.0, any format and length",
                when: P::All(&[
                    ge(9, 7, 0),
                    P::Any(&[
                        P::Mask(&[M::NoMask, M::Causal]),
                        P::All(&[P::Mask(PADDING_FAMILY), NO_BIAS, NO_DROPOUT]),
                        P::All(&[
                            P::Mask(&[M::CausalBottomRight, M::PaddingCausalBottomRight]),
                            SQ_LE_SKV,
                        ]),
                    ]),
                ]),
            },
        ]),
        "mask {mask} with layout {layout} (s_q {s_q}, s_kv {s_kv}) is not supported with cuDNN {cudnn}",
    ),
    rule(
        "F16.BIAS_PADDING",
        Layer::TePolicy,
        Kind::Veto(P::All(&[
            ge(8, 9, 6),
            P::Bias(&[B::PostScaleBias]),
            P::Mask(&[M::Padding, M::PaddingCausal]),
        ])),
        "post-scale bias is not supported with the {mask} mask",
    ),
    rule(
        "F16.FORMAT",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "f1: BSHD, SBHD or BHSD",
                when: P::Fmt(Side::Qkv, &[F::Sbhd, F::Bshd, F::Bhsd]),
            },
            Clause {
                label: "f2: THD on SM90+ (cuDNN >= 9.1.0 with h_q == h_kv, >= 9.6.0 with GQA)",
                when: P::All(&[
                    P::Fmt(Side::Qkv, &[F::Thd]),
                    P::Sm(Cmp::Ge, 90),
                    P::Any(&[
                        P::All(&[ge(9, 1, 0), P::IntCmp(I::Hq, Cmp::Eq, I::Hkv)]),
                        ge(9, 6, 0),
                    ]),
                ]),
            },
            Clause {
                label: "f3: cuDNN >= 9.7.0, Q or K/V dense, or THD on SM90+",
                when: P::All(&[
                    ge(9, 7, 0),
                    P::Any(&[
                        P::Fmt(Side::Q, &[F::Sbhd, F::Bshd, F::Bhsd]),
                        P::All(&[P::Fmt(Side::Q, &[F::Thd]), P::Sm(Cmp::Ge, 90)]),
                        P::Fmt(Side::Kv, &[F::Sbhd, F::Bshd, F::Bhsd]),
                        P::All(&[P::Fmt(Side::Kv, &[F::Thd]), P::Sm(Cmp::Ge, 90)]),
                    ]),
                ]),
            },
        ]),
        "format {format} (layout {layout}) is not supported on SM{sm} with cuDNN {cudnn}",
    ),
    rule(
        "F16.WINDOW",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "w1: cuDNN < 9.2.0, no sliding window",
                when: P::All(&[lt(9, 2, 0), P::Int(I::Wl, Cmp::Eq, -1), WR_M1_OR_0]),
            },
            Clause {
                label: "w2: cuDNN >= 9.2.0: full attention with no_mask, or (wl, 0) with no_mask/causal, BSHD/SBHD, s_q <= s_kv, no bias/dropout",
                when: P::All(&[
                    ge(9, 2, 0),
                    P::Any(&[
                        P::All(&[
                            P::Int(I::Wl, Cmp::Eq, -1),
                            P::Int(I::Wr, Cmp::Eq, -1),
                            P::Mask(&[M::NoMask]),
                        ]),
                        P::All(&[
                            P::Int(I::Wl, Cmp::Ge, -1),
                            P::Int(I::Wr, Cmp::Eq, 0),
                            P::Any(&[
                                P::Mask(&[M::NoMask, M::Causal]),
                                P::All(&[
                                    P::Mask(&[M::CausalBottomRight]),
                                    P::IntCmp(I::Sq, Cmp::Eq, I::Skv),
                                ]),
                            ]),
                            SQ_LE_SKV,
                            NO_DROPOUT,
                            NO_BIAS,
                            BSHD_SBHD,
                        ]),
                    ]),
                ]),
            },
            Clause {
                label: "w3: cuDNN >= 9.6.0: no left bound, or a window with no_mask/padding/bottom-right masks, s_q <= s_kv, no bias/dropout",
                when: P::All(&[
                    ge(9, 6, 0),
                    P::Any(&[
                        P::All(&[P::Int(I::Wl, Cmp::Eq, -1), WR_M1_OR_0]),
                        P::All(&[
                            P::Int(I::Wl, Cmp::Ge, -1),
                            P::Int(I::Wr, Cmp::Ge, -1),
                            P::Any(&[
                                P::Mask(&[M::NoMask, M::Padding, M::PaddingCausal]),
                                P::All(&[
                                    P::Mask(&[M::CausalBottomRight, M::PaddingCausalBottomRight]),
                                    P::Any(&[
                                        P::Sm(Cmp::Lt, 100),
                                        P::IntCmp(I::Sq, Cmp::Eq, I::Skv),
                                        P::Ver(Cmp::Gt, v(9, 7, 0)),
                                    ]),
                                ]),
                            ]),
                            SQ_LE_SKV,
                            NO_BIAS,
                            NO_DROPOUT,
                        ]),
                    ]),
                ]),
            },
        ]),
        "{mask} mask with window ({wl},{wr}) is not supported on cuDNN {cudnn}",
    ),
    rule(
        "F16.RAGGED64",
        Layer::TePolicy,
        Kind::Check(P::Any(&[
            P::Not(&P::Is(Flag::NeedsInt64Offsets)),
            ge(9, 5, 0),
        ])),
        "ragged offsets exceed int32 (computed from max sequence lengths); int64 offsets need cuDNN >= 9.5.0",
    ),
    rule(
        "F16.BADVER",
        Layer::KnownBug,
        Kind::Veto(P::VerIn(&[v(9, 10, 0), v(9, 10, 1)])),
        "cuDNN {cudnn} has known SDPA bugs",
    ),
    rule(
        "F16.SOFTMAX",
        Layer::TePolicy,
        Kind::Check(P::Any(&[P::Softmax(&[SoftmaxType::Vanilla]), ge(9, 13, 1)])),
        "the {softmax} softmax needs cuDNN >= 9.13.1",
    ),
    rule(
        "F16.MAXLOGIT",
        Layer::TePolicy,
        Kind::Check(P::Any(&[P::Not(&P::Is(Flag::MaxLogit)), ge(9, 21, 0)])),
        "return_max_logit needs cuDNN >= 9.21.0",
    ),
    rule(
        "F16.BW_TRAIN",
        Layer::TePolicy,
        Kind::Require(&[
            Clause {
                label: "SM below 100",
                when: P::Sm(Cmp::Lt, 100),
            },
            Clause {
                label: "inference",
                when: INF,
            },
            Clause {
                label: "non-deterministic training without dropout and bias together",
                when: P::All(&[
                    TRAIN,
                    P::Not(&P::Is(Flag::DeterministicTraining)),
                    P::Any(&[NO_DROPOUT, NO_BIAS]),
                ]),
            },
            Clause {
                label: "deterministic training: cuDNN >= 9.18.1, no dropout, no bias",
                when: P::All(&[
                    TRAIN,
                    P::Is(Flag::DeterministicTraining),
                    ge(9, 18, 1),
                    NO_DROPOUT,
                    NO_BIAS,
                ]),
            },
        ]),
        "Blackwell-class (SM{sm}) training backward: deterministic needs cuDNN >= 9.18.1 without dropout or bias; non-deterministic cannot combine dropout and bias",
    ),
    rule(
        "F16.MIN",
        Layer::TePolicy,
        Kind::Veto(lt(8, 9, 0)),
        "cuDNN {cudnn} is older than 8.9.0",
    ),
    rule(
        "F16.V91400_SWA",
        Layer::KnownBug,
        Kind::Veto(P::All(&[
            P::VerIn(&[v(9, 14, 0)]),
            P::Int(I::Skv, Cmp::Gt, 1024),
            P::Int(I::Wl, Cmp::Ne, -1),
            P::Not(&P::Mask(&[M::Causal, M::CausalBottomRight])),
        ])),
        "cuDNN 9.14.0 has a bug with non-causal sliding window attention and s_kv > 1024",
    ),
    rule(
        "F16.CUDAGRAPH",
        Layer::KnownBug,
        Kind::Veto(P::All(&[
            P::Ver(Cmp::Le, v(9, 15, 0)),
            TRAIN,
            BSHD_SBHD,
            P::Not(&P::DivBy(I::Skv, 128)),
            P::Is(Flag::CudaGraph),
            P::Not(&P::Mask(PADDING_FAMILY)),
        ])),
        "CUDA-graph training with s_kv % 128 != 0 and no padding mask: cuDNN <= 9.15.0's backward injects a host-filled padding mask that cannot be captured",
    ),
    rule(
        "F16.SM120",
        Layer::KnownBug,
        Kind::Veto(P::All(&[
            P::Sm(Cmp::Eq, 120),
            P::Any(&[
                lt(9, 18, 1),
                P::Is(Flag::DeterministicTraining),
                P::Layout(&[L::T3hd, L::Th3d]),
            ]),
        ])),
        "SM120 is not supported with cuDNN < 9.18.1, deterministic training, or the t3hd/th3d layouts",
    ),
    Rule {
        applies: P::Is(Flag::Paged),
        source: FE_SRC,
        ..rule(
            "F16.PAGED_NEEDS_PADDING",
            Layer::FrontendSurface,
            Kind::Check(P::Mask(PADDING_FAMILY)),
            "paged K/V needs a padding mask (mask is {mask}); TE's rule passes it but the kernel asserts",
        )
    },
    Rule {
        applies: P::Is(Flag::Thd),
        source: FE_SRC,
        ..rule(
            "F16.THD_NEEDS_PADDING",
            Layer::FrontendSurface,
            Kind::Check(P::Mask(PADDING_FAMILY)),
            "ragged (THD) layouts need a padding mask (mask is {mask}); TE's rule passes it but the kernel asserts",
        )
    },
];
