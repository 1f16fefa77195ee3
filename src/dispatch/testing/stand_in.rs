//! Stand-in engines injected as a manifest of their own, so dispatch is exercised on a CPU the
//! way real engines reach it: classification by anchor op, one analysis per graph, capability
//! rows with arch ranges, a heuristics hook with a BACKEND marker, opt-in slots, declines at
//! check and at build, and a non-decline bug. Graphs are chains of unary pointwise ops; which ops
//! appear decides the family and the facts flags. [`scripted_plan_list`] builds a plan list from
//! a JSON script (for the C tests, through `dnnp_debug_plan_list_create_stand_in`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;

use super::{FakeBackend, ModeScript, NoopPlan};
use crate::dispatch::backend::{BackendProvider, CudnnNotLoaded};
use crate::dispatch::capability::{ArchRange, Capabilities, Requirement};
use crate::dispatch::engine::{BuildContext, CompiledPlan, Engine, SupportQuery};
use crate::dispatch::facts::{Facts, FactsRef};
use crate::dispatch::graph::Graph;
use crate::dispatch::ids::EngineId;
use crate::dispatch::knobs::{KnobType, Knobs};
use crate::dispatch::manifest::{Family, Manifest, Slot};
use crate::dispatch::modes::HeurMode;
use crate::dispatch::plan_list::{PlanList, PlanOptions};
use crate::dispatch::rank::{HookKind, Offered, Proposal};
use crate::dispatch::target::Target;
use crate::error::{Error, Result};
use crate::ir::{DataType, GraphContext, NodeBuilder, Tensor};

// ---------------------------------------------------------------- graphs

// Test families anchor on single pointwise ops; other ops set facts flags.
/// Op that anchors the ranked family (heuristics hook).
pub const ATTN: &str = "exp";
/// Op that anchors the unranked family (no hook).
pub const NORM: &str = "sqrt";
/// Op that anchors a family whose analyzer cannot express any graph.
pub const OPAQUE: &str = "abs";
/// Op that anchors a family whose engine fails with a non-decline error.
pub const BUGGY_OP: &str = "ceil";
/// Op that anchors a family whose backend guard declines the backend.
pub const GUARDED: &str = "floor";
/// Op that anchors a family whose analyses are counted.
pub const COUNTED_OP: &str = "erf";
/// Op that makes the ranked hook place the backend block first (TRAIL).
pub const TRAIL: &str = "sin";
/// Op that makes the `beta` engine decline.
pub const WIDE: &str = "cos";
/// Op that makes the ranked hook propose a declining engine (a hook bug).
pub const PROPOSE_GAMMA: &str = "tan";
/// Op that anchors no family.
pub const UNANCHORED: &str = "neg";

// ---------------------------------------------------------------- facts and analyzers

#[derive(Debug)]
struct TestFacts {
    trail: bool,
    wide: bool,
    propose_gamma: bool,
}

impl Facts for TestFacts {
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({ "trail": self.trail, "wide": self.wide })
    }
}

fn analyze(g: &Graph, _: &Target) -> Result<Option<FactsRef>> {
    let has = |op: &str| g.nodes().iter().any(|n| n.op.name() == op);
    Ok(Some(Arc::new(TestFacts {
        trail: has(TRAIL),
        wide: has(WIDE),
        propose_gamma: has(PROPOSE_GAMMA),
    })))
}

/// The unranked family's validator: a graph with a `rsqrt` node breaks its semantic rule; one
/// with a `reciprocal` node holds a node it does not cover.
fn validate_unranked(g: &Graph) -> Result<bool> {
    for n in g.nodes() {
        match n.op.name() {
            "rsqrt" => {
                return Err(Error::invalid_graph(
                    &n.name,
                    None,
                    "the unranked family forbids rsqrt after sqrt",
                ));
            }
            "reciprocal" => return Ok(false),
            _ => {}
        }
    }
    Ok(true)
}

/// Analyses of the "counted" family (only one test plans a graph of that family).
pub static COUNTED: AtomicUsize = AtomicUsize::new(0);

fn analyze_counted(g: &Graph, t: &Target) -> Result<Option<FactsRef>> {
    COUNTED.fetch_add(1, Ordering::SeqCst);
    analyze(g, t)
}

