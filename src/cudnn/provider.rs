//! The cuDNN backend as dispatch's [`BackendProvider`]: lowering a frozen IR graph once into an
//! operation graph, heuristics one mode at a time (each appending to the session's config list),
//! replay by `(engine_id, raw knobs)`, building the config at an index, and the delegating entry
//! (the first config of modes A then FALLBACK that builds).
//!
//! Without cuDNN, [`provider`] returns dispatch's [`CudnnNotLoaded`] with the loader's reason.
//! Anything the lowering cannot express, and a mode with no engine configs, is a decline; a
//! NOT_SUPPORTED from the backend while building is a decline too (the build walk advances).

use std::sync::Arc;

use crate::cudnn::api::RawHandle;
use crate::cudnn::emit::{OperationGraph, emit};
use crate::cudnn::heur_cache::{self, DeviceKey, GraphTarget, ListedConfig};
use crate::cudnn::lower::from_ir::lower_graph;
use crate::cudnn::plan::{self, BackendPlan};
use crate::cudnn::{consts, handle, loader};
use crate::cudnn::{heur_disk, heur_modes};
use crate::dispatch::backend::{
    BackendConfig, BackendProvider, BackendSession, CudnnNotLoaded, backend_decline,
};
use crate::dispatch::engine::CompiledPlan;
use crate::dispatch::exec_types::{ExecContext, VariantPack};
use crate::dispatch::graph::Graph;
use crate::dispatch::ids::EngineId;
use crate::dispatch::knobs::RawBackendKnobs;
use crate::dispatch::modes::HeurMode;
use crate::dispatch::target::Target;
use crate::error::{Error, Result};

/// The process's backend provider: cuDNN when loaded, else a provider that declines with the
/// loader's reason.
pub fn provider() -> Arc<dyn BackendProvider> {
    match loader::library() {
        Ok(lib) => Arc::new(CudnnProvider {
            version: lib.version,
            origin: lib.origin.clone(),
        }),
        Err(e) => Arc::new(CudnnNotLoaded {
            reason: e.to_string(),
        }),
    }
}

/// The cuDNN provider (library loaded).
pub struct CudnnProvider {
    version: usize,
    origin: String,
}

/// A backend failure that means "this config / graph is not supported" becomes a decline.
fn as_decline(e: Error) -> Error {
    match e {
        Error::Cudnn {
            status,
            ref message,
            call,
        } if (3000..4000).contains(&status) => backend_decline(format!("{call}: {message}")),
        Error::NotSupported(why) => backend_decline(why),
        other => other,
    }
}

/// Pushes a device's primary context for the guard's lifetime (popped on drop), so planning and
/// building never change the calling thread's current context ("no ambient device state").
struct CtxGuard;

impl CtxGuard {
    fn enter(ordinal: i32) -> Result<CtxGuard> {
        use cudarc::driver::{result as drv, sys};
        let err = |call| {
            move |e: drv::DriverError| Error::Cuda {
                call,
                message: format!("{e:?}"),
            }
        };
        let dev = drv::device::get(ordinal).map_err(err("cuDeviceGet"))?;
        // SAFETY: `dev` is a valid device (the target was probed).
        let ctx =
            unsafe { drv::primary_ctx::retain(dev) }.map_err(err("cuDevicePrimaryCtxRetain"))?;
        // SAFETY: a live primary context; popped in Drop.
        unsafe { sys::cuCtxPushCurrent_v2(ctx) }
            .result()
            .map_err(err("cuCtxPushCurrent"))?;
        Ok(CtxGuard)
    }
}

impl Drop for CtxGuard {
    fn drop(&mut self) {
        let mut popped: cudarc::driver::sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context pushed by `enter`.
        let _ = unsafe { cudarc::driver::sys::cuCtxPopCurrent_v2(&mut popped) };
    }
}

/// The cached cuDNN handle for (device, stream), created inside the device's primary context.
fn device_handle(ordinal: i32, stream: crate::cudnn::api::RawStream) -> Result<RawHandle> {
    if let Some(h) = handle::cached(ordinal, stream) {
        return Ok(h);
    }
    let _ctx = CtxGuard::enter(ordinal)?;
    handle::handle_for(ordinal, stream)
}

impl BackendProvider for CudnnProvider {
    fn describe(&self) -> String {
        format!(
            "cudnn {} ({})",
            loader::version_string(self.version),
            self.origin
        )
    }

