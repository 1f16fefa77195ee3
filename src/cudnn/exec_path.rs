//! How a built backend plan submits its work: a plan-level performance option that never
//! changes numerics (every path runs the same engine configuration on the same pointers).
//!
//! - [`ExecPath::Plain`]: every execute builds a VARIANT_PACK descriptor (create, set pointers,
//!   uids and workspace, finalize), calls `cudnnBackendExecute` and destroys it.
//! - [`ExecPath::ReusePack`]: each thread keeps one finalized VARIANT_PACK per plan. A call with
//!   the same pointers and workspace as that thread's previous call of the plan executes it as
//!   is; other pointers re-set the descriptor's pointers in place when the backend accepts
//!   attributes on a finalized variant pack (probed once per process), else a fresh descriptor
//!   replaces the cached one. Two threads never share a descriptor; the pointers stay per call.
//! - [`ExecPath::CudaGraph`]: each thread keeps one CUDA graph per plan, populated once by
//!   `cudnnBackendPopulateCudaGraph` (cuDNN >= 9.5, engines with the native CUDA-graph API) and
//!   instantiated; a call with new pointers runs `cudnnBackendUpdateCudaGraph` and refreshes the
//!   instance; every call launches the instance with `cuGraphLaunch` on the call's stream. An
//!   engine without native CUDA-graph support (or a cuDNN without the entry points) falls back
//!   to [`ExecPath::ReusePack`] for that plan, decided once.
//!
//! The default is [`ExecPath::ReusePack`]; `DNNPLAN_CUDNN_EXEC_PATH` = `plain` | `reuse` |
//! `graph`, read when a plan is built, overrides it; `BackendPlan::set_exec_path` changes one
//! plan.

use serde::Serialize;

use crate::error::{Error, Result};

/// The environment variable read at plan build.
pub const EXEC_PATH_ENV: &str = "DNNPLAN_CUDNN_EXEC_PATH";

/// How a backend plan submits its work (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum ExecPath {
    /// A fresh variant-pack descriptor per call.
    Plain = 0,
    /// A per-thread variant-pack descriptor per plan, reused or re-pointed.
    ReusePack = 1,
    /// A per-thread CUDA graph per plan: populate once, update on new pointers, launch.
    CudaGraph = 2,
}

impl ExecPath {
    /// Every path.
    pub const ALL: [ExecPath; 3] = [ExecPath::Plain, ExecPath::ReusePack, ExecPath::CudaGraph];

    /// The default path.
    pub const DEFAULT: ExecPath = ExecPath::ReusePack;

    /// The name used by `DNNPLAN_CUDNN_EXEC_PATH` (`plain`, `reuse`, `graph`).
    pub fn name(self) -> &'static str {
        match self {
            ExecPath::Plain => "plain",
            ExecPath::ReusePack => "reuse",
            ExecPath::CudaGraph => "graph",
        }
    }

    /// Every path's [`ExecPath::name`] (what `DNNPLAN_CUDNN_EXEC_PATH` accepts).
    pub fn names() -> Vec<&'static str> {
        ExecPath::ALL.into_iter().map(ExecPath::name).collect()
    }

    /// Parses a name as [`ExecPath::name`] writes it.
    pub fn parse(text: &str) -> Result<ExecPath> {
        let t = text.trim();
        ExecPath::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                Error::bad_param(
                    EXEC_PATH_ENV,
                    format!("`{t}` is not an execution path (plain, reuse or graph)"),
                )
            })
    }

    /// The path from `DNNPLAN_CUDNN_EXEC_PATH`, the default when unset or empty; a value that
    /// names no path is an error (never silently ignored).
    pub fn from_env() -> Result<ExecPath> {
        match std::env::var(EXEC_PATH_ENV) {
            Ok(v) if !v.trim().is_empty() => ExecPath::parse(&v),
            _ => Ok(ExecPath::DEFAULT),
        }
    }

    pub(crate) fn from_u8(v: u8) -> ExecPath {
        match v {
            0 => ExecPath::Plain,
            2 => ExecPath::CudaGraph,
            _ => ExecPath::ReusePack,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_names_are_errors() {
        for p in ExecPath::ALL {
            assert_eq!(ExecPath::parse(p.name()).unwrap(), p);
            assert_eq!(ExecPath::from_u8(p as u8), p);
        }
        assert_eq!(ExecPath::parse(" GRAPH ").unwrap(), ExecPath::CudaGraph);
        let e = ExecPath::parse("fast").unwrap_err().to_string();
        assert!(e.contains(EXEC_PATH_ENV) && e.contains("fast"), "{e}");
    }
}
