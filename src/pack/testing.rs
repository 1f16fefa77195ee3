//! Execute-path test support (no arithmetic, no device): a no-op engine and a recording engine in
//! a test manifest, and graphs with a chosen number of operands. Used by the execute tests and the
//! host-overhead benchmark; the production manifest never lists these engines.
//!
//! Both plans show the per-plan fast path: on first execute they resolve their slots by uid in
//! the pack's declared layout and settle a [`GuardTable`] (every operand required, at the declared
//! extent, with the declared dtype); each call runs the table's flat check and refuses an illegal
//! call through its checker, launching nothing.
//!
//! The recording plan treats slot pointers as HOST memory: it reads a `u64` at the first slot and
//! writes `value + slot index` into every other slot, so a test can prove that each call saw
//! exactly its own buffers.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::dispatch::context::ExecContext;
use crate::dispatch::engine::{BuildContext, CompiledPlan, Engine, SupportQuery};
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

/// Per-plan guards: every operand required, at its declared extent and dtype.
fn settle_guards(layout: &DeclaredLayout) -> GuardTable {
    GuardTable::new(layout.slots().iter().enumerate().flat_map(|(i, d)| {
        let slot = i as u32;
        [
            Guard {
                slot,
                rule: SlotRule::Required,
            },
            Guard {
                slot,
                rule: SlotRule::DeclaredExtent,
            },
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
    /// Executions that passed the guards.
    pub runs: AtomicU64,
}

impl NoopExecPlan {
    /// The settled guard table (after the first execute).
    pub fn guards(&self) -> Option<&GuardTable> {
        self.guards.get()
    }
}

impl CompiledPlan for NoopExecPlan {
    fn workspace_size(&self) -> u64 {
        0
    }

    #[inline]
    fn execute(&self, pack: &VariantPack<'_>, _: &ExecContext<'_>) -> Result<()> {
        self.guards
            .get_or_init(|| settle_guards(pack.layout()))
            .check(pack)?;
        self.runs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// A plan that copies a tag from slot 0 into every other slot (host memory, see module doc).
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
            .get_or_init(|| settle_guards(pack.layout()))
            .check(pack)?;
        // SAFETY: test-only engine; callers pass host buffers of at least 8 bytes per slot.
        let tag = unsafe { pack.ptr(0).cast::<u64>().read_unaligned() };
        for i in 1..pack.len() {
            // SAFETY: as above.
            unsafe {
                pack.ptr(i)
                    .cast::<u64>()
                    .write_unaligned(tag.wrapping_add(i as u64))
            };
        }
        Ok(())
    }
}

/// Accepts every graph; builds a [`NoopExecPlan`].
pub struct NoopEngine;

impl Engine for NoopEngine {
    fn check_support(&self, _: &SupportQuery<'_>) -> Result<()> {
        Ok(())
    }

    fn build_plan(&self, _: &BuildContext<'_>, _: &Knobs) -> Result<Box<dyn CompiledPlan>> {
        Ok(Box::new(NoopExecPlan::default()))
    }
}

/// Accepts every graph; builds a [`RecordingPlan`].
pub struct RecordingEngine;

impl Engine for RecordingEngine {
    fn check_support(&self, _: &SupportQuery<'_>) -> Result<()> {
        Ok(())
    }

    fn build_plan(&self, _: &BuildContext<'_>, _: &Knobs) -> Result<Box<dyn CompiledPlan>> {
        Ok(Box::new(RecordingPlan::default()))
    }
}

/// The execute test manifest: `exec_noop` anchored on [`NOOP_OP`], `exec_recording` on
/// [`RECORDING_OP`] (test-only id blocks 29 800 and 29 900).
pub static EXEC_TEST_MANIFEST: Manifest = Manifest {
    families: &[
        Family {
            name: "exec_noop",
            base: 29_800,
            anchors: &[NOOP_OP],
            analyzer: None,
            validator: None,
            heuristics: None,
            backend_guard: None,
            slots: &[Slot {
                slot: 0,
                name: "exec_noop",
                opt_in: false,
                engine: &NoopEngine,
            }],
        },
        Family {
            name: "exec_recording",
            base: 29_900,
            anchors: &[RECORDING_OP],
            analyzer: None,
            validator: None,
            heuristics: None,
            backend_guard: None,
            slots: &[Slot {
                slot: 0,
                name: "exec_recording",
                opt_in: false,
                engine: &RecordingEngine,
            }],
        },
    ],
};

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
