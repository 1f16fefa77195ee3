//! The disk tier of the heuristics cache: a graph's engine configs listed by any earlier process on
//! this machine are listed again with no backend query.
//!
//! Contract:
//! * Storage is the compiled-plan cache's machinery ([`crate::cuda::cache`]: root resolution,
//!   layout, atomic tmp+rename publishing with `entry.json` last, validation, pruning, counters),
//!   configured with [`CUDNN_HEURISTICS`] (`DNNPLAN_CUDNN_HEUR_DISK_CACHE`: root directory or
//!   `0`/`off`/`false`/`none`; `DNNPLAN_CUDNN_HEUR_DISK_CACHE_MAX_BYTES`). The configuration is
//!   read at every use, so it can change at run time; `DNNPLAN_CUDNN_HEUR_CACHE=0` bypasses this
//!   tier too (the caller never asks it).
//! * Environment ([`FIELDS`], one directory per environment): dnnplan's version and this tier's
//!   [`FORMAT`], the cuDNN version and build (the loaded `libcudnn`'s file size and modification
//!   time), the CUDA driver version, the device's name, compute capability and SM count. A field
//!   that cannot be read makes the environment incomplete and the tier is not used ([`tier_for`]
//!   answers `None`).
//! * Entry key: the lowered graph's key ([`crate::cudnn::heur_cache::graph_key`]) and the mode.
//! * Object: JSON
//!   `{"format", "engine_count", "configs": [[engine_id, [[knob type, value]...]]...]}`.
//!   A read is trusted only if it parses, names this format, is non-empty, its `engine_count`
//!   equals the operation graph's `ENGINE_GLOBAL_COUNT`, every engine id is below it and every
//!   knob type is a backend knob type, in increasing order; anything else counts `invalid`, is
//!   removed and is a miss (the caller queries and rewrites it).
//! * A config from this tier whose replay fails is dropped by the caller ([`DiskTier::forget`]).
//! * Nothing here fails a listing: I/O trouble is counted and is a miss or a skipped write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use crate::cuda::cache::config::CUDNN_HEURISTICS;
use crate::cuda::cache::{CacheConfig, CacheKey, CacheStats, CompiledCache, EnvIdentity};
use crate::cudnn::consts::CUDNN_KNOB_TYPE_COUNTS;
use crate::cudnn::heur_cache::{CachedConfig, DeviceKey, GraphTarget};
use crate::cudnn::plan::HeurMode;

#[cfg(test)]
#[path = "heur_disk_tests.rs"]
mod tests;

/// This tier's object format; bump on any change of the object's meaning.
pub const FORMAT: &str = "1";

/// The environment fields, sorted.
pub const FIELDS: [&str; 8] = [
    "compute_capability",
    "cuda_driver",
    "cudnn_build",
    "cudnn_version",
    "device_name",
    "format",
    "library_version",
    "sm_count",
];

/// The tier's configuration from the process environment.
pub fn config() -> CacheConfig {
    CacheConfig::for_spec(&CUDNN_HEURISTICS, |name| std::env::var(name).ok())
}

/// The process's store for the current configuration (replaced when the configuration changes;
/// its counters start again then). `None` when the tier is disabled.
fn store() -> Option<Arc<CompiledCache>> {
    static STORE: OnceLock<Mutex<Option<Arc<CompiledCache>>>> = OnceLock::new();
    let config = config();
    if !config.enabled {
        return None;
    }
    let mut held = STORE
        .get_or_init(|| Mutex::new(None))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    match held.as_ref() {
        Some(c) if *c.config() == config => Some(c.clone()),
        _ => {
            let c = Arc::new(CompiledCache::new(config));
            *held = Some(c.clone());
            Some(c)
        }
    }
}

/// The counters of the process's store (zero when the tier is disabled).
pub fn stats() -> CacheStats {
    store().map(|c| c.stats()).unwrap_or_default()
}

