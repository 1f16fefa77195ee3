"""dnnplan_torch: dnnplan's attention ops for PyTorch.

- ``scaled_dot_product_attention(query, key, value, ...)`` -> ``SDPAOutput``: forward and backward
  through the cuDNN backend's plans in dnnplan's plan list.
- ``gated_delta_net(q, k, v, g, beta, cu_seqlens, ...)`` -> ``GatedDeltaNetOutput`` (with state
  checkpoints ``GatedDeltaNetCheckpointOutput``): forward and backward through dnnplan's own
  engines.

The ctypes binding (``dnnplan_torch._lib``: ``Graph``, ``PlanList``, ``Handle``, ``DnnplanError``)
needs no torch; the torch layer is imported on first use of a torch-facing name, so
``import dnnplan_torch`` works without torch and without a GPU.
"""

from __future__ import annotations

from ._lib import (  # noqa: F401  (re-exported)
    BadParamError,
    DnnplanError,
    InvalidGraphError,
    LibraryNotFound,
    NotSupportedError,
    library_path,
    version,
    version_string,
)

__version__ = "0.1.0"

# name -> submodule that defines it (imported lazily: these need torch)
_TORCH_NAMES = {
    "scaled_dot_product_attention": "sdpa",
    "SDPAOutput": "sdpa",
    "gated_delta_net": "gdn",
    "GatedDeltaNetOutput": "gdn",
    "GatedDeltaNetCheckpointOutput": "gdn",
    "clear_plan_cache": "_launch",
    "plan_cache_info": "_launch",
}


def __getattr__(name: str):
    module = _TORCH_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'dnnplan_torch' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_TORCH_NAMES))


__all__ = [
    "DnnplanError",
    "NotSupportedError",
    "InvalidGraphError",
    "BadParamError",
    "LibraryNotFound",
    "library_path",
    "version",
    "version_string",
    *_TORCH_NAMES,
]
