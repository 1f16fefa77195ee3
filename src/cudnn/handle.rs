//! A per-process cache of cuDNN handles keyed by (device ordinal, stream): the handle carries the
//! stream (`cudnnSetStream` once, at creation), so executing never touches ambient state.
//!
//! Handles are created in the calling thread's current CUDA context (which must be the device's
//! primary context, as the runtime and cudarc use) and live for the process: they are never
//! destroyed, because destroying at exit can race the CUDA driver's own teardown. A thread-local
//! one-entry cache makes the common repeat lookup lock-free.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::cudnn::api::{RawHandle, RawStream};
use crate::cudnn::loader;
use crate::error::{Error, Result};

type Key = (i32, usize);

fn cache() -> &'static Mutex<HashMap<Key, usize>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, usize>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

thread_local! {
    static LAST: Cell<Option<(Key, usize)>> = const { Cell::new(None) };
}

/// The cached cuDNN handle for `(device, stream)`, created on first use (`cudnnCreate` in the
/// current context, then `cudnnSetStream(stream)`). The stream is only handed to cuDNN (never
/// dereferenced here); it must belong to the current context.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn handle_for(device: i32, stream: RawStream) -> Result<RawHandle> {
    let key = (device, stream as usize);
    if let Some((_, h)) = LAST.with(Cell::get).filter(|(k, _)| *k == key) {
        return Ok(h as RawHandle);
    }
    let api = loader::api()?;
    let mut map = cache()
        .lock()
        .map_err(|_| Error::Internal("cuDNN handle cache poisoned".into()))?;
    let h = match map.get(&key) {
        Some(h) => *h,
        None => {
            let mut h: RawHandle = std::ptr::null_mut();
            // SAFETY: writes one handle.
            api.check("cudnnCreate", unsafe { (api.create)(&mut h) })?;
            // SAFETY: live handle; the stream belongs to the current context (caller contract).
            if let Err(e) = api.check("cudnnSetStream", unsafe { (api.set_stream)(h, stream) }) {
                // SAFETY: destroying the handle we just created.
                let _ = unsafe { (api.destroy)(h) };
                return Err(e);
            }
            map.insert(key, h as usize);
            h as usize
        }
    };
    LAST.with(|c| c.set(Some((key, h))));
    Ok(h as RawHandle)
}

/// The cached handle for `(device, stream)` if one exists (no creation, no driver call).
pub fn cached(device: i32, stream: RawStream) -> Option<RawHandle> {
    let key = (device, stream as usize);
    if let Some((_, h)) = LAST.with(Cell::get).filter(|(k, _)| *k == key) {
        return Some(h as RawHandle);
    }
    let h = *cache().lock().ok()?.get(&key)?;
    LAST.with(|c| c.set(Some((key, h))));
    Some(h as RawHandle)
}

/// Number of cached handles (diagnostics).
pub fn cached_handles() -> usize {
    cache().lock().map(|m| m.len()).unwrap_or(0)
}

/// A cuDNN handle of the side pool, for work that must not share a handle with another thread
/// (concurrent heuristics queries, `crate::cudnn::heur_modes`); it goes back to the pool on
/// drop. Side handles have no stream set (they never execute) and, like every handle here, live
/// for the process.
#[derive(Debug)]
pub struct SideHandle {
    device: i32,
    raw: usize,
}

impl SideHandle {
    /// The raw handle.
    pub fn raw(&self) -> RawHandle {
        self.raw as RawHandle
    }
}

impl Drop for SideHandle {
    fn drop(&mut self) {
        if let Ok(mut idle) = side_pool().lock() {
            idle.push((self.device, self.raw));
        }
    }
}

fn side_pool() -> &'static Mutex<Vec<(i32, usize)>> {
    static POOL: OnceLock<Mutex<Vec<(i32, usize)>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Vec::new()))
}

/// An idle side handle of `device`, or a new one (`cudnnCreate` in the current context, which
/// must be the device's primary context).
pub fn side_handle(device: i32) -> Result<SideHandle> {
    let idle = side_pool().lock().ok().and_then(|mut p| {
        p.iter()
            .position(|(d, _)| *d == device)
            .map(|i| p.swap_remove(i))
    });
    if let Some((device, raw)) = idle {
        return Ok(SideHandle { device, raw });
    }
    let api = loader::api()?;
    let mut h: RawHandle = std::ptr::null_mut();
    // SAFETY: writes one handle.
    api.check("cudnnCreate", unsafe { (api.create)(&mut h) })?;
    Ok(SideHandle {
        device,
        raw: h as usize,
    })
}
