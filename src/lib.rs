//! dnnplan: describe a graph of DNN ops, validate it, rank every way to run it (bundled CUDA
//! engines and the cuDNN backend's engine configs) into one plan list, build the chosen plan and
//! execute it with almost no host overhead. Shipped as a C-ABI shared library (`include/dnnplan.h`).
//!
//! Module map: [`ir`] graph IR; [`dispatch`] engines, manifest, ranking, plan list; [`pack`]
//! variant-pack normalization; [`cudnn`] the run-time-loaded cuDNN backend; [`cuda`] the CUDA
//! driver layer, kernels and compiled-plan cache; [`engines`] bundled engines per family;
//! [`select`] attention eligibility; [`settings`] the `DNNPLAN_*` environment variables; [`log`]
//! opt-in logging of planning and builds; [`ffi`] the C ABI (the only `extern "C"` code).

#![warn(missing_docs)]

pub mod cuda;
pub mod cudnn;
pub mod dispatch;
pub mod engines;
pub mod error;
pub mod ffi;
pub mod ir;
pub mod log;
pub mod pack;
pub mod select;
pub mod settings;
pub mod status;
pub mod version;

pub use error::{Error, Result};
pub use status::Status;
