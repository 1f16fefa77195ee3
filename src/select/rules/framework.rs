//! Transformer Engine's framework selector (`get_attention_backend`, spec section 4.2) and its
//! determinism rules (section 3), as they affect FusedAttention (both cuDNN sub-backends) and the
//! unfused reference. Environment toggles become the explicit policy list `disabled`.
//! Determinism matters only for training (TE's forward passes `deterministic=false`).

use super::{ALL, F16, FP8, FUSED, FW_SRC, Kind, Layer, REF, Rule, Scope, ge, lt, v};
use crate::select::predicate::{Cmp, Flag, IntField as I, P};
use crate::select::request::{
    BiasShape, BiasType as B, Dtype, Fp8Recipe as R, Group as G, Layout as L, SoftmaxType,
};

const DET: P = P::Is(Flag::DeterministicTraining);
const FP8_Q: P = P::Is(Flag::Fp8);
const NOT_SM120: P = P::Sm(Cmp::Ne, 120);

const fn rule(id: &'static str, scope: u8, applies: P, kind: Kind, message: &'static str) -> Rule {
    let at = (Scope::Targets(scope), Layer::Framework, FW_SRC);
    Rule::row(id, at, applies, kind, message)
}

/// The framework filters, in TE's filter order.
pub static RULES: &[Rule] = &[
    Rule {
        setting_hint: Some("remove it from policy.disabled"),
        ..rule(
            "FW.DISABLED",
            ALL,
            P::True,
            Kind::Check(P::Is(Flag::TargetEnabled)),
            "{target} is disabled by policy",
        )
    },
    rule(
        "FW.ARCH",
        FUSED,
        P::True,
        Kind::Check(P::Sm(Cmp::Ge, 80)),
        "FusedAttention needs SM80+ (device is SM{sm})",
    ),
    rule(
        "FW.DTYPE",
        FUSED,
        P::True,
        Kind::Check(P::QDtype(&[Dtype::Fp16, Dtype::Bf16, Dtype::Fp8E4m3])),
        "FusedAttention takes FP16, BF16 or FP8 E4M3 inputs, not {q_dtype}",
    ),
    rule(
        "FW.FP8_RECIPE",
        FP8,
        FP8_Q,
        Kind::Require(&[
            super::Clause {
                label: "delayed scaling (not SM120; deterministic training on SM100+ needs cuDNN >= 9.18.0)",
                when: P::All(&[
                    P::Recipe(&[R::Delayed]),
                    NOT_SM120,
                    P::Not(&P::All(&[P::Sm(Cmp::Ge, 100), DET, lt(9, 18, 0)])),
                ]),
            },
            super::Clause {
                label: "current scaling: SM100+ (not SM120), cuDNN >= 9.14.0 (deterministic training >= 9.18.0)",
                when: P::All(&[
                    P::Recipe(&[R::Current]),
                    P::Sm(Cmp::Ge, 100),
                    NOT_SM120,
                    ge(9, 14, 0),
                    P::Not(&P::All(&[DET, lt(9, 18, 0)])),
                ]),
            },
            super::Clause {
                label: "MXFP8: SM100+ (not SM120), cuDNN >= 9.21.0 except 9.23.0/9.23.1, not THD",
                when: P::All(&[
                    P::Recipe(&[R::Mxfp8]),
                    P::Sm(Cmp::Ge, 100),
                    NOT_SM120,
                    ge(9, 21, 0),
                    P::Not(&P::VerIn(&[v(9, 23, 0), v(9, 23, 1)])),
                    P::Not(&P::Is(Flag::Thd)),
                ]),
            },
        ]),
        "the FP8 recipe {recipe} is not served by FusedAttention on SM{sm} with cuDNN {cudnn}",
    ),
    rule(
        "FW.MAXLOGIT_FP8",
        ALL,
        FP8_Q,
        Kind::Veto(P::Is(Flag::MaxLogit)),
        "return_max_logit with FP8 attention disables every backend",
    ),
    rule(
        "FW.KV_CACHE_ARCH",
        FUSED,
        P::Is(Flag::KvCache),
        Kind::Veto(P::Any(&[P::Sm(Cmp::Eq, 89), P::Sm(Cmp::Eq, 120)])),
        "FusedAttention with a KV cache is disabled on SM{sm}",
    ),
    rule(
        "FW.KV_CACHE_FP8",
        FUSED,
        P::Is(Flag::KvCache),
        Kind::Veto(FP8_Q),
        "FusedAttention does not serve an FP8 KV cache",
    ),
    rule(
        "FW.MLA_LAYOUT",
        FUSED,
        P::Is(Flag::Mla),
        Kind::Check(P::Group(&[G::HdHdHd, G::SdSdSd])),
        "head dims ({d_qk}, {d_v}) differ: FusedAttention needs separate Q, K and V tensors (hd_hd_hd), not {layout}",
    ),
    rule(
        "FW.SM120_MLA_TRAIN",
        FUSED,
        P::All(&[P::Sm(Cmp::Eq, 120), P::Is(Flag::Training), P::Is(Flag::Mla)]),
        Kind::Check(P::All(&[P::Int(I::Dqk, Cmp::Le, 128), P::DivBy(I::Dqk, 8)])),
        "SM120 training with unequal head dims needs d_qk <= 128 and d_qk % 8 == 0",
    ),
    rule(
        "FW.SM120_THD",
        FUSED,
        P::All(&[P::Sm(Cmp::Eq, 120), P::Is(Flag::Thd)]),
        Kind::Check(P::All(&[
            ge(9, 18, 1),
            P::Not(&P::Layout(&[L::T3hd, L::Th3d])),
        ])),
        "SM120 ragged layouts need cuDNN >= 9.18.1 and not t3hd/th3d",
    ),
    rule(
        "FW.SOFTMAX_FP8",
        FUSED,
        P::All(&[FP8_Q, P::Not(&P::Softmax(&[SoftmaxType::Vanilla]))]),
        Kind::Check(P::All(&[P::Sm(Cmp::Ge, 100), ge(9, 21, 0)])),
        "the {softmax} softmax with FP8 needs SM100+ and cuDNN >= 9.21.0",
    ),
    rule(
        "FW.SOFTMAX_THD",
        FUSED,
        P::All(&[
            P::Is(Flag::Thd),
            P::Not(&P::Softmax(&[SoftmaxType::Vanilla])),
        ]),
        Kind::Check(ge(9, 18, 0)),
        "the {softmax} softmax with ragged layouts needs cuDNN >= 9.18.0",
    ),
    rule(
        "FW.SOFTMAX_FP8_REF",
        REF,
        P::All(&[FP8_Q, P::Not(&P::Softmax(&[SoftmaxType::Vanilla]))]),
        Kind::Veto(P::True),
        "unfused attention does not run the {softmax} softmax with FP8",
    ),
    rule(
        "FW.MASK_ARBITRARY",
        FUSED,
        P::True,
        Kind::Check(P::Not(&P::Mask(&[crate::select::request::Mask::Arbitrary]))),
        "an arbitrary mask disables FusedAttention",
    ),
    rule(
        "FW.WINDOW",
        FUSED,
        P::Any(&[P::Int(I::Wl, Cmp::Ne, -1), P::Int(I::Wr, Cmp::Gt, 0)]),
        Kind::Check(P::All(&[
            P::Not(&P::Is(Flag::DropoutOn)),
            P::IntCmp(I::Sq, Cmp::Le, I::Skv),
            P::Any(&[P::Not(&FP8_Q), P::All(&[P::Sm(Cmp::Ge, 100), ge(9, 21, 0)])]),
        ])),
        "sliding window ({wl},{wr}) in FusedAttention needs no dropout, s_q <= s_kv, and for FP8 SM100+ with cuDNN >= 9.21.0",
    ),
    rule(
        "FW.BIAS_111S_GRAD",
        FUSED,
        P::Bias(&[B::PostScaleBias]),
        Kind::Veto(P::All(&[
            P::BiasShape(&[BiasShape::OneOneOneS]),
            P::Is(Flag::BiasRequiresGrad),
        ])),
        "FusedAttention has no dBias for a [1,1,1,s] bias",
    ),
    rule(
        "FW.DET_ARCH",
        FUSED,
        DET,
        Kind::Check(P::Sm(Cmp::Ge, 90)),
        "deterministic training disables FusedAttention below SM90 (device is SM{sm})",
    ),
    rule(
        "FW.DET_VERSION",
        F16,
        DET,
        Kind::Check(ge(8, 9, 5)),
        "deterministic FusedAttention training needs cuDNN >= 8.9.5",
    ),
    rule(
        "FW.DET_DBIAS",
        F16,
        DET,
        Kind::Veto(P::All(&[
            P::Bias(&[B::PreScaleBias, B::PostScaleBias]),
            P::Is(Flag::BiasRequiresGrad),
        ])),
        "deterministic training with a bias gradient (dBias) disables FusedAttention",
    ),
    rule(
        "FW.DET_SOFTMAX",
        FUSED,
        DET,
        Kind::Check(P::Softmax(&[SoftmaxType::Vanilla])),
        "deterministic training with the {softmax} softmax disables FusedAttention",
    ),
    rule(
        "FW.DET_FP8",
        FP8,
        DET,
        Kind::Check(P::All(&[P::Sm(Cmp::Ge, 90), ge(9, 19, 0)])),
        "deterministic FP8 training needs SM90+ and cuDNN >= 9.19.0",
    ),
    Rule {
        setting_hint: Some("set policy.allow_fp8_emulation"),
        ..rule(
            "FW.REF_FP8",
            REF,
            FP8_Q,
            Kind::Check(P::Is(Flag::Fp8Emulation)),
            "unfused attention runs FP8 inputs only with FP8 emulation allowed (policy allow_fp8_emulation)",
        )
    },
];
