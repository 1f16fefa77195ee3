//! The per-graph execute state: the declared layout (operand order and storage geometry, computed
//! once), the plan list, and lock-free caches of built plans, so the hot path is: normalize the
//! caller's buffers into a per-call [`VariantPack`], load the cached plan, run it.
//!
//! Only the first execute of an unbuilt graph (or of an unbuilt index) takes the plan-list lock to
//! build; later calls read an `ArcSwap` (selected plan) or a `OnceLock` (plan at an index) and never
//! contend. Execute at an index never changes the selection. Mutations of the plan list go through
//! [`Executor::with_plans`], which drops the caches so the next call re-reads them.

use std::sync::{Arc, Mutex, OnceLock};

use arc_swap::ArcSwapOption;

use crate::dispatch::context::ExecContext;
use crate::dispatch::{BuildPolicy, CompiledPlan, PlanList};
use crate::error::{Error, Result};

use super::declared::DeclaredLayout;
use super::from_ir::{declared_layout, wired_ports_order};
use super::order::OperandOrder;
use super::variant::VariantPack;

/// Which entry of the plan list an execute runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PlanChoice {
    /// The selected entry (built on first use with the build walk).
    Selected,
    /// Entry `i`, built on first use; the selection does not change.
    AtIndex(usize),
}

struct Ready {
    plan: Arc<dyn CompiledPlan>,
}

/// A planned graph ready to execute.
pub struct Executor {
    plans: Mutex<PlanList>,
    layout: DeclaredLayout,
    selected: ArcSwapOption<Ready>,
    at_index: Box<[OnceLock<Arc<dyn CompiledPlan>>]>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("operands", &self.layout.uids())
            .field("selected_cached", &self.selected.load().is_some())
            .finish()
    }
}

impl Executor {
    /// Wraps a planned list. The operand order has one source: the backend's variant-pack
    /// template when the graph lowered ([`PlanList::backend_operand_uids`]), else the IR's wired
    /// ports.
    pub fn new(plans: PlanList) -> Result<Executor> {
        let order = match plans.backend_operand_uids() {
            Some(uids) => OperandOrder::from_backend_template(uids)?,
            None => wired_ports_order(plans.graph()),
        };
        let layout = declared_layout(plans.graph(), order)?;
        let count = plans.count();
        Ok(Executor {
            plans: Mutex::new(plans),
            layout,
            selected: ArcSwapOption::empty(),
            at_index: (0..count).map(|_| OnceLock::new()).collect(),
        })
    }

    /// The declared layout (operand order and per-slot declarations).
    #[inline]
    pub fn layout(&self) -> &DeclaredLayout {
        &self.layout
    }

    /// Runs `f` on the plan list under its lock (select, build, replay...), then drops the cached
    /// plans so the next execute sees the change.
    pub fn with_plans<R>(&self, f: impl FnOnce(&mut PlanList) -> Result<R>) -> Result<R> {
        let mut plans = self.lock()?;
        let out = f(&mut plans);
        self.selected.store(None);
        out
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, PlanList>> {
        // A panic while the list was locked leaves it consistent enough to read (every mutation
        // is a whole-field store); recover instead of poisoning every later execute.
        Ok(self
            .plans
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// The plan `choice` names, built if needed.
    pub fn plan(&self, choice: PlanChoice) -> Result<Arc<dyn CompiledPlan>> {
        match choice {
            PlanChoice::Selected => {
                if let Some(r) = &*self.selected.load() {
                    return Ok(r.plan.clone());
                }
                let mut plans = self.lock()?;
                if !plans.is_built() {
                    plans.build_plans(BuildPolicy::HeuristicsChoice)?;
                }
                let plan = plans.selected_plan()?;
                self.selected
                    .store(Some(Arc::new(Ready { plan: plan.clone() })));
                Ok(plan)
            }
            PlanChoice::AtIndex(i) => {
                if let Some(p) = self.at_index.get(i).and_then(OnceLock::get) {
                    return Ok(p.clone());
                }
                let plan = self.lock()?.plan_at(i)?;
                if let Some(cell) = self.at_index.get(i) {
                    let _ = cell.set(plan.clone());
                }
                Ok(plan)
            }
        }
    }

    /// Runs a normalized pack on the chosen plan.
    #[inline]
    pub fn execute(
        &self,
        choice: PlanChoice,
        pack: &VariantPack<'_>,
        ctx: &ExecContext<'_>,
    ) -> Result<()> {
        if !std::ptr::eq(pack.layout(), &self.layout) {
            return Err(Error::Internal(
                "a variant pack normalized for another graph was passed to execute".into(),
            ));
        }
        match choice {
            PlanChoice::Selected => {
                if let Some(r) = &*self.selected.load() {
                    return r.plan.execute(pack, ctx);
                }
            }
            PlanChoice::AtIndex(i) => {
                if let Some(p) = self.at_index.get(i).and_then(OnceLock::get) {
                    return p.execute(pack, ctx);
                }
            }
        }
        self.plan(choice)?.execute(pack, ctx)
    }
}
