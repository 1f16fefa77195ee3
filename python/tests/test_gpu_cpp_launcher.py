"""The C++ launcher (``dnnplan_torch._C``) on the GPU (marker ``gpu``): when built it is the one
serving the forward ops (its kernels are the registered CUDA kernels; after the first call of a
signature no Python launcher code runs), it gives the Python launcher's results (same plan, same
kernels), inputs that need a copy are served through Python every call, and the pure-Python fallback
(``DNNPLAN_TORCH_CPP=0``) still serves forward and backward with the same results.

Every other GPU test (numerics, opcheck, torch.compile, CUDA graphs, backward) goes through the
registered ops, i.e. through the C++ launcher whenever it is built. ``run_gpu_tests.sh`` builds it
and sets ``DNNPLAN_REQUIRE_CPP=1``, which turns a missing extension into a failure."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import dnnplan_torch  # noqa: E402
from dnnplan_torch import _cpp, _launch  # noqa: E402
from dnnplan_torch import gdn as gdn_mod  # noqa: E402
from dnnplan_torch import sdpa as sdpa_mod  # noqa: E402

pytestmark = pytest.mark.gpu

DEV = "cuda"
SRC = Path(__file__).resolve().parent.parent / "src"


@pytest.fixture
def cpp():
    if not _cpp.ACTIVE:
        if os.environ.get("DNNPLAN_REQUIRE_CPP") == "1":
            pytest.fail(f"DNNPLAN_REQUIRE_CPP=1 but the C++ launcher is not active: {_cpp.REASON}")
        pytest.skip(f"C++ launcher not active: {_cpp.REASON}")
    return _cpp.C


def _sdpa_inputs(seed=0, shape=(1, 2, 96, 64)):
    gen = torch.Generator(device=DEV).manual_seed(seed)
    return tuple(torch.randn(*shape, device=DEV, dtype=torch.bfloat16, generator=gen)
                 for _ in range(3))


def _gdn_inputs(seed=0, t=192, h=2, d=64):
    gen = torch.Generator(device=DEV).manual_seed(seed)
    q, k, v = (F.normalize(torch.randn(t, h, d, device=DEV, generator=gen), dim=-1)
               .to(torch.bfloat16) for _ in range(3))
    g = F.logsigmoid(torch.randn(t, h, device=DEV, generator=gen) + 3)
    beta = torch.sigmoid(torch.randn(t, h, device=DEV, generator=gen))
    cu = torch.tensor([0, 64, t], device=DEV, dtype=torch.int32)
    return q, k, v, g, beta, cu


def _gdn_args(q, k, v, g, beta, cu):
    return (q, k, v, g, beta, cu, None, None, None, False, 1.0 / math.sqrt(q.shape[2]), False,
            False, False, False, "log", False, None)


def test_forward_kernels_are_the_extensions(cpp):
    for name in ("sdpa_fwd", "gdn_fwd"):
        dump = torch._C._dispatch_dump(f"dnnplan::{name}")
        cuda = [line for line in dump.splitlines() if line.startswith("CUDA")]
        assert cuda and "launcher.cpp" in cuda[0], dump
    # the other ops keep their Python kernels
    dump = torch._C._dispatch_dump("dnnplan::sdpa_bwd")
    assert "launcher.cpp" not in dump


@pytest.mark.parametrize("op", ["sdpa", "gdn"])
def test_steady_state_runs_no_python(cpp, op, monkeypatch):
    if op == "sdpa":
        args = (*_sdpa_inputs(1), 0.125, True, False)
        call = sdpa_mod.sdpa_fwd
    else:
        args = _gdn_args(*_gdn_inputs(1))
        call = gdn_mod.gdn_fwd
    _launch.clear_plan_cache()
    before = _cpp.stats()
    first = call(*args)
    after_first = _cpp.stats()
    assert after_first["misses"] == before["misses"] + 1
    assert after_first["entries"] == 1

    def boom(*a, **kw):
        raise AssertionError("the Python launcher ran in the C++ steady state")

    # Nothing of the Python launch path may run from here on.
    monkeypatch.setattr(_launch, "launch", boom)
    monkeypatch.setattr(_launch, "prepared", boom)
    with torch.no_grad():
        outs = [call(*args) for _ in range(5)]
        public = (dnnplan_torch.scaled_dot_product_attention(args[0], args[1], args[2],
                                                             is_causal=True, scale=0.125)
                  if op == "sdpa" else dnnplan_torch.gated_delta_net(*args[:6]))
    monkeypatch.undo()
    end = _cpp.stats()
    assert end["misses"] == after_first["misses"]
    assert end["hits"] == after_first["hits"] + 6
    assert end["python_calls"] == after_first["python_calls"]
    for o in outs + [public]:
        torch.testing.assert_close(o[0], first[0])  # bf16 tolerance: GDN may not be bitwise


def test_cpp_and_python_launchers_agree(cpp):
    q, k, v = _sdpa_inputs(2, (2, 4, 160, 64))
    for stats in (False, True):
        want = sdpa_mod._sdpa_fwd_cuda(q, k, v, 0.1, True, stats)
        for _ in range(2):  # miss, then steady state
            got = cpp.sdpa_fwd(q, k, v, 0.1, True, stats)
            for a, b in zip(got, want):
                assert a.shape == b.shape and a.dtype == b.dtype and a.is_contiguous()
                assert torch.equal(a, b)
    args = _gdn_args(*_gdn_inputs(3))
    want = gdn_mod._gdn_fwd_cuda(*args)
    for _ in range(2):
        got = cpp.gdn_fwd(*args)
        for a, b in zip(got, want):
            assert a.shape == b.shape and a.dtype == b.dtype and a.is_contiguous()
            torch.testing.assert_close(a, b)


def test_inputs_needing_a_copy_are_served_through_python(cpp):
    q, k, v = _sdpa_inputs(4, (1, 2, 64, 64))
    # innermost stride 2: the launcher copies, so the signature is not servable as given
    qw = torch.empty(1, 2, 64, 128, device=DEV, dtype=q.dtype)[..., ::2]
    qw.copy_(q)
    _launch.clear_plan_cache()
    want = sdpa_mod.sdpa_fwd(q, k, v, 0.125, False, False)[0]
    s0 = _cpp.stats()
    for _ in range(3):
        got = sdpa_mod.sdpa_fwd(qw, k, v, 0.125, False, False)[0]
        torch.testing.assert_close(got, want, atol=0, rtol=0)
    s1 = _cpp.stats()
    assert s1["misses"] == s0["misses"] + 1
    assert s1["python_calls"] == s0["python_calls"] + 2


def test_side_streams_get_their_own_handle_and_workspace(cpp):
    args = _gdn_args(*_gdn_inputs(5))
    want = gdn_mod.gdn_fwd(*args)[0]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        got = gdn_mod.gdn_fwd(*args)[0]
    torch.cuda.current_stream().wait_stream(side)
    torch.testing.assert_close(got, want)


def test_public_eager_inference_skips_the_dispatcher_only_when_nothing_watches(cpp):
    from torch.utils._python_dispatch import TorchDispatchMode

    q, k, v = _sdpa_inputs(8)
    x = _gdn_inputs(8)
    with torch.no_grad():
        assert cpp.sdpa_precheck(q, k, v, False) == 3, cpp.eager_context()
        assert cpp.gdn_precheck(*x, None, None, None, None) == 3, cpp.eager_context()
        # a subclass, an inference tensor, a bad shape: not the direct path
        class Sub(torch.Tensor):
            pass

        assert cpp.sdpa_precheck(q.as_subclass(Sub), k, v, False) == 1
        with torch.inference_mode():
            qi = q.clone()
        assert cpp.sdpa_precheck(qi, k, v, False) == 1
        assert cpp.sdpa_precheck(q[0], k, v, False) == 0
    assert cpp.sdpa_precheck(q.clone().requires_grad_(), k, v, False) == 2

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func)
            return func(*args, **(kwargs or {}))

    with torch.no_grad():
        want = dnnplan_torch.scaled_dot_product_attention(q, k, v).output  # direct
        with Seen() as seen:
            assert cpp.sdpa_precheck(q, k, v, False) == 1
            got = dnnplan_torch.scaled_dot_product_attention(q, k, v).output
            dnnplan_torch.gated_delta_net(*x)
        assert torch.ops.dnnplan.sdpa_fwd.default in seen.ops
        assert torch.ops.dnnplan.gdn_fwd.default in seen.ops
        torch.testing.assert_close(got, want, atol=0, rtol=0)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            dnnplan_torch.scaled_dot_product_attention(q, k, v)
        assert any(e.key == "dnnplan::sdpa_fwd" for e in prof.key_averages())


_FALLBACK = textwrap.dedent("""
    import math, sys, torch
    import torch.nn.functional as F
    import dnnplan_torch
    from dnnplan_torch import _cpp
    assert not _cpp.ACTIVE, _cpp.REASON
    assert "launcher.cpp" not in torch._C._dispatch_dump("dnnplan::sdpa_fwd")
    gen = torch.Generator(device="cuda").manual_seed(7)
    q, k, v = (torch.randn(1, 2, 128, 64, device="cuda", dtype=torch.bfloat16, generator=gen)
               .requires_grad_() for _ in range(3))
    out = dnnplan_torch.scaled_dot_product_attention(q, k, v, is_causal=True).output
    out.float().sum().backward()
    t, h, d = 192, 2, 64
    qg, kg, vg = (F.normalize(torch.randn(t, h, d, device="cuda", generator=gen), dim=-1)
                  .to(torch.bfloat16) for _ in range(3))
    g = F.logsigmoid(torch.randn(t, h, device="cuda", generator=gen) + 3)
    beta = torch.sigmoid(torch.randn(t, h, device="cuda", generator=gen))
    cu = torch.tensor([0, 64, t], device="cuda", dtype=torch.int32)
    with torch.no_grad():
        res = dnnplan_torch.gated_delta_net(qg, kg, vg, g, beta, cu, output_final_state=True)
    torch.save({"inputs": [x.detach().cpu() for x in (q, k, v, qg, kg, vg, g, beta, cu)],
                "sdpa": out.detach().cpu(), "grads": [x.grad.cpu() for x in (q, k, v)],
                "gdn": [res.output.cpu(), res.final_state.cpu()]}, sys.argv[1])
""")


def test_python_fallback_still_serves_everything(cpp, tmp_path):
    path = tmp_path / "fallback.pt"
    env = dict(os.environ, DNNPLAN_TORCH_CPP="0",
               PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", _FALLBACK, str(path)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    ref = torch.load(path)
    q, k, v, qg, kg, vg, g, beta, cu = (x.to(DEV) for x in ref["inputs"])
    q, k, v = (x.requires_grad_() for x in (q, k, v))
    out = dnnplan_torch.scaled_dot_product_attention(q, k, v, is_causal=True).output
    out.float().sum().backward()
    torch.testing.assert_close(out.detach().cpu(), ref["sdpa"])
    for x, want in zip((q, k, v), ref["grads"]):
        torch.testing.assert_close(x.grad.cpu(), want, atol=1e-2, rtol=1e-2)
    with torch.no_grad():
        res = dnnplan_torch.gated_delta_net(qg, kg, vg, g, beta, cu, output_final_state=True)
    torch.testing.assert_close(res.output.cpu(), ref["gdn"][0])
    torch.testing.assert_close(res.final_state.cpu(), ref["gdn"][1])
