//! Engine capability rows: each engine that can serve an attention request is described by a
//! frozen row in the shape of cuDNN-frontend's `Capabilities` (inclusive arch range, head-dim
//! domain with native shapes, floor and pad multiple, dtypes, one flag per optional feature,
//! layout classes, forward-only or not, placement predicate). [`caps_to_rules`] turns a row into
//! ordinary [`Rule`]s, so one evaluator serves backends and engines alike, and every unmet
//! capability is reported (not only the first, unlike the reference's `mismatch`).
//!
//! Rows today: `sdpa_fwd_prefill_sm90`, the SM90 forward row of spec 5.5 (engine id 20517 in
//! the shared id space: family `frost_sdpa_fwd` base 20500, slot 17). dnnplan does not bundle a
//! softmax-attention kernel yet, so the row is marked `bundled: false`: by default the
//! environment lists no SDPA engine and the row is reported `ENGINE.AVAILABLE`; a caller can
//! ask "what if" by listing it in `environment.engines`.

use super::predicate::{Cmp, Ctx, Flag, IntField, P};
use super::request::{Dtype, Format, Mask, SoftmaxType};
use super::rules::{Kind, Layer, Rule, Scope};

/// An optional feature a request may use.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Top-left causal masking.
    Causal,
    /// Bottom-right causal alignment.
    BottomRight,
    /// A right window bound above 0 (right-band widening).
    RightBandWidening,
    /// Sliding window (a left bound).
    SlidingWindow,
    /// Padding masks (per-sequence lengths).
    Padding,
    /// Sink token (non-vanilla softmax).
    Sink,
    /// Decode (`s_q == 1`).
    Decode,
    /// Ragged (THD) tensors.
    Thd,
    /// Additive pre/post-scale bias.
    Bias,
    /// ALiBi.
    Alibi,
    /// Dropout.
    Dropout,
    /// Paged K/V.
    Paged,
    /// Max-logit output.
    MaxLogit,
}

impl Feature {
    /// Every feature.
    pub const ALL: &'static [Feature] = &[
        Feature::Causal,
        Feature::BottomRight,
        Feature::RightBandWidening,
        Feature::SlidingWindow,
        Feature::Padding,
        Feature::Sink,
        Feature::Decode,
        Feature::Thd,
        Feature::Bias,
        Feature::Alibi,
        Feature::Dropout,
        Feature::Paged,
        Feature::MaxLogit,
    ];

    /// Stable rule id of the "feature not supported" rule.
    pub fn rule_id(self) -> &'static str {
        match self {
            Feature::Causal => "ENGINE.CAUSAL",
            Feature::BottomRight => "ENGINE.BOTTOM_RIGHT",
            Feature::RightBandWidening => "ENGINE.RIGHT_BAND",
            Feature::SlidingWindow => "ENGINE.SWA",
            Feature::Padding => "ENGINE.PADDING",
            Feature::Sink => "ENGINE.SINK",
            Feature::Decode => "ENGINE.DECODE",
            Feature::Thd => "ENGINE.THD",
            Feature::Bias => "ENGINE.BIAS",
            Feature::Alibi => "ENGINE.ALIBI",
            Feature::Dropout => "ENGINE.DROPOUT",
            Feature::Paged => "ENGINE.PAGED",
            Feature::MaxLogit => "ENGINE.MAX_LOGIT",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Feature::Causal => "causal masking",
            Feature::BottomRight => "bottom-right causal alignment",
            Feature::RightBandWidening => "a right window bound > 0",
            Feature::SlidingWindow => "a sliding window",
            Feature::Padding => "padding masks",
            Feature::Sink => "a sink token (non-vanilla softmax)",
            Feature::Decode => "decode (s_q == 1)",
            Feature::Thd => "ragged (THD) tensors",
            Feature::Bias => "an additive bias",
            Feature::Alibi => "ALiBi",
            Feature::Dropout => "dropout",
            Feature::Paged => "paged K/V",
            Feature::MaxLogit => "the max-logit output",
        }
    }

    /// The message of the rule rejecting this feature.
    pub fn message(self) -> &'static str {
        match self {
            Feature::Causal => "{engine} does not support causal masking",
            Feature::BottomRight => "{engine} does not support bottom-right causal alignment",
            Feature::RightBandWidening => {
                "{engine} does not support a right window bound > 0 (window ({wl},{wr}))"
            }
            Feature::SlidingWindow => {
                "{engine} does not support a sliding window (window ({wl},{wr}))"
            }
            Feature::Padding => "{engine} does not support padding masks ({mask})",
            Feature::Sink => "{engine} does not support the {softmax} softmax (sink token)",
            Feature::Decode => "{engine} does not support decode (s_q == 1)",
            Feature::Thd => "{engine} does not support ragged (THD) layouts ({layout})",
            Feature::Bias => "{engine} does not support an additive bias ({bias})",
            Feature::Alibi => "{engine} does not support ALiBi",
            Feature::Dropout => "{engine} does not support dropout (p = {dropout})",
            Feature::Paged => "{engine} does not support paged K/V ({layout})",
            Feature::MaxLogit => "{engine} does not produce the max-logit output",
        }
    }

    fn present(self, cx: &Ctx<'_>) -> bool {
        let f = cx.facts;
        let r = &f.request;
        match self {
            Feature::Causal => matches!(r.mask, Mask::Causal | Mask::PaddingCausal),
            Feature::BottomRight => r.mask.is_bottom_right(),
            Feature::RightBandWidening => f.window.1 > 0,
            Feature::SlidingWindow => f.window.0 >= 0,
            Feature::Padding => r.mask.is_padding(),
            Feature::Sink => r.softmax != SoftmaxType::Vanilla,
            Feature::Decode => r.s_q == 1,
            Feature::Thd => f.is_thd,
            Feature::Bias => matches!(
                r.bias,
                super::request::BiasType::PreScaleBias | super::request::BiasType::PostScaleBias
            ),
            Feature::Alibi => r.bias == super::request::BiasType::Alibi,
            Feature::Dropout => r.dropout > 0.0,
            Feature::Paged => f.is_paged,
            Feature::MaxLogit => r.return_max_logit,
        }
    }
}

