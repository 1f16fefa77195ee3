"""ctypes binding of libdnnplan's C API (torch-free).

Contract:
- ``library()`` loads libdnnplan.so once per process, from ``$DNNPLAN_LIBRARY`` (a file path),
  else a ``libdnnplan.so*`` next to this package (``dnnplan_torch/`` or ``dnnplan_torch/lib/``),
  else the system loader (``libdnnplan.so.0.1``, then ``libdnnplan.so``). It declares the
  argtypes/restype of every entry point used here; a missing library raises ``LibraryNotFound``
  naming every place tried.
- Every failing status becomes a ``DnnplanError`` (or the subclass for its status) carrying the
  status code, ``dnnp_status_name`` and this thread's ``dnnp_get_last_error_string``.
- ``Graph``, ``PlanList`` and ``Handle`` own one C object each and destroy it deterministically:
  ``close()``, a ``with`` block, or (as a last resort) garbage collection. Closing twice is a no-op.
- Nothing here imports torch; the torch layer (``dnnplan_torch.sdpa``, ``dnnplan_torch.gdn``) is
  built on top of it.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from ctypes import (
    POINTER,
    byref,
    c_bool,
    c_char_p,
    c_double,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

__all__ = [
    "DataType",
    "HeurMode",
    "BuildPolicy",
    "Status",
    "DnnplanError",
    "NotSupportedError",
    "InvalidGraphError",
    "BadParamError",
    "LibraryNotFound",
    "library",
    "library_path",
    "version",
    "version_string",
    "status_name",
    "last_error",
    "Graph",
    "PlanList",
    "Handle",
    "engine_id_describe",
    "attention_eligibility",
]


class DataType:
    """``DNNP_DATA_TYPE_*`` values."""

    NOT_SET = 0
    FLOAT = 1
    DOUBLE = 2
    HALF = 3
    INT8 = 4
    INT32 = 5
    UINT8 = 7
    BFLOAT16 = 10
    INT64 = 11
    BOOLEAN = 12
    BYTE_BOOLEAN = 13
    FP8_E4M3 = 14
    FP8_E5M2 = 15


class HeurMode:
    """``DNNP_HEUR_MODE_*`` values."""

    A = 0
    B = 1
    FALLBACK = 2
    OPENSOURCE = 3


class BuildPolicy:
    """``DNNP_BUILD_POLICY_*`` values."""

    HEURISTICS_CHOICE = 0
    ALL = 1


class Status:
    """``DNNP_STATUS_*`` values."""

    SUCCESS = 0
    CUDA_UNAVAILABLE = 1001
    CUDNN_UNAVAILABLE = 1002
    BAD_PARAM = 2000
    NULL_PARAMETER = 2001
    BUFFER_TOO_SMALL = 2002
    INVALID_GRAPH = 2003
    INVALID_STATE = 2004
    NOT_FOUND = 2005
    NOT_SUPPORTED = 3000
    INTERNAL = 4000
    INTERNAL_PANIC = 4001
    IO_ERROR = 4002
    EXECUTION_FAILED = 5000
    CUDA_ERROR = 5001
    CUDNN_ERROR = 5002


# --------------------------------------------------------------------------------------------
# Errors


class LibraryNotFound(OSError):
    """libdnnplan.so could not be loaded from any of the places searched."""


class DnnplanError(RuntimeError):
    """A dnnplan call failed: ``status`` (code), ``status_name`` (``DNNP_STATUS_*``), ``message``
    (the library's last-error text for this thread) and ``call`` (the C function)."""

    def __init__(self, status: int, status_name: str, message: str, call: str = ""):
        self.status = status
        self.status_name = status_name
        self.message = message
        self.call = call
        where = f"{call}: " if call else ""
        super().__init__(f"{where}{status_name}: {message}" if message else f"{where}{status_name}")


class NotSupportedError(DnnplanError):
    """``DNNP_STATUS_NOT_SUPPORTED``: valid, but nothing available runs it (reasons in the text)."""


class InvalidGraphError(DnnplanError, ValueError):
    """``DNNP_STATUS_INVALID_GRAPH``: the message names the node, the port and the rule."""


class BadParamError(DnnplanError, ValueError):
    """``DNNP_STATUS_BAD_PARAM`` / ``DNNP_STATUS_NULL_PARAMETER``."""


class NotFoundError(DnnplanError, LookupError):
    """``DNNP_STATUS_NOT_FOUND``."""


class UnavailableError(DnnplanError):
    """``DNNP_STATUS_CUDA_UNAVAILABLE`` / ``DNNP_STATUS_CUDNN_UNAVAILABLE``."""


_ERROR_CLASS = {
    Status.NOT_SUPPORTED: NotSupportedError,
    Status.INVALID_GRAPH: InvalidGraphError,
    Status.BAD_PARAM: BadParamError,
    Status.NULL_PARAMETER: BadParamError,
    Status.NOT_FOUND: NotFoundError,
    Status.CUDA_UNAVAILABLE: UnavailableError,
    Status.CUDNN_UNAVAILABLE: UnavailableError,
}

__all__ += ["NotFoundError", "UnavailableError"]


# --------------------------------------------------------------------------------------------
# Loading and declarations

_u8p = POINTER(c_uint8)
_i64p = POINTER(c_int64)
_u32p = POINTER(c_uint32)
_sizep = POINTER(c_size_t)
_boolp = POINTER(c_bool)
_vpp = POINTER(c_void_p)
_St = c_int32

# name -> (restype, argtypes). Every entry point this package calls, and nothing else.
_SIGNATURES: dict = {
    "dnnp_get_version": (c_size_t, []),
    "dnnp_get_version_string": (c_char_p, []),
    "dnnp_get_abi_version": (c_char_p, []),
    "dnnp_status_name": (c_char_p, [_St]),
    "dnnp_get_last_error_string": (_St, [c_void_p, c_size_t, _sizep]),
    "dnnp_debug_force_panic": (_St, [c_char_p]),
    # graph
    "dnnp_graph_create": (_St, [c_uint32, c_uint32, c_uint32, _vpp]),
    "dnnp_graph_clone": (_St, [c_void_p, _vpp]),
    "dnnp_graph_destroy": (None, [c_void_p]),
    "dnnp_graph_set_flag": (_St, [c_void_p, c_uint32, c_bool]),
    "dnnp_graph_set_target": (_St, [c_void_p, c_char_p, c_int64, c_int64]),
    "dnnp_graph_validate": (_St, [c_void_p]),
    "dnnp_graph_get_state": (_St, [c_void_p, _boolp, _boolp]),
    "dnnp_graph_to_json": (_St, [c_void_p, c_void_p, c_size_t, _sizep]),
    "dnnp_graph_from_json": (_St, [c_char_p, _vpp]),
    "dnnp_graph_key": (_St, [c_void_p, _u8p]),
    "dnnp_graph_tensor_create": (
        _St,
        [c_void_p, c_char_p, c_uint32, c_size_t, _i64p, _i64p, c_int64, _i64p],
    ),
    "dnnp_graph_tensor_set_virtual": (_St, [c_void_p, c_int64, c_bool]),
    "dnnp_graph_tensor_get": (
        _St,
        [c_void_p, c_int64, _u32p, _sizep, _i64p, _i64p, c_size_t, _boolp, _boolp, _i64p],
    ),
    "dnnp_graph_explain": (_St, [c_void_p, _u32p, c_size_t, c_void_p, c_size_t, _sizep]),
    "dnnp_op_builder_begin": (_St, [c_char_p, _vpp]),
    "dnnp_op_builder_destroy": (None, [c_void_p]),
    "dnnp_op_builder_set_name": (_St, [c_void_p, c_char_p]),
    "dnnp_op_builder_set_compute_data_type": (_St, [c_void_p, c_uint32]),
    "dnnp_op_builder_set_input": (_St, [c_void_p, c_char_p, c_int64]),
    "dnnp_op_builder_set_output": (_St, [c_void_p, c_char_p, c_int64]),
    "dnnp_op_builder_set_attr_bool": (_St, [c_void_p, c_char_p, c_bool]),
    "dnnp_op_builder_set_attr_int": (_St, [c_void_p, c_char_p, c_int64]),
    "dnnp_op_builder_set_attr_float": (_St, [c_void_p, c_char_p, c_double]),
    "dnnp_op_builder_set_attr_string": (_St, [c_void_p, c_char_p, c_char_p]),
    "dnnp_op_builder_set_attr_ints": (_St, [c_void_p, c_char_p, _i64p, c_size_t]),
    "dnnp_op_builder_finish": (_St, [c_void_p, c_void_p, _sizep]),
    "dnnp_op_builder_output_uid": (_St, [c_void_p, c_char_p, _i64p]),
    "dnnp_graph_sdpa": (
        _St,
        [c_void_p, c_int64, c_int64, c_int64, c_double, c_bool, c_bool, c_char_p, _i64p, _i64p],
    ),
    "dnnp_graph_sdpa_backward": (
        _St,
        [c_void_p, c_int64, c_int64, c_int64, c_int64, c_int64, c_int64, c_double, c_bool,
         c_char_p, _i64p, _i64p, _i64p],
    ),
    "dnnp_graph_gdn": (
        _St,
        [c_void_p, c_int64, c_int64, c_int64, c_int64, c_int64, c_int64, c_int64, c_double,
         c_bool, c_bool, c_char_p, _i64p, _i64p],
    ),
    "dnnp_graph_gdn_bwd": (
        _St,
        [c_void_p, c_int64, c_int64, c_int64, c_int64, c_int64, c_int64, c_int64, c_int64,
         c_int64, c_double, c_bool, c_char_p, _i64p, _i64p, _i64p, _i64p, _i64p, _i64p],
    ),
    # plan list
    "dnnp_graph_create_plan_list": (_St, [c_void_p, _vpp]),
    "dnnp_plan_list_destroy": (None, [c_void_p]),
    "dnnp_plan_list_create_execution_plans": (_St, [c_void_p, _u32p, c_size_t]),
    "dnnp_plan_list_get_count": (_St, [c_void_p, _sizep]),
    "dnnp_plan_list_get_plan_name": (_St, [c_void_p, c_size_t, c_void_p, c_size_t, _sizep]),
    "dnnp_plan_list_get_engine_and_knobs": (
        _St,
        [c_void_p, c_size_t, _i64p, _u32p, _i64p, c_size_t, _sizep],
    ),
    "dnnp_plan_list_select_plan": (_St, [c_void_p, c_size_t]),
    "dnnp_plan_list_get_selected_index": (_St, [c_void_p, _sizep]),
    "dnnp_plan_list_build_plans": (_St, [c_void_p, c_uint32]),
    "dnnp_plan_list_build_plan_at_index": (_St, [c_void_p, c_size_t]),
    "dnnp_plan_list_deselect_engines": (_St, [c_void_p, POINTER(c_char_p), c_size_t]),
    "dnnp_plan_list_get_workspace_size": (_St, [c_void_p, POINTER(c_uint64)]),
    "dnnp_plan_list_get_operand_count": (_St, [c_void_p, _sizep]),
    "dnnp_plan_list_get_operand_uids": (_St, [c_void_p, _i64p, c_size_t, _sizep]),
    "dnnp_plan_list_explain": (_St, [c_void_p, c_void_p, c_size_t, _sizep]),
    "dnnp_debug_plan_list_create_exec_test": (_St, [c_uint32, c_size_t, _vpp]),
    "dnnp_plan_list_execute": (
        _St,
        [c_void_p, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, c_void_p, c_size_t],
    ),
    # handle
    "dnnp_handle_create": (_St, [c_void_p, _vpp]),
    "dnnp_handle_create_on_device": (_St, [c_int32, c_void_p, _vpp]),
    "dnnp_handle_destroy": (None, [c_void_p]),
    "dnnp_handle_get_stream": (_St, [c_void_p, _vpp]),
    "dnnp_handle_get_device": (_St, [c_void_p, POINTER(c_int32)]),
    # misc
    "dnnp_engine_id_describe": (_St, [c_int64, c_void_p, c_size_t, _sizep]),
    "dnnp_attention_eligibility": (_St, [c_char_p, c_char_p, c_void_p, c_size_t, _sizep]),
}

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None

_SYSTEM_NAMES = ("libdnnplan.so.0.1", "libdnnplan.so")


def _candidates() -> list:
    env = os.environ.get("DNNPLAN_LIBRARY")
    if env:
        return [("DNNPLAN_LIBRARY", env)]
    here = Path(__file__).resolve().parent
    found = []
    for folder in (here, here / "lib"):
        for name in ("libdnnplan.so", "libdnnplan.so.0.1"):
            if (folder / name).exists():
                found.append(("next to the package", str(folder / name)))
    found += [("system loader", name) for name in _SYSTEM_NAMES]
    return found


def _declare(lib: ctypes.CDLL) -> None:
    missing = []
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise LibraryNotFound(
            "libdnnplan.so lacks entry points this package needs (too old?): " + ", ".join(missing)
        )


def library() -> ctypes.CDLL:
    """The loaded, declared libdnnplan (loaded on first call; thread-safe)."""
    global _lib, _lib_path
    lib = _lib
    if lib is not None:
        return lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for origin, path in _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({origin}): {e}")
                continue
            _declare(lib)
            _lib, _lib_path = lib, path
            return lib
        raise LibraryNotFound(
            "libdnnplan.so not found; set DNNPLAN_LIBRARY to its path. Tried: " + "; ".join(tried)
        )


def library_path() -> str:
    """Where the loaded library came from (a path, or the name given to the system loader)."""
    library()
    assert _lib_path is not None
    return _lib_path


# --------------------------------------------------------------------------------------------
# Status handling and string outputs


def status_name(status: int) -> str:
    """``dnnp_status_name``: the ``DNNP_STATUS_*`` macro name of a code."""
    return library().dnnp_status_name(status).decode()


def last_error() -> str:
    """This thread's last-error message (empty after a success)."""
    lib = library()
    needed = c_size_t(0)
    lib.dnnp_get_last_error_string(None, 0, byref(needed))
    if needed.value <= 1:
        return ""
    buf = ctypes.create_string_buffer(needed.value)
    if lib.dnnp_get_last_error_string(buf, needed.value, byref(needed)) != 0:
        return ""
    return buf.value.decode(errors="replace")


def _error(status: int, call: str = "") -> DnnplanError:
    cls = _ERROR_CLASS.get(status, DnnplanError)
    return cls(status, status_name(status), last_error(), call)


def _check(status: int, call: str) -> None:
    if status != 0:
        raise _error(status, call)


def _text(fn, *args, call: str) -> str:
    """Two-call string output: ``fn(*args, buf, cap, needed)``."""
    needed = c_size_t(0)
    st = fn(*args, None, 0, byref(needed))
    if st not in (Status.SUCCESS, Status.BUFFER_TOO_SMALL):
        raise _error(st, call)
    buf = ctypes.create_string_buffer(max(needed.value, 1))
    _check(fn(*args, buf, needed.value, byref(needed)), call)
    return buf.value.decode()


def version() -> int:
    """Packed library version: major*10000 + minor*100 + patch."""
    return int(library().dnnp_get_version())


def version_string() -> str:
    """The library version, e.g. ``"0.1.0"``."""
    return library().dnnp_get_version_string().decode()


def abi_version() -> str:
    """The ABI version (SONAME suffix), e.g. ``"0.1"``."""
    return library().dnnp_get_abi_version().decode()


__all__ += ["abi_version"]


def _i64_array(values: Sequence[int]):
    return (c_int64 * len(values))(*values)


# --------------------------------------------------------------------------------------------
# Owned objects


class _Owned:
    """One C object with a destroy function; destroyed once."""

    _destroy_name = ""

    def __init__(self, ptr: c_void_p):
        self._ptr = ptr
        # Bound now so that destruction works during interpreter shutdown.
        self._destroy = getattr(library(), self._destroy_name)

    @property
    def ptr(self) -> int:
        """The raw C pointer (raises after close)."""
        if not self._ptr:
            raise ValueError(f"{type(self).__name__} is closed")
        return self._ptr

    def close(self) -> None:
        """Destroys the C object now (idempotent)."""
        ptr, self._ptr = self._ptr, None
        if ptr:
            self._destroy(ptr)

    def leak(self) -> None:
        """Forgets the C object without destroying it (process exit: the driver and cuDNN may
        already be tearing down, and the OS reclaims everything)."""
        self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _tensor_key(value):
    return value if isinstance(value, int) else int(value)


class Graph(_Owned):
    """A dnnplan graph (``dnnp_graph_t``)."""

    _destroy_name = "dnnp_graph_destroy"

    def __init__(self, io: int = DataType.NOT_SET, intermediate: int = DataType.NOT_SET,
                 compute: int = DataType.NOT_SET, *, _ptr: Optional[int] = None):
        if _ptr is None:
            out = c_void_p()
            _check(library().dnnp_graph_create(io, intermediate, compute, byref(out)),
                   "dnnp_graph_create")
            _ptr = out.value
        super().__init__(_ptr)

    @classmethod
    def from_json(cls, text: str) -> "Graph":
        """A graph read from the IR's JSON document."""
        out = c_void_p()
        _check(library().dnnp_graph_from_json(text.encode(), byref(out)), "dnnp_graph_from_json")
        return cls(_ptr=out.value)

    def clone(self) -> "Graph":
        """A mutable copy (not validated, not frozen)."""
        out = c_void_p()
        _check(library().dnnp_graph_clone(self.ptr, byref(out)), "dnnp_graph_clone")
        return Graph(_ptr=out.value)

    # tensors -------------------------------------------------------------------------------
    def tensor(self, name: Optional[str], dtype: int, dims: Sequence[int],
               strides: Optional[Sequence[int]] = None, uid: int = -1) -> int:
        """Adds a non-virtual tensor; returns its uid (``uid=-1``: automatic)."""
        d = _i64_array(dims)
        s = _i64_array(strides) if strides is not None else None
        if strides is not None and len(strides) != len(dims):
            raise ValueError(f"tensor {name!r}: {len(dims)} dims but {len(strides)} strides")
        out = c_int64()
        _check(
            library().dnnp_graph_tensor_create(
                self.ptr, name.encode() if name is not None else None, dtype, len(dims), d, s,
                uid, byref(out)),
            "dnnp_graph_tensor_create",
        )
        return out.value

    def set_virtual(self, uid: int, is_virtual: bool) -> None:
        """Marks a tensor virtual (an intermediate) or not (a graph input/output)."""
        _check(library().dnnp_graph_tensor_set_virtual(self.ptr, uid, is_virtual),
               "dnnp_graph_tensor_set_virtual")

    def tensor_info(self, uid: int) -> dict:
        """``{"dtype", "dims", "strides", "is_virtual"}`` of tensor ``uid``."""
        lib = library()
        dt, rank = c_uint32(), c_size_t()
        _check(lib.dnnp_graph_tensor_get(self.ptr, uid, byref(dt), byref(rank), None, None, 0,
                                         None, None, None), "dnnp_graph_tensor_get")
        n = rank.value
        dims, strides, virt = (c_int64 * max(n, 1))(), (c_int64 * max(n, 1))(), c_bool()
        _check(lib.dnnp_graph_tensor_get(self.ptr, uid, byref(dt), byref(rank), dims, strides,
                                         n, byref(virt), None, None), "dnnp_graph_tensor_get")
        return {"dtype": dt.value, "dims": list(dims[:n]), "strides": list(strides[:n]),
                "is_virtual": virt.value}

    # nodes ---------------------------------------------------------------------------------
    def add_node(self, op: str, inputs: Mapping[str, int], outputs: Mapping[str, int] = (),
                 attrs: Mapping[str, Any] = (), *, name: Optional[str] = None,
                 compute: Optional[int] = None, output_ports: Iterable[str] = ()) -> dict:
        """Adds one node through the generic op builder.

        ``inputs``/``outputs`` map port names to tensor uids (``None`` values are skipped);
        ``attrs`` values are typed by their Python type (bool, int, float, str, list of int).
        Returns ``{port: uid}`` for the bound outputs plus every port in ``output_ports``.
        """
        lib = library()
        b = c_void_p()
        _check(lib.dnnp_op_builder_begin(op.encode(), byref(b)), "dnnp_op_builder_begin")
        try:
            if name is not None:
                _check(lib.dnnp_op_builder_set_name(b, name.encode()), "dnnp_op_builder_set_name")
            if compute is not None:
                _check(lib.dnnp_op_builder_set_compute_data_type(b, compute),
                       "dnnp_op_builder_set_compute_data_type")
            for port, uid in dict(inputs).items():
                if uid is not None:
                    _check(lib.dnnp_op_builder_set_input(b, port.encode(), uid),
                           f"dnnp_op_builder_set_input({port})")
            for port, uid in dict(outputs).items():
                if uid is not None:
                    _check(lib.dnnp_op_builder_set_output(b, port.encode(), uid),
                           f"dnnp_op_builder_set_output({port})")
            for key, value in dict(attrs).items():
                if value is None:
                    continue
                k = key.encode()
                if isinstance(value, bool):
                    st = lib.dnnp_op_builder_set_attr_bool(b, k, value)
                elif isinstance(value, int):
                    st = lib.dnnp_op_builder_set_attr_int(b, k, value)
                elif isinstance(value, float):
                    st = lib.dnnp_op_builder_set_attr_float(b, k, value)
                elif isinstance(value, str):
                    st = lib.dnnp_op_builder_set_attr_string(b, k, value.encode())
                elif isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
                    st = lib.dnnp_op_builder_set_attr_ints(b, k, _i64_array(value), len(value))
                else:
                    raise TypeError(f"attribute {key!r}: unsupported value {value!r}")
                _check(st, f"dnnp_op_builder_set_attr({key})")
            _check(lib.dnnp_op_builder_finish(b, self.ptr, None), "dnnp_op_builder_finish")
            result = {p: u for p, u in dict(outputs).items() if u is not None}
            for port in output_ports:
                uid = c_int64()
                _check(lib.dnnp_op_builder_output_uid(b, port.encode(), byref(uid)),
                       f"dnnp_op_builder_output_uid({port})")
                result[port] = uid.value
            return result
        finally:
            lib.dnnp_op_builder_destroy(b)

    def sdpa(self, q: int, k: int, v: int, attn_scale: float = 0.0, use_causal_mask: bool = False,
             generate_stats: bool = True, name: Optional[str] = None) -> tuple:
        """``dnnp_graph_sdpa`` (typed helper): returns ``(O, Stats or -1)`` uids (virtual)."""
        o, st = c_int64(), c_int64()
        _check(library().dnnp_graph_sdpa(self.ptr, q, k, v, attn_scale, use_causal_mask,
                                         generate_stats, _opt_name(name), byref(o), byref(st)),
               "dnnp_graph_sdpa")
        return o.value, st.value

    def sdpa_backward(self, q: int, k: int, v: int, o: int, d_o: int, stats: int,
                      attn_scale: float = 0.0, use_causal_mask: bool = False,
                      name: Optional[str] = None) -> tuple:
        """``dnnp_graph_sdpa_backward``: returns ``(dQ, dK, dV)`` uids (virtual)."""
        outs = [c_int64() for _ in range(3)]
        _check(library().dnnp_graph_sdpa_backward(
            self.ptr, q, k, v, o, d_o, stats, attn_scale, use_causal_mask, _opt_name(name),
            *[byref(x) for x in outs]), "dnnp_graph_sdpa_backward")
        return tuple(x.value for x in outs)

    def gdn(self, q: int, k: int, v: int, g: int, beta: int, cu_seqlens: int,
            initial_state: int = -1, scale: float = 0.0, output_final_state: bool = False,
            use_qk_l2norm: bool = False, name: Optional[str] = None) -> tuple:
        """``dnnp_graph_gdn``: returns ``(O, final_state or -1)`` uids (virtual)."""
        o, fs = c_int64(), c_int64()
        _check(library().dnnp_graph_gdn(self.ptr, q, k, v, g, beta, cu_seqlens, initial_state,
                                        scale, output_final_state, use_qk_l2norm,
                                        _opt_name(name), byref(o), byref(fs)),
               "dnnp_graph_gdn")
        return o.value, fs.value

    def gdn_bwd(self, q: int, k: int, v: int, g: int, beta: int, cu_seqlens: int, d_o: int,
                initial_state: int = -1, d_final_state: int = -1, scale: float = 0.0,
                use_qk_l2norm: bool = False, name: Optional[str] = None) -> tuple:
        """``dnnp_graph_gdn_bwd``: ``(dQ, dK, dV, dG, dBeta, d_initial_state or -1)`` uids."""
        outs = [c_int64() for _ in range(6)]
        _check(library().dnnp_graph_gdn_bwd(
            self.ptr, q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, scale,
            use_qk_l2norm, _opt_name(name), *[byref(x) for x in outs]), "dnnp_graph_gdn_bwd")
        return tuple(x.value for x in outs)

    # whole graph ---------------------------------------------------------------------------
    def set_flag(self, flag: int, value: bool) -> None:
        """``dnnp_graph_set_flag`` (``DNNP_GRAPH_FLAG_*``)."""
        _check(library().dnnp_graph_set_flag(self.ptr, flag, value), "dnnp_graph_set_flag")

    def set_target(self, name: Optional[str] = None, sm_count: int = -1,
                   sm_version: int = -1) -> None:
        """Heuristics target (``-1``: the device's)."""
        _check(library().dnnp_graph_set_target(self.ptr, _opt_name(name), sm_count, sm_version),
               "dnnp_graph_set_target")

    def validate(self) -> None:
        """Validates (raises ``InvalidGraphError`` naming node, port and rule)."""
        _check(library().dnnp_graph_validate(self.ptr), "dnnp_graph_validate")

    def state(self) -> tuple:
        """``(is_validated, is_frozen)``."""
        a, b = c_bool(), c_bool()
        _check(library().dnnp_graph_get_state(self.ptr, byref(a), byref(b)),
               "dnnp_graph_get_state")
        return a.value, b.value

    def to_json(self) -> str:
        """The graph's JSON document."""
        return _text(library().dnnp_graph_to_json, self.ptr, call="dnnp_graph_to_json")

    def key(self) -> bytes:
        """The graph key (blake3, 32 bytes)."""
        buf = (c_uint8 * 32)()
        _check(library().dnnp_graph_key(self.ptr, buf), "dnnp_graph_key")
        return bytes(buf)

    def explain(self, modes: Sequence[int] = ()) -> dict:
        """What planning would give on this machine (the graph is not planned or frozen)."""
        m = (c_uint32 * len(modes))(*modes) if modes else None
        return json.loads(_text(library().dnnp_graph_explain, self.ptr, m, len(modes),
                                call="dnnp_graph_explain"))

    def plan_list(self) -> "PlanList":
        """Validates and freezes the graph; returns its (unplanned) plan list."""
        out = c_void_p()
        _check(library().dnnp_graph_create_plan_list(self.ptr, byref(out)),
               "dnnp_graph_create_plan_list")
        return PlanList(out.value)


def _opt_name(name: Optional[str]):
    return name.encode() if name is not None else None


class PlanList(_Owned):
    """A graph's plan list (``dnnp_plan_list_t``)."""

    _destroy_name = "dnnp_plan_list_destroy"

    def __init__(self, ptr: int):
        super().__init__(ptr)
        self._execute = library().dnnp_plan_list_execute

    @classmethod
    def debug_exec_test(cls, engine: int, n_operands: int) -> "PlanList":
        """Test hook: a built plan list over ``n_operands`` ``[1,128,64]`` bf16 operands (uids
        ``1..n``) served by a test engine (0 no-op, 1 recording into HOST memory: reads a
        uint64 at operand 0, writes ``value + i`` into operand ``i``; 2 needs a workspace)."""
        out = c_void_p()
        _check(library().dnnp_debug_plan_list_create_exec_test(engine, n_operands, byref(out)),
               "dnnp_debug_plan_list_create_exec_test")
        return cls(out.value)

    def create_execution_plans(self, modes: Sequence[int] = ()) -> None:
        """Plans (one-shot). ``NotSupportedError`` lists every reason when nothing can run."""
        m = (c_uint32 * len(modes))(*modes) if modes else None
        _check(library().dnnp_plan_list_create_execution_plans(self.ptr, m, len(modes)),
               "dnnp_plan_list_create_execution_plans")

    def __len__(self) -> int:
        n = c_size_t()
        _check(library().dnnp_plan_list_get_count(self.ptr, byref(n)), "dnnp_plan_list_get_count")
        return n.value

    def plan_name(self, index: int) -> str:
        """The plan name at ``index``."""
        return _text(library().dnnp_plan_list_get_plan_name, self.ptr, index,
                     call="dnnp_plan_list_get_plan_name")

    def plan_names(self) -> list:
        """Every plan name, in ranked order."""
        return [self.plan_name(i) for i in range(len(self))]

    def engine_and_knobs(self, index: int) -> tuple:
        """``(engine_id, {knob_type: value})`` of the plan at ``index``."""
        lib = library()
        eid, n = c_int64(), c_size_t()
        st = lib.dnnp_plan_list_get_engine_and_knobs(self.ptr, index, byref(eid), None, None, 0,
                                                     byref(n))
        if st not in (Status.SUCCESS, Status.BUFFER_TOO_SMALL):
            raise _error(st, "dnnp_plan_list_get_engine_and_knobs")
        types, values = (c_uint32 * max(n.value, 1))(), (c_int64 * max(n.value, 1))()
        _check(lib.dnnp_plan_list_get_engine_and_knobs(self.ptr, index, byref(eid), types, values,
                                                       n.value, byref(n)),
               "dnnp_plan_list_get_engine_and_knobs")
        return eid.value, {types[i]: values[i] for i in range(n.value)}

    def select(self, index: int) -> None:
        """Pins the plan at ``index`` for the next build."""
        _check(library().dnnp_plan_list_select_plan(self.ptr, index), "dnnp_plan_list_select_plan")

    def selected_index(self) -> int:
        """The selected index."""
        n = c_size_t()
        _check(library().dnnp_plan_list_get_selected_index(self.ptr, byref(n)),
               "dnnp_plan_list_get_selected_index")
        return n.value

    def build(self, policy: int = BuildPolicy.HEURISTICS_CHOICE) -> None:
        """The build walk; ``NotSupportedError`` lists ``[i] name: reason`` when nothing builds."""
        _check(library().dnnp_plan_list_build_plans(self.ptr, policy),
               "dnnp_plan_list_build_plans")

    def build_at(self, index: int) -> None:
        """Builds and selects the plan at ``index``."""
        _check(library().dnnp_plan_list_build_plan_at_index(self.ptr, index),
               "dnnp_plan_list_build_plan_at_index")

    def deselect_engines(self, names: Sequence[str]) -> None:
        """Bars plans whose name contains one of ``names``."""
        arr = (c_char_p * len(names))(*[n.encode() for n in names])
        _check(library().dnnp_plan_list_deselect_engines(self.ptr, arr, len(names)),
               "dnnp_plan_list_deselect_engines")

    def workspace_size(self) -> int:
        """Workspace bytes of the selected, built plan."""
        n = c_uint64()
        _check(library().dnnp_plan_list_get_workspace_size(self.ptr, byref(n)),
               "dnnp_plan_list_get_workspace_size")
        return n.value

    def operand_uids(self) -> list:
        """Operand uids in operand order (the order of ``execute``'s pointer array)."""
        lib = library()
        n = c_size_t()
        st = lib.dnnp_plan_list_get_operand_uids(self.ptr, None, 0, byref(n))
        if st not in (Status.SUCCESS, Status.BUFFER_TOO_SMALL):
            raise _error(st, "dnnp_plan_list_get_operand_uids")
        arr = (c_int64 * max(n.value, 1))()
        _check(lib.dnnp_plan_list_get_operand_uids(self.ptr, arr, n.value, byref(n)),
               "dnnp_plan_list_get_operand_uids")
        return list(arr[: n.value])

    def explain(self) -> dict:
        """The plan list's explanation (recorded by planning, also when it failed)."""
        return json.loads(_text(library().dnnp_plan_list_explain, self.ptr,
                                call="dnnp_plan_list_explain"))

    def execute(self, handle: "Handle", pointers, n: int, workspace: int = 0,
                workspace_bytes: int = 0) -> None:
        """Executes the selected plan: ``pointers`` is a ctypes ``void*`` array (or sequence of
        ints) in operand order, ``n`` its length; ``workspace`` a 128-byte aligned address."""
        if not isinstance(pointers, ctypes.Array):
            pointers = (c_void_p * n)(*pointers)
        st = self._execute(self.ptr, handle.ptr, pointers, n, workspace or None,
                           workspace_bytes, None, 0)
        if st:
            raise _error(st, "dnnp_plan_list_execute")


class Handle(_Owned):
    """A stream and its device (``dnnp_handle_t``). The stream is borrowed, never destroyed."""

    _destroy_name = "dnnp_handle_destroy"

    def __init__(self, stream: int = 0, device: Optional[int] = None):
        out = c_void_p()
        lib = library()
        if device is None:
            _check(lib.dnnp_handle_create(stream or None, byref(out)), "dnnp_handle_create")
        else:
            _check(lib.dnnp_handle_create_on_device(device, stream or None, byref(out)),
                   "dnnp_handle_create_on_device")
        super().__init__(out.value)

    @property
    def stream(self) -> int:
        """The wrapped stream (0 = legacy default)."""
        s = c_void_p()
        _check(library().dnnp_handle_get_stream(self.ptr, byref(s)), "dnnp_handle_get_stream")
        return s.value or 0

    @property
    def device(self) -> int:
        """The stream's device ordinal, -1 when unknown."""
        d = c_int32()
        _check(library().dnnp_handle_get_device(self.ptr, byref(d)), "dnnp_handle_get_device")
        return d.value


def engine_id_describe(engine_id: int) -> dict:
    """What an engine id is (class, family, engine name...)."""
    return json.loads(_text(library().dnnp_engine_id_describe, engine_id,
                            call="dnnp_engine_id_describe"))


def attention_eligibility(request: Mapping[str, Any],
                          env: Optional[Mapping[str, Any]] = None) -> dict:
    """``dnnp_attention_eligibility``: which attention backends/engines can run ``request``."""
    env_text = json.dumps(env).encode() if env is not None else None
    return json.loads(_text(library().dnnp_attention_eligibility, json.dumps(request).encode(),
                            env_text, call="dnnp_attention_eligibility"))


def debug_force_panic(message: str = "forced") -> None:
    """Test hook: a panic inside the library, contained at the C boundary."""
    _check(library().dnnp_debug_force_panic(message.encode()), "dnnp_debug_force_panic")


__all__ += ["debug_force_panic"]

