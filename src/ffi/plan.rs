//! The plan-list C API: planning a graph into ONE ranked list (bundled engines and cuDNN backend
//! configs alike), the at-index API (count, name, engine id and knobs), selection, the build walk,
//! replay of a recorded `(engine_id, knobs)` choice, and workspace sizes.
//!
//! A `dnnp_plan_list_t` is made from a graph, which it validates and freezes (a snapshot of the
//! graph is kept; planning is one-shot). Knobs cross the ABI as two parallel arrays
//! `(dnnp_knob_type_t types[], int64_t values[])`. Mutating calls (create, select, build, replay,
//! workspace at an index) need exclusive access to the list; queries may run concurrently.

#![allow(non_camel_case_types)]

use std::ffi::c_char;
use std::sync::Arc;

use super::boundary::{
    Opaque, boundary, boundary_void, c_str, out_ptr, slice, text_out, write_opt, write_out,
};
use super::graph::dnnp_graph_t;
use super::types::dnnp_status_t;
use crate::dispatch::knobs::Knobs;
use crate::dispatch::modes::{BuildPolicy, HeurMode};
use crate::dispatch::plan_list::{PlanList, PlanOptions};
use crate::error::{Error, Result};

/// A graph's plan list (opaque).
pub struct dnnp_plan_list_t {
    _private: [u8; 0],
}

impl Opaque for dnnp_plan_list_t {
    type Rust = PlanList;
}

/// Heuristic mode (`DNNP_HEUR_MODE_*`), the reference's `HeurMode_t` values.
pub type dnnp_heur_mode_t = u32;
/// The backend's decision-tree heuristic; the families' tuned proposals.
pub const DNNP_HEUR_MODE_A: dnnp_heur_mode_t = 0;
/// The backend's slower heuristic (families reuse their mode-A proposals).
pub const DNNP_HEUR_MODE_B: dnnp_heur_mode_t = 1;
/// Functional fallbacks.
pub const DNNP_HEUR_MODE_FALLBACK: dnnp_heur_mode_t = 2;
/// Open-source engines; brings in the delegating backend entry.
pub const DNNP_HEUR_MODE_OPENSOURCE: dnnp_heur_mode_t = 3;

/// Build policy (`DNNP_BUILD_POLICY_*`).
pub type dnnp_build_policy_t = u32;
/// From the selected index, stop at the first plan that builds (a decline advances).
pub const DNNP_BUILD_POLICY_HEURISTICS_CHOICE: dnnp_build_policy_t = 0;
/// Build every plan; keep the first success (or the previous selection if it built).
pub const DNNP_BUILD_POLICY_ALL: dnnp_build_policy_t = 1;

/// The delegating backend entry's engine id (it has no replayable `(engine_id, knobs)`).
pub const DNNP_ENGINE_ID_BACKEND_HEURISTIC: i64 = -1;
/// First id of the reserved C++ open-source band (backend ids are `[0, 10000)`).
pub const DNNP_ENGINE_ID_CPP_OSS_BASE: i64 = 10_000;
/// First bundled-engine id; each family owns a block of `DNNP_ENGINE_ID_FAMILY_BLOCK` ids.
pub const DNNP_ENGINE_ID_BUNDLED_BASE: i64 = 20_000;
/// Width of a family's block of bundled-engine ids.
pub const DNNP_ENGINE_ID_FAMILY_BLOCK: i64 = 100;