fn analyze_nothing(_: &Graph, _: &Target) -> Result<Option<FactsRef>> {
    Ok(None)
}

// ---------------------------------------------------------------- stand-in engines

/// A stand-in engine: capability row over TestFacts, optional knob domain, scripted build.
struct StandIn {
    caps: &'static Capabilities<TestFacts>,
    tile_m: &'static [i64],
    build_declines: bool,
    bug: bool,
    workspace: u64,
}

impl Engine for StandIn {
    fn check_support(&self, q: &SupportQuery<'_>) -> Result<()> {
        if self.bug {
            return Err(Error::Internal("stand-in engine bug".into()));
        }
        let f = q.facts_as::<TestFacts>()?;
        match self.caps.mismatch(q.target, f) {
            Some(reason) => Err(q.decline(reason)),
            None => Ok(()),
        }
    }

    fn build_plan(&self, cx: &BuildContext<'_>, knobs: &Knobs) -> Result<Box<dyn CompiledPlan>> {
        if self.build_declines {
            return Err(cx.decline("kernel module unavailable for this arch"));
        }
        Ok(Box::new(NoopPlan::new(
            format!("{}{:?}", cx.engine, knobs.pairs()),
            self.workspace,
        )))
    }

    fn knobs_from_public(&self, public: &Knobs) -> Result<Knobs> {
        for (t, v) in public.pairs() {
            if *t != KnobType::TILE_M || self.tile_m.is_empty() {
                return Err(Error::bad_param(
                    "knobs",
                    format!(
                        "knob {} is not a tuning axis of this engine",
                        t.display_name()
                    ),
                ));
            }
            if !self.tile_m.contains(v) {
                return Err(Error::bad_param(
                    "knobs",
                    format!("TILE_M={v} is outside the domain {:?}", self.tile_m),
                ));
            }
        }
        Ok(public.clone())
    }
}

static SM90: Capabilities<TestFacts> = Capabilities {
    arch: ArchRange::new(90, 90),
    requirements: &[],
};
static SM90_NARROW: Capabilities<TestFacts> = Capabilities {
    arch: ArchRange::new(90, 90),
    requirements: &[Requirement {
        name: "width",
        holds: |f| !f.wide,
        reason: |_| "wide graphs are not served".into(),
    }],
};
static SM100: Capabilities<TestFacts> = Capabilities {
    arch: ArchRange::new(100, 109),
    requirements: &[],
};

static ALPHA: StandIn = StandIn {
    caps: &SM90,
    tile_m: &[64, 128],
    build_declines: false,
    bug: false,
    workspace: 4096,
};
static BETA: StandIn = StandIn {
    caps: &SM90_NARROW,
    tile_m: &[],
    build_declines: false,
    bug: false,
    workspace: 0,
};
static GAMMA: StandIn = StandIn {
    caps: &SM100,
    tile_m: &[],
    build_declines: false,
    bug: false,
    workspace: 0,
};
static DELTA: StandIn = StandIn {
    caps: &SM90,
    tile_m: &[],
    build_declines: false,
    bug: false,
    workspace: 0,
};
static BROKEN_BUILD: StandIn = StandIn {
    caps: &SM90,
    tile_m: &[],
    build_declines: true,
    bug: false,
    workspace: 0,
};
static BUGGY: StandIn = StandIn {
    caps: &SM90,
    tile_m: &[],
    build_declines: false,
    bug: true,
    workspace: 0,
};

/// Block base of the ranked family.
pub const RANKED_BASE: EngineId = 20_000;
/// `alpha`: SM90, TILE_M in {64, 128}.
pub const ALPHA_ID: EngineId = RANKED_BASE;
/// `beta`: SM90, declines wide graphs, no knobs.
pub const BETA_ID: EngineId = RANKED_BASE + 1;
/// `gamma`: SM100-109.
pub const GAMMA_ID: EngineId = RANKED_BASE + 2;
/// `delta`: SM90, opt-in.
pub const DELTA_ID: EngineId = RANKED_BASE + 4;

/// The knob record `TILE_M=m`.
pub fn tile(m: i64) -> Knobs {
    Knobs::from_pairs([(KnobType::TILE_M, m)]).unwrap_or_default()
}

