//! Backend plan machinery: heuristic queries per mode, engine-config entries
//! `(engine_id, raw backend knobs, mode)`, replay of an entry by `(engine_id, knobs)`, plan names
//! `engN_kX=Y`, plan build, workspace size and execution through a variant pack.
//!
//! Knobs are kept with their **raw backend** knob-type integers (`cudnnBackendKnobType_t`), sorted
//! by knob type, so names and replays are unambiguous across cuDNN versions.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use serde::Serialize;

use crate::cudnn::api::{CudaGraphCall, CudnnApi, RawDescriptor, RawHandle, RawStream};
use crate::cudnn::backend::AttrValue;
use crate::cudnn::consts::*;
use crate::cudnn::descriptor::Descriptor;
use crate::cudnn::emit::OperationGraph;
use crate::cudnn::exec_cache::{self, GraphLaunch};
use crate::cudnn::exec_path::ExecPath;
use crate::cudnn::graph::Uid;
use crate::error::{Error, Result};

pub use crate::dispatch::modes::HeurMode;

/// The backend's `cudnnBackendHeurMode_t` for `mode`, `None` for [`HeurMode::OpenSource`] (never
/// sent to cuDNN: the frontend's open-source engines become a delegating entry).
pub fn backend_mode(mode: HeurMode) -> Option<u32> {
    match mode {
        HeurMode::A => Some(CUDNN_HEUR_MODE_A),
        HeurMode::B => Some(CUDNN_HEUR_MODE_B),
        HeurMode::Fallback => Some(CUDNN_HEUR_MODE_FALLBACK),
        HeurMode::OpenSource => None,
    }
}

/// `"eng<engine_id>_k<knob type>=<value>..."` with knobs sorted by backend knob type.
pub fn plan_name(engine_id: i64, knobs: &[(u32, i64)]) -> String {
    let mut k = knobs.to_vec();
    k.sort_unstable();
    let mut s = format!("eng{engine_id}");
    for (t, v) in k {
        s.push_str(&format!("_k{t}={v}"));
    }
    s
}

/// Parses a plan name produced by [`plan_name`] back into `(engine_id, knobs)`.
pub fn parse_plan_name(name: &str) -> Result<(i64, Vec<(u32, i64)>)> {
    let bad = |why: &str| Error::bad_param(format!("plan name `{name}`"), why.to_owned());
    let rest = name
        .strip_prefix("eng")
        .ok_or_else(|| bad("must start with `eng`"))?;
    let mut parts = rest.split("_k");
    let id = parts
        .next()
        .and_then(|p| p.parse::<i64>().ok())
        .ok_or_else(|| bad("engine id is not an integer"))?;
    let mut knobs = Vec::new();
    for p in parts {
        let (t, v) = p.split_once('=').ok_or_else(|| bad("knob without `=`"))?;
        let t = t
            .parse::<u32>()
            .map_err(|_| bad("knob type is not an integer"))?;
        let v = v
            .parse::<i64>()
            .map_err(|_| bad("knob value is not an integer"))?;
        knobs.push((t, v));
    }
    knobs.sort_unstable();
    Ok((id, knobs))
}

/// One engine configuration offered by the backend.
#[derive(Debug)]
pub struct EngineConfigEntry {
    /// `CUDNN_ATTR_ENGINE_GLOBAL_INDEX`.
    pub engine_id: i64,
    /// Raw backend knobs `(cudnnBackendKnobType_t, value)`, sorted by type.
    pub knobs: Vec<(u32, i64)>,
    /// The heuristic mode that produced it (first mode wins on duplicates).
    pub mode: HeurMode,
    /// The finalized ENGINECFG descriptor.
    pub config: Descriptor,
}

impl EngineConfigEntry {
    /// The plan name (`engN_kX=Y...`).
    pub fn name(&self) -> String {
        plan_name(self.engine_id, &self.knobs)
    }