/// Physical layout classes an engine accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LayoutClass {
    /// Batch-major `bshd` tensors (mixed layouts whose sides are BSHD or THD).
    Bshd,
    /// Any B/H/S order with the head dim innermost (every non-paged NVTE layout).
    DenseFlex,
}

/// One check of a capability row.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CapCheck {
    /// The engine is available in this build/environment.
    Available,
    /// `sm_lo <= sm <= sm_hi`.
    Arch,
    /// Head-dim envelope.
    HeadDims,
    /// Input dtype.
    Dtype,
    /// Layout class.
    Layout,
    /// An unsupported feature is not used.
    Feature(Feature),
}

/// A capability row.
#[derive(Debug)]
pub struct EngineCaps {
    /// Engine name.
    pub name: &'static str,
    /// Target name (`engine.<name>`).
    pub target_name: &'static str,
    /// Dispatch engine id.
    pub engine_id: i64,
    /// Lowest architecture (inclusive).
    pub sm_lo: u16,
    /// Highest architecture (inclusive).
    pub sm_hi: u16,
    /// Native `(d_qk, d_v)` shapes.
    pub d_shapes: &'static [(u64, u64)],
    /// Envelope floor: both dims must exceed it (0 = none).
    pub d_floor: u64,
    /// Pad multiple of the envelope (0 = native shapes only).
    pub d_pad_multiple: u64,
    /// Input dtypes.
    pub dtypes: &'static [Dtype],
    /// Supported optional features.
    pub features: &'static [Feature],
    /// Accepted layout classes.
    pub layouts: &'static [LayoutClass],
    /// Forward pass only (training needs another target's backward).
    pub forward_only: bool,
    /// Bundled in this build of dnnplan.
    pub bundled: bool,
    /// Placement: when the row's plans lead the cuDNN block (measured policy, not eligibility).
    pub leads_when: P,
    /// Where the row was transcribed from.
    pub source: &'static str,
}

/// Every capability row.
pub static ROWS: &[EngineCaps] = &[EngineCaps {
    name: "sdpa_fwd_prefill_sm90",
    target_name: "engine.sdpa_fwd_prefill_sm90",
    engine_id: 20517,
    sm_lo: 90,
    sm_hi: 90,
    d_shapes: &[(512, 512)],
    d_floor: 256,
    d_pad_multiple: 8,
    dtypes: &[Dtype::Fp16, Dtype::Bf16],
    features: &[
        Feature::Causal,
        Feature::BottomRight,
        Feature::RightBandWidening,
        Feature::SlidingWindow,
        Feature::Padding,
        Feature::Sink,
        Feature::Decode,
        Feature::Thd,
    ],
    layouts: &[LayoutClass::Bshd, LayoutClass::DenseFlex],
    forward_only: true,
    bundled: false,
    leads_when: P::All(&[
        P::Not(&P::Is(Flag::Thd)),
        P::Not(&P::Is(Flag::Paged)),
        P::Not(&P::Mask(&[
            Mask::Padding,
            Mask::PaddingCausal,
            Mask::PaddingCausalBottomRight,
        ])),
        P::Dims(512, 512),
        P::Softmax(&[SoftmaxType::Vanilla]),
        P::Any(&[
            P::Int(IntField::Wl, Cmp::Eq, -1),
            P::All(&[
                P::Mask(&[Mask::Causal, Mask::CausalBottomRight]),
                P::Int(IntField::Sq, Cmp::Ge, 128),
                P::Int(IntField::Skv, Cmp::Ge, 1024),
            ]),
        ]),
        P::Any(&[
            P::Int(IntField::Sq, Cmp::Ne, 1),
            P::Int(IntField::BHq, Cmp::Ge, 512),
        ]),
    ]),
    source: "nvidia-cudnn-frontend 1.32.0: cudnn/sdpa/fwd/engines.py (sdpa_fwd_prefill_sm90), cudnn/sdpa/fwd/placement.py",
}];

