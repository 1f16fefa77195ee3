//! CUDA driver layer over cudarc, probed first, plus everything dnnplan's own kernels need.
//!
//! - [`probe`]: is libcuda / NVRTC there, driver version, visible devices (never panics).
//! - [`driver`]: the guard every driver call goes through (probe first, `catch_unwind` last).
//! - [`context`]: the caller's context and device; binding the context a launch needs
//!   (no ambient state: the stream's own context, else the caller's current one).
//! - [`module`]: cubins loaded once per process (`cuLibraryLoadData`, context-independent),
//!   kernel lookup by name.
//! - [`launch`](mod@launch): launches on a caller-supplied stream (`cuLaunchKernelEx`, clusters).
//! - [`graph`]: an owned CUDA graph and instance (populated by a library, launched on a stream).
//! - [`nvrtc`]: NVRTC loading (robust search) and compilation to cubin.
//! - [`kernels`]: the bundled kernel table generated from `kernels/manifest.toml`.
//! - [`compile`]: `compile_or_load`: bundled cubin, else NVRTC through the compiled-plan cache.
//! - [`cache`]: the persistent compiled-plan cache (dispatch spec section 7, adapted).
//! - [`tma`]: tensor maps for the TMA (host-checked, encoded by the driver).

pub mod cache;
pub mod compile;
pub mod context;
pub mod driver;
pub mod graph;
pub mod kernels;
pub mod launch;
pub mod module;
pub mod nvrtc;
pub mod probe;
pub mod tma;

#[cfg(test)]
mod unavailable_tests;

pub use compile::{GpuArch, compile_nvrtc, compile_or_load};
pub use context::{ContextGuard, CurrentContext};
pub use launch::{KernelArgs, LaunchConfig, Launcher, launch};
pub use module::{Function, Module};
