//! The attention request: the raw dimensions of spec section 1.2 (dtypes, layout, mask, window,
//! bias, softmax, dropout, phase, geometry, flags), the layout -> format/group table of section
//! 1.3, the JSON form callers send (`RequestSpec`, every field but the geometry optional) and a
//! constructor from plain SDPA-node attributes for dispatch's `explain`.
//!
//! A `Request` is not yet canonical: [`crate::select::facts::Facts::canonicalize`] validates it
//! and applies the section 1.5 rewrites before any rule sees it.

use serde::{Deserialize, Serialize};

use super::names::named_enum;
use crate::error::{Error, Result};

named_enum! {
    /// Element type of Q/K/V/O.
    Dtype {
        /// IEEE half.
        Fp16 = "fp16" | "half" | "float16" | "f16",
        /// bfloat16.
        Bf16 = "bf16" | "bfloat16",
        /// FP8 E4M3.
        Fp8E4m3 = "fp8_e4m3" | "e4m3" | "float8_e4m3fn" | "fp8",
        /// FP8 E5M2.
        Fp8E5m2 = "fp8_e5m2" | "e5m2" | "float8_e5m2",
        /// FP32 (unfused / reference path only).
        Fp32 = "fp32" | "float" | "float32" | "f32",
    }
}

impl Dtype {
    /// FP8 E4M3 or E5M2.
    pub fn is_fp8(self) -> bool {
        matches!(self, Dtype::Fp8E4m3 | Dtype::Fp8E5m2)
    }
}

named_enum! {
    /// `NVTE_QKV_Layout`, in enum-value order (0..=25).
    Layout {
        /// 0
        Sb3hd = "sb3hd",
        /// 1
        Sbh3d = "sbh3d",
        /// 2
        SbhdSb2hd = "sbhd_sb2hd",
        /// 3
        SbhdSbh2d = "sbhd_sbh2d",
        /// 4
        SbhdSbhdSbhd = "sbhd_sbhd_sbhd" | "sbhd",
        /// 5
        Bs3hd = "bs3hd",
        /// 6
        Bsh3d = "bsh3d",
        /// 7
        BshdBs2hd = "bshd_bs2hd",
        /// 8
        BshdBsh2d = "bshd_bsh2d",
        /// 9
        BshdBshdBshd = "bshd_bshd_bshd" | "bshd",
        /// 10
        T3hd = "t3hd",
        /// 11
        Th3d = "th3d",
        /// 12
        ThdT2hd = "thd_t2hd",
        /// 13
        ThdTh2d = "thd_th2d",
        /// 14
        ThdThdThd = "thd_thd_thd" | "thd",
        /// 15
        SbhdBshdBshd = "sbhd_bshd_bshd",
        /// 16
        BshdSbhdSbhd = "bshd_sbhd_sbhd",
        /// 17
        ThdBshdBshd = "thd_bshd_bshd",
        /// 18
        ThdSbhdSbhd = "thd_sbhd_sbhd",
        /// 19
        PagedKvBshdBshdBshd = "paged_kv_bshd_bshd_bshd" | "paged_kv_bshd" | "paged",
        /// 20
        PagedKvBshdSbhdSbhd = "paged_kv_bshd_sbhd_sbhd",
        /// 21
        PagedKvSbhdBshdBshd = "paged_kv_sbhd_bshd_bshd",
        /// 22
        PagedKvSbhdSbhdSbhd = "paged_kv_sbhd_sbhd_sbhd" | "paged_kv_sbhd",
        /// 23
        PagedKvThdBshdBshd = "paged_kv_thd_bshd_bshd",
        /// 24
        PagedKvThdSbhdSbhd = "paged_kv_thd_sbhd_sbhd",
        /// 25
        BhsdBhsdBhsd = "bhsd_bhsd_bhsd" | "bhsd",
    }
}

named_enum! {
    /// `NVTE_QKV_Format`: the per-side formats and the combined (mixed) formats.
    Format {
        /// Sequence-major.
        Sbhd = "sbhd",
        /// Batch-major.
        Bshd = "bshd",
        /// Ragged (packed tokens).
        Thd = "thd",
        /// Head-major dense.
        Bhsd = "bhsd",
        /// Q SBHD, K/V BSHD.
        Sbhd2Bshd = "sbhd_2bshd",
        /// Q BSHD, K/V SBHD.
        Bshd2Sbhd = "bshd_2sbhd",
        /// Q THD, K/V BSHD.
        Thd2Bshd = "thd_2bshd",
        /// Q THD, K/V SBHD.
        Thd2Sbhd = "thd_2sbhd",
    }
}

