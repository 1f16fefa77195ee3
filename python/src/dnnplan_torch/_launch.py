"""What every torch launcher shares: dtype mapping, the plan cache, per-stream handles, workspace.

Contract:
- ``prepared(key, build)`` returns the ``PreparedPlan`` cached under ``key`` (shapes, strides,
  dtypes, attributes, device), calling ``build()`` -> ``(graph, arg_uids, plan_name)`` only on a
  miss: the steady state builds nothing. A failed planning is cached too (the same error is
  raised again without re-planning) until ``clear_plan_cache()``.
- ``handle_for(device_index)`` is the dnnplan handle of torch's *current* stream on that device
  (``torch.cuda.current_stream(device).cuda_stream``), one handle per (device, stream), created on
  first sight; the stream is borrowed.
- ``workspace(nbytes, device)`` allocates through torch's caching allocator (stream-ordered: the
  block is reusable by later work on the same stream only after the launch that used it).
- ``launch(plan, device_index, like, pointers)`` is the per-call path: the handle of the current
  stream (one dict look-up on ``(device, raw stream)``), the stream's cached workspace, one
  execute. Outside CUDA-graph capture a workspace of at most ``WORKSPACE_CACHE_BYTES`` is one
  grow-only caching-allocator block per (device, stream), reused by every launch on that stream
  (launches on one stream are ordered, so reuse is safe; a launch keeps its block referenced
  until the execute returned). Larger workspaces (whose kernels dwarf an allocation) and every
  launch under capture allocate their own block (under capture from the graph's private pool,
  alive for the graph's replays). A plan with no workspace passes NULL.
- ``fast_cache()`` returns a launcher's steady-state cache (raw tensor metadata + attributes ->
  what the call needs: the plan, the output sizes); launchers fill it only after a call whose
  inputs needed no copy. ``clear_plan_cache()`` empties these caches and the workspaces too.
- Before the first plan, torch's own cuDNN is loaded into the process so that dnnplan's loader
  finds the very library torch uses ("already loaded" search step).
- For the C++ launcher (``_cpp``): ``cpp_spec(plan, outputs)`` is what it caches for a steady-state
  signature, ``cpp_execute_failed(status, plan)`` raises the package's error for a failed C++
  execute, and ``clear_plan_cache()`` also runs every hook in ``clear_hooks`` (the C++ caches).
"""

from __future__ import annotations

import atexit
import threading
from typing import Callable, Optional

import torch

from ._graphs import Desc, PreparedPlan
from ._lib import DataType, DnnplanError, Handle, _error

DTYPE = {
    torch.float32: DataType.FLOAT,
    torch.float64: DataType.DOUBLE,
    torch.float16: DataType.HALF,
    torch.bfloat16: DataType.BFLOAT16,
    torch.int8: DataType.INT8,
    torch.uint8: DataType.UINT8,
    torch.int32: DataType.INT32,
    torch.int64: DataType.INT64,
    torch.bool: DataType.BYTE_BOOLEAN,
}


def desc(t: Optional[torch.Tensor]) -> Optional[Desc]:
    """The graph declaration of a real tensor (``None`` stays ``None``)."""
    if t is None:
        return None
    try:
        dt = DTYPE[t.dtype]
    except KeyError:
        raise TypeError(f"dtype {t.dtype} is not supported by dnnplan") from None
    return Desc(tuple(t.shape), tuple(t.stride()), dt)


def tensor_key(t: Optional[torch.Tensor]):
    """The cache-key part of one tensor: shape, strides, dtype (``None`` for absent)."""
    if t is None:
        return None
    return (t.shape, t.stride(), t.dtype)


# ------------------------------------------------------------------------------------------------
# Plan cache

_plans: dict = {}
_plans_lock = threading.Lock()
_stats = {"hits": 0, "misses": 0}


class _FailedPlan:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