/// The ranked family's hook: A = [alpha[128], beta], FALLBACK = [beta, alpha[64]] (LEAD: the
/// marker after ours; TRAIL: before). Delta is proposed last in A when offered.
fn ranked_hook(
    kind: HookKind,
    facts: &dyn Facts,
    offered: &[Offered],
    _: &Target,
) -> Result<Vec<Proposal>> {
    let f = facts
        .downcast_ref::<TestFacts>()
        .ok_or_else(|| Error::Internal("stand-in hook: unexpected facts".into()))?;
    let plan = |id, knobs| Proposal::Plan {
        engine_id: id,
        knobs,
    };
    let is_offered = |id| offered.iter().any(|o| o.id == id);
    let mut ours = Vec::new();
    match kind {
        HookKind::A => {
            if is_offered(ALPHA_ID) {
                ours.push(plan(ALPHA_ID, tile(128)));
            }
            if is_offered(BETA_ID) {
                ours.push(plan(BETA_ID, Knobs::none()));
            }
            if is_offered(DELTA_ID) {
                ours.push(plan(DELTA_ID, Knobs::none()));
            }
            if f.propose_gamma {
                ours.push(plan(GAMMA_ID, Knobs::none()));
            }
        }
        HookKind::Fallback => {
            if is_offered(BETA_ID) {
                ours.push(plan(BETA_ID, Knobs::none()));
            }
            if is_offered(ALPHA_ID) {
                ours.push(plan(ALPHA_ID, tile(64)));
            }
        }
    }
    if ours.is_empty() {
        return Ok(ours);
    }
    if f.trail {
        ours.insert(0, Proposal::Backend);
    } else {
        ours.push(Proposal::Backend);
    }
    Ok(ours)
}

/// The stand-in manifest: families `ranked`, `unranked`, `opaque`, `buggy`, `guarded`, `counted`.
pub static STAND_IN_MANIFEST: Manifest = Manifest {
    families: &[
        Family {
            name: "ranked",
            base: RANKED_BASE,
            anchors: &["exp", "log"],
            analyzer: Some(analyze),
            validator: None,
            heuristics: Some(ranked_hook),
            backend_guard: None,
            slots: &[
                Slot {
                    slot: 0,
                    name: "alpha",
                    opt_in: false,
                    engine: &ALPHA,
                },
                Slot {
                    slot: 1,
                    name: "beta",
                    opt_in: false,
                    engine: &BETA,
                },
                Slot {
                    slot: 2,
                    name: "gamma",
                    opt_in: false,
                    engine: &GAMMA,
                },
                // slot 3 retired
                Slot {
                    slot: 4,
                    name: "delta",
                    opt_in: true,
                    engine: &DELTA,
                },
            ],
        },
        Family {
            name: "unranked",
            base: 21_200,
            anchors: &["sqrt"],
            analyzer: Some(analyze),
            validator: Some(validate_unranked),
            heuristics: None,
            backend_guard: None,
            slots: &[
                Slot {
                    slot: 0,
                    name: "norm_broken_build",
                    opt_in: false,
                    engine: &BROKEN_BUILD,
                },
                Slot {
                    slot: 1,
                    name: "norm_sm100",
                    opt_in: false,
                    engine: &GAMMA,
                },
                Slot {
                    slot: 2,
                    name: "norm_sm90",
                    opt_in: false,
                    engine: &DELTA,
                },
            ],
        },
        Family {
            name: "opaque",
            base: 21_300,
            anchors: &["abs"],
            analyzer: Some(analyze_nothing),
            validator: None,
            heuristics: Some(ranked_hook),
            backend_guard: None,
            slots: &[Slot {
                slot: 0,
                name: "opaque_engine",
                opt_in: false,
                engine: &DELTA,
            }],
        },
        Family {
            name: "buggy",
            base: 21_400,
            anchors: &["ceil"],
            analyzer: Some(analyze),
            validator: None,
            heuristics: None,
            backend_guard: None,
            slots: &[Slot {
                slot: 0,
                name: "buggy_engine",
                opt_in: false,
                engine: &BUGGY,
            }],
        },
        Family {
            name: "guarded",
            base: 21_500,
            anchors: &["floor"],
            analyzer: Some(analyze),
            validator: None,
            heuristics: None,
            backend_guard: Some(|_, _| Some("documented backend defect on this domain".into())),
            slots: &[],
        },
        Family {
            name: "counted",
            base: 21_600,
            anchors: &["erf"],
            analyzer: Some(analyze_counted),
            validator: None,
            heuristics: None,
            backend_guard: None,
            slots: &[
                Slot {
                    slot: 0,
                    name: "counted_a",
                    opt_in: false,
                    engine: &DELTA,
                },
                Slot {
                    slot: 1,
                    name: "counted_b",
                    opt_in: false,
                    engine: &BETA,
                },
            ],
        },
    ],
};

