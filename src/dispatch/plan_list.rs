//! The plan list of one frozen graph: one-shot planning, the at-index API, the build walk,
//! deterministic replay by `(engine_id, knobs)`, and workspace sizes.
//!
//! All at-index calls address ONE list (bundled and backend entries alike); indices are stable
//! (the list is only ever appended to, by replay). Planning is one-shot: a second
//! `create_execution_plans` is an error. `select_plan` pins: the next build is strict and the
//! pinned entry's decline is an error; otherwise the walk starts at the selected index and a
//! decline advances. Replay of an unknown id or a bad knob value is an error, never a neighbour.

use std::sync::{Arc, Mutex};

use super::backend::{self, BackendOutcome, BackendProvider, BackendSession, ModeVerdict};
use super::engine::{BuildContext, CompiledPlan, SupportQuery, decline_reason, is_decline};
use super::facts::{FactsCache, FactsRef};
use super::graph::Graph;
use super::ids::{self, EngineId, IdClass};
use super::knobs::{Knobs, RawBackendKnobs};
use super::manifest::{
    Candidate, Classification, ENV_ENABLE_OPT_IN_ENGINES, IdOwner, MANIFEST, Manifest,
    opt_in_engines_enabled,
};
use super::modes::{BuildPolicy, DEFAULT_MODES, HeurMode};
use super::rank::{self, EntrySource, HookKind, Offered, PlanEntry};
use super::target::Target;
use crate::error::{Error, Result};

/// What planning runs against: the manifest, the backend provider, the target, the opt-in gate.
#[derive(Clone)]
pub struct PlanOptions {
    /// The manifest (tests inject their own families here).
    pub manifest: &'static Manifest,
    /// The backend provider.
    pub backend: Arc<dyn BackendProvider>,
    /// The device planned for.
    pub target: Target,
    /// The opt-in gate; `None` reads `DNNPLAN_ENABLE_OPT_IN_ENGINES` at each use.
    pub opt_in: Option<bool>,
}

impl PlanOptions {
    /// Production options: [`MANIFEST`], the default provider, the detected device, the env gate.
    pub fn detect() -> PlanOptions {
        PlanOptions {
            manifest: &MANIFEST,
            backend: backend::default_provider(),
            target: Target::detect(),
            opt_in: None,
        }
    }

    /// [`PlanOptions::detect`], with the graph context's target (`sm_version`, `sm_count`)
    /// taking precedence over the detected device.
    pub fn detect_for(graph: &Graph) -> PlanOptions {
        let mut o = PlanOptions::detect();
        o.target = o.target.with_graph_context(graph.context());
        o
    }

    fn opt_in(&self) -> bool {
        self.opt_in.unwrap_or_else(opt_in_engines_enabled)
    }
}

/// One engine's verdict during planning (explain shows every one).
#[derive(Clone, Debug)]
pub struct CandidateVerdict {
    /// Manifest name.
    pub name: &'static str,
    /// Engine id.
    pub id: EngineId,
    /// Offered (false = an opt-in slot behind the gate).
    pub offered: bool,
    /// `None` = accepted; else the reason it was not used.
    pub declined: Option<String>,
}

/// What planning saw, for explain and for the empty-list error.
#[derive(Clone, Debug, Default)]
pub struct PlanningTrace {
    /// Modes used.
    pub modes: Vec<HeurMode>,
    /// The family, when exactly one was named.
    pub family: Option<&'static str>,
    /// Families named by the graph's node types.
    pub named_families: Vec<&'static str>,
    /// Why there is no family.
    pub no_family_reason: Option<String>,
    /// Whether the family has a heuristics hook (false = unranked path).
    pub ranked: bool,
    /// The family validator's answer (`None` = no validator ran).
    pub natively_validated: Option<bool>,
    /// The family's facts as JSON (`None` when absent).
    pub facts: Option<serde_json::Value>,
    /// Every slot of the family with its verdict.
    pub candidates: Vec<CandidateVerdict>,
    /// The backend provider.
    pub backend_provider: String,
    /// The backend's decline for the whole graph.
    pub backend_declined: Option<String>,
    /// The backend's answer per queried mode.
    pub backend_modes: Vec<ModeVerdict>,
}