    /// Numerical notes (`cudnnBackendNumericalNote_t`) of the engine, read on demand (listing
    /// configs never reads them: they are not needed to rank or name a config).
    pub fn numerical_notes(&self) -> Result<Vec<u32>> {
        config_notes(
            &self.config,
            CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
            CUDNN_TYPE_NUMERICAL_NOTE,
            CUDNN_NUMERICAL_NOTE_TYPE_COUNT as usize,
        )
    }

    /// Behavior notes (`cudnnBackendBehaviorNote_t`) of the engine, read on demand.
    pub fn behavior_notes(&self) -> Result<Vec<u32>> {
        config_notes(
            &self.config,
            CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
            CUDNN_TYPE_BEHAVIOR_NOTE,
            CUDNN_BEHAVIOR_NOTE_TYPE_COUNT as usize,
        )
    }
}

/// Outcome of one heuristic mode.
#[derive(Clone, Debug, Serialize)]
pub struct ModeOutcome {
    /// The mode.
    pub mode: HeurMode,
    /// Configs the mode returned (before de-duplication), or why the query failed.
    pub result: std::result::Result<usize, String>,
    /// cuDNN's last error text when the mode returned no configs (often says why).
    pub note: Option<String>,
}

/// The ENGINE descriptor of a finalized ENGINECFG.
fn config_engine(cfg: &Descriptor) -> Result<Descriptor> {
    cfg.get_descs(
        CUDNN_ATTR_ENGINECFG_ENGINE,
        CUDNN_BACKEND_ENGINE_DESCRIPTOR,
        1,
    )?
    .pop()
    .ok_or_else(|| Error::Internal("ENGINECFG without ENGINE".into()))
}

/// One note list of a config's engine, asking for exactly the backend's note-type count (as the
/// reference frontend does).
fn config_notes(cfg: &Descriptor, attr: u32, attr_type: u32, cap: usize) -> Result<Vec<u32>> {
    config_engine(cfg)?.get_enums(attr, attr_type, cap)
}

/// Knob-choice descriptors created for the first read of a config's knobs. The backend fills at
/// most as many as it is given; a config that fills them all is read again with
/// `CUDNN_KNOB_TYPE_COUNTS` (the upper bound). cuDNN 9.19 reports 0 for a count-only query of
/// `ENGINECFG_KNOB_CHOICES` (a NULL array), so the count cannot be asked first.
pub const KNOB_PROBE: usize = 8;

/// The raw knobs of a finalized ENGINECFG, sorted by knob type.
pub fn config_knobs(cfg: &Descriptor) -> Result<Vec<(u32, i64)>> {
    let read = |n: usize| {
        cfg.get_descs(
            CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
            CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
            n,
        )
    };
    let bound = CUDNN_KNOB_TYPE_COUNTS as usize;
    let choices = match read(KNOB_PROBE) {
        Ok(c) if c.len() < KNOB_PROBE => c,
        // Full (there may be more), or the backend refused a short array: read the bound.
        _ => read(bound)?,
    };
    let mut knobs = Vec::with_capacity(choices.len());
    for c in &choices {
        let t = c.get_enums(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1)?;
        let v = c.get_i64(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)?;
        if let Some(t) = t.first() {
            knobs.push((*t, v));
        }
    }
    knobs.sort_unstable();
    Ok(knobs)
}

/// `(engine_id, knobs)` of a finalized ENGINECFG: its ENGINE's global index and its knob
/// choices. Notes are not read (see [`EngineConfigEntry::numerical_notes`]).
pub fn describe_config(cfg: &Descriptor) -> Result<(i64, Vec<(u32, i64)>)> {
    let engine_id = config_engine(cfg)?.get_i64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX)?;
    Ok((engine_id, config_knobs(cfg)?))
}