    fn lower(&self, graph: &Arc<Graph>, target: &Target) -> Result<Box<dyn BackendSession>> {
        let device = target.device.as_ref().ok_or_else(|| {
            backend_decline(format!(
                "no CUDA device: {}",
                target.no_device_reason.clone().unwrap_or_default()
            ))
        })?;
        if device.ordinal < 0 {
            return Err(backend_decline(
                "the target device is hypothetical (no ordinal)",
            ));
        }
        let bg = lower_graph(graph, self.version)?;
        let heur_target = GraphTarget {
            graph: heur_cache::graph_key(&bg),
            device: DeviceKey {
                ordinal: device.ordinal,
                compute_capability: device.compute_capability,
                sm_count: device.sm_count,
            },
            cudnn_version: self.version,
        };
        let api = loader::api()?;
        let h = device_handle(device.ordinal, std::ptr::null_mut())?;
        let _ctx = CtxGuard::enter(device.ordinal)?;
        let opg = emit(api, bg, Some(h)).map_err(as_decline)?;
        let engine_count = opg
            .desc
            .get_i64(consts::CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT)
            .unwrap_or(0)
            .max(0) as usize;
        Ok(Box::new(CudnnSession {
            opg: Arc::new(opg),
            ordinal: device.ordinal,
            handle: h,
            configs: Vec::new(),
            engine_count,
            heur_target,
            queried: Vec::new(),
        }))
    }
}

/// One lowered graph: its operation graph and every config listed so far.
pub struct CudnnSession {
    opg: Arc<OperationGraph>,
    ordinal: i32,
    handle: RawHandle,
    configs: Vec<ListedConfig>,
    engine_count: usize,
    /// The heuristics-cache key of this graph on this device and library.
    heur_target: GraphTarget,
    /// Modes already listed and their spans in `configs`, so no mode is asked twice.
    queried: Vec<(HeurMode, std::ops::Range<usize>)>,
}

// SAFETY: the raw handle is a process-lifetime cuDNN handle (never destroyed); descriptors are
// Send/Sync; the session is used by one thread at a time (`&mut self`).
unsafe impl Send for CudnnSession {}

impl CudnnSession {
    /// Lists `mode` (cache or backend) and appends its configs; the configs' indices. A mode
    /// listed before in this session is not asked again: its earlier span is returned.
    fn list(&mut self, mode: HeurMode) -> Result<std::ops::Range<usize>> {
        if let Some((_, span)) = self.queried.iter().find(|(m, _)| *m == mode) {
            return Ok(span.clone());
        }
        let _ctx = CtxGuard::enter(self.ordinal)?;
        let (list, _) =
            heur_cache::list_mode(&self.opg, Some(&self.heur_target), mode).map_err(as_decline)?;
        let start = self.configs.len();
        self.configs.extend(list);
        let span = start..self.configs.len();
        self.queried.push((mode, span.clone()));
        Ok(span)
    }

    /// Builds the config at `index` (replaying its ENGINECFG first if it came from the cache).
    fn build_index(&mut self, index: usize) -> Result<BackendPlan> {
        let engine_count = Some(self.engine_count as i64);
        let opg = self.opg.clone();
        let handle = self.handle;
        let e = self.configs.get_mut(index).ok_or_else(|| Error::NotFound {
            what: "backend config",
            key: index.to_string(),
        })?;
        let name = e.name();
        let config = heur_cache::materialize(&opg, e, engine_count).map_err(as_decline)?;
        BackendPlan::build(opg.clone(), config, handle, name).map_err(as_decline)
    }
}

impl BackendSession for CudnnSession {
    fn query(&mut self, mode: HeurMode) -> Result<Vec<BackendConfig>> {
        let span = self.list(mode)?;
        if span.is_empty() {
            let last = loader::api().map(|a| a.last_error()).unwrap_or_default();
            return Err(backend_decline(format!(
                "heuristic mode {} returned no engine configs{}",
                mode.name(),
                if last.trim().is_empty() {
                    String::new()
                } else {
                    format!(" ({})", last.trim())
                }
            )));
        }
        Ok(span
            .map(|i| BackendConfig {
                cpp_index: i,
                engine_id: self.configs[i].engine_id as EngineId,
                knobs: RawBackendKnobs::from_pairs(self.configs[i].knobs.iter().copied()),
            })
            .collect())
    }

