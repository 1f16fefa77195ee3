//! PLACEHOLDER execute-side types, until the execute branch provides `crate::pack::VariantPack`
//! and `crate::dispatch::context::ExecContext`. Only the [`super::engine::CompiledPlan`] trait
//! signature refers to them.

/// Placeholder for the normalized variant pack (`crate::pack::VariantPack`).
#[derive(Debug, Default)]
pub struct VariantPack {
    _private: (),
}

/// Placeholder for the execution context (`crate::dispatch::context::ExecContext`).
#[derive(Debug, Default)]
pub struct ExecContext {
    _private: (),
}