/// Lazily lowered backend state.
enum BackendState {
    NotLowered,
    Declined(String),
    Lowered(Mutex<Box<dyn BackendSession>>),
}

/// The plan list of one frozen graph.
pub struct PlanList {
    graph: Arc<Graph>,
    opts: PlanOptions,
    facts: FactsCache,
    classification: Classification,
    backend: BackendState,
    entries: Vec<PlanEntry>,
    compiled: Vec<Option<Arc<dyn CompiledPlan>>>,
    planned: bool,
    selected: usize,
    pinned: bool,
    built: bool,
    trace: PlanningTrace,
    planning_error: Option<String>,
    barred_names: Vec<String>,
    workspace_limit: Option<u64>,
    /// The backend's entries per requested modes: queried once (a second query would append
    /// the same configs to the backend's own list again).
    backend_memo: Option<(Vec<HeurMode>, BackendOutcome)>,
    /// The execute path's declared layout (operand order + storage geometry), once per graph.
    declared_layout: std::sync::OnceLock<crate::pack::DeclaredLayout>,
}

impl std::fmt::Debug for PlanList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanList")
            .field(
                "entries",
                &self.entries.iter().map(PlanEntry::name).collect::<Vec<_>>(),
            )
            .field("selected", &self.selected)
            .field("pinned", &self.pinned)
            .field("built", &self.built)
            .finish()
    }
}

fn index_error(i: usize, count: usize) -> Error {
    Error::bad_param(
        "plan index",
        format!("index {i} is out of range (the plan list has {count} entries)"),
    )
}

impl PlanList {
    /// Attaches dispatch state to a FROZEN graph (see [`crate::ir::Graph::begin_planning`]);
    /// nothing is planned yet.
    pub fn new(graph: Arc<Graph>, opts: PlanOptions) -> PlanList {
        let classification = opts.manifest.family_for(&graph);
        PlanList {
            graph,
            classification,
            backend: BackendState::NotLowered,
            entries: Vec::new(),
            compiled: Vec::new(),
            planned: false,
            selected: 0,
            pinned: false,
            built: false,
            trace: PlanningTrace::default(),
            planning_error: None,
            barred_names: Vec::new(),
            workspace_limit: None,
            backend_memo: None,
            declared_layout: std::sync::OnceLock::new(),
            facts: FactsCache::default(),
            opts,
        }
    }

    /// Freezes `graph` (validating it first; a second planning of the same graph fails there),
    /// attaches dispatch state to the frozen graph and plans it with `modes`.
    pub fn plan(graph: &mut Graph, opts: PlanOptions, modes: &[HeurMode]) -> Result<PlanList> {
        graph.begin_planning()?;
        let mut list = PlanList::new(Arc::new(graph.clone()), opts);
        list.create_execution_plans(modes)?;
        Ok(list)
    }

    /// The graph.
    pub fn graph(&self) -> &Arc<Graph> {
        &self.graph
    }

    /// What planning saw.
    pub fn trace(&self) -> &PlanningTrace {
        &self.trace
    }

    /// Why planning produced no list (after a failed `create_execution_plans`).
    pub fn planning_error(&self) -> Option<&str> {
        self.planning_error.as_deref()
    }

    /// The planning options.
    pub fn options(&self) -> &PlanOptions {
        &self.opts
    }

    /// True once a plan list exists (after planning or a replay).
    pub fn is_planned(&self) -> bool {
        self.planned
    }

    fn facts_of(&self, family: &'static super::manifest::Family) -> Result<Option<FactsRef>> {
        match family.analyzer {
            Some(analyzer) => {
                self.facts
                    .get_or_analyze(family.name, analyzer, &self.graph, &self.opts.target)
            }
            None => Ok(None),
        }
    }

