//! The explain C API: why a plan list is what it is, as JSON (the family, the facts, every
//! bundled engine with accept or decline and the reason, the backend's verdict overall and per
//! heuristic mode, and the final ranked list). Works without a GPU and without cuDNN.

use std::ffi::c_char;

use super::boundary::{Opaque, boundary, write_text};
use super::plan::dnnp_plan_list_t;
use super::types::dnnp_status_t;
use crate::dispatch::explain::explain_list;

/// The explanation of a plan list as JSON (after `dnnp_plan_list_create_execution_plans`, which
/// records it even when it fails with `NOT_SUPPORTED`). Two-call string pattern.
///
/// # Safety
/// `list` must be a live plan list; `buf` NULL or valid for `cap` bytes; `needed` NULL or valid
/// for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_explain(
    list: *const dnnp_plan_list_t,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: forwarded contract.
        let list = unsafe { dnnp_plan_list_t::get(list, "list") }?;
        let text = serde_json::to_string(&explain_list(list))?;
        // SAFETY: forwarded contract.
        unsafe { write_text(&text, buf, cap, needed, "buf") }
    })
}