/// Names of the rows bundled in this build (the default `environment.engines`).
pub fn bundled_names() -> Vec<String> {
    ROWS.iter()
        .filter(|r| r.bundled)
        .map(|r| r.name.to_owned())
        .collect()
}

impl EngineCaps {
    pub(crate) fn check(&'static self, check: CapCheck, cx: &Ctx<'_>) -> bool {
        let f = cx.facts;
        let r = &f.request;
        match check {
            CapCheck::Available => cx.env.engines.iter().any(|e| e == self.name),
            CapCheck::Arch => (self.sm_lo..=self.sm_hi).contains(&cx.sm),
            CapCheck::HeadDims => self.d_shapes.iter().any(|&(a, b)| {
                if self.d_pad_multiple == 0 {
                    (r.d_qk, r.d_v) == (a, b)
                } else {
                    r.d_qk <= a
                        && r.d_v <= b
                        && r.d_qk > self.d_floor
                        && r.d_v > self.d_floor
                        && r.d_qk.is_multiple_of(self.d_pad_multiple)
                        && r.d_v.is_multiple_of(self.d_pad_multiple)
                }
            }),
            CapCheck::Dtype => self.dtypes.contains(&r.q_dtype),
            CapCheck::Layout => self.layouts.iter().any(|c| match c {
                LayoutClass::Bshd => {
                    [Format::Bshd, Format::Thd].contains(&f.q_format)
                        && [Format::Bshd, Format::Thd].contains(&f.kv_format)
                        && !f.is_paged
                }
                LayoutClass::DenseFlex => !f.is_paged,
            }),
            CapCheck::Feature(feat) => self.features.contains(&feat) || !feat.present(cx),
        }
    }

    pub(crate) fn describe(&self, check: CapCheck) -> String {
        match check {
            CapCheck::Available => format!("engine {} available", self.name),
            CapCheck::Arch => format!("SM {}..={}", self.sm_lo, self.sm_hi),
            CapCheck::HeadDims => {
                let shapes: Vec<String> = self
                    .d_shapes
                    .iter()
                    .map(|(a, b)| format!("({a},{b})"))
                    .collect();
                if self.d_pad_multiple == 0 {
                    format!("(d_qk, d_v) in {{{}}}", shapes.join(", "))
                } else {
                    format!(
                        "{} < d <= {} componentwise, multiple of {}",
                        self.d_floor,
                        shapes.join("|"),
                        self.d_pad_multiple
                    )
                }
            }
            CapCheck::Dtype => format!(
                "q_dtype in {{{}}}",
                self.dtypes
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            CapCheck::Layout => "a non-paged layout with the head dim innermost".to_owned(),
            CapCheck::Feature(feat) => format!("no {}", feat.name()),
        }
    }

    pub(crate) fn actual(&self, check: CapCheck, cx: &Ctx<'_>) -> String {
        let f = cx.facts;
        let r = &f.request;
        match check {
            CapCheck::Available => format!("available engines: [{}]", cx.env.engines.join(", ")),
            CapCheck::Arch => format!("SM {}", cx.sm),
            CapCheck::HeadDims => format!("(d_qk, d_v) = ({}, {})", r.d_qk, r.d_v),
            CapCheck::Dtype => format!("q_dtype {}", r.q_dtype),
            CapCheck::Layout => format!("layout {}", r.layout),
            CapCheck::Feature(feat) => format!("uses {}", feat.name()),
        }
    }
}

/// The rules of one capability row: availability, arch range, head dims, dtype, layout, and one
/// rule per feature the row does not support.
pub fn caps_to_rules(row: &'static EngineCaps) -> Vec<Rule> {
    let rule = |id: &'static str, check: CapCheck, message: &'static str| Rule {
        id,
        scope: Scope::Engine(row),
        layer: if check == CapCheck::Available {
            Layer::Environment
        } else {
            Layer::EngineCaps
        },
        applies: P::True,
        kind: Kind::Check(P::Engine(row, check)),
        gate: false,
        setting_hint: if check == CapCheck::Available {
            Some("list it in environment.engines; it must be bundled in this build to run")
        } else {
            None
        },
        message,
        source: row.source,
    };
    let mut v = vec![
        rule(
            "ENGINE.AVAILABLE",
            CapCheck::Available,
            "{engine} is not available in this build (not bundled or not enabled)",
        ),
        rule(
            "ENGINE.ARCH",
            CapCheck::Arch,
            "{engine} requires SM{sm_lo}-{sm_hi}; current device is SM{sm}",
        ),
        rule(
            "ENGINE.HDIM",
            CapCheck::HeadDims,
            "{engine} does not serve head dims ({d_qk}, {d_v})",
        ),
        rule(
            "ENGINE.DTYPE",
            CapCheck::Dtype,
            "{engine} does not take {q_dtype} inputs",
        ),
        rule(
            "ENGINE.LAYOUT",
            CapCheck::Layout,
            "{engine} does not accept layout {layout}",
        ),
    ];
    for &feat in Feature::ALL {
        if !row.features.contains(&feat) {
            v.push(rule(
                feat.rule_id(),
                CapCheck::Feature(feat),
                feat.message(),
            ));
        }
    }
    v
}