    /// Lowers on first use; returns the backend's decline reason if it declined.
    fn ensure_lowered(&mut self) -> Result<Option<String>> {
        if let BackendState::NotLowered = self.backend {
            let unlowerable = self
                .graph
                .nodes()
                .iter()
                .find(|n| !n.spec().backend_lowering)
                .map(|n| {
                    format!(
                        "No valid engine configs for {}: node `{}` ({}) has no cuDNN backend lowering; only a bundled engine can run it",
                        n.op.node_type().name(),
                        n.name,
                        n.op.name()
                    )
                });
            let guard = unlowerable.or(match self.classification.family {
                Some(f) => match f.backend_guard {
                    Some(g) => {
                        let facts = self.facts_of(f)?;
                        g(&self.graph, facts.as_deref()).map(|r| format!("backend guard: {r}"))
                    }
                    None => None,
                },
                None => None,
            });
            self.backend = match guard {
                Some(reason) => BackendState::Declined(reason),
                None => match self.opts.backend.lower(&self.graph, &self.opts.target) {
                    Ok(s) => BackendState::Lowered(Mutex::new(s)),
                    Err(e) if is_decline(&e) => BackendState::Declined(decline_reason(&e)),
                    Err(e) => return Err(e),
                },
            };
        }
        Ok(match &self.backend {
            BackendState::Declined(r) => Some(r.clone()),
            _ => None,
        })
    }

