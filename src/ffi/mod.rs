//! The C ABI: the only module with `extern "C"` functions. Every entry point is thin: it checks
//! its pointers, runs its body through [`boundary::boundary`] (panics contained, errors mapped to
//! status codes, last-error message kept per thread) and writes outputs only on success.

pub(crate) mod boundary;
pub mod diagnostics;
pub mod explain;
pub mod plan;
pub mod types;

pub use types::*;