/// Knob type (`DNNP_KNOB_TYPE_*`): the persisted public vocabulary shared with the reference;
/// 0..32 mirror the backend, 1000 and up are frontend-only.
pub type dnnp_knob_type_t = u32;
/// Knob type `NOT_SET` (0).
pub const DNNP_KNOB_TYPE_NOT_SET: dnnp_knob_type_t = 0;
/// Knob type `SWIZZLE` (1).
pub const DNNP_KNOB_TYPE_SWIZZLE: dnnp_knob_type_t = 1;
/// Knob type `TILE_SIZE` (2).
pub const DNNP_KNOB_TYPE_TILE_SIZE: dnnp_knob_type_t = 2;
/// Knob type `EDGE` (3).
pub const DNNP_KNOB_TYPE_EDGE: dnnp_knob_type_t = 3;
/// Knob type `MULTIPLY` (4).
pub const DNNP_KNOB_TYPE_MULTIPLY: dnnp_knob_type_t = 4;
/// Knob type `SPLIT_K_BUF` (5).
pub const DNNP_KNOB_TYPE_SPLIT_K_BUF: dnnp_knob_type_t = 5;
/// Knob type `TILEK` (6).
pub const DNNP_KNOB_TYPE_TILEK: dnnp_knob_type_t = 6;
/// Knob type `STAGES` (7).
pub const DNNP_KNOB_TYPE_STAGES: dnnp_knob_type_t = 7;
/// Knob type `REDUCTION_MODE` (8).
pub const DNNP_KNOB_TYPE_REDUCTION_MODE: dnnp_knob_type_t = 8;
/// Knob type `SPLIT_K_SLC` (9).
pub const DNNP_KNOB_TYPE_SPLIT_K_SLC: dnnp_knob_type_t = 9;
/// Knob type `IDX_MODE` (10).
pub const DNNP_KNOB_TYPE_IDX_MODE: dnnp_knob_type_t = 10;
/// Knob type `SPECFILT` (11).
pub const DNNP_KNOB_TYPE_SPECFILT: dnnp_knob_type_t = 11;
/// Knob type `KERNEL_CFG` (12).
pub const DNNP_KNOB_TYPE_KERNEL_CFG: dnnp_knob_type_t = 12;
/// Knob type `WORKSPACE` (13).
pub const DNNP_KNOB_TYPE_WORKSPACE: dnnp_knob_type_t = 13;
/// Knob type `TILE_CGA_M` (14).
pub const DNNP_KNOB_TYPE_TILE_CGA_M: dnnp_knob_type_t = 14;
/// Knob type `TILE_CGA_N` (15).
pub const DNNP_KNOB_TYPE_TILE_CGA_N: dnnp_knob_type_t = 15;
/// Knob type `BLOCK_SIZE` (16).
pub const DNNP_KNOB_TYPE_BLOCK_SIZE: dnnp_knob_type_t = 16;
/// Knob type `OCCUPANCY` (17).
pub const DNNP_KNOB_TYPE_OCCUPANCY: dnnp_knob_type_t = 17;
/// Knob type `ARRAY_SIZE_PER_THREAD` (18).
pub const DNNP_KNOB_TYPE_ARRAY_SIZE_PER_THREAD: dnnp_knob_type_t = 18;
/// Knob type `SPLIT_COLS` (19).
pub const DNNP_KNOB_TYPE_SPLIT_COLS: dnnp_knob_type_t = 19;
/// Knob type `TILE_ROWS` (20).
pub const DNNP_KNOB_TYPE_TILE_ROWS: dnnp_knob_type_t = 20;
/// Knob type `TILE_COLS` (21).
pub const DNNP_KNOB_TYPE_TILE_COLS: dnnp_knob_type_t = 21;
/// Knob type `LOAD_SIZE` (22).
pub const DNNP_KNOB_TYPE_LOAD_SIZE: dnnp_knob_type_t = 22;
/// Knob type `CTA_COUNT` (23).
pub const DNNP_KNOB_TYPE_CTA_COUNT: dnnp_knob_type_t = 23;
/// Knob type `STREAM_K` (24).
pub const DNNP_KNOB_TYPE_STREAM_K: dnnp_knob_type_t = 24;
/// Knob type `SPLIT_P_SLC` (25).
pub const DNNP_KNOB_TYPE_SPLIT_P_SLC: dnnp_knob_type_t = 25;
/// Knob type `TILE_M` (26).
pub const DNNP_KNOB_TYPE_TILE_M: dnnp_knob_type_t = 26;
/// Knob type `TILE_N` (27).
pub const DNNP_KNOB_TYPE_TILE_N: dnnp_knob_type_t = 27;
/// Knob type `WARP_SPEC_CFG` (28).
pub const DNNP_KNOB_TYPE_WARP_SPEC_CFG: dnnp_knob_type_t = 28;
/// Knob type `SWAP_AB` (29).
pub const DNNP_KNOB_TYPE_SWAP_AB: dnnp_knob_type_t = 29;
/// Knob type `INPUT_TMA_ENABLE` (30).
pub const DNNP_KNOB_TYPE_INPUT_TMA_ENABLE: dnnp_knob_type_t = 30;
/// Knob type `OUTPUT_TMA_ENABLE` (31).
pub const DNNP_KNOB_TYPE_OUTPUT_TMA_ENABLE: dnnp_knob_type_t = 31;
/// Knob type `TILE_CGA` (32).
pub const DNNP_KNOB_TYPE_TILE_CGA: dnnp_knob_type_t = 32;
/// Knob type `SCHED_POLICY` (1000).
pub const DNNP_KNOB_TYPE_SCHED_POLICY: dnnp_knob_type_t = 1000;
/// Knob type `PACK_GQA` (1001).
pub const DNNP_KNOB_TYPE_PACK_GQA: dnnp_knob_type_t = 1001;
/// Knob type `SPLIT_KV` (1002).
pub const DNNP_KNOB_TYPE_SPLIT_KV: dnnp_knob_type_t = 1002;
/// Knob type `PIPELINE_ARCH` (1003).
pub const DNNP_KNOB_TYPE_PIPELINE_ARCH: dnnp_knob_type_t = 1003;
/// Knob type `MMA_TILE_M` (1004).
pub const DNNP_KNOB_TYPE_MMA_TILE_M: dnnp_knob_type_t = 1004;
/// Knob type `MMA_TILE_N` (1005).
pub const DNNP_KNOB_TYPE_MMA_TILE_N: dnnp_knob_type_t = 1005;
/// Knob type `MMA_TILE_K` (1006).
pub const DNNP_KNOB_TYPE_MMA_TILE_K: dnnp_knob_type_t = 1006;
/// Knob type `CTA_GROUP` (1007).
pub const DNNP_KNOB_TYPE_CTA_GROUP: dnnp_knob_type_t = 1007;
/// Knob type `WARPS_M` (1008).
pub const DNNP_KNOB_TYPE_WARPS_M: dnnp_knob_type_t = 1008;
/// Knob type `WARPS_N` (1009).
pub const DNNP_KNOB_TYPE_WARPS_N: dnnp_knob_type_t = 1009;

