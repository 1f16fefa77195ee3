//! The C ABI: the only module with `extern "C"` functions. Every entry point is thin: it checks
//! its pointers, runs its body through `boundary::boundary` (panics contained, errors mapped to
//! status codes, last-error message kept per thread) and writes outputs only on success.

pub(crate) mod boundary;
pub mod cache;
pub mod diagnostics;
pub mod dlpack;
pub mod execute;
pub mod explain;
pub mod graph;
pub mod graph_builder;
pub mod graph_ops;
pub mod graph_query;
pub mod graph_tensor;
pub mod handle;
pub mod plan;
pub mod select;
pub mod types;

pub use types::*;