named_enum! {
    /// `NVTE_QKV_Layout_Group`.
    Group {
        /// Q, K, V interleaved as `3hd`.
        ThreeHd = "3hd",
        /// Q, K, V interleaved as `h3d`.
        H3d = "h3d",
        /// Q separate, K/V interleaved as `2hd`.
        Hd2hd = "hd_2hd",
        /// Q separate, K/V interleaved as `h2d`.
        HdH2d = "hd_h2d",
        /// Three separate tensors.
        HdHdHd = "hd_hd_hd",
        /// Paged K/V, three separate tensors.
        PagedKvHdHdHd = "paged_kv_hd_hd_hd",
        /// Three separate head-major tensors (BHSD).
        SdSdSd = "sd_sd_sd",
    }
}

/// What the layout table says about one layout.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LayoutInfo {
    /// Combined `qkv_format` (mixed layouts keep their mixed format).
    pub qkv_format: Format,
    /// Format of Q.
    pub q_format: Format,
    /// Format of K and V.
    pub kv_format: Format,
    /// Layout group.
    pub group: Group,
    /// Paged K/V.
    pub paged: bool,
}

impl Layout {
    /// The spec section 1.3 row of this layout.
    pub fn info(self) -> LayoutInfo {
        use Format as F;
        use Group as G;
        use Layout as L;
        let (qkv, q, kv, group) = match self {
            L::Sb3hd => (F::Sbhd, F::Sbhd, F::Sbhd, G::ThreeHd),
            L::Sbh3d => (F::Sbhd, F::Sbhd, F::Sbhd, G::H3d),
            L::SbhdSb2hd => (F::Sbhd, F::Sbhd, F::Sbhd, G::Hd2hd),
            L::SbhdSbh2d => (F::Sbhd, F::Sbhd, F::Sbhd, G::HdH2d),
            L::SbhdSbhdSbhd => (F::Sbhd, F::Sbhd, F::Sbhd, G::HdHdHd),
            L::Bs3hd => (F::Bshd, F::Bshd, F::Bshd, G::ThreeHd),
            L::Bsh3d => (F::Bshd, F::Bshd, F::Bshd, G::H3d),
            L::BshdBs2hd => (F::Bshd, F::Bshd, F::Bshd, G::Hd2hd),
            L::BshdBsh2d => (F::Bshd, F::Bshd, F::Bshd, G::HdH2d),
            L::BshdBshdBshd => (F::Bshd, F::Bshd, F::Bshd, G::HdHdHd),
            L::T3hd => (F::Thd, F::Thd, F::Thd, G::ThreeHd),
            L::Th3d => (F::Thd, F::Thd, F::Thd, G::H3d),
            L::ThdT2hd => (F::Thd, F::Thd, F::Thd, G::Hd2hd),
            L::ThdTh2d => (F::Thd, F::Thd, F::Thd, G::HdH2d),
            L::ThdThdThd => (F::Thd, F::Thd, F::Thd, G::HdHdHd),
            L::SbhdBshdBshd => (F::Sbhd2Bshd, F::Sbhd, F::Bshd, G::HdHdHd),
            L::BshdSbhdSbhd => (F::Bshd2Sbhd, F::Bshd, F::Sbhd, G::HdHdHd),
            L::ThdBshdBshd => (F::Thd2Bshd, F::Thd, F::Bshd, G::HdHdHd),
            L::ThdSbhdSbhd => (F::Thd2Sbhd, F::Thd, F::Sbhd, G::HdHdHd),
            L::PagedKvBshdBshdBshd => (F::Bshd, F::Bshd, F::Bshd, G::PagedKvHdHdHd),
            L::PagedKvBshdSbhdSbhd => (F::Bshd2Sbhd, F::Bshd, F::Sbhd, G::PagedKvHdHdHd),
            L::PagedKvSbhdBshdBshd => (F::Sbhd2Bshd, F::Sbhd, F::Bshd, G::PagedKvHdHdHd),
            L::PagedKvSbhdSbhdSbhd => (F::Sbhd, F::Sbhd, F::Sbhd, G::PagedKvHdHdHd),
            L::PagedKvThdBshdBshd => (F::Thd2Bshd, F::Thd, F::Bshd, G::PagedKvHdHdHd),
            L::PagedKvThdSbhdSbhd => (F::Thd2Sbhd, F::Thd, F::Sbhd, G::PagedKvHdHdHd),
            L::BhsdBhsdBhsd => (F::Bhsd, F::Bhsd, F::Bhsd, G::SdSdSd),
        };
        LayoutInfo {
            qkv_format: qkv,
            q_format: q,
            kv_format: kv,
            group,
            paged: group == G::PagedKvHdHdHd,
        }
    }
}