/// Reads a C array of modes.
///
/// # Safety
/// `modes` must be NULL (with `n == 0`) or valid for `n` reads.
pub(crate) unsafe fn read_modes(modes: *const dnnp_heur_mode_t, n: usize) -> Result<Vec<HeurMode>> {
    // SAFETY: forwarded contract.
    let raw = unsafe { slice(modes, n, "modes") }?;
    raw.iter().map(|m| HeurMode::from_u32(*m)).collect()
}

/// Reads C knob arrays into a record (a repeated knob type is `BAD_PARAM`).
///
/// # Safety
/// `types` and `values` must be NULL (with `n == 0`) or valid for `n` reads.
unsafe fn read_knobs(
    types: *const dnnp_knob_type_t,
    values: *const i64,
    n: usize,
) -> Result<Knobs> {
    // SAFETY: forwarded contract.
    let t = unsafe { slice(types, n, "knob_types") }?;
    // SAFETY: forwarded contract.
    let v = unsafe { slice(values, n, "knob_values") }?;
    Knobs::from_arrays(t, v)
}

fn new_list(mut graph: crate::ir::Graph) -> Result<PlanList> {
    graph.begin_planning()?;
    let opts = PlanOptions::detect_for(&graph);
    Ok(PlanList::new(Arc::new(graph), opts))
}

