//! Validation and canonicalization of a request (spec sections 1.5 and 5.1), done once before
//! any rule runs. Ill-formed requests are errors (`BadParam` naming the field and the rule), not
//! ineligibility. The result, [`Facts`], holds the canonical request plus every derived fact the
//! rules read (formats, group, ragged/paged/MLA flags, effective bottom-right alignment, the
//! int64 ragged-offset need), so that rules stay pure data with no arithmetic of their own.

use serde::Serialize;

use super::request::{AlibiSlopes, BiasShape, BiasType, Dtype, Format, Group, Mask, Request};
use crate::error::{Error, Result};

/// The canonical request and the facts derived from it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Facts {
    /// The request after canonicalization (window filled in, masks and bias rewritten).
    pub request: Request,
    /// Canonical `(wl, wr)`.
    pub window: (i64, i64),
    /// Combined `qkv_format`.
    pub qkv_format: Format,
    /// Q format.
    pub q_format: Format,
    /// K/V format.
    pub kv_format: Format,
    /// Layout group.
    pub group: Group,
    /// Q or K/V is ragged (THD).
    pub is_thd: bool,
    /// Paged K/V.
    pub is_paged: bool,
    /// `d_qk != d_v`.
    pub is_mla: bool,
    /// Bottom-right alignment that survives lowering (a non-padding BR mask with `s_q == s_kv`
    /// becomes top-left causal in TE's kernel lowering, spec 1.5.3).
    pub br_effective: bool,
    /// TE's `get_ragged_offset_dtype` would choose int64 offsets (row `F16.RAGGED64`).
    pub needs_int64_ragged_offsets: bool,
    /// Largest ragged element offset (from max sequence lengths, as TE computes it).
    pub max_ragged_offset: u64,
    /// Training with determinism requested (TE's backward call; forward ignores it).
    pub deterministic_training: bool,
    /// Rewrites performed, as readable notes.
    pub notes: Vec<String>,
}

fn bad(field: &str, why: impl Into<String>) -> Error {
    Error::bad_param(format!("request.{field}"), why)
}

impl Facts {
    /// Validates `req` (spec 5.1 validity subset plus TE hard errors) and canonicalizes it
    /// (spec 1.5): window defaults by mask, KV-cache mask rewrite, ALiBi slopes to a
    /// materialised post-scale bias, derived facts.
    pub fn canonicalize(req: &Request) -> Result<Facts> {
        let mut r = req.clone();
        let mut notes = Vec::new();
        for (name, v) in [
            ("b", r.b),
            ("h_q", r.h_q),
            ("h_kv", r.h_kv),
            ("s_q", r.s_q),
            ("s_kv", r.s_kv),
            ("d_qk", r.d_qk),
            ("d_v", r.d_v),
        ] {
            if v == 0 {
                return Err(bad(name, "must be at least 1"));
            }
            if v > (1 << 40) {
                return Err(bad(name, format!("{v} is out of range (at most 2^40)")));
            }
        }
        if r.q_dtype != r.kv_dtype {
            return Err(bad(
                "kv_dtype",
                format!(
                    "Q is {} but K/V are {}; Transformer Engine requires equal Q and KV dtypes",
                    r.q_dtype, r.kv_dtype
                ),
            ));
        }
        let o_ok = match r.q_dtype {
            Dtype::Fp16 | Dtype::Bf16 | Dtype::Fp32 => r.o_dtype == r.q_dtype,
            Dtype::Fp8E4m3 | Dtype::Fp8E5m2 => r.o_dtype != Dtype::Fp32,
        };
        if !o_ok {
            return Err(bad(
                "o_dtype",
                format!(
                    "O is {} with Q {}: FP16/BF16/FP32 attention outputs the input dtype; FP8 outputs FP8, FP16 or BF16",
                    r.o_dtype, r.q_dtype
                ),
            ));
        }
        if !r.h_q.is_multiple_of(r.h_kv) {
            return Err(bad(
                "h_kv",
                format!(
                    "h_q ({}) must be a multiple of h_kv ({}) (cuDNN frontend GQA rule `h_q % h_kv == 0`)",
                    r.h_q, r.h_kv
                ),
            ));
        }
        if !(r.dropout.is_finite() && (0.0..1.0).contains(&r.dropout)) {
            return Err(bad(
                "dropout",
                format!("{} is not a probability in [0, 1)", r.dropout),
            ));
        }
        let info = r.layout.info();
        if r.page_size.is_some() && !info.paged {
            return Err(bad(
                "page_size",
                format!(
                    "is only meaningful with a paged layout (layout is {})",
                    r.layout
                ),
            ));
        }

        // 1.5.4 KV cache: padding mask required; padding_causal becomes bottom-right.
        if r.kv_cache {
            if !r.mask.is_padding() {
                return Err(bad(
                    "mask",
                    format!("a KV cache requires a padding mask (mask is {})", r.mask),
                ));
            }
            if r.mask == Mask::PaddingCausal {
                r.mask = Mask::PaddingCausalBottomRight;
                notes.push(
                    "KV cache: padding_causal rewritten to padding_causal_bottom_right".to_owned(),
                );
            }
        }

        // 1.5.1 window defaults by mask (TE check_set_window_size).
        let window = canonical_window(r.mask, r.window, &mut notes)?;
        r.window = Some(window);

        // 1.5.6 ALiBi with explicit slopes -> materialised post-scale bias without gradient.
        if r.bias == BiasType::Alibi && r.alibi_slopes != AlibiSlopes::None {
            let shape = if r.alibi_slopes == AlibiSlopes::PerHead {
                BiasShape::OneHss
            } else {
                BiasShape::Bhss
            };
            notes.push(format!(
                "ALiBi with explicit slopes converted to a post_scale_bias of shape {shape} (no gradient)"
            ));
            r.bias = BiasType::PostScaleBias;
            r.bias_shape = shape;
            r.bias_requires_grad = false;
            r.alibi_slopes = AlibiSlopes::None;
        }
        if r.bias == BiasType::NoBias {
            r.bias_requires_grad = false;
        }

        let is_thd = info.q_format == Format::Thd || info.kv_format == Format::Thd;
        let br_effective =
            r.mask.is_bottom_right() && !(r.mask == Mask::CausalBottomRight && r.s_q == r.s_kv);
        if r.mask == Mask::CausalBottomRight && r.s_q == r.s_kv {
            notes.push(
                "causal_bottom_right with s_q == s_kv is lowered as top-left causal (rules still see the original mask)"
                    .to_owned(),
            );
        }
        let max_ragged_offset = ragged_offset(&r, info.group);
        let needs_int64_ragged_offsets =
            info.qkv_format == Format::Thd && max_ragged_offset > i32::MAX as u64;
        Ok(Facts {
            deterministic_training: r.deterministic && r.training,
            is_mla: r.d_qk != r.d_v,
            request: r,
            window,
            qkv_format: info.qkv_format,
            q_format: info.q_format,
            kv_format: info.kv_format,
            group: info.group,
            is_thd,
            is_paged: info.paged,
            br_effective,
            needs_int64_ragged_offsets,
            max_ragged_offset,
            notes,
        })
    }
}

