//! Transformer Engine's FP8 sub-backend rule (`NVTE_FP8`), spec section 2.3. The C++ rule has no
//! checks on dropout, window, GQA, determinism or CUDA graphs (spec section 7 item 6); the
//! framework and frontend layers add those. An FP8 request that fails this rule never falls back
//! to the F16 rule (the `F16.DTYPE` gate).

use super::{Clause, FP8, INF, Kind, Layer, Rule, Scope, TE_SRC, TRAIN, ge, lt, v};
use crate::select::predicate::{Cmp, Flag, IntField as I, P, Side};
use crate::select::request::{BiasType as B, Dtype, Format as F, Mask as M, SoftmaxType};

const D16: P = P::All(&[P::DivBy(I::Dqk, 16), P::DivBy(I::Dv, 16)]);
const FOUR_MASKS: P = P::Mask(&[M::NoMask, M::Causal, M::Padding, M::PaddingCausal]);

const fn rule(id: &'static str, kind: Kind, message: &'static str) -> Rule {
    let at = (Scope::Targets(FP8), Layer::TePolicy, TE_SRC);
    Rule::row(id, at, P::True, kind, message)
}

/// The rows of spec 2.3, in table order.
pub static RULES: &[Rule] = &[
    Rule {
        gate: true,
        ..rule(
            "FP8.DTYPE",
            Kind::Check(P::QDtype(&[Dtype::Fp8E4m3, Dtype::Fp8E5m2])),
            "the FP8 sub-backend takes FP8 (E4M3/E5M2) inputs, not {q_dtype}",
        )
    },
    rule(
        "FP8.ARCH",
        Kind::Check(P::Sm(Cmp::Ge, 90)),
        "FP8 attention needs SM90+ (device is SM{sm})",
    ),
    rule(
        "FP8.BIAS",
        Kind::Check(P::Bias(&[B::NoBias])),
        "FP8 attention takes no bias ({bias})",
    ),
    rule(
        "FP8.SHAPE",
        Kind::Require(&[
            Clause {
                label: "p1: cuDNN >= 9.2.1, SM90-99, lengths % 128, (128,128), no_mask/causal",
                when: P::All(&[
                    ge(9, 2, 1),
                    P::Sm(Cmp::Ge, 90),
                    P::Sm(Cmp::Lt, 100),
                    P::DivBy(I::Sq, 128),
                    P::DivBy(I::Skv, 128),
                    P::Dims(128, 128),
                    P::Mask(&[M::NoMask, M::Causal]),
                ]),
            },
            Clause {
                label: "p2: cuDNN >= 9.7.0, SM below 100, inference d <= 256 / training (128,128), d % 16, four masks",
                when: P::All(&[
                    ge(9, 7, 0),
                    P::Sm(Cmp::Lt, 100),
                    P::Any(&[
                        P::All(&[
                            INF,
                            P::Int(I::Dqk, Cmp::Le, 256),
                            P::Int(I::Dv, Cmp::Le, 256),
                        ]),
                        P::All(&[TRAIN, P::Dims(128, 128)]),
                    ]),
                    D16,
                    FOUR_MASKS,
                ]),
            },
            Clause {
                label: "p2': cuDNN >= 9.7.0, SM100+, d <= 128, d % 16, four masks",
                when: P::All(&[
                    ge(9, 7, 0),
                    P::Sm(Cmp::Ge, 100),
                    P::Int(I::Dqk, Cmp::Le, 128),
                    P::Int(I::Dv, Cmp::Le, 128),
                    D16,
                    FOUR_MASKS,
                ]),
            },
            Clause {
                label: "p3: cuDNN >= 9.21.0, SM100+, d_qk <= 192, d_v <= 128, d % 16, no_mask/causal/causal_bottom_right",
                when: P::All(&[
                    ge(9, 21, 0),
                    P::Sm(Cmp::Ge, 100),
                    P::Int(I::Dqk, Cmp::Le, 192),
                    P::Int(I::Dv, Cmp::Le, 128),
                    D16,
                    P::Mask(&[M::NoMask, M::Causal, M::CausalBottomRight]),
                ]),
            },
        ]),
        "FP8 {phase} with head dims ({d_qk}, {d_v}), lengths ({s_q}, {s_kv}) and mask {mask} is not supported on SM{sm} with cuDNN {cudnn}",
    ),
    rule(
        "FP8.FORMAT",
        Kind::Require(&[
            Clause {
                label: "cuDNN < 9.21.0: BSHD/SBHD with the vanilla softmax",
                when: P::All(&[
                    lt(9, 21, 0),
                    P::Fmt(Side::Qkv, &[F::Bshd, F::Sbhd]),
                    P::Softmax(&[SoftmaxType::Vanilla]),
                ]),
            },
            Clause {
                label: "cuDNN >= 9.21.0: BSHD/SBHD/BHSD, any softmax",
                when: P::All(&[
                    ge(9, 21, 0),
                    P::Fmt(Side::Qkv, &[F::Bshd, F::Sbhd, F::Bhsd]),
                ]),
            },
        ]),
        "FP8 attention does not support format {format} with the {softmax} softmax on cuDNN {cudnn}",
    ),
    rule(
        "FP8.RAGGED64",
        Kind::Veto(P::Is(Flag::NeedsInt64Offsets)),
        "FP8 attention cannot use int64 ragged offsets",
    ),
    Rule {
        layer: Layer::KnownBug,
        ..rule(
            "FP8.BADVER",
            Kind::Veto(P::VerIn(&[v(9, 10, 0)])),
            "cuDNN {cudnn} has known FP8 SDPA bugs",
        )
    },
    rule(
        "FP8.MAXLOGIT",
        Kind::Veto(P::Is(Flag::MaxLogit)),
        "the FP8 sub-backend does not return the max logit",
    ),
];