/// Creates a plan list for a graph: validates and FREEZES the graph (planning is one-shot: every
/// later mutation of it is `INVALID_STATE`, and so is a second plan list for it), attaches the
/// target (the graph's `sm_version`/`sm_count` when set by `dnnp_graph_set_target`, else this
/// machine's device 0, or none), the cuDNN backend (declining when cuDNN is not loaded) and the
/// manifest. The list keeps its own snapshot: the graph may be destroyed afterwards.
/// Nothing is planned yet (`dnnp_plan_list_create_execution_plans`, or a replay).
///
/// # Safety
/// `graph` must be a live graph; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_create_plan_list(
    graph: *mut dnnp_graph_t,
    out: *mut *mut dnnp_plan_list_t,
) -> dnnp_status_t {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            let graph = dnnp_graph_t::get_mut(graph, "graph")?;
            graph.begin_planning()?;
            let list = PlanList::new(Arc::new(graph.clone()), PlanOptions::detect_for(graph));
            Ok(dnnp_plan_list_t::into_handle(list))
        })
    })
}

/// Creates a plan list for the graph in `graph_json` (the IR's JSON document): validates and
/// freezes it, attaches the target (the graph's `sm_version`/`sm_count` when set, else this
/// machine's device 0, or none), the cuDNN backend (declining when cuDNN is not loaded) and the
/// manifest. Nothing is planned yet.
///
/// # Safety
/// `graph_json` must be a NUL-terminated string; `out` must be valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_create_from_json(
    graph_json: *const c_char,
    out: *mut *mut dnnp_plan_list_t,
) -> dnnp_status_t {
    // SAFETY: NUL-terminated `graph_json`, `out` valid for one write per the contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            let text = c_str(graph_json, "graph_json")?;
            let list = new_list(crate::ir::Graph::from_json(text)?)?;
            Ok(dnnp_plan_list_t::into_handle(list))
        })
    })
}

/// Test hook: a plan list over dnnplan's stand-in engines and a scripted fake backend, described
/// by `script_json` (see `dispatch::testing::stand_in::scripted_plan_list`). Nothing is planned yet.
///
/// # Safety
/// `script_json` must be a NUL-terminated string; `out` must be valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_debug_plan_list_create_stand_in(
    script_json: *const c_char,
    out: *mut *mut dnnp_plan_list_t,
) -> dnnp_status_t {
    // SAFETY: NUL-terminated `script_json`, `out` valid for one write per the contract.
    boundary(|| unsafe {
        write_out(out, "out", || {
            let text = c_str(script_json, "script_json")?;
            let list = crate::dispatch::testing::stand_in::scripted_plan_list(text)?;
            Ok(dnnp_plan_list_t::into_handle(list))
        })
    })
}

/// Destroys a plan list and every plan built from it; NULL is a no-op.
///
/// # Safety
/// `list` must be NULL or a live plan list, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_destroy(list: *mut dnnp_plan_list_t) {
    // SAFETY: forwarded contract.
    boundary_void(|| unsafe { dnnp_plan_list_t::destroy(list) });
}

/// Plans the graph (one-shot): classification, facts, every bundled engine's support check, the
/// backend's configs per heuristic mode, ranking into one list. `n_modes == 0` means
/// `{A, FALLBACK}`. A second call is `DNNP_STATUS_INVALID_STATE`; a graph nothing can run is
/// `DNNP_STATUS_NOT_SUPPORTED` with every reason in the last-error message.
///
/// # Safety
/// `list` must be a live plan list; `modes` NULL (with `n_modes == 0`) or valid for `n_modes` reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_create_execution_plans(
    list: *mut dnnp_plan_list_t,
    modes: *const dnnp_heur_mode_t,
    n_modes: usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: forwarded contract.
        let list = unsafe { dnnp_plan_list_t::get_mut(list, "list") }?;
        // SAFETY: forwarded contract.
        let modes = unsafe { read_modes(modes, n_modes) }?;
        list.create_execution_plans(&modes)
    })
}

