"""Test setup: the package from ``python/src``, libdnnplan from ``$DNNPLAN_LIBRARY`` or the
repository's build (debug first), and the ``gpu`` marker (skipped without torch + CUDA, unless
``DNNPLAN_REQUIRE_GPU=1``, which turns that into a failure: the device runner sets it)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PYTHON_ROOT = HERE.parent
REPO_ROOT = PYTHON_ROOT.parent
sys.path.insert(0, str(PYTHON_ROOT / "src"))

_LIB_CANDIDATES = (
    "target/debug/libdnnplan.so",
    "target/debug/deps/libdnnplan.so",
    ".device/lib/libdnnplan.so",
    "target/release/libdnnplan.so",
)


def _find_library() -> str | None:
    for rel in _LIB_CANDIDATES:
        p = REPO_ROOT / rel
        if p.exists():
            return str(p)
    return None


if not os.environ.get("DNNPLAN_LIBRARY"):
    found = _find_library()
    if found:
        os.environ["DNNPLAN_LIBRARY"] = found


def _gpu_available() -> tuple[bool, str]:
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        return False, f"torch not importable ({e})"
    if not torch.cuda.is_available():
        return False, "torch sees no CUDA device"
    return True, ""


def pytest_collection_modifyitems(config, items):
    gpu_items = [i for i in items if "gpu" in i.keywords]
    if not gpu_items:
        return
    ok, why = _gpu_available()
    if ok:
        return
    if os.environ.get("DNNPLAN_REQUIRE_GPU") == "1":
        raise pytest.UsageError(f"DNNPLAN_REQUIRE_GPU=1 but {why}")
    skip = pytest.mark.skip(reason=f"gpu test: {why}")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
