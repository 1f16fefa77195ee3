//! A CUDA graph and its executable instance, for libraries that populate graphs themselves
//! (cuDNN's `cudnnBackendPopulateCudaGraph`): create an empty graph, instantiate it once,
//! re-apply the graph's changed node parameters to the instance, launch the instance on a stream.
//!
//! Contract: [`CudaGraph::new`] records the context current on the calling thread (the caller
//! binds it, e.g. with [`super::ContextGuard::for_stream`]); [`CudaGraph::launch`] makes that
//! context current only when the thread has another one (one `cuCtxGetCurrent` on the hot path),
//! so launching never changes what the caller sees as current. Nothing here synchronizes or
//! allocates device memory. A `CudaGraph` is owned by one thread at a time (it is not `Sync`);
//! both handles are destroyed on drop.

use cudarc::driver::sys::{self, CUcontext, CUgraph, CUgraphExec, CUstream};

use super::driver::{check, guarded};
use crate::error::{Error, Result};

/// An owned `CUgraph` plus, once instantiated, its `CUgraphExec`.
#[derive(Debug)]
pub struct CudaGraph {
    graph: CUgraph,
    exec: CUgraphExec,
    context: CUcontext,
}

// SAFETY: driver graph handles may be used from any thread; the owner serializes access (`&mut`
// for mutation, and the type is not `Sync`).
unsafe impl Send for CudaGraph {}

impl CudaGraph {
    /// An empty graph (`cuGraphCreate`) tied to the calling thread's current context.
    pub fn new() -> Result<CudaGraph> {
        guarded("creating a CUDA graph", || {
            let mut context: CUcontext = std::ptr::null_mut();
            // SAFETY: writes one handle.
            check("cuCtxGetCurrent", unsafe {
                sys::cuCtxGetCurrent(&mut context)
            })?;
            if context.is_null() {
                return Err(Error::InvalidState(
                    "creating a CUDA graph needs a current CUDA context".into(),
                ));
            }
            let mut graph: CUgraph = std::ptr::null_mut();
            // SAFETY: writes one handle; flags must be 0.
            check("cuGraphCreate", unsafe {
                sys::cuGraphCreate(&mut graph, 0)
            })?;
            Ok(CudaGraph {
                graph,
                exec: std::ptr::null_mut(),
                context,
            })
        })
    }

    /// The raw `CUgraph` (= `cudaGraph_t`), for a library to populate or update.
    pub fn raw(&self) -> CUgraph {
        self.graph
    }

    /// True once [`CudaGraph::instantiate`] succeeded.
    pub fn is_instantiated(&self) -> bool {
        !self.exec.is_null()
    }

    /// Instantiates the graph as populated now (`cuGraphInstantiateWithFlags`, no flags),
    /// replacing an earlier instance.
    pub fn instantiate(&mut self) -> Result<()> {
        guarded("instantiating a CUDA graph", || {
            let mut exec: CUgraphExec = std::ptr::null_mut();
            // SAFETY: a live graph; writes one handle.
            check("cuGraphInstantiateWithFlags", unsafe {
                sys::cuGraphInstantiateWithFlags(&mut exec, self.graph, 0)
            })?;
            self.destroy_exec();
            self.exec = exec;
            Ok(())
        })
    }

    /// Applies the graph's current node parameters to the instance (`cuGraphExecUpdate`); when
    /// the driver refuses the in-place update, instantiates afresh.
    pub fn refresh_instance(&mut self) -> Result<()> {
        if self.exec.is_null() {
            return self.instantiate();
        }
        let updated = guarded("updating a CUDA graph instance", || {
            // SAFETY: zeroed is a valid bit pattern for this plain C struct (out parameter).
            let mut info: sys::CUgraphExecUpdateResultInfo = unsafe { std::mem::zeroed() };
            // SAFETY: live instance and graph; writes `info`.
            let r = unsafe { sys::cuGraphExecUpdate_v2(self.exec, self.graph, &mut info) };
            Ok(r == sys::CUresult::CUDA_SUCCESS)
        })?;
        if updated { Ok(()) } else { self.instantiate() }
    }

    /// Launches the instance on `stream` (`cuGraphLaunch`), in the graph's context.
    ///
    /// # Safety
    /// `stream` must be a live stream of the graph's context (or a default-stream sentinel);
    /// every buffer the graph's nodes address must be live until the launch completes.
    pub unsafe fn launch(&self, stream: CUstream) -> Result<()> {
        if self.exec.is_null() {
            return Err(Error::InvalidState(
                "CUDA graph launched before it was instantiated".into(),
            ));
        }
        guarded("launching a CUDA graph", || {
            let mut current: CUcontext = std::ptr::null_mut();
            // SAFETY: writes one handle.
            check("cuCtxGetCurrent", unsafe {
                sys::cuCtxGetCurrent(&mut current)
            })?;
            let push = current != self.context;
            if push {
                // SAFETY: the graph's context is alive while the graph is (it was current at
                // creation and the caller keeps it).
                check("cuCtxPushCurrent", unsafe {
                    sys::cuCtxPushCurrent_v2(self.context)
                })?;
            }
            // SAFETY: a live instance; the stream belongs to its context (caller contract).
            let r = unsafe { sys::cuGraphLaunch(self.exec, stream) };
            if push {
                let mut popped: CUcontext = std::ptr::null_mut();
                // SAFETY: pops the context pushed above.
                let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
            }
            check("cuGraphLaunch", r)
        })
    }

    fn destroy_exec(&mut self) {
        if !self.exec.is_null() {
            let exec = std::mem::replace(&mut self.exec, std::ptr::null_mut());
            // SAFETY: an instance this value owns, destroyed once.
            let _ = std::panic::catch_unwind(|| unsafe { sys::cuGraphExecDestroy(exec) });
        }
    }
}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        self.destroy_exec();
        let graph = self.graph;
        // SAFETY: the graph this value owns, destroyed once.
        let _ = std::panic::catch_unwind(|| unsafe { sys::cuGraphDestroy(graph) });
    }
}