/// Number of plans in the list (0 before planning).
///
/// # Safety
/// `list` must be a live plan list; `count` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_get_count(
    list: *const dnnp_plan_list_t,
    count: *mut usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        write_out(count, "count", || {
            Ok(dnnp_plan_list_t::get(list, "list")?.count())
        })
    })
}

/// The plan name at `index`: `engine` or `engine[KNOB=v, ...]` (knobs sorted by name) for a
/// bundled engine, `engN_kX=Y...` for a backend config, `backend_heuristics` for the delegating
/// entry. Two-call string pattern (`*needed` = size including the NUL).
///
/// # Safety
/// `list` must be a live plan list; `buf` NULL or valid for `cap` bytes; `needed` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_get_plan_name(
    list: *const dnnp_plan_list_t,
    index: usize,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            dnnp_plan_list_t::get(list, "list")?.name_at(index)
        })
    })
}

/// The engine id and public knobs of the plan at `index`, for replay with
/// `dnnp_plan_list_create_execution_plan`. `*n_knobs` (when not NULL) always receives the knob
/// count; the arrays (each `cap` long, may be NULL when `cap == 0`) are filled only when they fit,
/// else `DNNP_STATUS_BUFFER_TOO_SMALL`. The delegating entry has no pair: `NOT_SUPPORTED`.
///
/// # Safety
/// `list` must be a live plan list; `engine_id` valid for one write; `knob_types` and
/// `knob_values` NULL or valid for `cap` writes; `n_knobs` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_get_engine_and_knobs(
    list: *const dnnp_plan_list_t,
    index: usize,
    engine_id: *mut i64,
    knob_types: *mut dnnp_knob_type_t,
    knob_values: *mut i64,
    cap: usize,
    n_knobs: *mut usize,
) -> dnnp_status_t {
    boundary(|| {
        let engine_id = out_ptr(engine_id, "engine_id")?;
        // SAFETY: forwarded contract.
        let list = unsafe { dnnp_plan_list_t::get(list, "list") }?;
        let (id, knobs) = list.engine_and_knobs_at(index)?;
        let n = knobs.len();
        // SAFETY: NULL or valid for one write per the contract.
        unsafe { write_opt(n_knobs, n) };
        if n > cap || (n > 0 && (knob_types.is_null() || knob_values.is_null())) {
            return Err(Error::BufferTooSmall {
                what: "knob_types/knob_values",
                needed: n,
                given: cap,
            });
        }
        for (i, (t, v)) in knobs.pairs().iter().enumerate() {
            // SAFETY: i < n <= cap and both arrays are valid for `cap` writes.
            unsafe {
                knob_types.add(i).write(t.0);
                knob_values.add(i).write(*v);
            }
        }
        // SAFETY: checked non-NULL.
        unsafe { engine_id.write(id) };
        Ok(())
    })
}

/// Pins the plan at `index`: the next `dnnp_plan_list_build_plans` is strict (that plan's decline
/// is an error). `INVALID_STATE` before planning; `BAD_PARAM` out of range.
///
/// # Safety
/// `list` must be a live plan list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_select_plan(
    list: *mut dnnp_plan_list_t,
    index: usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { dnnp_plan_list_t::get_mut(list, "list") }?.select_plan(index)
    })
}

/// The selected index (0 after planning; changed by select, build walk and build at index).
///
/// # Safety
/// `list` must be a live plan list; `index` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_get_selected_index(
    list: *const dnnp_plan_list_t,
    index: *mut usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        write_out(index, "index", || {
            Ok(dnnp_plan_list_t::get(list, "list")?.selected())
        })
    })
}

