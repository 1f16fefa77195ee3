//! Dispatch: engine trait, manifest, engine ids, facts, capabilities, ranking and the plan list.

pub mod context;
