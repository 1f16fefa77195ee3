//! Execute-path test support (no arithmetic, no device): a no-op engine and a recording engine in
//! a test manifest, and graphs with a chosen number of operands. Used by the execute tests and the
//! host-overhead benchmark; the production manifest never lists these engines.
//!
//! Both plans show the per-plan fast path: at build they settle a [`GuardTable`] from the
//! operand layout the build context carries (every operand required, at the declared extent,
//! with the declared dtype; on first execute if the build had no layout); each call runs the
//! table's flat check and refuses an illegal call through its checker, launching nothing.
//!
//! The recording plan treats slot pointers as HOST memory: it reads a `u64` at the first slot and
//! writes, into every other slot `i`, `value + i` then the slot's element count in storage units
//! (0 when it has no geometry), so a test can prove that each call saw exactly its own buffers
//! and observe normalization and overrides. It accepts overridden extents; the no-op plan needs
//! the declared extents.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::dispatch::context::ExecContext;
use crate::dispatch::engine::{BuildContext, CompiledPlan, Engine, SupportQuery};
use crate::dispatch::ids::EngineId;
use crate::dispatch::knobs::Knobs;
use crate::dispatch::manifest::{Family, Manifest, Slot};
use crate::error::Result;
use crate::ir::{DataType, Graph, GraphContext, NodeBuilder, Tensor};

use super::declared::DeclaredLayout;
use super::guard::{Guard, GuardTable, SlotRule};
use super::variant::VariantPack;

/// Op the no-op family anchors on.
pub const NOOP_OP: &str = "abs";
/// Op the recording family anchors on.
pub const RECORDING_OP: &str = "neg";
/// Op the workspace family anchors on (a no-op plan that needs [`TEST_WORKSPACE_BYTES`]).
pub const WORKSPACE_OP: &str = "sqrt";
/// Workspace the workspace family's plan reports.
pub const TEST_WORKSPACE_BYTES: u64 = 256;

/// Per-plan guards: every operand required, at `extent`, with its declared dtype.
fn settle_guards(layout: &DeclaredLayout, extent: SlotRule) -> GuardTable {
    GuardTable::new(layout.slots().iter().enumerate().flat_map(move |(i, d)| {
        let slot = i as u32;
        [
            Guard {
                slot,
                rule: SlotRule::Required,
            },
            Guard { slot, rule: extent },
            Guard {
                slot,
                rule: SlotRule::Dtype(d.storage_dtype),
            },
        ]
    }))
}

/// A plan that checks its guards and launches nothing.
#[derive(Debug, Default)]
pub struct NoopExecPlan {
    guards: OnceLock<GuardTable>,
    /// Workspace bytes it reports.
    pub workspace: u64,
    /// Executions that passed the guards.
    pub runs: AtomicU64,
}

impl NoopExecPlan {
    /// The plan a build makes: guards settled from the context's layout when it has one.
    pub fn for_build(cx: &BuildContext<'_>, workspace: u64) -> NoopExecPlan {
        NoopExecPlan {
            guards: guards_at_build(cx, SlotRule::DeclaredExtent),
            workspace,
            runs: AtomicU64::new(0),
        }
    }

    /// The settled guard table (after the first execute).
    pub fn guards(&self) -> Option<&GuardTable> {
        self.guards.get()
    }
}

impl CompiledPlan for NoopExecPlan {
    fn workspace_size(&self) -> u64 {
        self.workspace
    }