/// The loaded `libcudnn`'s file identity (`<bytes>-<mtime seconds>`), from its mapping in this
/// process; `None` when it cannot be found.
fn cudnn_build() -> Option<String> {
    static BUILD: OnceLock<Option<String>> = OnceLock::new();
    BUILD
        .get_or_init(|| {
            use std::os::unix::fs::MetadataExt;
            let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
            let path = maps
                .lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .find(|p| {
                    p.rsplit('/')
                        .next()
                        .is_some_and(|f| f.starts_with("libcudnn.so"))
                })?;
            let meta = std::fs::metadata(path).ok()?;
            Some(format!("{}-{}", meta.len(), meta.mtime()))
        })
        .clone()
}

/// The environment identity from explicit values (`None` = unreadable).
pub fn identity_of(
    device: &DeviceKey,
    device_name: Option<String>,
    cuda_driver: Option<i32>,
    cudnn_version: usize,
    cudnn_build: Option<String>,
) -> EnvIdentity {
    let (major, minor) = device.compute_capability;
    EnvIdentity::with_fields(
        &FIELDS,
        [
            ("library_version", Some(crate::version::VERSION.to_owned())),
            ("format", Some(FORMAT.to_owned())),
            ("cudnn_version", Some(cudnn_version.to_string())),
            ("cudnn_build", cudnn_build),
            ("cuda_driver", cuda_driver.map(|v| v.to_string())),
            ("device_name", device_name),
            ("compute_capability", Some(format!("{major}.{minor}"))),
            ("sm_count", Some(device.sm_count.to_string())),
        ],
    )
}

/// This process's identity for `target` (probed once per device and cuDNN version).
fn identity_for(target: &GraphTarget) -> EnvIdentity {
    type Memo = Mutex<HashMap<(DeviceKey, usize), EnvIdentity>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    let id = (target.device.clone(), target.cudnn_version);
    if let Some(found) = memo.lock().ok().and_then(|m| m.get(&id).cloned()) {
        return found;
    }
    let driver = crate::cuda::probe::driver().ok();
    let name = driver.and_then(|d| {
        d.devices
            .iter()
            .find(|x| x.ordinal == target.device.ordinal)
            .map(|x| x.name.clone())
    });
    let identity = identity_of(
        &target.device,
        name,
        driver.map(|d| d.driver_version),
        target.cudnn_version,
        cudnn_build(),
    );
    if let Ok(mut m) = memo.lock() {
        m.insert(id, identity.clone());
    }
    identity
}

/// This process's identity for device `ordinal` with the loaded cuDNN (what `dnnplan env`
/// shows); `None` without a driver, that device or cuDNN.
pub fn machine_identity(ordinal: i32) -> Option<EnvIdentity> {
    let dev = crate::cuda::probe::driver()
        .ok()?
        .devices
        .iter()
        .find(|d| d.ordinal == ordinal)?;
    let version = crate::cudnn::loader::version().ok()?;
    Some(identity_for(&GraphTarget {
        graph: [0; 32],
        device: DeviceKey {
            ordinal,
            compute_capability: dev.compute_capability,
            sm_count: dev.sm_count,
        },
        cudnn_version: version,
    }))
}

/// The entry key of one lowered graph and mode.
pub fn entry_key(graph: &[u8; 32], mode: HeurMode) -> CacheKey {
    let hex: String = graph.iter().map(|b| format!("{b:02x}")).collect();
    CacheKey::new([("graph", hex.as_str()), ("mode", mode.name())])
}

/// The stored object of a mode's configs.
pub fn encode(configs: &[CachedConfig], engine_count: i64) -> Vec<u8> {
    let list: Vec<Value> = configs
        .iter()
        .map(|c| json!([c.engine_id, c.knobs]))
        .collect();
    serde_json::to_vec(&json!({
        "format": FORMAT,
        "engine_count": engine_count,
        "configs": list,
    }))
    .unwrap_or_default()
}