/// The build walk (plans first with the default modes if needed): from the selected index (or 0
/// for `ALL`) a declining plan is skipped, except a pinned one; the first plan that builds is
/// selected. Nothing built: `NOT_SUPPORTED` listing every `[i] name: reason`.
///
/// # Safety
/// `list` must be a live plan list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_build_plans(
    list: *mut dnnp_plan_list_t,
    policy: dnnp_build_policy_t,
) -> dnnp_status_t {
    boundary(|| {
        let policy = BuildPolicy::from_u32(policy)?;
        // SAFETY: forwarded contract.
        unsafe { dnnp_plan_list_t::get_mut(list, "list") }?.build_plans(policy)
    })
}

/// Builds the plan at `index` and selects it (not pinned). A decline is `NOT_SUPPORTED`.
///
/// # Safety
/// `list` must be a live plan list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_build_plan_at_index(
    list: *mut dnnp_plan_list_t,
    index: usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { dnnp_plan_list_t::get_mut(list, "list") }?.build_plan_at_index(index)
    })
}

/// Replays a recorded choice: appends the plan `(engine_id, knobs)` and writes its index (it is
/// not selected). Marks planning done. An unknown id is `NOT_FOUND`, an opt-in engine behind the
/// gate, a knob the engine does not have or an out-of-domain value is `BAD_PARAM`: never a
/// neighbouring plan.
///
/// # Safety
/// `list` must be a live plan list; `knob_types`/`knob_values` NULL (with `n_knobs == 0`) or
/// valid for `n_knobs` reads; `index` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_create_execution_plan(
    list: *mut dnnp_plan_list_t,
    engine_id: i64,
    knob_types: *const dnnp_knob_type_t,
    knob_values: *const i64,
    n_knobs: usize,
    index: *mut usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: forwarded contract.
        let list = unsafe { dnnp_plan_list_t::get_mut(list, "list") }?;
        // SAFETY: forwarded contract.
        let knobs = unsafe { read_knobs(knob_types, knob_values, n_knobs) }?;
        let i = list.create_execution_plan(engine_id, &knobs)?;
        // SAFETY: NULL or valid for one write per the contract.
        unsafe { write_opt(index, i) };
        Ok(())
    })
}

/// Bars every plan whose name (knobs included) contains one of the `n` substrings in `names`:
/// the walk skips them, and using one directly (build, workspace or execute at its index) is
/// `BAD_PARAM`; a pinned plan that is barred makes the walk fail. Indices do not move. A built
/// selection that is now barred is no longer built.
///
/// # Safety
/// `list` must be a live plan list; `names` NULL (with `n == 0`) or valid for `n` reads of
/// NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_deselect_engines(
    list: *mut dnnp_plan_list_t,
    names: *const *const c_char,
    n: usize,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: forwarded contract.
        let list = unsafe { dnnp_plan_list_t::get_mut(list, "list") }?;
        // SAFETY: forwarded contract.
        let ptrs = unsafe { slice(names, n, "names") }?;
        let mut owned = Vec::with_capacity(n);
        for p in ptrs {
            // SAFETY: each element is a NUL-terminated string per the contract.
            owned.push(unsafe { c_str(*p, "names[i]") }?);
        }
        list.deselect_engines(&owned);
        Ok(())
    })
}

/// Plans that need more than `bytes` of workspace decline when built (the size is known once a
/// plan is built); a built selection over the limit is no longer built.
///
/// # Safety
/// `list` must be a live plan list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_deselect_workspace_greater_than(
    list: *mut dnnp_plan_list_t,
    bytes: u64,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { dnnp_plan_list_t::get_mut(list, "list") }?.deselect_workspace_greater_than(bytes);
        Ok(())
    })
}

