"""The C++ launcher (``dnnplan_torch._C``): whether it is active, and its wiring to the package.

Contract:
- ``ACTIVE`` is true when the extension was built (``setup.py`` with torch importable) and
  imported, and ``DNNPLAN_TORCH_CPP`` is not ``0``/``false``/``off``; ``REASON`` says why not
  otherwise. Read once, at import (set the variable before importing the torch layer).
- When active, importing ``_C`` registered the CUDA kernels of ``dnnplan::sdpa_fwd`` and
  ``dnnplan::gdn_fwd`` (TORCH_LIBRARY_IMPL), so ``sdpa.py`` and ``gdn.py`` register no Python
  kernel for those two and instead hand their miss functions to ``set_miss``; the other ops
  (backwards, the in-place GDN variant) keep their Python kernels.
- A miss function takes the op's arguments, serves the call through the Python launcher and
  returns ``(outputs, spec)`` (``spec``: ``_launch.cpp_spec(...)``, or ``None`` when the call's
  inputs had to be copied, so the signature is not servable as given). ``spec`` binds the
  extension to the loaded libdnnplan first (``bind_library``: dlsym of the execute entry point
  on the library's dlopen handle).
- Without the extension (or disabled) nothing here is used: the pure-Python launchers serve.
"""

from __future__ import annotations

import os
import warnings
from typing import Callable, Optional

from . import _launch
from ._lib import library, library_path

ACTIVE = False
REASON = ""
C = None

_flag = os.environ.get("DNNPLAN_TORCH_CPP", "1").strip().lower()
if _flag in ("0", "false", "off", "no"):
    REASON = f"disabled by DNNPLAN_TORCH_CPP={_flag}"
else:
    try:
        from . import _C as C  # noqa: N812  (registers the CUDA kernels on load)
    except ImportError as e:
        REASON = f"extension dnnplan_torch._C not built or not loadable ({e})"
    else:
        ACTIVE = True
        C.configure(new_handle=_launch._new_handle, execute_failed=_launch.cpp_execute_failed,
                    workspace_cache_bytes=_launch.WORKSPACE_CACHE_BYTES)
        _launch.clear_hooks.append(C.clear)


def set_miss(op: str, fn: Callable) -> None:
    """Hands the C++ launcher the Python miss function of ``op`` (``sdpa_fwd``/``gdn_fwd``)."""
    assert C is not None
    C.set_miss(op, fn)


_bind_error: Optional[str] = None


def spec(plan, outputs: tuple) -> Optional[tuple]:
    """``_launch.cpp_spec`` after making sure the extension found the execute entry point
    (dlsym on the loaded library's handle); ``None`` (Python serves, with one warning) if it
    cannot."""
    global _bind_error
    if not C.is_bound():
        if _bind_error is not None:
            return None
        try:
            C.bind_library(library()._handle, library_path())
        except Exception as e:  # noqa: BLE001
            _bind_error = str(e)
            warnings.warn(f"dnnplan_torch: the C++ launcher cannot call libdnnplan ({e}); the "
                          "Python launcher serves every call", RuntimeWarning, stacklevel=2)
            return None
    return _launch.cpp_spec(plan, outputs)


def stats() -> dict:
    """The C++ launcher's counters (``hits``, ``misses``, ``python_calls``, ``entries``); empty
    when it is not active."""
    return dict(C.stats()) if ACTIVE else {}


__all__ = ["ACTIVE", "REASON", "C", "set_miss", "spec", "stats"]
