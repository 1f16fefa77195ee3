//! The explain C API: why a plan list is what it is, as JSON (the family, the facts, every
//! bundled engine with accept or decline and the reason, the backend's verdict overall and per
//! heuristic mode, and the final ranked list). Works without a GPU and without cuDNN.

use std::ffi::c_char;

use super::boundary::{Opaque, boundary, text_out};
use super::graph::dnnp_graph_t;
use super::plan::{dnnp_heur_mode_t, dnnp_plan_list_t, read_modes};
use super::types::dnnp_status_t;
use crate::dispatch::PlanOptions;
use crate::dispatch::explain::{explain_graph, explain_list};

/// Explains what planning the graph would give on this machine, as JSON, without planning or
/// freezing the caller's graph (a validated snapshot is planned): the family (or why none), the
/// facts, every engine of the family with `accept` or `decline` and its reason (engines that need
/// a GPU decline with that reason on a machine without one), the backend's verdict overall and
/// per heuristic mode (it declines when cuDNN is not loaded), the ranked plans, and the planning
/// error when nothing can run. `n_modes == 0` means `{A, FALLBACK}`. An invalid graph is
/// `DNNP_STATUS_INVALID_GRAPH`. Two-call string pattern.
///
/// # Safety
/// `graph` must be a live graph; `modes` NULL (with `n_modes == 0`) or valid for `n_modes` reads;
/// `buf` NULL or valid for `cap` bytes; `needed` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_explain(
    graph: *const dnnp_graph_t,
    modes: *const dnnp_heur_mode_t,
    n_modes: usize,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            let graph = dnnp_graph_t::get(graph, "graph")?;
            let modes = read_modes(modes, n_modes)?;
            let report = explain_graph(graph, PlanOptions::detect_for(graph), &modes)?;
            Ok(serde_json::to_string(&report)?)
        })
    })
}

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
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            let list = dnnp_plan_list_t::get(list, "list")?;
            Ok(serde_json::to_string(&explain_list(list))?)
        })
    })
}
