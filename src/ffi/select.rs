//! C entry point of the attention eligibility selector ([`crate::select`]): a JSON request (and
//! optionally a JSON environment) in, a JSON verdict document out, through the two-call
//! `(buf, cap, needed)` text pattern.

use std::ffi::c_char;

use super::boundary::{boundary, c_str, text_out};
use super::types::dnnp_status_t;
use crate::select::{EnvironmentSpec, RequestSpec, evaluate};

/// Which attention backends and engines can run an attention request, and every reason the
/// others cannot, as a JSON document.
///
/// `request_json` (required) is a JSON object; `h_q`, `s_q` and `d_qk` are required, everything
/// else defaults: `dtype` ("bf16"; also "fp16", "fp8_e4m3", "fp8_e5m2", "fp32"), `kv_dtype`,
/// `o_dtype` (default `dtype`), `layout` (NVTE_QKV_Layout name such as "bshd_bshd_bshd",
/// "thd_thd_thd", "paged_kv_bshd_bshd_bshd", or its enum value; default "bshd_bshd_bshd"),
/// `mask` ("no_mask", "padding", "causal", "padding_causal", "causal_bottom_right",
/// "padding_causal_bottom_right", "arbitrary"), `window` ([wl, wr], -1 = unbounded; default by
/// mask), `bias` ("no_bias", "pre_scale_bias", "post_scale_bias", "alibi"), `bias_shape`
/// ("1hss", "b1ss", "bhss", "11ss", "111s"), `bias_requires_grad`, `alibi_slopes` ("none",
/// "per_head", "per_batch_head"), `softmax` ("vanilla", "off_by_one", "learnable"), `dropout`
/// (probability), `training`, `b` (1), `h_kv` (= h_q), `s_kv` (= s_q), `d_v` (= d_qk),
/// `return_max_logit`, `cuda_graph`, `deterministic`, `kv_cache`, `page_size`, `fp8_recipe`
/// ("delayed", "current", "mxfp8", "block", "nvfp4"). Unknown fields are an error.
///
/// `env_json_or_null`: NULL to detect the environment (first CUDA device's architecture, the
/// loaded cuDNN), or a JSON object whose present fields override detection: `sm` (e.g. 90),
/// `cudnn` ("9.19.0", a cudnnGetVersion() integer such as 91900 or 8906, or "none"),
/// `cudnn_compiled`, `sm_count`, `engines` (engine row names available; ["all"] for every row;
/// default: the rows bundled in this build), `policy` ({"disabled": [target names],
/// "allow_fp8_emulation": bool}).
///
/// Output (schema "dnnplan.attention_eligibility/1"): an object with `schema`; `request` (as
/// given); `environment` (`sm`, `cudnn`, `cudnn_compiled`, `cuda_driver`, `sm_count`,
/// `engines`, `policy`, `origin`: "detected" | "given" | "mixed"); `facts` (the canonical
/// request and derived facts: `window`, `qkv_format`, `q_format`, `kv_format`, `group`,
/// `is_thd`, `is_paged`, `is_mla`, `br_effective`, `needs_int64_ragged_offsets`,
/// `max_ragged_offset`, `deterministic_training`, `notes`); `te_backend` (what Transformer
/// Engine's own rule returns: "NVTE_No_Backend", "NVTE_F16_arbitrary_seqlen", "NVTE_FP8", or
/// null without cuDNN); `verdicts` (one per candidate: `target` ("cudnn.f16_arbitrary_seqlen",
/// "cudnn.fp8", `"engine.<row>"`, "reference.unfused"), `kind`, `engine_id`, `eligible`,
/// `rejections`, `notes`); `order` (eligible targets, preferred first); `selected` (first of
/// `order` or null). Each rejection has `rule` (a stable id such as "F16.WINDOW"), `layer`
/// ("te_policy", "known_bug", "frontend_surface", "framework", "engine_caps", "environment",
/// "runtime"), `message`, `nearest_clause` (or null), `failing` ([{`expected`, `actual`}]),
/// `unblock` (null or {`kind`: "cudnn_at_least" | "cudnn_below" | "avoid_cudnn" | "arch" |
/// "not_on_arch" | "setting", `text` such as "requires cuDNN >= 9.6.0", plus `cudnn` and/or
/// `sm`}), `source`.
///
/// Returns `DNNP_STATUS_BAD_PARAM` for malformed JSON or an ill-formed request (the message names
/// the field and the rule, e.g. `h_q % h_kv`), `DNNP_STATUS_CUDA_UNAVAILABLE` when the
/// architecture must be detected and no device is visible, `DNNP_STATUS_BUFFER_TOO_SMALL` (with
/// `*needed` set) when `buf` is NULL or shorter than the document plus its NUL. `buf` is written
/// only on success.
///
/// # Safety
/// `request_json` must point to a NUL-terminated string; `env_json_or_null` must be NULL or point
/// to one; `buf` must be NULL or valid for writing `cap` bytes; `needed` must be NULL or valid for
/// one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_attention_eligibility(
    request_json: *const c_char,
    env_json_or_null: *const c_char,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: the strings are NULL or NUL-terminated, `buf` valid for `cap` bytes or NULL,
    // `needed` valid or NULL, per the contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            let request_text = c_str(request_json, "request_json")?;
            let env_spec = if env_json_or_null.is_null() {
                EnvironmentSpec::default()
            } else {
                EnvironmentSpec::from_json(c_str(env_json_or_null, "env_json_or_null")?)?
            };
            let request = RequestSpec::from_json(request_text)?.into_request()?;
            let env = env_spec.resolve()?;
            Ok(evaluate(&request, &env)?.to_json().to_string())
        })
    })
}