named_enum! {
    /// `NVTE_Mask_Type` (0..=5) plus the framework-only `arbitrary` mask.
    Mask {
        /// 0
        NoMask = "no_mask" | "none" | "no",
        /// 1
        Padding = "padding",
        /// 2: top-left causal.
        Causal = "causal",
        /// 3: top-left causal with padding.
        PaddingCausal = "padding_causal",
        /// 4
        CausalBottomRight = "causal_bottom_right" | "causal_br",
        /// 5
        PaddingCausalBottomRight = "padding_causal_bottom_right" | "padding_causal_br",
        /// Framework-only: an arbitrary user mask (never served by FusedAttention).
        Arbitrary = "arbitrary",
    }
}

impl Mask {
    /// A padding-family mask.
    pub fn is_padding(self) -> bool {
        matches!(
            self,
            Mask::Padding | Mask::PaddingCausal | Mask::PaddingCausalBottomRight
        )
    }
    /// A causal-family mask (top-left or bottom-right).
    pub fn is_causal(self) -> bool {
        matches!(
            self,
            Mask::Causal
                | Mask::PaddingCausal
                | Mask::CausalBottomRight
                | Mask::PaddingCausalBottomRight
        )
    }
    /// A bottom-right aligned mask.
    pub fn is_bottom_right(self) -> bool {
        matches!(
            self,
            Mask::CausalBottomRight | Mask::PaddingCausalBottomRight
        )
    }
}

named_enum! {
    /// `NVTE_Bias_Type`.
    BiasType {
        /// 0
        NoBias = "no_bias" | "none",
        /// 1
        PreScaleBias = "pre_scale_bias" | "pre_scale",
        /// 2
        PostScaleBias = "post_scale_bias" | "post_scale",
        /// 3
        Alibi = "alibi",
    }
}

named_enum! {
    /// Shape of a materialised bias tensor.
    BiasShape {
        /// `[1, h, s_q, s_kv]`
        OneHss = "1hss",
        /// `[b, 1, s_q, s_kv]`
        B1ss = "b1ss",
        /// `[b, h, s_q, s_kv]`
        Bhss = "bhss",
        /// `[1, 1, s_q, s_kv]`
        OneOneSs = "11ss",
        /// `[1, 1, 1, s_kv]`
        OneOneOneS = "111s",
    }
}

named_enum! {
    /// Explicit ALiBi slopes given by the caller (converted to a post-scale bias, spec 1.5.6).
    AlibiSlopes {
        /// No explicit slopes (the kernel computes them).
        None = "none",
        /// Slopes of shape `[h]`.
        PerHead = "per_head" | "h",
        /// Slopes of shape `[b, h]`.
        PerBatchHead = "per_batch_head" | "bh",
    }
}

named_enum! {
    /// `NVTE_Softmax_Type`.
    SoftmaxType {
        /// 0
        Vanilla = "vanilla",
        /// 1
        OffByOne = "off_by_one",
        /// 2: per-head learnable sink.
        Learnable = "learnable" | "sink",
    }
}

named_enum! {
    /// FP8 recipe of an FP8 request (the framework filter of spec 4.2 row 4).
    Fp8Recipe {
        /// Delayed scaling.
        Delayed = "delayed" | "delayed_scaling",
        /// Current (per-tensor) scaling.
        Current = "current" | "current_scaling" | "float8_current_scaling",
        /// MXFP8 block scaling.
        Mxfp8 = "mxfp8" | "mxfp8_block_scaling",
        /// FP8 block scaling.
        Block = "block" | "float8_block_scaling",
        /// NVFP4.
        Nvfp4 = "nvfp4" | "nvfp4_block_scaling",
    }
}