/// Queries one heuristic mode: every ENGINECFG it returns, in rank order. Always asks the
/// backend (no cache; the plan-list path goes through [`crate::cudnn::heur_cache`]).
pub fn query_mode(opg: &OperationGraph, mode: HeurMode) -> Result<Vec<EngineConfigEntry>> {
    let Some(backend_mode) = backend_mode(mode) else {
        return Ok(Vec::new());
    };
    let api = opg.desc.api();
    let mut heur = Descriptor::new(api, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)?;
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, &opg.desc)?
        .set_enum(
            CUDNN_ATTR_ENGINEHEUR_MODE,
            CUDNN_TYPE_HEUR_MODE,
            backend_mode,
        )?;
    heur.finalize()?;
    let n = heur.count(CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR)?;
    let cfgs = heur.get_descs(
        CUDNN_ATTR_ENGINEHEUR_RESULTS,
        CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
        n.max(0) as usize,
    )?;
    let mut out = Vec::with_capacity(cfgs.len());
    for config in cfgs {
        let (engine_id, knobs) = describe_config(&config)?;
        out.push(EngineConfigEntry {
            engine_id,
            knobs,
            mode,
            config,
        });
    }
    Ok(out)
}

/// The backend's plan candidates for one operation graph, across modes.
#[derive(Debug)]
pub struct BackendCandidates {
    /// Distinct `(engine_id, knobs)` entries, in mode order then rank order.
    pub entries: Vec<EngineConfigEntry>,
    /// What each queried mode returned.
    pub modes: Vec<ModeOutcome>,
    /// True when OPENSOURCE was requested (the provider then adds a delegating entry).
    pub delegating: bool,
}

/// Queries `modes` in order; a failing mode records its error; entries are de-duplicated by
/// `(engine_id, knobs)` (first wins). Fails only if every backend mode failed.
pub fn query_modes(opg: &OperationGraph, modes: &[HeurMode]) -> Result<BackendCandidates> {
    let mut entries: Vec<EngineConfigEntry> = Vec::new();
    let mut outcomes = Vec::new();
    let mut last_err = None;
    let mut any_ok = false;
    for &mode in modes {
        if mode == HeurMode::OpenSource {
            continue;
        }
        match query_mode(opg, mode) {
            Ok(list) => {
                any_ok = true;
                let note = if list.is_empty() {
                    opg.desc
                        .api()
                        .real()
                        .map(|a| a.last_error().trim().to_owned())
                        .filter(|s| !s.is_empty())
                } else {
                    None
                };
                outcomes.push(ModeOutcome {
                    mode,
                    result: Ok(list.len()),
                    note,
                });
                for e in list {
                    if !entries
                        .iter()
                        .any(|x| x.engine_id == e.engine_id && x.knobs == e.knobs)
                    {
                        entries.push(e);
                    }
                }
            }
            Err(e) => {
                outcomes.push(ModeOutcome {
                    mode,
                    result: Err(e.to_string()),
                    note: None,
                });
                last_err = Some(e);
            }
        }
    }
    let delegating = modes.contains(&HeurMode::OpenSource);
    if let (false, false, Some(e)) = (any_ok, delegating, last_err) {
        return Err(e);
    }
    Ok(BackendCandidates {
        entries,
        modes: outcomes,
        delegating,
    })
}

/// Builds the ENGINECFG for a recorded `(engine_id, knobs)` (replay): ENGINE + KNOB_CHOICEs.
pub fn engine_config(
    opg: &OperationGraph,
    engine_id: i64,
    knobs: &[(u32, i64)],
) -> Result<Descriptor> {
    engine_config_in(opg, engine_id, knobs, None)
}

/// [`engine_config`] when the graph's `ENGINE_GLOBAL_COUNT` is already known (`Some`): the
/// range check then costs no backend call.
pub fn engine_config_in(
    opg: &OperationGraph,
    engine_id: i64,
    knobs: &[(u32, i64)],
    engine_count: Option<i64>,
) -> Result<Descriptor> {
    let api = opg.desc.api();
    if api.real().is_some() {
        let count = match engine_count {
            Some(c) => c,
            None => opg
                .desc
                .get_i64(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT)?,
        };
        if engine_id < 0 || engine_id >= count {
            return Err(Error::NotFound {
                what: "cuDNN engine",
                key: format!("{engine_id} (this graph has {count} engines)"),
            });
        }
    }
    let mut engine = Descriptor::new(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR)?;
    engine
        .set_desc(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, &opg.desc)?
        .set_i64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, engine_id)?;
    engine.finalize()?;
    let mut choices = Vec::with_capacity(knobs.len());
    for &(t, v) in knobs {
        let mut c = Descriptor::new(api, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)?;
        c.set_enum(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, t)?
            .set_i64(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, v)?;
        c.finalize()?;
        choices.push(c);
    }
    let mut cfg = Descriptor::new(api, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)?;
    cfg.set_desc(CUDNN_ATTR_ENGINECFG_ENGINE, &engine)?;
    if !choices.is_empty() {
        let refs: Vec<&Descriptor> = choices.iter().collect();
        cfg.set_descs(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, &refs)?;
    }
    cfg.finalize()?;
    Ok(cfg)
}