/// The configs in a stored object, if it is valid for a graph with `engine_count` engines (see
/// the module doc).
pub fn decode(bytes: &[u8], engine_count: i64) -> Option<Vec<CachedConfig>> {
    let record: Value = serde_json::from_slice(bytes).ok()?;
    if record.get("format")?.as_str()? != FORMAT
        || record.get("engine_count")?.as_i64()? != engine_count
    {
        return None;
    }
    let configs = record
        .get("configs")?
        .as_array()?
        .iter()
        .map(|c| {
            let [id, knobs] = c.as_array()?.as_slice() else {
                return None;
            };
            let engine_id = id.as_i64().filter(|e| (0..engine_count).contains(e))?;
            let knobs = knobs
                .as_array()?
                .iter()
                .map(|k| {
                    let [ty, value] = k.as_array()?.as_slice() else {
                        return None;
                    };
                    let ty = ty.as_u64().filter(|t| *t < CUDNN_KNOB_TYPE_COUNTS as u64)?;
                    Some((ty as u32, value.as_i64()?))
                })
                .collect::<Option<Vec<(u32, i64)>>>()?;
            if knobs.windows(2).any(|w| w[0].0 >= w[1].0) {
                return None;
            }
            Some(CachedConfig { engine_id, knobs })
        })
        .collect::<Option<Vec<_>>>()?;
    (!configs.is_empty()).then_some(configs)
}

/// One environment of the disk tier: a store and this process's identity in it.
#[derive(Clone, Debug)]
pub struct DiskTier {
    cache: Arc<CompiledCache>,
    identity: EnvIdentity,
}

/// The tier for `target` in this process, or `None` when it is disabled or the environment
/// cannot identify itself.
pub fn tier_for(target: &GraphTarget) -> Option<DiskTier> {
    let cache = store()?;
    let identity = identity_for(target);
    if !identity.is_complete() {
        cache.note_bypass();
        return None;
    }
    Some(DiskTier { cache, identity })
}

impl DiskTier {
    /// A tier over `cache` with an explicit identity (tests, tools); `None` when the identity is
    /// incomplete.
    pub fn new(cache: Arc<CompiledCache>, identity: EnvIdentity) -> Option<DiskTier> {
        identity
            .is_complete()
            .then_some(DiskTier { cache, identity })
    }

    /// The store's counters.
    pub fn stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// The stored configs of `graph` in `mode`, validated against `engine_count`; an entry that
    /// fails validation is removed and is a miss.
    pub fn load(
        &self,
        graph: &[u8; 32],
        mode: HeurMode,
        engine_count: i64,
    ) -> Option<Vec<CachedConfig>> {
        let key = entry_key(graph, mode);
        let invalid = self.cache.stats().invalid;
        let Some(bytes) = self.cache.lookup(&self.identity, &key) else {
            self.cache.note_miss();
            if self.cache.stats().invalid > invalid {
                // A record or object the store rejected: removed, so no orphan stays behind.
                self.cache.remove(&self.identity, &key);
            }
            return None;
        };
        match decode(&bytes, engine_count) {
            Some(configs) => Some(configs),
            None => {
                self.cache.note_invalid();
                self.cache.remove(&self.identity, &key);
                None
            }
        }
    }

    /// Stores the configs of `graph` in `mode` (an empty list is not stored); true when written.
    pub fn save(
        &self,
        graph: &[u8; 32],
        mode: HeurMode,
        configs: &[CachedConfig],
        engine_count: i64,
    ) -> bool {
        !configs.is_empty()
            && self.cache.store(
                &self.identity,
                &entry_key(graph, mode),
                &encode(configs, engine_count),
            )
    }

    /// Removes the entry of `graph` in `mode` (a config from it failed to replay).
    pub fn forget(&self, graph: &[u8; 32], mode: HeurMode) {
        self.cache.remove(&self.identity, &entry_key(graph, mode));
    }
}
