//! A process-wide cache of heuristics results, so that a plan list for a graph seen before is
//! created without asking the backend's heuristics again.
//!
//! Contract:
//! * Key ([`HeurKey`]): the lowered backend graph's own key ([`graph_key`], blake3 over its
//!   complete description: every tensor's dtype, dims, strides, uid, alignment, flags and
//!   by-value scalar, every op with its modes and attributes, the frontend workspace), the device
//!   ([`DeviceKey`]: ordinal, compute capability, SM count), the loaded cuDNN's version and the
//!   heuristic mode. Anything that can change the backend's answer is in it; a lowering that
//!   depends on the cuDNN version shows in the graph key too.
//! * Value: the ordered list of `(engine_id, raw knobs)` the backend returned for that mode
//!   ([`CachedConfig`]); only non-empty answers are kept. Notes are not stored: they belong to
//!   the engine and are read on demand from the (replayed) ENGINECFG.
//! * A hit lists the configs with no backend call; their ENGINECFGs are made by replay
//!   ([`crate::cudnn::plan::engine_config_in`]) when one is built ([`materialize`]).
//! * Bounded: at most [`CAPACITY`] entries; the least recently used goes first. Thread-safe (one
//!   mutex held only for a map operation).
//! * Two tiers: this process's map, then the disk ([`crate::cudnn::heur_disk`]: a graph listed by
//!   any earlier process on this machine, same dnnplan, cuDNN build, driver and device). A disk
//!   hit is copied into the map. A query's answer is stored in both.
//! * A config listed from either tier whose replay fails ([`materialize`]) drops the entry from
//!   both tiers (the next listing asks the backend again) and is a decline, so the build walk
//!   moves on to the next config: a stale or wrong entry can cost a config, never a failed build.
//! * `DNNPLAN_CUDNN_HEUR_CACHE=0` (or `off`, `false`) bypasses both tiers: every query asks the
//!   backend and nothing is stored. Read at every query, so it can be changed at run time.
//!   `DNNPLAN_CUDNN_HEUR_DISK_CACHE` places or turns off the disk tier alone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::cudnn::descriptor::Descriptor;
use crate::cudnn::emit::OperationGraph;
use crate::cudnn::graph::BackendGraph;
use crate::cudnn::heur_disk::{self, DiskTier};
use crate::cudnn::plan::{self, HeurMode};
use crate::error::{Error, Result};

/// The environment variable that disables the cache (`0`, `off` or `false`).
pub const HEUR_CACHE_ENV: &str = "DNNPLAN_CUDNN_HEUR_CACHE";

/// Most `(graph, device, version, mode)` entries kept.
pub const CAPACITY: usize = 1024;

/// Whether the cache is in use (not disabled by [`HEUR_CACHE_ENV`]).
pub fn enabled() -> bool {
    match std::env::var(HEUR_CACHE_ENV) {
        Ok(v) => !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "off" | "false"
        ),
        Err(_) => true,
    }
}

/// The device part of a key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceKey {
    /// CUDA ordinal.
    pub ordinal: i32,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: i32,
}

/// Everything but the mode: one lowered graph on one device with one cuDNN.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GraphTarget {
    /// [`graph_key`] of the lowered graph.
    pub graph: [u8; 32],
    /// The device the heuristics run for.
    pub device: DeviceKey,
    /// `cudnnGetVersion()` of the loaded library.
    pub cudnn_version: usize,
}

/// A cache key: a [`GraphTarget`] and a heuristic mode.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HeurKey {
    /// Graph, device and library.
    pub target: GraphTarget,
    /// The heuristic mode (never OPENSOURCE: it is not sent to the backend).
    pub mode: HeurMode,
}

/// One config as the backend returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedConfig {
    /// Backend engine global index.
    pub engine_id: i64,
    /// Raw backend knobs `(cudnnBackendKnobType_t, value)`, sorted by type.
    pub knobs: Vec<(u32, i64)>,
}