/// A built backend execution plan, ready to execute.
pub struct BackendPlan {
    /// The EXECUTION_PLAN descriptor.
    plan: Descriptor,
    /// The operation graph it was built from (kept alive).
    opgraph: Arc<OperationGraph>,
    /// Plan name (`engN_kX=Y`).
    pub name: String,
    /// Bytes the plan itself needs (`EXECUTION_PLAN_WORKSPACE_SIZE`).
    pub plan_workspace: usize,
    /// Bytes of frontend workspace before the plan's part.
    pub fe_workspace: usize,
    /// Uids the caller supplies, ascending (pointer order of [`BackendPlan::execute`]).
    pub user_uids: Vec<Uid>,
    /// Variant-pack uids: user uids, then by-value scalars, then frontend-workspace tensors.
    vp_uids: Vec<i64>,
    /// Host copies of the by-value scalars (pointed to by the variant pack).
    scalars: Box<[[u8; 8]]>,
    /// Frontend-workspace byte offsets, in `vp_uids` order after the scalars.
    fe_offsets: Vec<usize>,
    /// Process-unique id (keys the per-thread execution state).
    id: u64,
    /// Dropped with the plan: per-thread state of dropped plans is pruned by it.
    alive: Arc<()>,
    /// The [`ExecPath`] (as `u8`).
    path: AtomicU8,
    /// Set when the engine turned out to lack native CUDA-graph support.
    graph_unsupported: AtomicBool,
    /// Why (the backend's message), for diagnostics.
    graph_unsupported_reason: OnceLock<String>,
}

/// Source of [`BackendPlan`] ids.
static NEXT_PLAN_ID: AtomicU64 = AtomicU64::new(1);

impl std::fmt::Debug for BackendPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "BackendPlan({}, workspace {})",
            self.name,
            self.workspace_size()
        )
    }
}