/// One attention request, as the caller states it (spec section 1.2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request {
    /// Q dtype.
    pub q_dtype: Dtype,
    /// K/V dtype (TE hard-errors when it differs from Q).
    pub kv_dtype: Dtype,
    /// O dtype.
    pub o_dtype: Dtype,
    /// `NVTE_QKV_Layout`.
    pub layout: Layout,
    /// Mask type.
    pub mask: Mask,
    /// `(window_size_left, window_size_right)`; `None` = the mask's default.
    pub window: Option<(i64, i64)>,
    /// Bias type.
    pub bias: BiasType,
    /// Bias tensor shape (post/pre-scale bias).
    pub bias_shape: BiasShape,
    /// The bias requires a gradient (dBias).
    pub bias_requires_grad: bool,
    /// Explicit ALiBi slopes.
    pub alibi_slopes: AlibiSlopes,
    /// Softmax type.
    pub softmax: SoftmaxType,
    /// Dropout probability (0 = off).
    pub dropout: f64,
    /// Training (forward saving stats and the backward) rather than inference.
    pub training: bool,
    /// Batch size.
    pub b: u64,
    /// Query heads.
    pub h_q: u64,
    /// Key/value heads.
    pub h_kv: u64,
    /// Max query sequence length.
    pub s_q: u64,
    /// Max key/value sequence length.
    pub s_kv: u64,
    /// Q/K head dim.
    pub d_qk: u64,
    /// V head dim.
    pub d_v: u64,
    /// Also return the per-row max logit.
    pub return_max_logit: bool,
    /// The call is being captured into a CUDA graph.
    pub cuda_graph: bool,
    /// Deterministic algorithms requested (matters for training only).
    pub deterministic: bool,
    /// Inference with a KV cache (framework; requires a padding mask).
    pub kv_cache: bool,
    /// Page size of paged K/V (paged layouts only).
    pub page_size: Option<u64>,
    /// FP8 recipe (FP8 requests only).
    pub fp8_recipe: Fp8Recipe,
}

impl Request {
    /// A BF16 `BSHD_BSHD_BSHD` inference request with no mask, bias, window or dropout.
    pub fn new(b: u64, h_q: u64, h_kv: u64, s_q: u64, s_kv: u64, d_qk: u64, d_v: u64) -> Self {
        Request {
            q_dtype: Dtype::Bf16,
            kv_dtype: Dtype::Bf16,
            o_dtype: Dtype::Bf16,
            layout: Layout::BshdBshdBshd,
            mask: Mask::NoMask,
            window: None,
            bias: BiasType::NoBias,
            bias_shape: BiasShape::OneHss,
            bias_requires_grad: false,
            alibi_slopes: AlibiSlopes::None,
            softmax: SoftmaxType::Vanilla,
            dropout: 0.0,
            training: false,
            b,
            h_q,
            h_kv,
            s_q,
            s_kv,
            d_qk,
            d_v,
            return_max_logit: false,
            cuda_graph: false,
            deterministic: false,
            kv_cache: false,
            page_size: None,
            fp8_recipe: Fp8Recipe::Delayed,
        }
    }

    /// Sets Q, K/V and O dtypes at once (O = Q).
    pub fn with_dtype(mut self, dtype: Dtype) -> Self {
        self.q_dtype = dtype;
        self.kv_dtype = dtype;
        self.o_dtype = dtype;
        self
    }

