//! C API of the compiled-plan cache: its per-process statistics and its directory.
//!
//! The statistics struct is versioned by size: the caller sets `struct_size` to
//! `sizeof(dnnp_cache_stats_t)` as it knows it; dnnplan fills the fields that fit in that size and
//! leaves the rest untouched, so old callers keep working when fields are appended.

use std::ffi::c_char;
use std::mem::{offset_of, size_of};

use super::boundary::{boundary, out_ptr, write_opt, write_text};
use super::types::dnnp_status_t;
use crate::cuda::cache::{CacheStats, CompiledCache};
use crate::error::Error;

/// Per-process statistics of the compiled-plan cache (counts since process start or the last
/// `dnnp_compiled_cache_reset_stats`). Set `struct_size` before the call.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types)]
pub struct dnnp_cache_stats_t {
    /// In: `sizeof(dnnp_cache_stats_t)` as the caller was compiled with. Out: the bytes written.
    pub struct_size: usize,
    /// Lookups answered from disk.
    pub hits: u64,
    /// Lookups that found nothing usable, followed by a compile.
    pub misses: u64,
    /// Compiles that skipped the cache (disabled, or an environment that cannot identify itself).
    pub bypassed: u64,
    /// Entries found but rejected (bad record, mismatched key, missing or corrupt object).
    pub invalid: u64,
    /// Whole environment directories removed by pruning.
    pub pruned: u64,
    /// Compiled objects that could not be written to disk (the in-process object was used).
    pub export_failed: u64,
    /// Requests answered by the in-process memo.
    pub memo_hits: u64,
}

impl From<CacheStats> for dnnp_cache_stats_t {
    fn from(s: CacheStats) -> Self {
        dnnp_cache_stats_t {
            struct_size: size_of::<dnnp_cache_stats_t>(),
            hits: s.hits,
            misses: s.misses,
            bypassed: s.bypassed,
            invalid: s.invalid,
            pruned: s.pruned,
            export_failed: s.export_failed,
            memo_hits: s.memo_hits,
        }
    }
}

/// Smallest `struct_size` accepted: `struct_size` and `hits`.
const MIN_STATS_SIZE: usize = offset_of!(dnnp_cache_stats_t, hits) + size_of::<u64>();

/// Copies the compiled-plan cache statistics of this process into `*out`.
///
/// `out->struct_size` must be set by the caller (at least the size up to and including `hits`,
/// else `DNNP_STATUS_BAD_PARAM`); the fields that fit are written and `struct_size` is set to the
/// bytes written.
///
/// # Safety
/// `out` must be NULL or point to at least `out->struct_size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_compiled_cache_stats(out: *mut dnnp_cache_stats_t) -> dnnp_status_t {
    boundary(|| {
        let out = out_ptr(out, "out")?;
        // SAFETY: non-NULL; the caller guarantees the first field is readable.
        let given = unsafe { out.cast::<usize>().read_unaligned() };
        if given < MIN_STATS_SIZE {
            return Err(Error::bad_param(
                "out->struct_size",
                format!(
                    "is {given}, at least {MIN_STATS_SIZE} (sizeof(dnnp_cache_stats_t)) expected"
                ),
            ));
        }
        let mut stats = dnnp_cache_stats_t::from(CompiledCache::global().stats());
        let n = given.min(size_of::<dnnp_cache_stats_t>());
        stats.struct_size = n;
        // SAFETY: the caller guarantees `given >= n` writable bytes at `out`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&stats as *const dnnp_cache_stats_t).cast::<u8>(),
                out.cast::<u8>(),
                n,
            )
        };
        Ok(())
    })
}

/// Zeroes this process's compiled-plan cache statistics.
#[unsafe(no_mangle)]
pub extern "C" fn dnnp_compiled_cache_reset_stats() -> dnnp_status_t {
    boundary(|| {
        CompiledCache::global().reset_stats();
        Ok(())
    })
}

/// Copies the compiled-plan cache's root directory (from `DNNPLAN_COMPILED_CACHE`, else
/// `$XDG_CACHE_HOME/dnnplan/compiled_plans`, else `~/.cache/dnnplan/compiled_plans`) into `buf`
/// as a NUL-terminated string, with the two-call protocol: `*needed` (when not NULL) receives the
/// size including the NUL; a NULL or too small `buf` gives `DNNP_STATUS_BUFFER_TOO_SMALL`.
/// `*enabled` (when not NULL) receives 0 when `DNNPLAN_DISABLE_COMPILED_CACHE` turns it off, else 1.
///
/// # Safety
/// `buf` must be NULL or valid for `cap` bytes; `needed` and `enabled` NULL or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_compiled_cache_dir(
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
    enabled: *mut i32,
) -> dnnp_status_t {
    boundary(|| {
        let cache = CompiledCache::global();
        let dir = cache.dir();
        let text = dir
            .to_str()
            .ok_or_else(|| Error::bad_param("compiled cache directory", "is not valid UTF-8"))?;
        // SAFETY: per the caller's contract.
        unsafe { write_text(text, buf, cap, needed, "buf") }?;
        // SAFETY: NULL or valid for one write per the caller's contract.
        unsafe { write_opt(enabled, i32::from(cache.config().enabled)) };
        Ok(())
    })
}