impl BackendPlan {
    /// Builds (finalizes) an EXECUTION_PLAN for `config` on `handle`.
    pub fn build(
        opgraph: Arc<OperationGraph>,
        config: &Descriptor,
        handle: RawHandle,
        name: String,
    ) -> Result<BackendPlan> {
        let api = opgraph.desc.api();
        let mut plan = Descriptor::new(api, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)?;
        plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, AttrValue::Handle(handle))?
            .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config)?;
        plan.finalize()
            .map_err(|e| crate::cudnn::backend::annotate(e, format!("building plan {name}")))?;
        let plan_workspace = if api.real().is_some() {
            plan.get_i64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)?
                .max(0) as usize
        } else {
            0
        };
        let g = &opgraph.graph;
        let user_uids = g.user_uids();
        let mut vp_uids: Vec<i64> = user_uids.clone();
        let mut scalars = Vec::new();
        let mut used = std::collections::BTreeSet::new();
        for op in &g.ops {
            used.extend(op.tensors());
        }
        for t in g.tensors.values() {
            if let (Some(v), true) = (t.by_value, used.contains(&t.uid)) {
                vp_uids.push(t.uid);
                scalars.push(v.bytes());
            }
        }
        let mut fe_offsets = Vec::new();
        for (u, _) in &g.fe_workspace {
            if used.contains(u) {
                vp_uids.push(*u);
                fe_offsets.push(g.fe_workspace_offset(*u).unwrap_or(0));
            }
        }
        Ok(BackendPlan {
            plan,
            fe_workspace: g.fe_workspace_bytes(),
            opgraph,
            name,
            plan_workspace,
            user_uids,
            vp_uids,
            scalars: scalars.into_boxed_slice(),
            fe_offsets,
            id: NEXT_PLAN_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            path: AtomicU8::new(ExecPath::from_env()? as u8),
            graph_unsupported: AtomicBool::new(false),
            graph_unsupported_reason: OnceLock::new(),
        })
    }

    /// The process-unique id of this plan.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// A token whose strong count drops to zero when the plan is dropped.
    pub(crate) fn liveness(&self) -> Weak<()> {
        Arc::downgrade(&self.alive)
    }

    /// The real cuDNN behind the plan (`None` for the recording fake).
    pub(crate) fn api_real(&self) -> Option<&CudnnApi> {
        self.plan.api().real()
    }

    /// [`BackendPlan::api_real`], or `NotSupported(what)` for the recording fake.
    fn require_real(&self, what: &str) -> Result<&CudnnApi> {
        self.api_real()
            .ok_or_else(|| Error::NotSupported(what.to_owned()))
    }

    /// How [`BackendPlan::execute`] submits work (see [`ExecPath`]).
    pub fn exec_path(&self) -> ExecPath {
        ExecPath::from_u8(self.path.load(Ordering::Relaxed))
    }

    /// Changes how [`BackendPlan::execute`] submits work; never changes numerics. Safe while
    /// other threads execute (each call reads the path once).
    pub fn set_exec_path(&self, path: ExecPath) {
        self.path.store(path as u8, Ordering::Relaxed);
    }

    /// `Some(reason)` once the CUDA-graph path found that this plan cannot be populated into a
    /// CUDA graph (it then runs as [`ExecPath::ReusePack`]).
    pub fn cuda_graph_unsupported(&self) -> Option<&str> {
        if self.graph_unsupported.load(Ordering::Relaxed) {
            self.graph_unsupported_reason.get().map(String::as_str)
        } else {
            None
        }
    }

    pub(crate) fn mark_graph_unsupported(&self, reason: String) {
        let _ = self.graph_unsupported_reason.set(reason);
        self.graph_unsupported.store(true, Ordering::Relaxed);
    }

    /// Total workspace bytes the caller provides (frontend part + plan part).
    pub fn workspace_size(&self) -> usize {
        self.fe_workspace + self.plan_workspace
    }

    /// The operation graph.
    pub fn opgraph(&self) -> &Arc<OperationGraph> {
        &self.opgraph
    }

    /// The raw EXECUTION_PLAN.
    pub fn raw(&self) -> RawDescriptor {
        self.plan.raw()
    }

    /// The variant pack's pointer array for one call (user pointers, by-value scalars,
    /// frontend-workspace tensors, in `vp_uids` order) and the plan's workspace pointer, after
    /// checking the pointer count and the workspace.
    pub(crate) fn pack_pointers(
        &self,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
    ) -> Result<(Vec<*mut c_void>, *mut c_void)> {
        if pointers.len() != self.user_uids.len() {
            return Err(Error::bad_param(
                "variant pack",
                format!(
                    "{} pointers given, plan {} needs {} (uids {:?})",
                    pointers.len(),
                    self.name,
                    self.user_uids.len(),
                    self.user_uids
                ),
            ));
        }
        if workspace.is_null() && self.workspace_size() > 0 {
            return Err(Error::bad_param(
                "workspace",
                format!(
                    "NULL but plan {} needs {} bytes",
                    self.name,
                    self.workspace_size()
                ),
            ));
        }
        let mut ptrs: Vec<*mut c_void> = Vec::with_capacity(self.vp_uids.len());
        ptrs.extend_from_slice(pointers);
        for s in self.scalars.iter() {
            ptrs.push(s.as_ptr() as *mut c_void);
        }
        for &off in &self.fe_offsets {
            ptrs.push(workspace.wrapping_byte_add(off));
        }
        let plan_ws = if self.plan_workspace > 0 {
            workspace.wrapping_byte_add(self.fe_workspace)
        } else {
            std::ptr::null_mut()
        };
        Ok((ptrs, plan_ws))
    }

    /// Builds the VARIANT_PACK for one call: `pointers` in [`BackendPlan::user_uids`] order.
    pub fn variant_pack(
        &self,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
    ) -> Result<Descriptor> {
        let (ptrs, plan_ws) = self.pack_pointers(pointers, workspace)?;
        let mut vp = Descriptor::new(self.plan.api(), CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)?;
        vp.set(
            CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
            AttrValue::Pointers(ptrs),
        )?
        .set(
            CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
            AttrValue::Int64(self.vp_uids.clone()),
        )?
        .set(
            CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
            AttrValue::Pointers(vec![plan_ws]),
        )?;
        vp.finalize()?;
        Ok(vp)
    }

    /// Runs `f` with the variant pack `path` uses for these pointers: a fresh descriptor
    /// ([`ExecPath::Plain`]) or this thread's cached one (the other paths).
    pub fn with_variant_pack<R>(
        &self,
        path: ExecPath,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
        f: impl FnOnce(&Descriptor) -> Result<R>,
    ) -> Result<R> {
        match path {
            ExecPath::Plain => f(&self.variant_pack(pointers, workspace)?),
            ExecPath::ReusePack | ExecPath::CudaGraph => {
                exec_cache::with_pack(self, pointers, workspace, f)
            }
        }
    }

    /// Executes on `handle` (whose stream is `stream`, the call's stream) by the plan's
    /// [`ExecPath`].
    ///
    /// # Safety
    /// Every pointer must be a device allocation large enough for its tensor (in
    /// [`BackendPlan::user_uids`] order), `workspace` at least [`BackendPlan::workspace_size`]
    /// bytes, `handle` a live cuDNN handle of the device the plan was built for, bound to
    /// `stream`.
    pub unsafe fn execute(
        &self,
        handle: RawHandle,
        stream: RawStream,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.execute_via(self.exec_path(), handle, stream, pointers, workspace) }
    }

    /// Executes by an explicit [`ExecPath`] (benchmarks and tests compare the paths with it).
    ///
    /// # Safety
    /// As [`BackendPlan::execute`].
    pub unsafe fn execute_via(
        &self,
        path: ExecPath,
        handle: RawHandle,
        stream: RawStream,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
    ) -> Result<()> {
        let api = self.require_real("execution needs the real cuDNN")?;
        if path == ExecPath::CudaGraph && !self.graph_unsupported.load(Ordering::Relaxed) {
            // SAFETY: forwarded contract.
            match unsafe { exec_cache::launch_graph(self, handle, stream, pointers, workspace) }
                .map_err(|e| {
                    crate::cudnn::backend::annotate(
                        e,
                        format!("executing plan {} as a CUDA graph", self.name),
                    )
                })? {
                GraphLaunch::Launched => return Ok(()),
                GraphLaunch::Unsupported => {}
            }
        }
        let path = if path == ExecPath::CudaGraph {
            ExecPath::ReusePack
        } else {
            path
        };
        self.with_variant_pack(path, pointers, workspace, |vp| {
            // SAFETY: live handle, finalized plan and variant pack; pointer validity per contract.
            let st = unsafe { (api.backend_execute)(handle, self.plan.raw(), vp.raw()) };
            api.check("cudnnBackendExecute", st).map_err(|e| {
                crate::cudnn::backend::annotate(e, format!("executing plan {}", self.name))
            })
        })
    }
}