/// Workspace bytes of the selected, built plan (`INVALID_STATE` before a build).
///
/// # Safety
/// `list` must be a live plan list; `bytes` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_get_workspace_size(
    list: *const dnnp_plan_list_t,
    bytes: *mut u64,
) -> dnnp_status_t {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        write_out(bytes, "bytes", || {
            dnnp_plan_list_t::get(list, "list")?.workspace_size()
        })
    })
}

/// Workspace bytes of the plan at `index`, building it if needed (the selection is unchanged).
///
/// # Safety
/// `list` must be a live plan list; `bytes` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_plan_list_get_workspace_size_at_index(
    list: *mut dnnp_plan_list_t,
    index: usize,
    bytes: *mut u64,
) -> dnnp_status_t {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        write_out(bytes, "bytes", || {
            dnnp_plan_list_t::get_mut(list, "list")?.workspace_size_at(index)
        })
    })
}

/// What an engine id is, as JSON (decoded with nothing registered): its class (`backend`,
/// `cpp_oss`, `bundled`, `delegating`, `marker`, `invalid`), and for bundled ids the family, slot,
/// engine name, whether it is offered now (opt-in gate) and a note. Two-call string pattern.
///
/// # Safety
/// `buf` NULL or valid for `cap` bytes; `needed` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_engine_id_describe(
    engine_id: i64,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> dnnp_status_t {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        text_out(buf, cap, needed, || {
            let manifest = &crate::dispatch::manifest::MANIFEST;
            let v = manifest.describe_id(
                engine_id,
                crate::dispatch::manifest::opt_in_engines_enabled(),
            );
            Ok(serde_json::to_string(&v)?)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::knobs::KnobType;

    #[test]
    fn c_knob_constants_equal_the_vocabulary() {
        let pins = [
            (DNNP_KNOB_TYPE_NOT_SET, "NOT_SET"),
            (DNNP_KNOB_TYPE_SWIZZLE, "SWIZZLE"),
            (DNNP_KNOB_TYPE_TILE_SIZE, "TILE_SIZE"),
            (DNNP_KNOB_TYPE_EDGE, "EDGE"),
            (DNNP_KNOB_TYPE_MULTIPLY, "MULTIPLY"),
            (DNNP_KNOB_TYPE_SPLIT_K_BUF, "SPLIT_K_BUF"),
            (DNNP_KNOB_TYPE_TILEK, "TILEK"),
            (DNNP_KNOB_TYPE_STAGES, "STAGES"),
            (DNNP_KNOB_TYPE_REDUCTION_MODE, "REDUCTION_MODE"),
            (DNNP_KNOB_TYPE_SPLIT_K_SLC, "SPLIT_K_SLC"),
            (DNNP_KNOB_TYPE_IDX_MODE, "IDX_MODE"),
            (DNNP_KNOB_TYPE_SPECFILT, "SPECFILT"),
            (DNNP_KNOB_TYPE_KERNEL_CFG, "KERNEL_CFG"),
            (DNNP_KNOB_TYPE_WORKSPACE, "WORKSPACE"),
            (DNNP_KNOB_TYPE_TILE_CGA_M, "TILE_CGA_M"),
            (DNNP_KNOB_TYPE_TILE_CGA_N, "TILE_CGA_N"),
            (DNNP_KNOB_TYPE_BLOCK_SIZE, "BLOCK_SIZE"),
            (DNNP_KNOB_TYPE_OCCUPANCY, "OCCUPANCY"),
            (
                DNNP_KNOB_TYPE_ARRAY_SIZE_PER_THREAD,
                "ARRAY_SIZE_PER_THREAD",
            ),
            (DNNP_KNOB_TYPE_SPLIT_COLS, "SPLIT_COLS"),
            (DNNP_KNOB_TYPE_TILE_ROWS, "TILE_ROWS"),
            (DNNP_KNOB_TYPE_TILE_COLS, "TILE_COLS"),
            (DNNP_KNOB_TYPE_LOAD_SIZE, "LOAD_SIZE"),
            (DNNP_KNOB_TYPE_CTA_COUNT, "CTA_COUNT"),
            (DNNP_KNOB_TYPE_STREAM_K, "STREAM_K"),
            (DNNP_KNOB_TYPE_SPLIT_P_SLC, "SPLIT_P_SLC"),
            (DNNP_KNOB_TYPE_TILE_M, "TILE_M"),
            (DNNP_KNOB_TYPE_TILE_N, "TILE_N"),
            (DNNP_KNOB_TYPE_WARP_SPEC_CFG, "WARP_SPEC_CFG"),
            (DNNP_KNOB_TYPE_SWAP_AB, "SWAP_AB"),
            (DNNP_KNOB_TYPE_INPUT_TMA_ENABLE, "INPUT_TMA_ENABLE"),
            (DNNP_KNOB_TYPE_OUTPUT_TMA_ENABLE, "OUTPUT_TMA_ENABLE"),
            (DNNP_KNOB_TYPE_TILE_CGA, "TILE_CGA"),
            (DNNP_KNOB_TYPE_SCHED_POLICY, "SCHED_POLICY"),
            (DNNP_KNOB_TYPE_PACK_GQA, "PACK_GQA"),
            (DNNP_KNOB_TYPE_SPLIT_KV, "SPLIT_KV"),
            (DNNP_KNOB_TYPE_PIPELINE_ARCH, "PIPELINE_ARCH"),
            (DNNP_KNOB_TYPE_MMA_TILE_M, "MMA_TILE_M"),
            (DNNP_KNOB_TYPE_MMA_TILE_N, "MMA_TILE_N"),
            (DNNP_KNOB_TYPE_MMA_TILE_K, "MMA_TILE_K"),
            (DNNP_KNOB_TYPE_CTA_GROUP, "CTA_GROUP"),
            (DNNP_KNOB_TYPE_WARPS_M, "WARPS_M"),
            (DNNP_KNOB_TYPE_WARPS_N, "WARPS_N"),
        ];
        assert_eq!(pins.len(), KnobType::all().count());
        for (c, name) in pins {
            assert_eq!(KnobType::from_name(name), Some(KnobType(c)), "{name}");
        }
    }

    #[test]
    fn c_mode_and_policy_constants_equal_the_enums() {
        assert_eq!(HeurMode::from_u32(DNNP_HEUR_MODE_A).unwrap(), HeurMode::A);
        assert_eq!(HeurMode::from_u32(DNNP_HEUR_MODE_B).unwrap(), HeurMode::B);
        assert_eq!(
            HeurMode::from_u32(DNNP_HEUR_MODE_FALLBACK).unwrap(),
            HeurMode::Fallback
        );
        assert_eq!(
            HeurMode::from_u32(DNNP_HEUR_MODE_OPENSOURCE).unwrap(),
            HeurMode::OpenSource
        );
        assert_eq!(
            BuildPolicy::from_u32(DNNP_BUILD_POLICY_HEURISTICS_CHOICE).unwrap(),
            BuildPolicy::HeuristicsChoice
        );
        assert_eq!(
            BuildPolicy::from_u32(DNNP_BUILD_POLICY_ALL).unwrap(),
            BuildPolicy::All
        );
        use crate::dispatch::ids;
        assert_eq!(
            DNNP_ENGINE_ID_BACKEND_HEURISTIC,
            ids::BACKEND_HEURISTIC_ENGINE_ID
        );
        assert_eq!(DNNP_ENGINE_ID_CPP_OSS_BASE, ids::CPP_OSS_ENGINE_ID_BASE);
        assert_eq!(DNNP_ENGINE_ID_BUNDLED_BASE, ids::BUNDLED_ENGINE_ID_BASE);
        assert_eq!(DNNP_ENGINE_ID_FAMILY_BLOCK, ids::FAMILY_BLOCK);
    }
}
