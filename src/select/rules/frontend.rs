//! cuDNN-frontend SDPA support-surface rules (spec section 5) where the frontend is stricter than
//! Transformer Engine's rule (spec section 6): bottom-right alignment with bias/ALiBi/dropout,
//! sequence order without padding, the forward head-dim caps, paged-KV version gates, the
//! backward head-dim surface, decode with a sink, and FP8 with an FP16/BF16 output.
//! Graph-validity rules (GQA divisibility, dropout 1.0) are request errors, not rules.

use super::{Clause, F16, FE_SRC, FP8, FUSED, Kind, Layer, Rule, Scope, TRAIN, ge, lt};
use crate::select::predicate::{Cmp, Flag, IntField as I, P};
use crate::select::request::{BiasType as B, Dtype, Mask as M, SoftmaxType};

const SM8X: P = P::All(&[P::Sm(Cmp::Ge, 80), P::Sm(Cmp::Le, 89)]);
const SM9X: P = P::All(&[P::Sm(Cmp::Ge, 90), P::Sm(Cmp::Le, 99)]);
const SM10X: P = P::All(&[P::Sm(Cmp::Ge, 100), P::Sm(Cmp::Le, 109)]);
const SM80_99: P = P::All(&[P::Sm(Cmp::Ge, 80), P::Sm(Cmp::Le, 99)]);
const PADDING: P = P::Mask(&[M::Padding, M::PaddingCausal, M::PaddingCausalBottomRight]);
const D_LE_128: P = P::All(&[P::Int(I::Dqk, Cmp::Le, 128), P::Int(I::Dv, Cmp::Le, 128)]);
const D_LE_256: P = P::All(&[P::Int(I::Dqk, Cmp::Le, 256), P::Int(I::Dv, Cmp::Le, 256)]);

const fn rule(id: &'static str, scope: u8, applies: P, kind: Kind, message: &'static str) -> Rule {
    let at = (Scope::Targets(scope), Layer::FrontendSurface, FE_SRC);
    Rule::row(id, at, applies, kind, message)
}

/// The frontend-surface rows.
pub static RULES: &[Rule] = &[
    rule(
        "FE.BR_FEATURES",
        FUSED,
        P::Is(Flag::BrEffective),
        Kind::Check(P::All(&[
            P::Bias(&[B::NoBias]),
            P::Not(&P::Is(Flag::DropoutOn)),
        ])),
        "bottom-right alignment ({mask}, s_q {s_q} != s_kv {s_kv} or padding) is rejected with bias, ALiBi or dropout",
    ),
    rule(
        "FE.SEQ_ORDER",
        FUSED,
        P::All(&[
            P::Not(&PADDING),
            P::Any(&[P::Mask(&[M::CausalBottomRight]), P::Int(I::Wl, Cmp::Ge, 0)]),
        ]),
        Kind::Check(P::IntCmp(I::Sq, Cmp::Le, I::Skv)),
        "bottom-right masks and windows need s_q <= s_kv without padding (s_q {s_q}, s_kv {s_kv})",
    ),
    rule(
        "FE.F16_HDIM_CAP",
        F16,
        P::True,
        Kind::Require(&[
            Clause {
                label: "no cap: SM80-99 from cuDNN 9.10.0, SM100-109 from 9.9.0, other archs",
                when: P::Any(&[
                    P::All(&[SM80_99, ge(9, 10, 0)]),
                    P::All(&[SM10X, ge(9, 9, 0)]),
                    P::Sm(Cmp::Lt, 80),
                    P::Sm(Cmp::Ge, 110),
                ]),
            },
            Clause {
                label: "SM8x: d <= 128",
                when: P::All(&[SM8X, D_LE_128]),
            },
            Clause {
                label: "SM9x: d <= 256",
                when: P::All(&[SM9X, D_LE_256]),
            },
            Clause {
                label: "SM10x: d <= 128",
                when: P::All(&[SM10X, D_LE_128]),
            },
        ]),
        "the frontend forward caps head dims ({d_qk}, {d_v}) on SM{sm} with cuDNN {cudnn}",
    ),
    rule(
        "FE.PAGED",
        F16,
        P::Is(Flag::Paged),
        Kind::Check(P::All(&[
            ge(9, 5, 0),
            P::Any(&[ge(9, 10, 0), D_LE_128]),
            P::Any(&[
                P::Not(&P::Fmt(
                    crate::select::predicate::Side::Q,
                    &[crate::select::request::Format::Thd],
                )),
                ge(9, 7, 0),
            ]),
        ])),
        "paged K/V needs cuDNN >= 9.5.0, head dims <= 128 before 9.10.0, and 9.7.0 with ragged Q",
    ),
    rule(
        "FE.F16_BWD_HDIM",
        F16,
        TRAIN,
        Kind::Require(&[
            Clause {
                label: "d_qk <= 128 and d_v <= 128",
                when: D_LE_128,
            },
            Clause {
                label: "SM9x: d <= 256 (9.11.x-9.12.x: 128 < d_qk <= 192 with 64 < d_v <= 128 only as d_v == 128 or d_qk == 192)",
                when: P::All(&[
                    SM9X,
                    D_LE_256,
                    P::Not(&P::All(&[
                        ge(9, 11, 0),
                        lt(9, 13, 0),
                        P::Int(I::Dqk, Cmp::Gt, 128),
                        P::Int(I::Dqk, Cmp::Le, 192),
                        P::Int(I::Dv, Cmp::Gt, 64),
                        P::Int(I::Dv, Cmp::Le, 128),
                        P::Int(I::Dv, Cmp::Ne, 128),
                        P::Int(I::Dqk, Cmp::Ne, 192),
                    ])),
                ]),
            },
            Clause {
                label: "SM10x: (192,128) from cuDNN 9.11.0",
                when: P::All(&[SM10X, ge(9, 11, 0), P::Dims(192, 128)]),
            },
            Clause {
                label: "SM10x: (256,256) from cuDNN 9.23.0",
                when: P::All(&[SM10X, ge(9, 23, 0), P::Dims(256, 256)]),
            },
        ]),
        "the frontend backward does not support head dims ({d_qk}, {d_v}) on SM{sm} with cuDNN {cudnn}",
    ),
    rule(
        "FE.BWD_SEQ1",
        FUSED,
        TRAIN,
        Kind::Veto(P::All(&[
            P::Int(I::Sq, Cmp::Eq, 1),
            P::Int(I::Skv, Cmp::Eq, 1),
        ])),
        "the backward rejects s_q == s_kv == 1",
    ),
    rule(
        "FE.BWD_RAGGED_SINK",
        F16,
        P::All(&[
            TRAIN,
            P::Is(Flag::Thd),
            P::Not(&P::Softmax(&[SoftmaxType::Vanilla])),
        ]),
        Kind::Check(ge(9, 26, 0)),
        "the backward with ragged layouts and a sink ({softmax} softmax) needs cuDNN >= 9.26.0",
    ),
    rule(
        "FE.SINK_DECODE",
        F16,
        P::Not(&P::Softmax(&[SoftmaxType::Vanilla])),
        Kind::Veto(P::Int(I::Sq, Cmp::Eq, 1)),
        "the backend engines reject decode (s_q == 1) with a sink token",
    ),
    rule(
        "FE.FP8_O_DTYPE",
        FP8,
        P::ODtype(&[Dtype::Fp16, Dtype::Bf16]),
        Kind::Check(P::All(&[P::Sm(Cmp::Ge, 100), ge(9, 13, 0)])),
        "FP8 attention with an {o_dtype} output needs SM100+ and cuDNN >= 9.13.0",
    ),
];