/// The key of a lowered backend graph: blake3 over its complete description (tensors in uid
/// order, ops in order, frontend workspace; floats in their shortest exact form).
pub fn graph_key(g: &BackendGraph) -> [u8; 32] {
    *blake3::hash(format!("{g:?}").as_bytes()).as_bytes()
}

struct Cache {
    map: HashMap<HeurKey, (Arc<[CachedConfig]>, u64)>,
    tick: u64,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| {
        Mutex::new(Cache {
            map: HashMap::new(),
            tick: 0,
        })
    })
}

fn locked() -> Result<std::sync::MutexGuard<'static, Cache>> {
    cache()
        .lock()
        .map_err(|_| Error::Internal("cuDNN heuristics cache poisoned".into()))
}

static HITS: AtomicU64 = AtomicU64::new(0);
static MISSES: AtomicU64 = AtomicU64::new(0);
static DISK_HITS: AtomicU64 = AtomicU64::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Counts since the process started (or [`clear`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from this process's map.
    pub hits: u64,
    /// Lookups the map could not answer (then the disk tier, then the backend).
    pub misses: u64,
    /// Misses of the map answered by the disk tier (no backend query).
    pub disk_hits: u64,
    /// Entries dropped because a config listed from them failed to replay.
    pub dropped: u64,
    /// Entries held in the map now.
    pub entries: usize,
}

/// The current [`CacheStats`].
pub fn stats() -> CacheStats {
    CacheStats {
        hits: HITS.load(Ordering::Relaxed),
        misses: MISSES.load(Ordering::Relaxed),
        disk_hits: DISK_HITS.load(Ordering::Relaxed),
        dropped: DROPPED.load(Ordering::Relaxed),
        entries: locked().map(|c| c.map.len()).unwrap_or(0),
    }
}

/// Empties this process's map and zeroes the statistics (the disk tier is kept: afterwards the
/// process lists like a fresh one on a machine that has seen its graphs).
pub fn clear() {
    if let Ok(mut c) = locked() {
        c.map.clear();
    }
    for n in [&HITS, &MISSES, &DISK_HITS, &DROPPED] {
        n.store(0, Ordering::Relaxed);
    }
}

/// Removes `key` from this process's map.
pub fn remove(key: &HeurKey) {
    if let Ok(mut c) = locked() {
        c.map.remove(key);
    }
}

/// The cached answer for `key`, marking it recently used.
pub fn lookup(key: &HeurKey) -> Option<Arc<[CachedConfig]>> {
    let mut c = locked().ok()?;
    c.tick += 1;
    let tick = c.tick;
    let (v, used) = c.map.get_mut(key)?;
    *used = tick;
    Some(v.clone())
}

/// Stores `configs` for `key` (evicting the least recently used entry when full).
pub fn insert(key: HeurKey, configs: Arc<[CachedConfig]>) {
    let Ok(mut c) = locked() else { return };
    c.tick += 1;
    let tick = c.tick;
    if !c.map.contains_key(&key) && c.map.len() >= CAPACITY {
        let oldest = c
            .map
            .iter()
            .min_by_key(|(_, (_, used))| *used)
            .map(|(k, _)| k.clone());
        if let Some(k) = oldest {
            c.map.remove(&k);
        }
    }
    c.map.insert(key, (configs, tick));
}

/// Where a config listed without an ENGINECFG of its own came from (a cache tier, or a query on
/// another operation graph of the same graph): the entry to drop if its replay fails.
#[derive(Debug)]
pub struct CacheOrigin {
    /// The entry's key (`None`: the cache is off, nothing to drop).
    pub key: Option<HeurKey>,
    /// The disk tier in use when it was listed.
    pub disk: Option<DiskTier>,
}

impl CacheOrigin {
    /// Drops the entry from both tiers.
    fn drop_entry(&self) {
        if let Some(key) = &self.key {
            remove(key);
            if let Some(d) = &self.disk {
                d.forget(&key.target.graph, key.mode);
            }
        }
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

/// One config a session listed: made by a heuristics query (its ENGINECFG is there) or listed
/// from the cache (the ENGINECFG is made by replay when needed).
#[derive(Debug)]
pub struct ListedConfig {
    /// Backend engine global index.
    pub engine_id: i64,
    /// Raw backend knobs, sorted by type.
    pub knobs: Vec<(u32, i64)>,
    /// The mode that listed it.
    pub mode: HeurMode,
    /// The finalized ENGINECFG, once made.
    pub config: Option<Descriptor>,
    /// Set when it was listed without its own ENGINECFG (from a cache tier, or queried on
    /// another operation graph): replayed when built, and dropped from the cache if that fails.
    /// `None`: queried on this operation graph, or replayed by request.
    pub origin: Option<Arc<CacheOrigin>>,
}

impl ListedConfig {
    /// A config made outside a heuristics query (replay by `(engine_id, knobs)`).
    pub fn replayed(
        engine_id: i64,
        knobs: Vec<(u32, i64)>,
        mode: HeurMode,
        config: Descriptor,
    ) -> ListedConfig {
        ListedConfig {
            engine_id,
            knobs,
            mode,
            config: Some(config),
            origin: None,
        }
    }

    /// The plan name (`engN_kX=Y...`).
    pub fn name(&self) -> String {
        plan::plan_name(self.engine_id, &self.knobs)
    }
}

/// Where a mode's list came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The backend's heuristics (and stored, when the cache is on).
    Queried,
    /// This process's map (no backend call).
    Cached,
    /// The disk tier (no backend call; now in the map too).
    Disk,
}

/// The operation graph's `ENGINE_GLOBAL_COUNT` (0 when unreadable: no disk entry validates).
fn engine_count_of(opg: &OperationGraph) -> i64 {
    opg.desc
        .get_i64(crate::cudnn::consts::CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT)
        .unwrap_or(0)
}

/// The configs of `mode` for `opg`: from this process's map, else the disk tier
/// ([`heur_disk::tier_for`]), else the backend (see [`list_mode_with`]).
pub fn list_mode(
    opg: &OperationGraph,
    target: Option<&GraphTarget>,
    mode: HeurMode,
) -> Result<(Vec<ListedConfig>, Source)> {
    let disk = match (target, enabled()) {
        (Some(t), true) => heur_disk::tier_for(t),
        _ => None,
    };
    list_mode_with(opg, target, mode, disk.as_ref())
}

/// The cache key of `mode` for `target`, when the cache is on and the mode goes to the backend.
pub fn key_for(target: Option<&GraphTarget>, mode: HeurMode) -> Option<HeurKey> {
    match (target, plan::backend_mode(mode), enabled()) {
        (Some(t), Some(_), true) => Some(HeurKey {
            target: t.clone(),
            mode,
        }),
        _ => None,
    }
}

/// `configs` listed without ENGINECFGs (replayed when built), dropped from `key` if that fails.
pub fn listed_without_configs(
    configs: &[CachedConfig],
    mode: HeurMode,
    key: Option<HeurKey>,
    disk: Option<&DiskTier>,
) -> Vec<ListedConfig> {
    let origin = Arc::new(CacheOrigin {
        key,
        disk: disk.cloned(),
    });
    configs
        .iter()
        .map(|c| ListedConfig {
            engine_id: c.engine_id,
            knobs: c.knobs.clone(),
            mode,
            config: None,
            origin: Some(origin.clone()),
        })
        .collect()
}

/// The configs of `mode` for `opg` from the map or else `disk` (then copied into the map), with
/// no heuristics query; `None` when neither holds them (or the cache is off).
pub fn lookup_mode(
    opg: &OperationGraph,
    target: Option<&GraphTarget>,
    mode: HeurMode,
    disk: Option<&DiskTier>,
) -> Option<(Vec<ListedConfig>, Source)> {
    let k = key_for(target, mode)?;
    if let Some(hit) = lookup(&k) {
        HITS.fetch_add(1, Ordering::Relaxed);
        return Some((
            listed_without_configs(&hit, mode, Some(k), disk),
            Source::Cached,
        ));
    }
    MISSES.fetch_add(1, Ordering::Relaxed);
    let found = disk?.load(&k.target.graph, mode, engine_count_of(opg))?;
    DISK_HITS.fetch_add(1, Ordering::Relaxed);
    let list = listed_without_configs(&found, mode, Some(k.clone()), disk);
    insert(k, found.into());
    Some((list, Source::Disk))
}

/// Stores the backend's answer for `mode` in the map and `disk` (when the cache is on and the
/// answer is non-empty).
pub fn store_mode(
    opg: &OperationGraph,
    target: Option<&GraphTarget>,
    mode: HeurMode,
    configs: Arc<[CachedConfig]>,
    disk: Option<&DiskTier>,
) {
    let Some(k) = key_for(target, mode).filter(|_| !configs.is_empty()) else {
        return;
    };
    if let Some(d) = disk {
        d.save(&k.target.graph, mode, &configs, engine_count_of(opg));
    }
    insert(k, configs);
}

/// The configs of `mode` for `opg` with an explicit disk tier: [`lookup_mode`], else the
/// backend (then [`store_mode`]).
pub fn list_mode_with(
    opg: &OperationGraph,
    target: Option<&GraphTarget>,
    mode: HeurMode,
    disk: Option<&DiskTier>,
) -> Result<(Vec<ListedConfig>, Source)> {
    if let Some(found) = lookup_mode(opg, target, mode, disk) {
        return Ok(found);
    }
    query_and_store(opg, target, mode, disk)
}

/// Asks the backend for `mode` on `opg` and stores the answer ([`store_mode`]); the configs keep
/// their ENGINECFGs.
pub fn query_and_store(
    opg: &OperationGraph,
    target: Option<&GraphTarget>,
    mode: HeurMode,
    disk: Option<&DiskTier>,
) -> Result<(Vec<ListedConfig>, Source)> {
    let queried = plan::query_mode(opg, mode)?;
    let value: Arc<[CachedConfig]> = queried
        .iter()
        .map(|e| CachedConfig {
            engine_id: e.engine_id,
            knobs: e.knobs.clone(),
        })
        .collect();
    store_mode(opg, target, mode, value, disk);
    let list = queried
        .into_iter()
        .map(|e| ListedConfig {
            engine_id: e.engine_id,
            knobs: e.knobs,
            mode: e.mode,
            config: Some(e.config),
            origin: None,
        })
        .collect();
    Ok((list, Source::Queried))
}

/// The ENGINECFG of a listed config, made by replay first if it came from the cache.
/// `engine_count` is the graph's `ENGINE_GLOBAL_COUNT` when known (saves a backend call).
/// A config from the cache that fails to replay drops its entry from both tiers and is a
/// decline (whatever the backend said), so the build walk moves on.
pub fn materialize<'c>(
    opg: &OperationGraph,
    listed: &'c mut ListedConfig,
    engine_count: Option<i64>,
) -> Result<&'c Descriptor> {
    if listed.config.is_none() {
        match plan::engine_config_in(opg, listed.engine_id, &listed.knobs, engine_count) {
            Ok(config) => listed.config = Some(config),
            Err(e) => {
                let Some(origin) = &listed.origin else {
                    return Err(e);
                };
                origin.drop_entry();
                return Err(crate::dispatch::backend::backend_decline(format!(
                    "the cached config {} of mode {} did not replay ({e}); its heuristics \
                     cache entry is dropped",
                    listed.name(),
                    listed.mode.name()
                )));
            }
        }
    }
    listed
        .config
        .as_ref()
        .ok_or_else(|| Error::Internal("ENGINECFG vanished".into()))
}
