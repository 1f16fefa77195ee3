"""Build of dnnplan-torch: the pure-Python package, plus the C++ launcher ``dnnplan_torch._C``
when torch is importable at build time (``pip install --no-build-isolation ./python``, or
``python setup.py build_ext --inplace`` for a checkout).

The extension needs torch's headers and libraries, the CUDA runtime headers
(``$DNNPLAN_CUDA_INCLUDE``, else ``$CUDA_HOME/include`` / torch's CUDA_HOME, else the
``nvidia-cuda-runtime`` wheel's include folder) and ``include/dnnplan.h`` of the repository
(``$DNNPLAN_INCLUDE`` overrides). It does not link libdnnplan: the execute entry point is resolved
at run time from the library the package already loaded. ``DNNPLAN_TORCH_BUILD_EXT=0`` skips
it; without torch the build is pure Python (the package then uses its Python launchers).
"""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def _cuda_include() -> str | None:
    candidates = [os.environ.get("DNNPLAN_CUDA_INCLUDE")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "include"))
    try:
        from torch.utils.cpp_extension import CUDA_HOME
    except Exception:  # noqa: BLE001
        CUDA_HOME = None
    if CUDA_HOME:
        candidates.append(os.path.join(CUDA_HOME, "include"))
    candidates.append("/usr/local/cuda/include")
    for site in sys.path:
        candidates.extend(glob.glob(os.path.join(site, "nvidia", "cu*", "include")))
        candidates.append(os.path.join(site, "nvidia", "cuda_runtime", "include"))
    for c in candidates:
        if c and os.path.isfile(os.path.join(c, "cuda_runtime_api.h")):
            return c
    return None


def _extensions():
    if os.environ.get("DNNPLAN_TORCH_BUILD_EXT", "1") == "0":
        return [], {}
    try:
        from torch.utils.cpp_extension import BuildExtension, CppExtension
    except Exception as e:  # noqa: BLE001
        print(f"dnnplan-torch: torch not importable ({e}); building the pure-Python package",
              file=sys.stderr)
        return [], {}
    cuda_inc = _cuda_include()
    dnnplan_inc = os.environ.get("DNNPLAN_INCLUDE", str(HERE.parent / "include"))
    missing = []
    if cuda_inc is None:
        missing.append("cuda_runtime_api.h (set DNNPLAN_CUDA_INCLUDE or CUDA_HOME)")
    if not os.path.isfile(os.path.join(dnnplan_inc, "dnnplan.h")):
        missing.append(f"dnnplan.h in {dnnplan_inc} (set DNNPLAN_INCLUDE)")
    if missing:
        raise RuntimeError("dnnplan-torch: cannot build the C++ launcher: missing "
                           + "; ".join(missing) + " (DNNPLAN_TORCH_BUILD_EXT=0 builds without it)")
    ext = CppExtension(
        "dnnplan_torch._C",
        ["src/dnnplan_torch/csrc/launcher.cpp"],
        include_dirs=[cuda_inc, dnnplan_inc],
        # c10_cuda: the current stream; it also brings the CUDA runtime (stream capture query)
        libraries=["c10_cuda"],
        extra_compile_args=["-O2"],
    )
    return [ext], {"build_ext": BuildExtension}


ext_modules, cmdclass = _extensions()
setup(ext_modules=ext_modules, cmdclass=cmdclass)
