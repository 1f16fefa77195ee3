//! Listing several heuristic modes of one never-seen graph at once.
//!
//! Contract:
//! * Off unless `DNNPLAN_CUDNN_CONCURRENT_MODES` is `1`/`on`/`true`/`yes` (read at every use).
//!   The mechanism was measured on the H200 as a diagnostic (two modes 1.4-1.9x faster than one
//!   after the other, the same configs); this product path has not run on the device yet.
//! * [`list_modes`] answers each mode from the cache tiers when they hold it (as
//!   [`heur_cache::lookup_mode`]). Of the modes left, the first is asked on the caller's
//!   operation graph in the calling thread (its configs keep their ENGINECFGs); every other one in
//!   a thread of its own, on its own operation graph emitted from the same lowered graph and its own cuDNN
//!   handle (cuDNN allows concurrent calls only on distinct handles; [`SideSetup`] provides it).
//!   Those threads bring back `(engine_id, knobs)` only: their configs are replayed on the caller's
//!   operation graph when built, as cached ones are, and a failing replay is a decline
//!   ([`heur_cache::materialize`]).
//! * Every answer is stored in the cache tiers as a sequential listing stores it.
//! * The lists are what a sequential listing gives (same configs, same order within a mode). A
//!   mode whose thread failed is reported as `None`: the caller lists it sequentially later, so
//!   its error (or decline) surfaces exactly as without this module.

use std::any::Any;
use std::sync::Arc;

use crate::cudnn::api::RawHandle;
use crate::cudnn::emit::{OperationGraph, emit};
use crate::cudnn::heur_cache::{
    self, CachedConfig, GraphTarget, ListedConfig, Source, listed_without_configs, store_mode,
};
use crate::cudnn::heur_disk::DiskTier;
use crate::cudnn::plan::{self, HeurMode};
use crate::error::Result;

/// The environment variable that turns concurrent mode listing on.
pub const CONCURRENT_MODES_ENV: &str = "DNNPLAN_CUDNN_CONCURRENT_MODES";

/// Whether [`CONCURRENT_MODES_ENV`] turns it on.
pub fn enabled() -> bool {
    std::env::var(CONCURRENT_MODES_ENV).is_ok_and(|v| crate::settings::is_on(&v))
}

/// What a side thread does before it talks to the backend (e.g. make the device's context
/// current and take a cuDNN handle of its own): the handle to emit with (`None`: none) and a
/// guard held until the thread is done.
pub type SideSetup<'a> = dyn Fn() -> Result<(Option<RawHandle>, Box<dyn Any>)> + Sync + 'a;

/// One mode's listing: `None` when it was not listed here (the caller lists it itself).
pub type ModeListing = (HeurMode, Option<Result<(Vec<ListedConfig>, Source)>>);

/// Lists `modes` of `opg` (see the module doc); one entry per mode, in order.
pub fn list_modes(
    opg: &OperationGraph,
    target: Option<&GraphTarget>,
    modes: &[HeurMode],
    disk: Option<&DiskTier>,
    side: &SideSetup,
) -> Vec<ModeListing> {
    let mut out: Vec<ModeListing> = modes
        .iter()
        .map(|&m| (m, heur_cache::lookup_mode(opg, target, m, disk).map(Ok)))
        .collect();
    let pending: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].1.is_none() && plan::backend_mode(out[i].0).is_some())
        .collect();
    let Some((&first, others)) = pending.split_first() else {
        return out;
    };
    let api = opg.desc.api();
    std::thread::scope(|scope| {
        let threads: Vec<_> = others
            .iter()
            .map(|&i| {
                let mode = out[i].0;
                let graph = opg.graph.clone();
                let thread = scope.spawn(move || -> Result<Vec<CachedConfig>> {
                    let (handle, _guard) = side()?;
                    let own = emit(api, graph, handle)?;
                    Ok(plan::query_mode(&own, mode)?
                        .iter()
                        .map(|e| CachedConfig {
                            engine_id: e.engine_id,
                            knobs: e.knobs.clone(),
                        })
                        .collect())
                });
                (i, thread)
            })
            .collect();
        let mode = out[first].0;
        out[first].1 = Some(heur_cache::query_and_store(opg, target, mode, disk));
        for (i, thread) in threads {
            let mode = out[i].0;
            if let Ok(Ok(configs)) = thread.join() {
                let configs: Arc<[CachedConfig]> = configs.into();
                store_mode(opg, target, mode, configs.clone(), disk);
                let key = heur_cache::key_for(target, mode);
                out[i].1 = Some(Ok((
                    listed_without_configs(&configs, mode, key, disk),
                    Source::Queried,
                )));
            }
        }
    });
    out
}