impl BackendPlan {
    /// Fills `graph` (an empty `cudaGraph_t`) with this plan's work for these pointers
    /// (`cudnnBackendPopulateCudaGraph`, cuDNN >= 9.5); launch the instantiated graph instead of
    /// executing, and retarget it with [`BackendPlan::update_cuda_graph`]. `NotSupported` on a
    /// cuDNN without the entry point; engines without the native CUDA-graph API fail with a
    /// NOT_SUPPORTED backend status. [`ExecPath::CudaGraph`] manages such graphs per thread.
    ///
    /// # Safety
    /// As [`BackendPlan::execute`]; `graph` must be a valid, empty CUDA graph.
    pub unsafe fn populate_cuda_graph(
        &self,
        handle: RawHandle,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
        graph: crate::cudnn::api::RawCudaGraph,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.cuda_graph(CudaGraphCall::Populate, handle, pointers, workspace, graph) }
    }

    /// Retargets a graph made by [`BackendPlan::populate_cuda_graph`] to new pointers
    /// (`cudnnBackendUpdateCudaGraph`); an instance of it must then be updated
    /// (`cuGraphExecUpdate`) before its next launch.
    ///
    /// # Safety
    /// As [`BackendPlan::populate_cuda_graph`]; `graph` must have been populated by this plan.
    pub unsafe fn update_cuda_graph(
        &self,
        handle: RawHandle,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
        graph: crate::cudnn::api::RawCudaGraph,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.cuda_graph(CudaGraphCall::Update, handle, pointers, workspace, graph) }
    }

    /// The CUDA-graph entry point `call` with a variant pack of these pointers.
    ///
    /// # Safety
    /// As [`BackendPlan::populate_cuda_graph`] (`Populate`) or
    /// [`BackendPlan::update_cuda_graph`] (`Update`).
    unsafe fn cuda_graph(
        &self,
        call: CudaGraphCall,
        handle: RawHandle,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
        graph: crate::cudnn::api::RawCudaGraph,
    ) -> Result<()> {
        let vp = self.variant_pack(pointers, workspace)?;
        // SAFETY: forwarded contract.
        unsafe { self.cuda_graph_with(call, handle, &vp, graph) }
    }

    /// The CUDA-graph entry point `call` with a finalized variant pack of this plan.
    ///
    /// # Safety
    /// As [`BackendPlan::populate_cuda_graph`] (`Populate`) or
    /// [`BackendPlan::update_cuda_graph`] (`Update`).
    pub(crate) unsafe fn cuda_graph_with(
        &self,
        call: CudaGraphCall,
        handle: RawHandle,
        vp: &Descriptor,
        graph: crate::cudnn::api::RawCudaGraph,
    ) -> Result<()> {
        let api = self.require_real("CUDA graphs need the real cuDNN")?;
        let f = api.cuda_graph_fn(call)?;
        // SAFETY: live handle, finalized plan and variant pack, caller-provided graph.
        let st = unsafe { f(handle, self.plan.raw(), vp.raw(), graph) };
        api.check(call.symbol(), st)
    }
}