def prepared(key, build: Callable[[], tuple]) -> PreparedPlan:
    """The cached prepared plan for ``key``; ``build() -> (graph, arg_uids, plan_name)``."""
    plan = _plans.get(key)
    if plan is not None:
        if type(plan) is _FailedPlan:
            raise plan.error
        return plan
    with _plans_lock:
        plan = _plans.get(key)
        if plan is None:
            if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
                raise RuntimeError(
                    "dnnplan_torch: this call needs a new plan (new shapes, strides, dtypes or "
                    "attributes) while the current stream is capturing a CUDA graph; planning "
                    "cannot be captured. Run it once with the same inputs before capturing.")
            _stats["misses"] += 1
            _ensure_runtime()
            try:
                graph, arg_uids, plan_name = build()
                plan = PreparedPlan(graph, arg_uids, plan_name=plan_name)
            except (DnnplanError, ValueError, TypeError) as e:
                _plans[key] = _FailedPlan(e)
                raise
            _plans[key] = plan
    if type(plan) is _FailedPlan:
        raise plan.error
    return plan


# Plans dropped from the cache stay alive: a captured CUDA graph may still launch their kernels.
_retired: list = []


# Launchers' steady-state caches (see ``fast_cache``).
_fast_caches: list = []

# Called by ``clear_plan_cache()`` (the C++ launcher's caches register here).
clear_hooks: list = []


def fast_cache() -> dict:
    """A new steady-state cache for one launcher, emptied by ``clear_plan_cache()``."""
    cache: dict = {}
    _fast_caches.append(cache)
    return cache


def clear_plan_cache() -> None:
    """Forgets every cached plan (and cached planning failure): the next call re-plans. The
    dropped plans are kept alive for the process, since CUDA graphs captured from them may
    still be replayed. The cached per-stream workspaces are released too (never used by a
    captured graph: capture allocates its own)."""
    with _plans_lock:
        _retired.extend(p for p in _plans.values() if isinstance(p, PreparedPlan))
        _plans.clear()
        for cache in _fast_caches:
            cache.clear()
        _workspaces.clear()
        for hook in clear_hooks:
            hook()


def plan_cache_info() -> dict:
    """``{"entries", "failed", "misses", "plans": {key: plan name}}`` (for tests and tuning)."""
    with _plans_lock:
        items = list(_plans.items())
    return {
        "entries": len(items),
        "failed": sum(1 for _, p in items if isinstance(p, _FailedPlan)),
        "misses": _stats["misses"],
        "plans": {k: (p.plan_name if isinstance(p, PreparedPlan) else repr(p.error))
                  for k, p in items},
    }


# ------------------------------------------------------------------------------------------------
# Runtime: cuDNN, handles, streams, workspace

_runtime_ready = False


def _ensure_runtime() -> None:
    """Loads torch's cuDNN into the process once (dnnplan then finds it already loaded)."""
    global _runtime_ready
    if _runtime_ready:
        return
    try:
        if torch.backends.cudnn.is_available():
            torch.backends.cudnn.version()
    except Exception:  # cuDNN absent: the backend declines with its reason at planning
        pass
    _runtime_ready = True


_handles: dict = {}
_handle_ptrs: dict = {}  # (device index, raw stream) -> handle pointer: the per-call look-up
_handles_lock = threading.Lock()

_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None)


def current_stream(device_index: int) -> int:
    """The raw ``cudaStream_t`` of torch's current stream on ``device_index``."""
    if _raw_stream is not None:
        return _raw_stream(device_index)
    return torch.cuda.current_stream(device_index).cuda_stream


_stream_of = _raw_stream if _raw_stream is not None else current_stream


def _is_capturing() -> bool:
    if _capturing is not None:
        return _capturing()
    return torch.cuda.is_current_stream_capturing()


def _new_handle(device_index: int, stream: int) -> int:
    key = (device_index, stream)
    with _handles_lock:
        h = _handles.get(key)
        if h is None:
            _ensure_runtime()
            h = _handles[key] = Handle(stream, device=device_index)
        _handle_ptrs[key] = h.ptr
    return h.ptr


def handle_for(device_index: int) -> int:
    """Pointer of the dnnplan handle of torch's current stream on ``device_index``."""
    stream = current_stream(device_index)
    hp = _handle_ptrs.get((device_index, stream))
    if hp is None:
        hp = _new_handle(device_index, stream)
    return hp


def workspace(nbytes: int, device: torch.device) -> Optional[torch.Tensor]:
    """A workspace from torch's caching allocator (``None`` for 0 bytes)."""
    if nbytes == 0:
        return None
    return torch.empty(nbytes, dtype=torch.uint8, device=device)