// ---------------------------------------------------------------- graphs and scripts

/// An unfrozen graph: a chain of unary pointwise ops named `ops` over one `[2, 4]` half tensor.
pub fn pointwise_chain(ops: &[&str]) -> Result<Graph> {
    let mut graph = Graph::new(GraphContext::new(
        DataType::Half,
        DataType::Float,
        DataType::Float,
    ));
    let mut x = graph.add_tensor(Tensor::new("x", &[2, 4], DataType::Half))?;
    for op in ops {
        let n = graph.add_node(NodeBuilder::by_name(op)?.input("input", x))?;
        x = graph.nodes()[n]
            .output("OUT_0")
            .ok_or_else(|| Error::Internal(format!("{op} has no OUT_0")))?;
    }
    graph.set_output(x, true)?;
    Ok(graph)
}

/// A frozen [`pointwise_chain`].
pub fn frozen_chain(ops: &[&str]) -> Result<Arc<Graph>> {
    let mut graph = pointwise_chain(ops)?;
    graph.begin_planning()?;
    Ok(Arc::new(graph))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    ops: Vec<String>,
    #[serde(default)]
    arch: Option<i32>,
    #[serde(default)]
    opt_in: bool,
    #[serde(default)]
    backend: Option<BackendScript>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BackendScript {
    #[serde(default)]
    lower_decline: Option<String>,
    #[serde(default)]
    engine_count: usize,
    #[serde(default)]
    build_declines: Vec<EngineId>,
    #[serde(default)]
    modes: serde_json::Map<String, serde_json::Value>,
}

/// A plan list (not planned yet) over the stand-in manifest, from a JSON script:
/// `{"ops": ["exp", "sin"], "arch": 90, "opt_in": false, "backend": {"lower_decline": null,
/// "engine_count": 5, "build_declines": [1], "modes": {"A": [[1, [[40, 128]]], [2, []]],
/// "FALLBACK": "a decline reason"}}}`. No `arch` = no device; no `backend` = cuDNN not loaded.
pub fn scripted_plan_list(script: &str) -> Result<PlanList> {
    let s: Script = serde_json::from_str(script)?;
    let backend: Arc<dyn BackendProvider> = match s.backend {
        None => Arc::new(CudnnNotLoaded {
            reason: "the stand-in script names no backend".into(),
        }),
        Some(b) => {
            let mut modes = Vec::new();
            for (name, v) in b.modes {
                let mode = HeurMode::from_name(&name).ok_or_else(|| {
                    Error::bad_param("script.backend.modes", format!("unknown mode {name}"))
                })?;
                let answer = match v {
                    serde_json::Value::String(reason) => ModeScript::Decline(reason),
                    other => ModeScript::Configs(serde_json::from_value(other)?),
                };
                modes.push((mode, answer));
            }
            Arc::new(FakeBackend {
                lower_decline: b.lower_decline,
                modes,
                engine_count: b.engine_count,
                build_declines: b.build_declines,
                ..FakeBackend::default()
            })
        }
    };
    let ops: Vec<&str> = s.ops.iter().map(String::as_str).collect();
    let opts = PlanOptions {
        manifest: &STAND_IN_MANIFEST,
        backend,
        target: match s.arch {
            Some(a) => Target::with_arch(a),
            None => Target::no_device("the stand-in script names no device"),
        },
        opt_in: Some(s.opt_in),
    };
    Ok(PlanList::new(frozen_chain(&ops)?, opts))
}
