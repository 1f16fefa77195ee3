//! The execute-side types the [`super::engine::CompiledPlan`] trait refers to: the per-call
//! normalized variant pack and the execution context (stream, workspace, device).

pub use crate::dispatch::context::ExecContext;
pub use crate::pack::VariantPack;