# (device index, raw stream) -> grow-only uint8 workspace, used outside capture only.
_workspaces: dict = {}

#: Workspaces up to this size are cached per (device, stream); larger ones are allocated per call.
WORKSPACE_CACHE_BYTES = 16 << 20


def _stream_workspace(key: tuple, nbytes: int, like: torch.Tensor) -> torch.Tensor:
    if nbytes > WORKSPACE_CACHE_BYTES or _is_capturing():
        # Per call (under capture: from the graph's private pool, alive as long as the graph).
        return like.new_empty(nbytes, dtype=torch.uint8)
    ws = _workspaces.get(key)
    if ws is None or ws.shape[0] < nbytes:
        ws = like.new_empty(nbytes, dtype=torch.uint8)
        _workspaces[key] = ws
    return ws


def _capture_guidance(e: BaseException) -> None:
    if _is_capturing():
        raise RuntimeError(
            f"dnnplan_torch: execute failed during CUDA graph capture ({e}). A plan's first "
            "execute on a stream may initialise backend state (the cuDNN handle) that cannot "
            "be captured: run one warm-up call on the capture stream first, e.g. "
            "torch.cuda.graph(g, stream=s) after warming up on s.") from e


def launch(plan: PreparedPlan, device_index: int, like: torch.Tensor, pointers: list) -> None:
    """Executes ``plan`` on torch's current stream of ``device_index`` (``like``: any tensor on
    that device, for the workspace allocation); ``pointers`` in launcher-argument order."""
    stream = _stream_of(device_index)
    skey = (device_index, stream)
    hp = _handle_ptrs.get(skey)
    if hp is None:
        hp = _new_handle(device_index, stream)
    nbytes = plan.workspace_bytes
    try:
        if nbytes:
            ws = _stream_workspace(skey, nbytes, like)  # referenced until execute returned
            plan.run(hp, pointers, ws.data_ptr())
        else:
            plan.run(hp, pointers, 0)
    except DnnplanError as e:
        _capture_guidance(e)
        raise


def run(plan: PreparedPlan, device: torch.device, pointers: list,
        like: Optional[torch.Tensor] = None) -> None:
    """Executes ``plan`` on torch's current stream of ``device`` (``like``: a tensor on it)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    if like is None:
        like = torch.empty((0,), dtype=torch.uint8, device=device)
    launch(plan, index, like, pointers)


def cpp_spec(plan: PreparedPlan, outputs: tuple) -> tuple:
    """What the C++ launcher caches for one steady-state signature: ``(plan-list pointer,
    operand order (launcher-argument index of each operand), workspace bytes, ((sizes, dtype) per
    output), plan)``; the plan object is referenced by the C++ entry (kept alive)."""
    return (plan._list_ptr, plan.order, plan.workspace_bytes,
            tuple((tuple(int(d) for d in sizes), dtype) for sizes, dtype in outputs), plan)


def cpp_execute_failed(status: int, plan: PreparedPlan) -> None:
    """Raises the package's error for a failed execute of the C++ launcher (on its thread,
    so the library's thread-local message is the one of that call)."""
    e = _error(status, f"dnnp_plan_list_execute [{plan.plan_name}]")
    _capture_guidance(e)
    raise e


def ptr(t: Optional[torch.Tensor]) -> int:
    """A tensor's data pointer (0 for ``None``)."""
    return t.data_ptr() if t is not None else 0


@atexit.register
def _leak_at_exit() -> None:
    """Cached plans and handles are not destroyed at interpreter exit (CUDA and cuDNN may be
    shutting down; the process's memory goes back to the OS anyway)."""
    with _plans_lock:
        for p in list(_plans.values()) + _retired:
            if isinstance(p, PreparedPlan):
                p.plan_list.leak()
    with _handles_lock:
        for h in _handles.values():
            h.leak()


__all__ = [
    "DTYPE",
    "desc",
    "tensor_key",
    "prepared",
    "clear_plan_cache",
    "plan_cache_info",
    "current_stream",
    "handle_for",
    "workspace",
    "launch",
    "fast_cache",
    "clear_hooks",
    "cpp_spec",
    "cpp_execute_failed",
    "run",
    "ptr",
]