    fn session(&self) -> Result<std::sync::MutexGuard<'_, Box<dyn BackendSession>>> {
        match &self.backend {
            BackendState::Lowered(m) => m
                .lock()
                .map_err(|_| Error::Internal("backend session poisoned".into())),
            BackendState::Declined(r) => Err(backend::backend_decline(r.clone())),
            BackendState::NotLowered => Err(Error::Internal("backend used before lowering".into())),
        }
    }

    fn query_backend(&mut self, modes: &[HeurMode]) -> Result<BackendOutcome> {
        if let Some((m, outcome)) = &self.backend_memo
            && m.as_slice() == modes
        {
            return Ok(outcome.clone());
        }
        let outcome = match self.ensure_lowered()? {
            Some(reason) => BackendOutcome {
                declined: Some(reason),
                ..BackendOutcome::default()
            },
            None => backend::collect_entries(self.session()?.as_mut(), modes)?,
        };
        self.backend_memo = Some((modes.to_vec(), outcome.clone()));
        Ok(outcome)
    }

    /// One-shot planning: classify, analyze, check every offered engine, query the backend per
    /// mode, rank into one list. Empty `modes` = `[A, FALLBACK]`. A second call is an error.
    /// Logged ([`crate::log`]) with what it decided and how long it took.
    pub fn create_execution_plans(&mut self, modes: &[HeurMode]) -> Result<()> {
        let started = std::time::Instant::now();
        let planned = self.plan_once(modes);
        crate::log::info(|| self.planning_log(&planned, started.elapsed()));
        planned
    }

    /// The log line of a planning: the graph, the family, every engine's verdict, the backend's,
    /// the list (or the error) and the time.
    fn planning_log(&self, planned: &Result<()>, took: std::time::Duration) -> String {
        let t = &self.trace;
        let key = self.graph.key_hex();
        let engines: Vec<String> = t
            .candidates
            .iter()
            .map(|c| match &c.declined {
                None => format!("{} accept", c.name),
                Some(r) => format!("{} decline ({r})", c.name),
            })
            .collect();
        let backend = match &t.backend_declined {
            None => format!("{}: ok", t.backend_provider),
            Some(r) => format!("{}: decline ({r})", t.backend_provider),
        };
        let outcome = match planned {
            Ok(()) => {
                let first = self
                    .entries
                    .first()
                    .map(PlanEntry::name)
                    .unwrap_or_default();
                format!("{} plans, first {first}", self.entries.len())
            }
            Err(e) => format!("failed: {e}"),
        };
        format!(
            "planned graph {}: family {}, modes [{}], engines [{}], backend {backend}: {outcome} ({} us)",
            &key[..16.min(key.len())],
            t.family.unwrap_or("none"),
            t.modes
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", "),
            engines.join("; "),
            took.as_micros()
        )
    }

    fn plan_once(&mut self, modes: &[HeurMode]) -> Result<()> {
        if self.planned {
            return Err(Error::InvalidState(
                "planning is one-shot: build a new graph to re-plan, or use select_plan()".into(),
            ));
        }
        let modes: Vec<HeurMode> = if modes.is_empty() {
            DEFAULT_MODES.to_vec()
        } else {
            modes.to_vec()
        };
        let opt_in = self.opts.opt_in();
        let mut trace = PlanningTrace {
            modes: modes.clone(),
            family: self.classification.family.map(|f| f.name),
            named_families: self.classification.named.clone(),
            no_family_reason: self.classification.why_none(),
            backend_provider: self.opts.backend.describe(),
            ..PlanningTrace::default()
        };

        let mut accepting: Vec<Candidate> = Vec::new();
        let mut facts: Option<FactsRef> = None;
        if let Some(family) = self.classification.family {
            if let Some(validator) = family.validator
                && !self.opts.manifest.offered(family, opt_in).is_empty()
            {
                // the family's semantic rules (classic error types); false = a node it does not
                // cover, so the backend's verdict decides
                trace.natively_validated = Some(validator(&self.graph)?);
            }
            facts = self.facts_of(family)?;
            trace.facts = facts.as_ref().map(|f| f.describe());
            trace.ranked = family.heuristics.is_some();
            let dropped = family.heuristics.is_some() && facts.is_none();
            let offered = self.opts.manifest.offered(family, opt_in);
            for slot in family.slots {
                let id = family.base + EngineId::from(slot.slot);
                let Some(c) = offered.iter().find(|c| c.id == id) else {
                    trace.candidates.push(CandidateVerdict {
                        name: slot.name,
                        id,
                        offered: false,
                        declined: Some(format!(
                            "opt-in engine, not offered (set {ENV_ENABLE_OPT_IN_ENGINES}=1)"
                        )),
                    });
                    continue;
                };
                let declined = if dropped {
                    Some("the family analyzer cannot express this graph".to_owned())
                } else {
                    let q = SupportQuery {
                        engine: c.name,
                        graph: &self.graph,
                        facts: facts.as_deref(),
                        target: &self.opts.target,
                    };
                    match c.engine.check_support(&q) {
                        Ok(()) => None,
                        Err(e) if is_decline(&e) => Some(decline_reason(&e)),
                        Err(e) => return Err(e),
                    }
                };
                if declined.is_none() {
                    accepting.push(*c);
                }
                trace.candidates.push(CandidateVerdict {
                    name: c.name,
                    id,
                    offered: true,
                    declined,
                });
            }
        }

        let outcome = self.query_backend(&modes)?;
        trace.backend_declined = outcome.declined.clone();
        trace.backend_modes = outcome.modes.clone();

        let entries = match (self.classification.family, facts.as_ref()) {
            (Some(family), Some(facts)) if family.heuristics.is_some() => {
                let hook = family
                    .heuristics
                    .ok_or_else(|| Error::Internal("hook vanished".into()))?;
                let offered: Vec<Offered> = accepting
                    .iter()
                    .map(|c| Offered {
                        name: c.name,
                        id: c.id,
                    })
                    .collect();
                let target = &self.opts.target;
                rank::assemble(
                    &modes,
                    |kind: HookKind| hook(kind, facts.as_ref(), &offered, target),
                    &accepting,
                    &outcome.entries,
                    family.name,
                )?
            }
            (Some(family), None) if family.heuristics.is_some() => {
                rank::unranked(&[], &outcome.entries)
            }
            _ => rank::unranked(&accepting, &outcome.entries),
        };
        for v in &mut trace.candidates {
            if v.declined.is_none() && !entries.iter().any(|e| e.engine_id == v.id) {
                v.declined =
                    Some("accepted, but the family heuristics proposed no plan for it".into());
            }
        }
        self.trace = trace;
        if entries.is_empty() {
            let e = Error::NotSupported(self.empty_list_message());
            self.planning_error = Some(e.to_string());
            return Err(e);
        }
        self.compiled = vec![None; entries.len()];
        self.entries = entries;
        self.planned = true;
        self.selected = 0;
        self.pinned = false;
        self.built = false;
        Ok(())
    }

    fn empty_list_message(&self) -> String {
        let t = &self.trace;
        let mut parts = Vec::new();
        match &t.backend_declined {
            Some(r) => parts.push(format!("the backend declined: {r}")),
            None => parts.push("the backend listed no engine config".into()),
        }
        match (&t.family, &t.no_family_reason) {
            (None, Some(why)) => parts.push(format!("no bundled engine: {why}")),
            _ => {
                let declined: Vec<String> = t
                    .candidates
                    .iter()
                    .filter_map(|c| c.declined.as_ref().map(|r| format!("{}: {r}", c.name)))
                    .collect();
                if declined.is_empty() {
                    parts.push("the family has no engine slots".into());
                } else {
                    parts.push(format!("bundled engines declined: {}", declined.join("; ")));
                }
            }
        }
        format!(
            "no engine (bundled or backend) proposed a plan for this graph ({})",
            parts.join("; ")
        )
    }

    /// Number of entries (0 before planning).
    pub fn count(&self) -> usize {
        self.entries.len()
    }

    /// The entries.
    pub fn entries(&self) -> &[PlanEntry] {
        &self.entries
    }

    fn entry(&self, i: usize) -> Result<&PlanEntry> {
        self.entries
            .get(i)
            .ok_or_else(|| index_error(i, self.entries.len()))
    }

    /// The plan name at an index.
    pub fn name_at(&self, i: usize) -> Result<String> {
        Ok(self.entry(i)?.name())
    }

    /// `(engine_id, public knobs)` at an index; the delegating entry has no replayable pair.
    pub fn engine_and_knobs_at(&self, i: usize) -> Result<(EngineId, Knobs)> {
        let e = self.entry(i)?;
        e.public_knobs().map(|k| (e.engine_id, k)).ok_or_else(|| {
            Error::NotSupported(format!(
                "plan {i} is the delegating backend entry: it has no (engine_id, knobs) pair to replay"
            ))
        })
    }

    /// The selected index.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// Whether the selection is pinned by `select_plan`.
    pub fn is_pinned(&self) -> bool {
        self.pinned
    }

    /// Whether the selected entry is built.
    pub fn is_built(&self) -> bool {
        self.built
    }

    /// Pins entry `i`: the next build is strict.
    pub fn select_plan(&mut self, i: usize) -> Result<()> {
        if !self.planned {
            return Err(Error::InvalidState(
                "select_plan() needs a plan list: call create_execution_plans() first".into(),
            ));
        }
        self.entry(i)?;
        self.selected = i;
        self.pinned = true;
        self.built = false;
        Ok(())
    }

    /// Bars every plan whose NAME (knobs included) contains one of `names`; indices do not move.
    /// A built selection that is now barred is no longer built.
    pub fn deselect_engines(&mut self, names: &[&str]) {
        self.barred_names.extend(
            names
                .iter()
                .filter(|n| !n.is_empty())
                .map(|n| (*n).to_owned()),
        );
        if self.built && self.barred(self.selected).is_some() {
            self.built = false;
        }
    }

    /// Plans needing more than `bytes` of workspace decline when built (known after the build).
    /// A built selection over the limit is no longer built.
    pub fn deselect_workspace_greater_than(&mut self, bytes: u64) {
        self.workspace_limit = Some(bytes);
        if let Ok(p) = self.selected_plan()
            && p.workspace_size() > bytes
        {
            self.built = false;
        }
    }

    /// The `deselect_engines` substring that bars plan `i`, if any.
    pub fn barred(&self, i: usize) -> Option<&str> {
        if self.barred_names.is_empty() {
            return None; // the common case, and execute-at-index's hot path: no name to format
        }
        let name = self.entries.get(i)?.name();
        self.barred_names
            .iter()
            .find(|b| name.contains(b.as_str()))
            .map(String::as_str)
    }

    /// Index check plus the barred check: a barred plan cannot be used directly.
    fn usable(&self, i: usize) -> Result<()> {
        self.entry(i)?;
        match self.barred(i) {
            Some(b) => Err(Error::bad_param(
                "plan index",
                format!(
                    "plan {i} ({}) is excluded by deselect_engines(\"{b}\")",
                    self.entries[i].name()
                ),
            )),
            None => Ok(()),
        }
    }

    /// Builds entry `i` if not built yet (no selection change), then applies the workspace
    /// limit (over it = a decline). Declines propagate.
    fn build_entry(&mut self, i: usize) -> Result<Arc<dyn CompiledPlan>> {
        let plan = self.compile_entry(i)?;
        if let Some(limit) = self.workspace_limit
            && plan.workspace_size() > limit
        {
            return Err(Error::Declined {
                engine: self.entries[i].name(),
                reason: format!(
                    "plan {i} needs {} workspace bytes, over the {limit}-byte limit",
                    plan.workspace_size()
                ),
            });
        }
        Ok(plan)
    }

    /// Compiles entry `i` once (cached); each compile is logged ([`crate::log`]) with the plan,
    /// its workspace and its time, or why it was not built.
    fn compile_entry(&mut self, i: usize) -> Result<Arc<dyn CompiledPlan>> {
        if let Some(Some(p)) = self.compiled.get(i) {
            return Ok(p.clone());
        }
        let started = std::time::Instant::now();
        let built = self.compile_entry_once(i);
        crate::log::info(|| {
            let name = self.entries.get(i).map(PlanEntry::name).unwrap_or_default();
            match &built {
                Ok(p) => format!(
                    "built plan {i} {name}: workspace {} bytes ({} us)",
                    p.workspace_size(),
                    started.elapsed().as_micros()
                ),
                Err(e) => format!("plan {i} {name} not built: {e}"),
            }
        });
        built
    }

    fn compile_entry_once(&mut self, i: usize) -> Result<Arc<dyn CompiledPlan>> {
        let entry = self.entry(i)?.clone();
        let plan = match &entry.source {
            EntrySource::Bundled { candidate, checked } => {
                let facts = self.facts_of(candidate.family)?;
                if !checked {
                    let q = SupportQuery {
                        engine: candidate.name,
                        graph: &self.graph,
                        facts: facts.as_deref(),
                        target: &self.opts.target,
                    };
                    candidate.engine.check_support(&q)?;
                }
                let cx = BuildContext {
                    engine: candidate.name,
                    engine_id: candidate.id,
                    graph: &self.graph,
                    facts: facts.as_deref(),
                    target: &self.opts.target,
                    layout: self.declared_layout().ok(),
                };
                Arc::from(candidate.engine.build_plan(&cx, &entry.knobs)?)
            }
            EntrySource::Backend { cpp_index, .. } => self.session()?.build_at(*cpp_index)?,
            EntrySource::Delegating => self.session()?.build_delegating()?,
        };
        self.compiled[i] = Some(plan.clone());
        Ok(plan)
    }

    /// Builds entry `i` and selects it (without pinning). Declines propagate.
    pub fn build_plan_at_index(&mut self, i: usize) -> Result<()> {
        if !self.planned {
            return Err(Error::InvalidState(
                "build_plan_at_index() needs a plan list: call create_execution_plans() first"
                    .into(),
            ));
        }
        self.usable(i)?;
        self.build_entry(i)?;
        self.selected = i;
        self.pinned = false;
        self.built = true;
        Ok(())
    }

    /// The walk: plans first if needed (default modes); from the selected index (or 0 for `All`)
    /// a decline advances, except the pinned entry's, which is an error; anything else propagates.
    pub fn build_plans(&mut self, policy: BuildPolicy) -> Result<()> {
        if !self.planned {
            self.create_execution_plans(&[])?;
        }
        let all = policy == BuildPolicy::All;
        let strict = self.pinned;
        let start = if all { 0 } else { self.selected };
        self.built = false;
        let mut failures = Vec::new();
        let mut first_success = None;
        let mut selected_built = false;
        for i in start..self.entries.len() {
            if let Some(b) = self.barred(i) {
                if strict && i == self.selected {
                    return Err(Error::bad_param(
                        "plan index",
                        format!(
                            "plan {i} ({}) is pinned by select_plan() but excluded by deselect_engines(\"{b}\"); drop one of the two instructions",
                            self.entries[i].name()
                        ),
                    ));
                }
                continue;
            }
            match self.build_entry(i) {
                Ok(_) => {
                    if i == self.selected {
                        selected_built = true;
                    }
                    if first_success.is_none() {
                        first_success = Some(i);
                    }
                    if !all {
                        break;
                    }
                }
                Err(e) if is_decline(&e) => {
                    if strict && i == self.selected {
                        return Err(Error::NotSupported(format!(
                            "plan {i} ({}) was pinned by select_plan() and declined: {}",
                            self.entries[i].name(),
                            decline_reason(&e)
                        )));
                    }
                    failures.push(format!(
                        "[{i}] {}: {}",
                        self.entries[i].name(),
                        decline_reason(&e)
                    ));
                }
                Err(e) => return Err(e),
            }
        }
        let keep = if all && selected_built {
            Some(self.selected)
        } else {
            first_success
        };
        if let Some(i) = keep {
            self.selected = i;
            self.built = true;
            return Ok(());
        }
        let backend_declined = self.trace.backend_declined.clone();
        if failures.is_empty()
            && let Some(r) = &backend_declined
        {
            return Err(backend::backend_decline(r.clone()));
        }
        let mut msg = if self.entries.is_empty() {
            "the plan list is empty".to_owned()
        } else {
            format!(
                "no plan in the list could be built:\n  {}",
                failures.join("\n  ")
            )
        };
        if let Some(r) = backend_declined {
            msg.push_str(&format!("\n  the backend declined: {r}"));
        }
        Err(Error::NotSupported(msg))
    }

    /// Replays a recorded choice: appends the entry `(engine_id, knobs)` and returns its index
    /// (not selected). Marks the graph planned. Unknown ids and bad knobs are errors.
    pub fn create_execution_plan(&mut self, engine_id: EngineId, knobs: &Knobs) -> Result<usize> {
        let entry = match ids::classify(engine_id) {
            IdClass::Bundled { .. } => {
                let opt_in = self.opts.opt_in();
                let candidate = match self.opts.manifest.engine_for_id(engine_id, opt_in) {
                    IdOwner::Engine(c) => c,
                    IdOwner::GatedOff { family, name } => {
                        return Err(Error::bad_param(
                            "engine_id",
                            format!(
                                "engine_id {engine_id} ({name}, family {family}) is an opt-in engine; set {ENV_ENABLE_OPT_IN_ENGINES}=1 to use it"
                            ),
                        ));
                    }
                    IdOwner::UnusedSlot { family, slot } => {
                        return Err(Error::NotFound {
                            what: "engine",
                            key: format!(
                                "engine_id {engine_id}: slot {slot} of family {family} holds no engine"
                            ),
                        });
                    }
                    IdOwner::UnknownBlock { base, reference } => {
                        return Err(Error::NotFound {
                            what: "engine",
                            key: match reference {
                                Some(r) => format!(
                                    "engine_id {engine_id}: block {base} is the reference's {r} family, which dnnplan does not ship"
                                ),
                                None => {
                                    format!("engine_id {engine_id}: no family owns block {base}")
                                }
                            },
                        });
                    }
                    other => {
                        return Err(Error::Internal(format!(
                            "engine_id {engine_id} decoded as {other:?}"
                        )));
                    }
                };
                knobs.check_defined()?;
                let native = candidate.engine.knobs_from_public(knobs)?;
                let checked = self.accepted_during_planning(engine_id);
                PlanEntry::bundled(candidate, native, checked)
            }
            IdClass::Backend => {
                let raw = RawBackendKnobs::from_public(knobs)?;
                if let Some(reason) = self.ensure_lowered()? {
                    return Err(Error::NotSupported(format!(
                        "engine_id {engine_id} is a backend engine and the backend declined this graph: {reason}"
                    )));
                }
                let cpp_index = self.session()?.create_plan(engine_id, &raw)?;
                PlanEntry::from_config(
                    &backend::BackendConfig {
                        cpp_index,
                        engine_id,
                        knobs: raw,
                    },
                    None,
                )
            }
            IdClass::Delegating => {
                return Err(Error::bad_param(
                    "engine_id",
                    "-1 is the delegating backend entry; it has no (engine_id, knobs) pair to replay",
                ));
            }
            IdClass::CppOss => {
                return Err(Error::NotFound {
                    what: "engine",
                    key: format!(
                        "engine_id {engine_id}: the C++ OSS band [10000, 20000) has no engines"
                    ),
                });
            }
            IdClass::Marker | IdClass::Invalid => {
                return Err(Error::bad_param(
                    "engine_id",
                    format!("{engine_id} is not an engine id"),
                ));
            }
        };
        self.entries.push(entry);
        self.compiled.push(None);
        self.planned = true;
        Ok(self.entries.len() - 1)
    }

    fn accepted_during_planning(&self, id: EngineId) -> bool {
        self.trace
            .candidates
            .iter()
            .any(|c| c.id == id && c.declined.is_none())
    }

    /// Workspace bytes of the selected, built plan.
    pub fn workspace_size(&self) -> Result<u64> {
        self.selected_plan().map(|p| p.workspace_size())
    }

    /// Workspace bytes of entry `i` (builds it if needed; the selection does not change).
    pub fn workspace_size_at(&mut self, i: usize) -> Result<u64> {
        self.usable(i)?;
        Ok(self.build_entry(i)?.workspace_size())
    }

    /// The selected compiled plan (requires a build).
    pub fn selected_plan(&self) -> Result<Arc<dyn CompiledPlan>> {
        if !self.built {
            return Err(Error::InvalidState(
                "no plan is built: call build_plans() or build_plan_at_index() first".into(),
            ));
        }
        self.compiled
            .get(self.selected)
            .cloned()
            .flatten()
            .ok_or_else(|| Error::Internal("selected plan marked built but missing".into()))
    }

    /// The declared layout of the graph's operands, computed on first use and kept for the
    /// list's life (see [`crate::pack::executor::layout_of`]).
    pub fn declared_layout(&self) -> Result<&crate::pack::DeclaredLayout> {
        if let Some(l) = self.declared_layout.get() {
            return Ok(l);
        }
        let layout = crate::pack::executor::layout_of(self)?;
        Ok(self.declared_layout.get_or_init(|| layout))
    }

    /// The compiled plan at `i` if it is built, without building (execute at an index through a
    /// shared reference; build it first with [`PlanList::build_plan_at_index`] or the walk).
    pub fn compiled_at(&self, i: usize) -> Result<Arc<dyn CompiledPlan>> {
        self.usable(i)?;
        self.compiled.get(i).cloned().flatten().ok_or_else(|| {
            Error::InvalidState(format!(
                "plan {i} is not built: build it first (build_plan_at_index or build_plans)"
            ))
        })
    }

    /// The backend's variant-pack template when the graph lowered (see
    /// [`BackendSession::operand_uids`]); `None` when it did not lower or gives none.
    pub fn backend_operand_uids(&self) -> Option<Vec<i64>> {
        match &self.backend {
            BackendState::Lowered(m) => m.lock().ok()?.operand_uids(),
            _ => None,
        }
    }

    /// The compiled plan at `i`, building it if needed (for execute-at-index; no selection change).
    pub fn plan_at(&mut self, i: usize) -> Result<Arc<dyn CompiledPlan>> {
        self.usable(i)?;
        self.build_entry(i)
    }
}
