"""The torch-free ctypes binding against the built libdnnplan: loading, version, status and error
mapping, object lifetime, graph JSON/keys, the execute path on the library's host-memory test
engine, and the eligibility document. Runs on CPU machines (CI)."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dnnplan_torch
from dnnplan_torch import _lib
from dnnplan_torch._graphs import Desc, PreparedPlan, compact
from dnnplan_torch._lib import DataType, Graph, Handle, PlanList, Status

SRC = Path(dnnplan_torch.__file__).resolve().parent.parent


def _header_macro(repo_root: Path, name: str) -> str:
    text = (repo_root / "include" / "dnnplan.h").read_text()
    m = re.search(rf"#define {name} (.+)", text)
    assert m, f"{name} not in include/dnnplan.h"
    return m.group(1).strip()


def test_loads_and_reports_the_header_version(repo_root):
    assert Path(dnnplan_torch.library_path()).exists()
    assert dnnplan_torch.version() == int(_header_macro(repo_root, "DNNP_VERSION"))
    major, minor, patch = (int(_header_macro(repo_root, f"DNNP_VERSION_{p}"))
                           for p in ("MAJOR", "MINOR", "PATCH"))
    assert dnnplan_torch.version_string() == f"{major}.{minor}.{patch}"
    assert _lib.abi_version() == _header_macro(repo_root, "DNNP_ABI_VERSION").strip('"')


@pytest.mark.parametrize("code,name", [
    (Status.SUCCESS, "DNNP_STATUS_SUCCESS"),
    (Status.BAD_PARAM, "DNNP_STATUS_BAD_PARAM"),
    (Status.INVALID_GRAPH, "DNNP_STATUS_INVALID_GRAPH"),
    (Status.NOT_SUPPORTED, "DNNP_STATUS_NOT_SUPPORTED"),
    (Status.CUDNN_ERROR, "DNNP_STATUS_CUDNN_ERROR"),
    (12345, "DNNP_STATUS_UNKNOWN"),
])
def test_status_names(code, name):
    assert _lib.status_name(code) == name


def test_status_constants_match_the_header(repo_root):
    for attr in dir(Status):
        if attr.isupper():
            assert getattr(Status, attr) == int(_header_macro(repo_root, f"DNNP_STATUS_{attr}"))
    for attr in ("FLOAT", "HALF", "BFLOAT16", "INT32", "INT64"):
        assert getattr(DataType, attr) == int(_header_macro(repo_root, f"DNNP_DATA_TYPE_{attr}"))


def test_null_argument_maps_to_bad_param_error_with_text():
    st = _lib.library().dnnp_graph_create(0, 0, 0, None)
    assert st == Status.NULL_PARAMETER
    err = _lib._error(st, "dnnp_graph_create")
    assert isinstance(err, _lib.BadParamError) and isinstance(err, ValueError)
    assert err.status_name == "DNNP_STATUS_NULL_PARAMETER"
    assert err.message, "the library left no last-error text"
    assert str(err).startswith("dnnp_graph_create: DNNP_STATUS_NULL_PARAMETER: ")


def test_unknown_enum_value_is_bad_param_naming_the_value():
    with pytest.raises(_lib.BadParamError) as info:
        Graph(999, 0, 0)
    assert info.value.status == Status.BAD_PARAM
    assert "999" in info.value.message


def test_unknown_op_is_not_found_naming_it():
    with Graph(DataType.HALF) as g:
        with pytest.raises(_lib.NotFoundError) as info:
            g.add_node("no_such_op", {})
    assert "no_such_op" in str(info.value)


def test_invalid_graph_names_node_port_and_rule():
    with Graph(DataType.BFLOAT16, DataType.FLOAT, DataType.FLOAT) as g:
        q = g.tensor("q", DataType.BFLOAT16, (1, 2, 64, 64))
        k = g.tensor("k", DataType.BFLOAT16, (1, 2, 64, 32))  # head dim differs from q's
        v = g.tensor("v", DataType.BFLOAT16, (1, 2, 64, 64))
        g.add_node("sdpa", {"q": q, "k": k, "v": v}, {}, {"generate_stats": True},
                   name="attn", output_ports=("O",))
        with pytest.raises(_lib.InvalidGraphError) as info:
            g.validate()
    text = str(info.value)
    assert "DNNP_STATUS_INVALID_GRAPH" in text
    assert "attn" in text and "k" in text and "dim -1" in text


def test_panic_is_contained_and_reported():
    with pytest.raises(_lib.DnnplanError) as info:
        _lib.debug_force_panic("boom from python")
    assert info.value.status == Status.INTERNAL_PANIC
    assert "boom from python" in info.value.message
    assert _lib.version() > 0  # the library still works


def test_last_error_is_cleared_by_a_success():
    with pytest.raises(_lib.BadParamError):
        Graph(999)
    assert _lib.last_error() != ""
    Graph(DataType.HALF).close()
    assert _lib.last_error() == ""


def test_close_is_idempotent_and_use_after_close_raises():
    g = Graph(DataType.HALF)
    g.close()
    g.close()
    with pytest.raises(ValueError, match="closed"):
        g.validate()
    with Graph(DataType.HALF) as g2:
        pass
    with pytest.raises(ValueError, match="closed"):
        g2.to_json()


def test_strides_length_is_checked_before_the_call():
    with Graph(DataType.HALF) as g:
        with pytest.raises(ValueError, match="2 dims but 3 strides"):
            g.tensor("x", DataType.HALF, (2, 3), (3, 1, 1))


def _small_sdpa(g: Graph, causal: bool) -> None:
    dims = (1, 2, 64, 64)
    q = g.tensor("q", DataType.BFLOAT16, dims, uid=1)
    k = g.tensor("k", DataType.BFLOAT16, dims, uid=2)
    v = g.tensor("v", DataType.BFLOAT16, dims, uid=3)
    g.sdpa(q, k, v, 0.125, causal, True, "attn")


def test_json_round_trip_and_graph_keys():
    with Graph(DataType.BFLOAT16, DataType.FLOAT, DataType.FLOAT) as a, \
         Graph(DataType.BFLOAT16, DataType.FLOAT, DataType.FLOAT) as b, \
         Graph(DataType.BFLOAT16, DataType.FLOAT, DataType.FLOAT) as c:
        _small_sdpa(a, True)
        _small_sdpa(b, True)
        _small_sdpa(c, False)
        assert a.key() == b.key()
        assert a.key() != c.key()
        with Graph.from_json(a.to_json()) as back:
            assert back.key() == a.key()
            assert back.to_json() == a.to_json()
        with a.clone() as d:
            assert d.key() == a.key()


def test_handle_without_a_driver_records_the_stream():
    with Handle(0, device=0) as h:
        assert h.stream == 0
        assert h.device in (0, -1)
    with pytest.raises(_lib.BadParamError):
        Handle(2)  # CU_STREAM_PER_THREAD is refused


def test_execute_on_the_recording_test_engine_maps_arguments_to_operands():
    """The recording engine reads a uint64 at operand 0 and writes value + i into operand i
    (host memory), so it shows which buffer each operand slot received."""
    n = 4
    pl = PlanList.debug_exec_test(1, n)
    assert pl.operand_uids() == [1, 2, 3, 4]
    # launcher arguments in a shuffled order: argument j holds uid arg_uids[j]
    arg_uids = [3, None, 1, 4, 2]
    plan = PreparedPlan.from_built(pl, arg_uids)
    assert plan.order == (2, 4, 0, 3)
    bufs = [(ctypes.c_uint64 * 1024)() for _ in arg_uids]
    bufs[2][0] = 1000  # uid 1 = operand 0 is read
    with Handle(0, device=0) as h:
        plan.run(h.ptr, [ctypes.addressof(b) for b in bufs])
    assert bufs[4][0] == 1001  # uid 2 = operand 1
    assert bufs[0][0] == 1002  # uid 3 = operand 2
    assert bufs[3][0] == 1003  # uid 4 = operand 3
    assert bufs[1][0] == 0  # not an operand: untouched
    plan.close()


def test_execute_errors_carry_the_plan_and_the_rule():
    pl = PlanList.debug_exec_test(0, 3)
    with Handle(0, device=0) as h:
        with pytest.raises(_lib.BadParamError):
            pl.execute(h, [1, 2], 2)  # wrong operand count
        with pytest.raises(_lib.DnnplanError) as info:
            pl.execute(h, [0, 0, 0], 3)  # nothing bound
    assert info.value.message
    pl.close()


def test_workspace_engine_reports_its_size_and_refuses_a_missing_workspace():
    pl = PlanList.debug_exec_test(2, 2)
    plan = PreparedPlan.from_built(pl, [1, 2])
    assert plan.workspace_bytes == 256
    bufs = [(ctypes.c_uint64 * 1024)() for _ in range(2)]
    with Handle(0, device=0) as h:
        with pytest.raises(_lib.DnnplanError) as info:
            plan.run(h.ptr, [ctypes.addressof(b) for b in bufs], 0)
        assert "workspace" in info.value.message
        ws = (ctypes.c_uint8 * (256 + 128))()
        aligned = (ctypes.addressof(ws) + 127) // 128 * 128
        plan.run(h.ptr, [ctypes.addressof(b) for b in bufs], aligned)
    plan.close()


def test_attention_eligibility_document():
    doc = _lib.attention_eligibility(
        {"h_q": 8, "s_q": 1024, "d_qk": 128, "dtype": "bf16", "mask": "causal"},
        {"sm": 90, "cudnn": "9.19.0"})
    assert doc["schema"] == "dnnplan.attention_eligibility/1"
    assert doc["environment"]["sm"] == 90
    assert doc["verdicts"], "no verdicts"
    with pytest.raises(_lib.BadParamError):
        _lib.attention_eligibility({"h_q": 8, "s_q": 1, "d_qk": 64, "no_such_field": 1})


def test_engine_id_describe():
    doc = _lib.engine_id_describe(-1)
    assert doc["class"] == "delegating"


def _run_python(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=60)


def test_import_needs_no_torch_and_torch_names_load_lazily():
    env = dict(os.environ, PYTHONPATH=str(SRC))
    r = _run_python("""
        import sys
        sys.modules['torch'] = None  # any 'import torch' now fails
        import dnnplan_torch
        print(dnnplan_torch.version_string())
        try:
            dnnplan_torch.scaled_dot_product_attention
        except ImportError as e:
            print('lazy:', type(e).__name__)
        """, env)
    assert r.returncode == 0, r.stderr
    assert "lazy: ModuleNotFoundError" in r.stdout


def test_missing_library_names_every_place_tried(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(SRC), DNNPLAN_LIBRARY=str(tmp_path / "nope.so"))
    r = _run_python("""
        import dnnplan_torch
        try:
            dnnplan_torch.version()
        except dnnplan_torch.LibraryNotFound as e:
            print('error:', e)
        """, env)
    assert r.returncode == 0, r.stderr
    assert "nope.so (DNNPLAN_LIBRARY)" in r.stdout


def test_library_next_to_the_package_is_found(tmp_path):
    pkg = tmp_path / "dnnplan_torch"
    shutil.copytree(SRC / "dnnplan_torch", pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.environ["DNNPLAN_LIBRARY"], pkg / "libdnnplan.so")
    env = {k: v for k, v in os.environ.items() if k != "DNNPLAN_LIBRARY"}
    env["PYTHONPATH"] = str(tmp_path)
    r = _run_python("""
        import dnnplan_torch
        print(dnnplan_torch.library_path())
        """, env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(pkg / "libdnnplan.so")


def test_compact_strides():
    assert compact((2, 3, 4)) == (12, 4, 1)
    assert compact((5, 0, 2)) == (2, 2, 1)
    assert Desc((2, 3), (3, 1), DataType.HALF).dims == (2, 3)


def test_leak_forgets_without_destroying():
    g = Graph(DataType.HALF)
    ptr = g.ptr
    g.leak()
    with pytest.raises(ValueError, match="closed"):
        g.validate()
    # the C object is still alive: it can be used and destroyed through the raw pointer
    assert _lib.library().dnnp_graph_validate(ptr) == Status.SUCCESS
    _lib.library().dnnp_graph_destroy(ptr)
