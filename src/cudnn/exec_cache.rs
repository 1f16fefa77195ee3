//! Per-thread execution state of backend plans: the finalized VARIANT_PACK descriptor of
//! [`ExecPath::ReusePack`](super::exec_path::ExecPath) and the CUDA graph of
//! [`ExecPath::CudaGraph`](super::exec_path::ExecPath), each keyed by the plan's process-unique
//! id.
//!
//! Invariants: an entry belongs to the thread that made it (thread-local storage), so two threads
//! executing one plan never share a descriptor or a graph; an entry remembers the pointers it was
//! made for and is used as is only for the same pointers and workspace, otherwise it is
//! re-pointed first. A thread keeps up to [`PACKS_PER_PLAN`] variant packs per plan, one per
//! pointer set, so callers that cycle through a few buffer sets (double buffering, ping-pong
//! activations) find a finalized descriptor for each; past that, the plan's least recently used
//! pack is re-pointed. Each thread keeps at most [`CAPACITY`] entries of each kind; entries of
//! dropped plans are pruned when a new entry is made, and the oldest goes when full.
//!
//! Re-pointing a finalized variant pack (set DATA_POINTERS and WORKSPACE again, finalize again)
//! is tried once per process; if the backend refuses it, every later change of pointers builds a
//! fresh descriptor instead (still saving the descriptor work whenever pointers repeat).

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::Weak;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::cuda::graph::CudaGraph;
use crate::cudnn::api::{CudaGraphCall, RawHandle, RawStream};
use crate::cudnn::backend::AttrValue;
use crate::cudnn::consts::*;
use crate::cudnn::descriptor::Descriptor;
use crate::cudnn::plan::BackendPlan;
use crate::error::{Error, Result};

/// Entries of each kind a thread keeps.
pub const CAPACITY: usize = 32;

/// Variant packs (distinct pointer sets) a thread keeps per plan.
pub const PACKS_PER_PLAN: usize = 4;

const UNKNOWN: u8 = 0;
const SUPPORTED: u8 = 1;
const REFUSED: u8 = 2;
const DISABLED: u8 = 3;

/// Whether this process's cuDNN accepts new pointers on a finalized variant pack.
static REPOINT: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Whether re-pointing a finalized variant pack works here: `None` until first tried.
pub fn repoint_supported() -> Option<bool> {
    match REPOINT.load(Ordering::Relaxed) {
        SUPPORTED => Some(true),
        REFUSED => Some(false),
        _ => None,
    }
}

/// Benchmarks and tests: `false` stops re-pointing (a change of pointers then builds a fresh
/// descriptor), `true` allows it again (probed anew on next use).
#[doc(hidden)]
pub fn force_repoint(allow: bool) {
    REPOINT.store(if allow { UNKNOWN } else { DISABLED }, Ordering::Relaxed);
}

/// A plan's variant pack as one thread last used it.
struct PackState {
    user: Vec<*mut c_void>,
    workspace: *mut c_void,
    desc: Descriptor,
}

impl PackState {
    fn fresh(plan: &BackendPlan, pointers: &[*mut c_void], workspace: *mut c_void) -> Result<Self> {
        Ok(PackState {
            desc: plan.variant_pack(pointers, workspace)?,
            user: pointers.to_vec(),
            workspace,
        })
    }

    fn matches(&self, pointers: &[*mut c_void], workspace: *mut c_void) -> bool {
        self.workspace == workspace && self.user.as_slice() == pointers
    }