/// TE `check_set_window_size`: causal-family masks take `(-1, 0)` or `(wl >= 0, 0)`, and
/// `(-1,-1)` or a non-zero `wr` is rewritten to `(wl, 0)`; other masks take `(-1,-1)` or
/// `(>= 0, >= 0)`, and `(-1, 0)` is rewritten to `(-1,-1)`. Anything else is an error.
fn canonical_window(
    mask: Mask,
    given: Option<(i64, i64)>,
    notes: &mut Vec<String>,
) -> Result<(i64, i64)> {
    let causal = mask.is_causal();
    let Some((wl, wr)) = given else {
        return Ok(if causal { (-1, 0) } else { (-1, -1) });
    };
    if wl < -1 || wr < -1 {
        return Err(bad(
            "window",
            format!("({wl},{wr}): window sizes are -1 (unbounded) or >= 0"),
        ));
    }
    if causal {
        if wr != 0 {
            notes.push(format!(
                "window ({wl},{wr}) rewritten to ({wl},0) for the causal mask {mask}"
            ));
        }
        return Ok((wl, 0));
    }
    match (wl, wr) {
        (-1, -1) => Ok((-1, -1)),
        (-1, 0) => {
            notes.push(format!(
                "window (-1,0) rewritten to (-1,-1) for the non-causal mask {mask}"
            ));
            Ok((-1, -1))
        }
        (l, r) if l >= 0 && r >= 0 => Ok((l, r)),
        (l, r) => Err(bad(
            "window",
            format!(
                "({l},{r}) is not valid with the non-causal mask {mask}: use (-1,-1) or both sizes >= 0"
            ),
        )),
    }
}

/// TE `get_ragged_offset_dtype`: the largest element offset of Q, K, V and O, computed from the
/// max sequence lengths (not token totals) and with `d_qk` for O.
fn ragged_offset(r: &Request, group: Group) -> u64 {
    let (hq, hkv, sq, skv, dqk, dv) = (r.h_q, r.h_kv, r.s_q, r.s_kv, r.d_qk, r.d_v);
    let mul = |xs: &[u64]| xs.iter().fold(1u64, |a, &x| a.saturating_mul(x));
    let q = mul(&[hq, dqk, sq]);
    let (a, b, c) = match group {
        Group::ThreeHd | Group::H3d => {
            let x = mul(&[3, hq, dqk, sq]);
            (x, x, x)
        }
        Group::Hd2hd | Group::HdH2d => {
            let kv = mul(&[2, hkv, dqk, skv]);
            (q, kv, kv)
        }
        Group::HdHdHd | Group::PagedKvHdHdHd | Group::SdSdSd => {
            (q, mul(&[hkv, dqk, skv]), mul(&[hkv, dv, skv]))
        }
    };
    a.max(b).max(c).max(q)
}