/// Why a config did not build (plan name, error text), for "no valid execution plans" messages.
pub type BuildFailure = (String, String);

/// Builds the first config of `candidates` that finalizes on `handle` (in list order; a
/// NOT_SUPPORTED failure advances, any other error is kept as a reason and also advances, as the
/// frontend's HEURISTICS_CHOICE policy does). Errors with every per-config reason if none builds.
pub fn build_first(
    opgraph: &Arc<OperationGraph>,
    candidates: &BackendCandidates,
    handle: RawHandle,
) -> Result<(usize, BackendPlan)> {
    let mut failures: Vec<BuildFailure> = Vec::new();
    for (i, e) in candidates.entries.iter().enumerate() {
        match BackendPlan::build(opgraph.clone(), &e.config, handle, e.name()) {
            Ok(p) => return Ok((i, p)),
            Err(err) => failures.push((e.name(), err.to_string())),
        }
    }
    let detail = if failures.is_empty() {
        format!(
            "the backend offered no engine configs (modes: {})",
            candidates
                .modes
                .iter()
                .map(|m| match (&m.result, &m.note) {
                    (Ok(n), Some(note)) => format!("{} -> {n} ({note})", m.mode.name()),
                    (Ok(n), None) => format!("{} -> {n}", m.mode.name()),
                    (Err(e), _) => format!("{} -> {e}", m.mode.name()),
                })
                .collect::<Vec<_>>()
                .join("; ")
        )
    } else {
        failures
            .iter()
            .map(|(n, e)| format!("{n}: {e}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    Err(Error::NotSupported(format!(
        "no valid execution plan built: {detail}"
    )))
}