    /// Makes the descriptor address `pointers` (re-set in place when the backend allows it,
    /// else a fresh descriptor).
    fn repoint(
        &mut self,
        plan: &BackendPlan,
        pointers: &[*mut c_void],
        workspace: *mut c_void,
    ) -> Result<()> {
        if !matches!(REPOINT.load(Ordering::Relaxed), REFUSED | DISABLED) {
            let (all, plan_ws) = plan.pack_pointers(pointers, workspace)?;
            let reset = self
                .desc
                .set(
                    CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                    AttrValue::Pointers(all),
                )
                .and_then(|d| {
                    d.set(
                        CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                        AttrValue::Pointers(vec![plan_ws]),
                    )
                })
                .and_then(|d| d.finalize());
            match reset {
                Ok(()) => {
                    REPOINT.store(SUPPORTED, Ordering::Relaxed);
                    self.user.clear();
                    self.user.extend_from_slice(pointers);
                    self.workspace = workspace;
                    return Ok(());
                }
                Err(Error::Cudnn { .. }) if REPOINT.load(Ordering::Relaxed) == UNKNOWN => {
                    // The backend refuses attributes on a finalized variant pack: remember it,
                    // clear its error record, and rebuild below (the descriptor's state is
                    // unknown now).
                    REPOINT.store(REFUSED, Ordering::Relaxed);
                    if let Some(api) = plan.api_real() {
                        let _ = api.last_error();
                    }
                }
                Err(e) => return Err(e),
            }
        }
        *self = PackState::fresh(plan, pointers, workspace)?;
        Ok(())
    }
}

struct PackEntry {
    plan: u64,
    alive: Weak<()>,
    state: PackState,
    /// The thread's call counter when this entry was last used (least recently used goes).
    used: u64,
}

/// A thread's variant packs and its call counter.
struct PackCache {
    list: Vec<PackEntry>,
    tick: u64,
}

struct GraphEntry {
    plan: u64,
    alive: Weak<()>,
    pack: PackState,
    graph: CudaGraph,
}

thread_local! {
    static PACKS: RefCell<PackCache> = const {
        RefCell::new(PackCache {
            list: Vec::new(),
            tick: 0,
        })
    };
    static GRAPHS: RefCell<Vec<GraphEntry>> = const { RefCell::new(Vec::new()) };
}

/// Prunes entries of dropped plans, then the oldest while full.
fn make_room<T>(list: &mut Vec<T>, alive: impl Fn(&T) -> bool) {
    list.retain(alive);
    while list.len() >= CAPACITY {
        list.remove(0);
    }
}

/// Runs `f` with this thread's variant pack of `plan` for these pointers: the pack made for
/// exactly these pointers if the thread has one, else a new pack while the plan has fewer than
/// [`PACKS_PER_PLAN`], else the plan's least recently used pack, re-pointed.
pub fn with_pack<R>(
    plan: &BackendPlan,
    pointers: &[*mut c_void],
    workspace: *mut c_void,
    f: impl FnOnce(&Descriptor) -> Result<R>,
) -> Result<R> {
    PACKS.with(|cell| {
        let mut cache = cell
            .try_borrow_mut()
            .map_err(|_| Error::Internal("variant-pack cache re-entered".into()))?;
        cache.tick += 1;
        let tick = cache.tick;
        let id = plan.id();
        let (mut hit, mut oldest, mut mine) = (None, None::<usize>, 0usize);
        for (i, e) in cache.list.iter().enumerate() {
            if e.plan != id {
                continue;
            }
            if e.state.matches(pointers, workspace) {
                hit = Some(i);
                break;
            }
            mine += 1;
            if oldest.is_none_or(|o| cache.list[o].used > e.used) {
                oldest = Some(i);
            }
        }
        let reuse = match (hit, oldest) {
            (Some(i), _) => Some(i),
            (None, Some(i)) if mine >= PACKS_PER_PLAN => {
                cache.list[i].state.repoint(plan, pointers, workspace)?;
                Some(i)
            }
            _ => None,
        };
        if let Some(i) = reuse {
            let e = &mut cache.list[i];
            e.used = tick;
            return f(&e.state.desc);
        }
        let state = PackState::fresh(plan, pointers, workspace)?;
        make_room(&mut cache.list, |e| e.alive.strong_count() > 0);
        cache.list.push(PackEntry {
            plan: id,
            alive: plan.liveness(),
            state,
            used: tick,
        });
        match cache.list.last() {
            Some(e) => f(&e.state.desc),
            None => Err(Error::Internal("variant-pack cache lost its entry".into())),
        }
    })
}