    /// Builds a request from the plain attributes of one SDPA graph node (what dispatch's
    /// `explain` knows): mask and window are derived from the node's causal/alignment/bounds
    /// (`left_bound = wl + 1`, `right_bound = wr`, as TE lowers them; a non-causal left bound
    /// without a right bound becomes `wr = s_kv`, i.e. unbounded), a sink means the
    /// `learnable` softmax, the layout is chosen from ragged/paged/head-major flags.
    pub fn from_sdpa_attrs(a: &SdpaAttrs) -> Self {
        let mask = match (a.padding, a.causal, a.bottom_right) {
            (false, false, _) => Mask::NoMask,
            (true, false, _) => Mask::Padding,
            (false, true, false) => Mask::Causal,
            (true, true, false) => Mask::PaddingCausal,
            (false, true, true) => Mask::CausalBottomRight,
            (true, true, true) => Mask::PaddingCausalBottomRight,
        };
        // A left bound without a right bound on a non-causal mask has no TE spelling
        // (non-causal windows are (-1,-1) or both >= 0): the right side is unbounded, which a
        // right size of s_kv expresses exactly.
        let unbounded_right = i64::try_from(a.s_kv).unwrap_or(i64::MAX);
        let window = match (a.left_bound, a.right_bound) {
            (None, None) => None,
            (l, r) => Some((
                l.map_or(-1, |l| l - 1),
                r.unwrap_or(match (a.causal, l.is_some()) {
                    (true, _) => 0,
                    (false, true) => unbounded_right,
                    (false, false) => -1,
                }),
            )),
        };
        let layout = if a.paged {
            Layout::PagedKvBshdBshdBshd
        } else if a.ragged {
            Layout::ThdThdThd
        } else if a.head_major {
            Layout::BhsdBhsdBhsd
        } else {
            Layout::BshdBshdBshd
        };
        let mut r = Request::new(a.b, a.h_q, a.h_kv, a.s_q, a.s_kv, a.d_qk, a.d_v);
        r.q_dtype = a.dtype;
        r.kv_dtype = a.dtype;
        r.o_dtype = a.o_dtype.unwrap_or(a.dtype);
        r.layout = layout;
        r.mask = mask;
        r.window = window;
        r.bias = if a.alibi {
            BiasType::Alibi
        } else if a.has_bias {
            BiasType::PostScaleBias
        } else {
            BiasType::NoBias
        };
        r.bias_requires_grad = a.has_dbias;
        r.softmax = if a.has_sink {
            SoftmaxType::Learnable
        } else {
            SoftmaxType::Vanilla
        };
        r.dropout = a.dropout;
        r.training = a.training;
        r.deterministic = a.deterministic;
        r.return_max_logit = a.return_max_logit;
        r.page_size = a.page_size;
        r
    }
}

/// Plain attributes of an SDPA node, for [`Request::from_sdpa_attrs`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SdpaAttrs {
    /// I/O dtype of Q/K/V.
    pub dtype: Dtype,
    /// O dtype when it differs from Q.
    pub o_dtype: Option<Dtype>,
    /// Batch.
    pub b: u64,
    /// Query heads.
    pub h_q: u64,
    /// Key/value heads.
    pub h_kv: u64,
    /// Query sequence length.
    pub s_q: u64,
    /// Key/value sequence length.
    pub s_kv: u64,
    /// Q/K head dim.
    pub d_qk: u64,
    /// V head dim.
    pub d_v: u64,
    /// Causal masking.
    pub causal: bool,
    /// Bottom-right diagonal alignment.
    pub bottom_right: bool,
    /// Left bound of the diagonal band (cuDNN frontend `diagonal_band_left_bound`).
    pub left_bound: Option<i64>,
    /// Right bound of the diagonal band.
    pub right_bound: Option<i64>,
    /// Per-sequence length tensors (padding mask).
    pub padding: bool,
    /// Ragged (THD) Q/K/V.
    pub ragged: bool,
    /// Paged K/V.
    pub paged: bool,
    /// Page size of paged K/V.
    pub page_size: Option<u64>,
    /// Dense head-major (BHSD) tensors.
    pub head_major: bool,
    /// An additive bias input.
    pub has_bias: bool,
    /// The bias gradient is produced (backward).
    pub has_dbias: bool,
    /// ALiBi.
    pub alibi: bool,
    /// A sink token (learnable softmax offset).
    pub has_sink: bool,
    /// Dropout probability.
    pub dropout: f64,
    /// Training (stats saved, backward follows).
    pub training: bool,
    /// Deterministic backward.
    pub deterministic: bool,
    /// Max-logit output.
    pub return_max_logit: bool,
}

// The enum is declared by `named_enum!`, which cannot carry `#[default]`.
#[allow(clippy::derivable_impls)]
impl Default for Dtype {
    fn default() -> Self {
        Dtype::Bf16
    }
}