    #[inline]
    fn execute(&self, pack: &VariantPack<'_>, _: &ExecContext<'_>) -> Result<()> {
        self.guards
            .get_or_init(|| settle_guards(pack.layout(), SlotRule::DeclaredExtent))
            .check(pack)?;
        self.runs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// A plan that copies a tag from slot 0 into every other slot and records each slot's element
/// count (host memory, see module doc).
#[derive(Debug, Default)]
pub struct RecordingPlan {
    guards: OnceLock<GuardTable>,
}

impl CompiledPlan for RecordingPlan {
    fn workspace_size(&self) -> u64 {
        0
    }

    fn execute(&self, pack: &VariantPack<'_>, _: &ExecContext<'_>) -> Result<()> {
        self.guards
            .get_or_init(|| settle_guards(pack.layout(), SlotRule::DeclaredOrOverriddenExtent))
            .check(pack)?;
        // SAFETY: test-only engine; callers pass host buffers of at least 16 bytes per slot.
        let tag = unsafe { pack.ptr(0).cast::<u64>().read_unaligned() };
        for i in 1..pack.len() {
            let numel = pack.geometry(i).and_then(|g| g.numel()).unwrap_or(0);
            let p = pack.ptr(i).cast::<u64>();
            // SAFETY: as above.
            unsafe {
                p.write_unaligned(tag.wrapping_add(i as u64));
                p.add(1).write_unaligned(numel);
            }
        }
        Ok(())
    }
}

/// Accepts every graph; builds a [`NoopExecPlan`].
pub struct NoopEngine;

/// Guards settled at build when the context carries the layout.
fn guards_at_build(cx: &BuildContext<'_>, extent: SlotRule) -> OnceLock<GuardTable> {
    let cell = OnceLock::new();
    if let Some(layout) = cx.layout {
        let _ = cell.set(settle_guards(layout, extent));
    }
    cell
}

impl Engine for NoopEngine {
    fn check_support(&self, _: &SupportQuery<'_>) -> Result<()> {
        Ok(())
    }

    fn build_plan(&self, cx: &BuildContext<'_>, _: &Knobs) -> Result<Box<dyn CompiledPlan>> {
        Ok(Box::new(NoopExecPlan::for_build(cx, 0)))
    }
}

/// Accepts every graph; builds a [`NoopExecPlan`] that needs [`TEST_WORKSPACE_BYTES`].
pub struct WorkspaceEngine;

impl Engine for WorkspaceEngine {
    fn check_support(&self, _: &SupportQuery<'_>) -> Result<()> {
        Ok(())
    }

    fn build_plan(&self, cx: &BuildContext<'_>, _: &Knobs) -> Result<Box<dyn CompiledPlan>> {
        Ok(Box::new(NoopExecPlan::for_build(cx, TEST_WORKSPACE_BYTES)))
    }
}

/// Accepts every graph; builds a [`RecordingPlan`].
pub struct RecordingEngine;

impl Engine for RecordingEngine {
    fn check_support(&self, _: &SupportQuery<'_>) -> Result<()> {
        Ok(())
    }

    fn build_plan(&self, cx: &BuildContext<'_>, _: &Knobs) -> Result<Box<dyn CompiledPlan>> {
        Ok(Box::new(RecordingPlan {
            guards: guards_at_build(cx, SlotRule::DeclaredOrOverriddenExtent),
        }))
    }
}

/// The execute test manifest: `exec_noop` anchored on [`NOOP_OP`], `exec_recording` on
/// [`RECORDING_OP`], `exec_workspace` on [`WORKSPACE_OP`] (test-only id blocks 29 700-29 900).
pub static EXEC_TEST_MANIFEST: Manifest = Manifest {
    families: &[
        family(
            "exec_noop",
            29_800,
            &[NOOP_OP],
            &[
                slot(0, "exec_noop", &NoopEngine),
                // A second entry, so tests can execute at an index other than the selection.
                slot(1, "exec_noop_b", &NoopEngine),
            ],
        ),
        family(
            "exec_recording",
            29_900,
            &[RECORDING_OP],
            &[slot(0, "exec_recording", &RecordingEngine)],
        ),
        family(
            "exec_workspace",
            29_700,
            &[WORKSPACE_OP],
            &[slot(0, "exec_workspace", &WorkspaceEngine)],
        ),
    ],
};

/// A test family: its anchors and slots, no analyzer, validator, heuristics or backend guard.
const fn family(
    name: &'static str,
    base: EngineId,
    anchors: &'static [&'static str],
    slots: &'static [Slot],
) -> Family {
    Family {
        name,
        base,
        anchors,
        analyzer: None,
        validator: None,
        heuristics: None,
        backend_guard: None,
        slots,
    }
}

/// A default (not opt-in) slot.
const fn slot(slot: u32, name: &'static str, engine: &'static dyn Engine) -> Slot {
    Slot {
        slot,
        name,
        opt_in: false,
        engine,
    }
}

/// A chain of `operands - 1` unary `op` nodes over a `[1, 128, 64]` bf16 input: `operands`
/// wired tensors with uids `1..=operands` (input uid 1, then each node's output). Not frozen.
pub fn chain_graph(op: &str, operands: usize) -> Result<Graph> {
    let mut g = Graph::new(GraphContext::new(
        DataType::Bfloat16,
        DataType::Bfloat16,
        DataType::Float,
    ));
    let mut x = g.add_tensor(Tensor::new("x", &[1, 128, 64], DataType::Bfloat16).with_uid(1))?;
    for k in 1..operands {
        let n = g.add_node(NodeBuilder::by_name(op)?.input("input", x))?;
        let out = g.nodes()[n]
            .output("OUT_0")
            .ok_or_else(|| crate::Error::Internal("unary op without OUT_0".into()))?;
        let uid = k as i64 + 1;
        g.set_uid(out, uid)?;
        g.update_tensor(uid, |t| {
            t.name = format!("y{k}");
            t.data_type = DataType::Bfloat16;
        })?;
        x = uid;
    }
    g.set_output(x, true)?;
    Ok(g)
}

/// Plans `graph` against [`EXEC_TEST_MANIFEST`] with a backend that declines lowering (so the
/// operand order is the IR's wired ports) and builds the selected plan.
pub fn test_plan_list(mut graph: Graph) -> Result<crate::dispatch::PlanList> {
    use crate::dispatch::target::Target;
    use crate::dispatch::testing::FakeBackend;
    use crate::dispatch::{BuildPolicy, PlanList, PlanOptions};
    let opts = PlanOptions {
        manifest: &EXEC_TEST_MANIFEST,
        backend: std::sync::Arc::new(FakeBackend {
            lower_decline: Some("test backend: never lowers".into()),
            ..FakeBackend::default()
        }),
        target: Target::no_device("execute tests run without a device"),
        opt_in: Some(false),
    };
    let mut plans = PlanList::plan(&mut graph, opts, &[])?;
    plans.build_plans(BuildPolicy::HeuristicsChoice)?;
    Ok(plans)
}
