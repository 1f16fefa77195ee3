//! Dispatch: the engine contract, the manifest (static table of families), engine ids, knobs,
//! facts, capabilities, the backend provider, ranking into ONE plan list, the at-index plan API,
//! and explain.
//!
//! Flow: a frozen graph -> [`manifest::Manifest::family_for`] -> the family's analyzer (facts,
//! once) -> every offered engine's `check_support` (accept, or the decline error) -> the
//! backend's entries per heuristic mode -> [`rank`] -> [`plan_list::PlanList`] (count, names,
//! `(engine_id, knobs)` at index, select, build walk, replay, workspace) -> compiled plans.

pub mod backend;
pub mod capability;
pub mod context;
pub mod engine;
pub mod exec_types;
pub mod explain;
pub mod facts;
pub mod graph;
pub mod ids;
pub mod knobs;
pub mod manifest;
pub mod modes;
pub mod plan_list;
pub mod rank;
pub mod target;
pub mod testing;

#[cfg(test)]
mod tests;

pub use engine::{CompiledPlan, Engine};
pub use ids::EngineId;
pub use knobs::{KnobType, Knobs};
pub use modes::{BuildPolicy, HeurMode};
pub use plan_list::{PlanList, PlanOptions};
