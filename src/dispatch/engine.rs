//! The engine contract: accept or decline a graph, build a compiled plan for one listed entry,
//! convert knobs to and from the public form; and the compiled plan's execute contract.
//!
//! Routing has exactly one outcome besides acceptance: the decline error
//! ([`Error::Declined`], made with [`SupportQuery::decline`] / [`BuildContext::decline`]). Any other
//! error from `check_support` or `build_plan` is a bug and propagates through planning and the
//! build walk. Accept means run: a listed entry's build does not re-run `check_support`.
//! Engines hold no per-graph state (one static instance serves every graph); the engine's name
//! and id come from its manifest slot, never from the engine.

use std::sync::Arc;

use super::exec_types::{ExecContext, VariantPack};
use super::facts::Facts;
use super::graph::Graph;
use super::ids::EngineId;
use super::knobs::Knobs;
use super::target::Target;
use crate::error::{Error, Result};

/// True when `e` is a decline (routing), false for every other error (a bug or a failure).
pub fn is_decline(e: &Error) -> bool {
    matches!(e, Error::Declined { .. })
}

/// The reason carried by a decline (the error's text otherwise).
pub fn decline_reason(e: &Error) -> String {
    match e {
        Error::Declined { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

/// What `check_support` sees.
pub struct SupportQuery<'a> {
    /// The engine's manifest name (for decline messages).
    pub engine: &'a str,
    /// The frozen graph.
    pub graph: &'a Graph,
    /// The family's facts (`None` when the family has no analyzer or it could not express the graph).
    pub facts: Option<&'a dyn Facts>,
    /// The planning target.
    pub target: &'a Target,
}

impl SupportQuery<'_> {
    /// A decline error naming this engine.
    pub fn decline(&self, reason: impl Into<String>) -> Error {
        Error::Declined {
            engine: self.engine.to_owned(),
            reason: reason.into(),
        }
    }

    /// The family facts as `T`, or a decline saying the family could not describe the graph.
    pub fn facts_as<T: Facts>(&self) -> Result<&T> {
        let facts = self
            .facts
            .ok_or_else(|| self.decline("the family analyzer cannot express this graph"))?;
        if let Some(reason) = facts.invalid() {
            return Err(self.decline(reason.to_owned()));
        }
        facts
            .downcast_ref::<T>()
            .ok_or_else(|| Error::Internal(format!("{}: facts of an unexpected type", self.engine)))
    }
}

/// What `build_plan` sees.
pub struct BuildContext<'a> {
    /// The engine's manifest name.
    pub engine: &'a str,
    /// The engine id the entry carries.
    pub engine_id: EngineId,
    /// The frozen graph.
    pub graph: &'a Arc<Graph>,
    /// The family's facts.
    pub facts: Option<&'a dyn Facts>,
    /// The planning target (the device the plan is built for).
    pub target: &'a Target,
}

impl BuildContext<'_> {
    /// A decline error naming this engine (the build walk advances past it).
    pub fn decline(&self, reason: impl Into<String>) -> Error {
        Error::Declined {
            engine: self.engine.to_owned(),
            reason: reason.into(),
        }
    }
}

/// A bundled engine.
pub trait Engine: Send + Sync + 'static {
    /// Accept (`Ok`) or decline ([`SupportQuery::decline`]) the graph. Proposes no plans.
    fn check_support(&self, query: &SupportQuery<'_>) -> Result<()>;

    /// The expensive step, once per (graph, entry): compile or load what `knobs` names.
    /// May decline (the walk advances).
    fn build_plan(&self, cx: &BuildContext<'_>, knobs: &Knobs) -> Result<Box<dyn CompiledPlan>>;

    /// The public form of a native knob record (default: the record itself).
    fn knobs_to_public(&self, native: &Knobs) -> Knobs {
        native.clone()
    }

    /// Parses a public knob record. Must reject unknown knob types and out-of-domain values
    /// (`BadParam`), never snap to a neighbour. Default: only the empty record (no tuning axes).
    fn knobs_from_public(&self, public: &Knobs) -> Result<Knobs> {
        if public.is_empty() {
            Ok(Knobs::none())
        } else {
            Err(Error::bad_param(
                "knobs",
                format!(
                    "this engine has no tuning knobs; got {}",
                    public.public_repr()
                ),
            ))
        }
    }
}

/// A built plan: the hot path. Must not allocate; scratch comes from the caller's workspace.
pub trait CompiledPlan: Send + Sync {
    /// Workspace bytes needed at execute (shape-independent).
    fn workspace_size(&self) -> u64;

    /// Runs the plan on the normalized pack, on the context's stream.
    fn execute(&self, pack: &VariantPack, ctx: &ExecContext) -> Result<()>;
}
