//! The persistent compiled-plan cache: NVRTC output paid once per machine, not once per process.
//!
//! Adapted from the dispatch spec, section 7. [`CompiledCache::get_or_compile`] answers, in order:
//! 1. the in-process memo (`memo_hits`);
//! 2. bypass (`bypassed`): the cache is disabled, or the [`EnvIdentity`] has an unknown field;
//! 3. a lock-free disk lookup of the entry (`hits`); an entry that fails validation counts
//!    `invalid` and is a miss;
//! 4. a miss (`misses`): compile, publish (object first, `entry.json` last, each atomically, see
//!    [`store`]), and return the object as re-read from disk (a hit and a miss run the same bytes).
//!    A failed write counts `export_failed` and returns the in-process object: the cache can make
//!    a compile slower, never fail it.
//! 5. after this cache's first write: prune once ([`prune`]), counting `pruned`.
//!
//! Concurrency: there is no lock. Two processes missing the same entry both compile and both
//! publish; objects are named by their digest, so each `entry.json` names a complete object and
//! readers never see a torn entry (duplicate work is the only cost).
//!
//! Location and switches: [`config`]. The process-wide instance is [`CompiledCache::global`];
//! its statistics are what `dnnp_compiled_cache_stats` and `dnnplan env` report.
//!
//! The same machinery (root resolution, layout, atomic publishing, validation, pruning, counters)
//! also stores the cuDNN heuristics cache's disk tier (`crate::cudnn::heur_disk`): a second
//! instance configured with [`config::CUDNN_HEURISTICS`] and its own identity fields, used
//! through [`CompiledCache::lookup`], [`CompiledCache::store`] and [`CompiledCache::remove`]
//! (the caller keeps its own in-process tier).

pub mod config;
pub mod identity;
pub mod key;
pub mod prune;
pub mod stats;
pub mod store;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub use config::{CacheConfig, CacheSpec};
pub use identity::EnvIdentity;
pub use key::CacheKey;
pub use stats::CacheStats;

use crate::error::Result;
use stats::Counters;
use store::Lookup;

/// The layout's schema directory name; bump on any incompatible layout change.
pub const SCHEMA: &str = "v1";

/// The in-process memo: (environment hash, entry hash) -> object.
type Memo = Mutex<HashMap<(String, String), Arc<[u8]>>>;

/// How [`CompiledCache::get_or_compile`] obtained an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// From this process's memo.
    Memo,
    /// From disk.
    Hit,
    /// Compiled and (if the write succeeded) published.
    Miss,
    /// Compiled without touching the disk.
    Bypassed,
}

/// A persistent cache rooted at one directory (compiled plans, or any [`config::CacheSpec`]).
#[derive(Debug)]
pub struct CompiledCache {
    config: CacheConfig,
    root: Mutex<PathBuf>,
    counters: Counters,
    wrote: AtomicBool,
    memo: Memo,
}

