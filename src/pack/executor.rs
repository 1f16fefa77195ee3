//! Running a normalized pack on a plan list: the per-graph declared layout (operand order and
//! storage geometry, computed once after planning) and the dispatch of one call to the selected
//! plan or to a plan at an index.
//!
//! Execute takes the plan list by shared reference, so any number of threads may execute one
//! graph concurrently, each with its own per-call [`VariantPack`]. Building is a mutation and
//! happens before (the build walk, or build at an index); executing an unbuilt plan is
//! `InvalidState` naming the call to make. Execute at an index never changes the selection.

use crate::dispatch::PlanList;
use crate::dispatch::context::ExecContext;
use crate::error::{Error, Result};

use super::declared::DeclaredLayout;
use super::from_ir::{declared_layout, wired_ports_order};
use super::order::OperandOrder;
use super::variant::VariantPack;

/// Which entry of the plan list an execute runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PlanChoice {
    /// The selected entry.
    Selected,
    /// Entry `i`; the selection does not change.
    AtIndex(usize),
}

/// Names the plan in workspace messages ("the selected plan", "plan 3"); formatting happens only
/// when a message is written, so a call that passes its checks allocates nothing here.
impl std::fmt::Display for PlanChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanChoice::Selected => f.write_str("the selected plan"),
            PlanChoice::AtIndex(i) => write!(f, "plan {i}"),
        }
    }
}

/// Computes the declared layout of a planned graph. The operand order has one source: the
/// backend's variant-pack template when the graph lowered ([`PlanList::backend_operand_uids`]),
/// else the IR's wired ports. Callers use the memoized [`PlanList::declared_layout`].
pub fn layout_of(plans: &PlanList) -> Result<DeclaredLayout> {
    if !plans.is_planned() {
        return Err(Error::InvalidState(
            "the operand layout is known only after planning (create_execution_plans)".into(),
        ));
    }
    let order = match plans.backend_operand_uids() {
        Some(uids) => OperandOrder::from_backend_template(uids)?,
        None => wired_ports_order(plans.graph()),
    };
    declared_layout(plans.graph(), order)
}

/// Runs `pack` on the chosen, already built plan of `plans`, after checking the workspace the
/// plan needs (present, large enough when its capacity is stated, 128-byte aligned).
#[inline]
pub fn execute(
    plans: &PlanList,
    choice: PlanChoice,
    pack: &VariantPack<'_>,
    ctx: &ExecContext<'_>,
) -> Result<()> {
    let plan = match choice {
        PlanChoice::Selected => plans.selected_plan()?,
        PlanChoice::AtIndex(i) => plans.compiled_at(i)?,
    };
    ctx.workspace_region(plan.workspace_size(), choice)?;
    plan.execute(pack, ctx)
}
