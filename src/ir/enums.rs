//! Small reference enums carried by tensors and attributes: tensor reordering, scalar kind, and the
//! value lists of enum-typed attributes (norm phase, reshape mode, convolution mode, MoE mode, RNG
//! distribution, diagonal alignment, attention implementation, reduction mode, gate domain).
//!
//! Enum-typed attributes are stored by their reference value name (e.g. `"TRAINING"`); the op
//! tables list the allowed names and validation rejects any other.

use serde::{Deserialize, Serialize};

/// Physical reordering of a tensor (`TensorReordering_t`; C values = declaration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum TensorReordering {
    /// No reordering.
    #[default]
    #[serde(rename = "NONE")]
    None,
    /// INT8x32 interleaving.
    #[serde(rename = "INT8x32")]
    Int8x32,
    /// F16x16 interleaving.
    #[serde(rename = "F16x16")]
    F16x16,
    /// MXFP8/NVFP4 scale-factor swizzle.
    #[serde(rename = "F8_128x4")]
    F8_128x4,
}

impl TensorReordering {
    /// Every value in declaration order.
    pub const ALL: [TensorReordering; 4] = [
        TensorReordering::None,
        TensorReordering::Int8x32,
        TensorReordering::F16x16,
        TensorReordering::F8_128x4,
    ];

    /// The C value (`DNNP_REORDERING_*`) and backend value (same numbering).
    pub fn to_c(self) -> u32 {
        self as u32
    }

    /// From the C value.
    pub fn from_c(value: u32) -> Option<Self> {
        Self::ALL.get(value as usize).copied()
    }
}

/// How a fused scalar value is delivered (`ScalarType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum ScalarKind {
    /// The graph passes a pointer to its own copy in the variant pack.
    #[default]
    #[serde(rename = "RUNTIME_PARAM")]
    RuntimeParam,
    /// The value is baked into the plan; excluded from the variant pack.
    #[serde(rename = "COMPILE_TIME_CONST")]
    CompileTimeConst,
}

/// `NormFwdPhase_t` values accepted by `norm_forward_phase`.
pub const NORM_FWD_PHASES: &[&str] = &["INFERENCE", "TRAINING"];
/// `ReshapeMode_t` values accepted by `reshape_mode`.
pub const RESHAPE_MODES: &[&str] = &["VIEW_ONLY", "LOGICAL"];
/// `ConvolutionMode_t` values accepted by `convolution_mode`.
pub const CONVOLUTION_MODES: &[&str] = &["CONVOLUTION", "CROSS_CORRELATION"];
/// `MoeGroupedMatmulMode_t` values accepted by `mode` of `moe_grouped_matmul`.
pub const MOE_MODES: &[&str] = &["NONE", "GATHER", "SCATTER", "COMBINE"];
/// `RngDistribution_t` values accepted by `distribution` of `rng`.
pub const RNG_DISTRIBUTIONS: &[&str] = &["BERNOULLI", "UNIFORM", "NORMAL"];
/// `DiagonalAlignment_t` values accepted by `diagonal_alignment`.
pub const DIAGONAL_ALIGNMENTS: &[&str] = &["TOP_LEFT", "BOTTOM_RIGHT"];
/// `AttentionImplementation_t` values accepted by `implementation`.
pub const ATTENTION_IMPLEMENTATIONS: &[&str] = &["AUTO", "COMPOSITE", "UNIFIED"];
/// `ReductionMode_t` values accepted by `mode` of `reduction`.
pub const REDUCTION_MODES: &[&str] = &[
    "ADD",
    "MUL",
    "MIN",
    "MAX",
    "AMAX",
    "AVG",
    "NORM1",
    "NORM2",
    "MUL_NO_ZEROS",
];
/// Linear-attention `gate_domain` values.
pub const GATE_DOMAINS: &[&str] = &["log", "linear"];
/// Resample modes accepted by `resample_mode`.
pub const RESAMPLE_MODES: &[&str] = &[
    "MAXPOOL",
    "AVGPOOL_INCLUDE_PADDING",
    "AVGPOOL_EXCLUDE_PADDING",
    "BILINEAR",
    "NEAREST",
];
/// Padding modes accepted by `padding_mode` of `resample`.
pub const PADDING_MODES: &[&str] = &["ZERO_PAD", "NEG_INF_PAD", "EDGE_VAL_PAD"];
/// Softmax/stats precision (python-only SDPA attribute `softmax_precision`).
pub const SOFTMAX_PRECISIONS: &[&str] = &["FLOAT", "HALF", "BFLOAT16"];