/// Whether `e` says "this engine or this cuDNN has no native CUDA-graph support".
fn graph_unsupported(e: &Error) -> bool {
    match e {
        Error::NotSupported(_) => true,
        Error::Cudnn { status, .. } => (3000..4000).contains(status),
        _ => false,
    }
}

/// Outcome of [`launch_graph`].
#[derive(Debug, PartialEq, Eq)]
pub enum GraphLaunch {
    /// The plan's graph was launched.
    Launched,
    /// The plan cannot run as a native CUDA graph (decided now, remembered by the plan); the
    /// caller executes it another way.
    Unsupported,
}

/// Launches this thread's CUDA graph of `plan` for these pointers on `stream`, populating it
/// first (and re-pointing it when the pointers changed).
///
/// # Safety
/// As [`BackendPlan::execute`]: live buffers, a live handle of the plan's device, and a stream of
/// that device.
pub unsafe fn launch_graph(
    plan: &BackendPlan,
    handle: RawHandle,
    stream: RawStream,
    pointers: &[*mut c_void],
    workspace: *mut c_void,
) -> Result<GraphLaunch> {
    GRAPHS.with(|cell| {
        let mut list = cell
            .try_borrow_mut()
            .map_err(|_| Error::Internal("CUDA-graph cache re-entered".into()))?;
        let id = plan.id();
        if let Some(e) = list.iter_mut().find(|e| e.plan == id) {
            if !e.pack.matches(pointers, workspace) {
                e.pack.repoint(plan, pointers, workspace)?;
                // SAFETY: the graph was populated by this plan; pointers per the caller.
                unsafe {
                    plan.cuda_graph_with(
                        CudaGraphCall::Update,
                        handle,
                        &e.pack.desc,
                        e.graph.raw().cast(),
                    )
                }?;
                e.graph.refresh_instance()?;
            }
            // SAFETY: caller contract (stream of the plan's device, live buffers).
            unsafe { e.graph.launch(stream.cast()) }?;
            return Ok(GraphLaunch::Launched);
        }
        // Cold: populate in the stream's context.
        // SAFETY: the stream is live per the caller's contract.
        let _ctx = unsafe { crate::cuda::ContextGuard::for_stream(stream.cast(), None) }?;
        let pack = PackState::fresh(plan, pointers, workspace)?;
        let mut graph = CudaGraph::new()?;
        // SAFETY: an empty graph, a finalized pack of this plan; pointers per the caller.
        match unsafe {
            plan.cuda_graph_with(
                CudaGraphCall::Populate,
                handle,
                &pack.desc,
                graph.raw().cast(),
            )
        } {
            Ok(()) => {}
            Err(e) if graph_unsupported(&e) => {
                if let Some(api) = plan.api_real() {
                    let _ = api.last_error();
                }
                plan.mark_graph_unsupported(e.to_string());
                return Ok(GraphLaunch::Unsupported);
            }
            Err(e) => return Err(e),
        }
        graph.instantiate()?;
        // SAFETY: caller contract.
        unsafe { graph.launch(stream.cast()) }?;
        make_room(&mut list, |e| e.alive.strong_count() > 0);
        list.push(GraphEntry {
            plan: id,
            alive: plan.liveness(),
            pack,
            graph,
        });
        Ok(GraphLaunch::Launched)
    })
}

/// Entries this thread holds: (variant packs, CUDA graphs), for tests and diagnostics.
pub fn thread_entries() -> (usize, usize) {
    (
        PACKS.with(|c| c.try_borrow().map(|l| l.list.len()).unwrap_or(0)),
        GRAPHS.with(|c| c.try_borrow().map(|l| l.len()).unwrap_or(0)),
    )
}
