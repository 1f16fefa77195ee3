//! Per-cache statistics counters (lock-free) and their snapshot.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// A snapshot of a cache's counters since creation (or the last reset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Lookups answered from disk.
    pub hits: u64,
    /// Lookups that found nothing usable, followed by a compile.
    pub misses: u64,
    /// Compiles that skipped the cache (disabled, or an environment that cannot identify itself).
    pub bypassed: u64,
    /// Entries found but rejected (unparsable or mismatched record, missing or corrupt object).
    pub invalid: u64,
    /// Whole environment directories removed by pruning.
    pub pruned: u64,
    /// Compiled objects that could not be written (the in-process object is used).
    pub export_failed: u64,
    /// Requests answered by the in-process memo (no disk access).
    pub memo_hits: u64,
}

/// The live counters behind [`CacheStats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub bypassed: AtomicU64,
    pub invalid: AtomicU64,
    pub pruned: AtomicU64,
    pub export_failed: AtomicU64,
    pub memo_hits: AtomicU64,
}

impl Counters {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> CacheStats {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CacheStats {
            hits: r(&self.hits),
            misses: r(&self.misses),
            bypassed: r(&self.bypassed),
            invalid: r(&self.invalid),
            pruned: r(&self.pruned),
            export_failed: r(&self.export_failed),
            memo_hits: r(&self.memo_hits),
        }
    }

    pub fn reset(&self) {
        for c in [
            &self.hits,
            &self.misses,
            &self.bypassed,
            &self.invalid,
            &self.pruned,
            &self.export_failed,
            &self.memo_hits,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }
}