impl CompiledCache {
    /// A cache with this configuration (nothing is created on disk until the first write).
    pub fn new(config: CacheConfig) -> Self {
        CompiledCache {
            root: Mutex::new(config.root.clone()),
            config,
            counters: Counters::default(),
            wrote: AtomicBool::new(false),
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The process-wide cache, configured from the environment on first use.
    pub fn global() -> &'static CompiledCache {
        static GLOBAL: OnceLock<CompiledCache> = OnceLock::new();
        GLOBAL.get_or_init(|| CompiledCache::new(CacheConfig::from_env()))
    }

    /// The configuration.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// The root in use (the configured one, or the temp-dir fallback after it proved unwritable).
    pub fn dir(&self) -> PathBuf {
        self.root
            .lock()
            .map(|r| r.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// The counters since creation or the last [`CompiledCache::reset_stats`].
    pub fn stats(&self) -> CacheStats {
        self.counters.snapshot()
    }

    /// Zeroes the counters.
    pub fn reset_stats(&self) {
        self.counters.reset();
    }

    /// Forgets the in-process memo (the next request reads the disk again).
    pub fn clear_memo(&self) {
        if let Ok(mut m) = self.memo.lock() {
            m.clear();
        }
    }

    fn memo_get(&self, id: &(String, String)) -> Option<Arc<[u8]>> {
        self.memo.lock().ok()?.get(id).cloned()
    }

    fn memo_put(&self, id: (String, String), bytes: Arc<[u8]>) {
        if let Ok(mut m) = self.memo.lock() {
            m.insert(id, bytes);
        }
    }

    /// The object for `key` in environment `identity`: memo, disk, or `compile()` (see the module
    /// doc). Only `compile`'s own error is returned; cache trouble is counted, never raised.
    pub fn get_or_compile(
        &self,
        identity: &EnvIdentity,
        key: &CacheKey,
        compile: impl FnOnce() -> Result<Vec<u8>>,
    ) -> Result<(Arc<[u8]>, Outcome)> {
        let id = (identity.hash(), key.hash());
        if let Some(bytes) = self.memo_get(&id) {
            Counters::bump(&self.counters.memo_hits);
            return Ok((bytes, Outcome::Memo));
        }
        if !self.config.enabled || !identity.is_complete() {
            Counters::bump(&self.counters.bypassed);
            let bytes: Arc<[u8]> = compile()?.into();
            self.memo_put(id, bytes.clone());
            return Ok((bytes, Outcome::Bypassed));
        }
        match self.lookup(identity, key) {
            Some(bytes) => {
                let bytes: Arc<[u8]> = bytes.into();
                self.memo_put(id, bytes.clone());
                return Ok((bytes, Outcome::Hit));
            }
            None => Counters::bump(&self.counters.misses),
        }
        let compiled = compile()?;
        let bytes: Arc<[u8]> = self.publish(identity, key, &compiled).unwrap_or_else(|| {
            Counters::bump(&self.counters.export_failed);
            compiled.into()
        });
        self.memo_put(id, bytes.clone());
        Ok((bytes, Outcome::Miss))
    }

    /// A validated disk lookup (counts `hits` or `invalid`; `None` is a miss).
    pub fn lookup(&self, identity: &EnvIdentity, key: &CacheKey) -> Option<Vec<u8>> {
        match store::read_entry(&store::entry_dir(&self.dir(), identity, key), key) {
            Lookup::Hit(bytes) => {
                Counters::bump(&self.counters.hits);
                Some(bytes)
            }
            Lookup::Absent => None,
            Lookup::Invalid(_why) => {
                Counters::bump(&self.counters.invalid);
                None
            }
        }
    }

    /// Counts a lookup that found nothing usable (for callers that use [`CompiledCache::lookup`]
    /// and [`CompiledCache::store`] directly).
    pub fn note_miss(&self) {
        Counters::bump(&self.counters.misses);
    }

    /// Counts a request that skipped the disk.
    pub fn note_bypass(&self) {
        Counters::bump(&self.counters.bypassed);
    }

    /// Counts an entry that read back fine but whose object the caller rejected.
    pub fn note_invalid(&self) {
        Counters::bump(&self.counters.invalid);
    }

    /// Publishes `bytes` for `key` (pruning after this cache's first write); true when it was
    /// written and reads back. A failure counts `export_failed`; it is never an error.
    pub fn store(&self, identity: &EnvIdentity, key: &CacheKey, bytes: &[u8]) -> bool {
        let ok = self.publish(identity, key, bytes).is_some();
        if !ok {
            Counters::bump(&self.counters.export_failed);
        }
        ok
    }

    /// Removes the entry for `key` from disk (and the memo); true when nothing is left of it.
    pub fn remove(&self, identity: &EnvIdentity, key: &CacheKey) -> bool {
        if let Ok(mut m) = self.memo.lock() {
            m.remove(&(identity.hash(), key.hash()));
        }
        store::remove_entry(&self.dir(), identity, key).is_ok()
    }

    /// Publishes and re-reads; falls back to the temp-dir root once when the root is unwritable.
    /// `None` when the object could not be written or read back.
    fn publish(&self, identity: &EnvIdentity, key: &CacheKey, bytes: &[u8]) -> Option<Arc<[u8]>> {
        let mut root = self.dir();
        let ext = self.config.spec.object_ext;
        let dir = match store::publish(&root, identity, key, bytes, ext) {
            Ok(dir) => dir,
            Err(_) => {
                let fallback = config::fallback_root_for(self.config.spec);
                if fallback == root {
                    return None;
                }
                let dir = store::publish(&fallback, identity, key, bytes, ext).ok()?;
                if let Ok(mut r) = self.root.lock() {
                    r.clone_from(&fallback);
                }
                root = fallback;
                dir
            }
        };
        if !self.wrote.swap(true, Ordering::SeqCst) {
            let keep = store::env_dir(&root, identity);
            let removed = prune::prune(&root, self.config.max_bytes, &keep);
            for _ in &removed {
                Counters::bump(&self.counters.pruned);
            }
        }
        match store::read_entry(&dir, key) {
            Lookup::Hit(reloaded) => Some(reloaded.into()),
            _ => None,
        }
    }
}