/// The JSON form of a request: the geometry `h_q`, `s_q`, `d_qk` is required; `h_kv`, `s_kv`,
/// `d_v` default to their Q-side twins, `kv_dtype`/`o_dtype` to `dtype`, everything else to the
/// values of [`Request::new`]. Unknown fields are an error.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RequestSpec {
    #[serde(alias = "q_dtype")]
    pub dtype: Option<Dtype>,
    pub kv_dtype: Option<Dtype>,
    pub o_dtype: Option<Dtype>,
    #[serde(alias = "qkv_layout")]
    pub layout: Option<Layout>,
    #[serde(alias = "attn_mask_type")]
    pub mask: Option<Mask>,
    pub window: Option<(i64, i64)>,
    #[serde(alias = "bias_type")]
    pub bias: Option<BiasType>,
    pub bias_shape: Option<BiasShape>,
    pub bias_requires_grad: Option<bool>,
    pub alibi_slopes: Option<AlibiSlopes>,
    #[serde(alias = "softmax_type")]
    pub softmax: Option<SoftmaxType>,
    pub dropout: Option<f64>,
    #[serde(alias = "is_training")]
    pub training: Option<bool>,
    pub b: Option<u64>,
    pub h_q: Option<u64>,
    pub h_kv: Option<u64>,
    pub s_q: Option<u64>,
    pub s_kv: Option<u64>,
    pub d_qk: Option<u64>,
    pub d_v: Option<u64>,
    pub return_max_logit: Option<bool>,
    pub cuda_graph: Option<bool>,
    pub deterministic: Option<bool>,
    pub kv_cache: Option<bool>,
    pub page_size: Option<u64>,
    pub fp8_recipe: Option<Fp8Recipe>,
}

impl RequestSpec {
    /// Parses the JSON text of a request.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::bad_param("request JSON", e.to_string()))
    }

    /// Fills the defaults; fails when `h_q`, `s_q` or `d_qk` is missing.
    pub fn into_request(self) -> Result<Request> {
        let need = |v: Option<u64>, name: &str| {
            v.ok_or_else(|| Error::bad_param(format!("request.{name}"), "is required"))
        };
        let h_q = need(self.h_q, "h_q")?;
        let s_q = need(self.s_q, "s_q")?;
        let d_qk = need(self.d_qk, "d_qk")?;
        let mut r = Request::new(
            self.b.unwrap_or(1),
            h_q,
            self.h_kv.unwrap_or(h_q),
            s_q,
            self.s_kv.unwrap_or(s_q),
            d_qk,
            self.d_v.unwrap_or(d_qk),
        );
        let dtype = self.dtype.unwrap_or(Dtype::Bf16);
        r.q_dtype = dtype;
        r.kv_dtype = self.kv_dtype.unwrap_or(dtype);
        r.o_dtype = self.o_dtype.unwrap_or(dtype);
        r.layout = self.layout.unwrap_or(r.layout);
        r.mask = self.mask.unwrap_or(r.mask);
        r.window = self.window;
        r.bias = self.bias.unwrap_or(r.bias);
        r.bias_shape = self.bias_shape.unwrap_or(r.bias_shape);
        r.bias_requires_grad = self.bias_requires_grad.unwrap_or(false);
        r.alibi_slopes = self.alibi_slopes.unwrap_or(r.alibi_slopes);
        r.softmax = self.softmax.unwrap_or(r.softmax);
        r.dropout = self.dropout.unwrap_or(0.0);
        r.training = self.training.unwrap_or(false);
        r.return_max_logit = self.return_max_logit.unwrap_or(false);
        r.cuda_graph = self.cuda_graph.unwrap_or(false);
        r.deterministic = self.deterministic.unwrap_or(false);
        r.kv_cache = self.kv_cache.unwrap_or(false);
        r.page_size = self.page_size;
        r.fp8_recipe = self.fp8_recipe.unwrap_or(r.fp8_recipe);
        Ok(r)
    }

    /// Overlays the fields set in `other` onto `self` (CLI flags over a JSON file).
    pub fn overlay(mut self, other: RequestSpec) -> Self {
        macro_rules! take {
            ($($f:ident),*) => { $( if other.$f.is_some() { self.$f = other.$f; } )* };
        }
        take!(
            dtype,
            kv_dtype,
            o_dtype,
            layout,
            mask,
            window,
            bias,
            bias_shape,
            bias_requires_grad,
            alibi_slopes,
            softmax,
            dropout,
            training,
            b,
            h_q,
            h_kv,
            s_q,
            s_kv,
            d_qk,
            d_v,
            return_max_logit,
            cuda_graph,
            deterministic,
            kv_cache,
            page_size,
            fp8_recipe
        );
        self
    }
}