    fn prefetch(&mut self, modes: &[HeurMode]) {
        if !heur_modes::enabled() {
            return;
        }
        let pending: Vec<HeurMode> = modes
            .iter()
            .copied()
            .filter(|m| !self.queried.iter().any(|(q, _)| q == m))
            .collect();
        if pending.len() < 2 {
            return;
        }
        let Ok(_ctx) = CtxGuard::enter(self.ordinal) else {
            return;
        };
        let disk = heur_cache::enabled()
            .then(|| heur_disk::tier_for(&self.heur_target))
            .flatten();
        let ordinal = self.ordinal;
        let side = move || -> Result<(Option<RawHandle>, Box<dyn std::any::Any>)> {
            let ctx = CtxGuard::enter(ordinal)?;
            let h = handle::side_handle(ordinal)?;
            Ok((Some(h.raw()), Box::new((h, ctx))))
        };
        let listed = heur_modes::list_modes(
            &self.opg,
            Some(&self.heur_target),
            &pending,
            disk.as_ref(),
            &side,
        );
        for (mode, result) in listed {
            if let Some(Ok((list, _))) = result {
                let start = self.configs.len();
                self.configs.extend(list);
                self.queried.push((mode, start..self.configs.len()));
            }
        }
    }

    fn engine_count(&self) -> usize {
        self.engine_count
    }

    fn create_plan(&mut self, engine_id: EngineId, knobs: &RawBackendKnobs) -> Result<usize> {
        let _ctx = CtxGuard::enter(self.ordinal)?;
        let pairs = knobs.pairs().to_vec();
        let config =
            plan::engine_config_in(&self.opg, engine_id, &pairs, Some(self.engine_count as i64))
                .map_err(as_decline)?;
        self.configs.push(ListedConfig::replayed(
            engine_id,
            pairs,
            HeurMode::A,
            config,
        ));
        Ok(self.configs.len() - 1)
    }

    fn build_at(&mut self, cpp_index: usize) -> Result<Arc<dyn CompiledPlan>> {
        let _ctx = CtxGuard::enter(self.ordinal)?;
        let p = self.build_index(cpp_index)?;
        Ok(Arc::new(CudnnCompiledPlan {
            ordinal: self.ordinal,
            inner: p,
        }))
    }

    fn build_delegating(&mut self) -> Result<Arc<dyn CompiledPlan>> {
        // The backend's own choice: the first config of mode A that builds, and only if none
        // does, of FALLBACK (asked only then). Modes listed before are not asked again.
        let _ctx = CtxGuard::enter(self.ordinal)?;
        let mut failures = Vec::new();
        for mode in [HeurMode::A, HeurMode::Fallback] {
            let span = match self.list(mode) {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("mode {}: {e}", mode.name()));
                    continue;
                }
            };
            for i in span {
                match self.build_index(i) {
                    Ok(p) => {
                        return Ok(Arc::new(CudnnCompiledPlan {
                            ordinal: self.ordinal,
                            inner: p,
                        }));
                    }
                    Err(e) => failures.push(format!("{}: {e}", self.configs[i].name())),
                }
            }
        }
        Err(backend_decline(format!(
            "no valid execution plan built: {}",
            if failures.is_empty() {
                "the backend offered no engine configs".to_owned()
            } else {
                failures.join("; ")
            }
        )))
    }

    fn operand_uids(&self) -> Option<Vec<i64>> {
        Some(self.opg.graph.user_uids())
    }
}

/// A built cuDNN plan behind dispatch's [`CompiledPlan`].
pub struct CudnnCompiledPlan {
    ordinal: i32,
    inner: BackendPlan,
}

impl CudnnCompiledPlan {
    /// The built backend plan (name, workspace, operand uids, direct execute).
    pub fn backend_plan(&self) -> &BackendPlan {
        &self.inner
    }
}

impl CompiledPlan for CudnnCompiledPlan {
    fn workspace_size(&self) -> u64 {
        self.inner.workspace_size() as u64
    }

    fn execute(&self, pack: &VariantPack, ctx: &ExecContext) -> Result<()> {
        let plan = &self.inner;
        if pack.uids() != plan.user_uids.as_slice() {
            return Err(Error::Internal(format!(
                "plan {}: the pack's operand order {:?} is not the backend template {:?}",
                plan.name,
                pack.uids(),
                plan.user_uids
            )));
        }
        let device = ctx.device.unwrap_or(self.ordinal);
        let handle = device_handle(device, ctx.stream)?;
        let workspace = ctx.workspace_region(self.workspace_size(), &plan.name)?;
        // SAFETY: the pack was normalized against the graph's declarations (every pointer is a
        // caller buffer of the declared extent); the workspace region was checked above; the
        // handle belongs to the stream's device.
        unsafe { plan.execute(handle, ctx.stream, pack.addresses(), workspace) }
    }
}
