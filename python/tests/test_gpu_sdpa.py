"""SDPA through dnnplan on the GPU (marker ``gpu``): numerics against torch's SDPA (fp32 math
reference; our error must stay within a small multiple of torch's own bf16/fp16 error), the
statistics, forward and backward, GQA, permuted layouts, the plan cache, opcheck with compact and
dense permuted inputs, torch.compile(fullgraph=True) reused across dynamic shapes, and CUDA-graph
capture and replay."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import dnnplan_torch  # noqa: E402
from dnnplan_torch import _launch  # noqa: E402

pytestmark = pytest.mark.gpu

DEV = "cuda"


def _rms(a, b) -> float:
    a, b = a.double(), b.double()
    return ((a - b).pow(2).mean().sqrt() / b.pow(2).mean().sqrt().clamp_min(1e-12)).item()


def _inputs(b, hq, hk, sq, skv, d, dv, dtype, seed=0):
    gen = torch.Generator(device=DEV).manual_seed(seed)
    q = torch.randn(b, hq, sq, d, device=DEV, dtype=dtype, generator=gen)
    k = torch.randn(b, hk, skv, d, device=DEV, dtype=dtype, generator=gen)
    v = torch.randn(b, hk, skv, dv, device=DEV, dtype=dtype, generator=gen)
    return q, k, v


def _torch_sdpa(q, k, v, causal, scale, gqa):
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale,
                                          enable_gqa=gqa)


CASES = [
    # b, hq, hk, sq, skv, d, dv, causal
    pytest.param(2, 4, 4, 256, 256, 64, 64, True, id="self-causal-d64"),
    pytest.param(1, 8, 8, 128, 384, 128, 128, False, id="cross-d128"),
    pytest.param(2, 8, 2, 192, 192, 128, 128, True, id="gqa-causal"),
    pytest.param(1, 4, 4, 100, 300, 64, 64, True, id="ragged-lengths-causal-top-left"),
]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("b,hq,hk,sq,skv,d,dv,causal", CASES)
def test_forward_backward_match_torch(b, hq, hk, sq, skv, d, dv, causal, dtype):
    q, k, v = _inputs(b, hq, hk, sq, skv, d, dv, dtype)
    scale = 1.0 / math.sqrt(d)
    gqa = hq != hk
    d_o = torch.randn(b, hq, sq, dv, device=DEV, dtype=dtype)

    # fp32 reference and torch's own low-precision result (the error budget)
    ref_in = [t.float().requires_grad_() for t in (q, k, v)]
    ref = _torch_sdpa(*ref_in, causal, scale, gqa)
    ref.backward(d_o.float())
    low_in = [t.clone().requires_grad_() for t in (q, k, v)]
    low = _torch_sdpa(*low_in, causal, scale, gqa)
    low.backward(d_o)

    ours_in = [t.clone().requires_grad_() for t in (q, k, v)]
    out = dnnplan_torch.scaled_dot_product_attention(*ours_in, is_causal=causal,
                                                     enable_gqa=gqa)
    assert isinstance(out, dnnplan_torch.SDPAOutput)
    assert out.output.shape == (b, hq, sq, dv) and out.output.dtype == dtype
    assert out.output.is_contiguous()
    out.output.backward(d_o)

    cap = 3e-2 if dtype == torch.bfloat16 else 1e-2
    err, budget = _rms(out.output, ref), _rms(low, ref)
    assert err <= max(3 * budget, 2e-3) and err <= cap, (err, budget)
    for name, ours, mine_low, r in zip("qkv", ours_in, low_in, ref_in):
        err, budget = _rms(ours.grad, r.grad), _rms(mine_low.grad, r.grad)
        assert err <= max(4 * budget, 4e-3) and err <= 2 * cap, (name, err, budget)

    # Stats: natural-log log-sum-exp of the scaled, masked scores per query row
    kk = k.float().repeat_interleave(hq // hk, dim=1)
    s = torch.einsum("bhqd,bhkd->bhqk", q.float(), kk) * scale
    if causal:
        s = s.masked_fill(torch.ones(sq, skv, device=DEV, dtype=torch.bool).tril().logical_not(),
                          float("-inf"))
    lse = torch.logsumexp(s, dim=-1, keepdim=True)
    assert out.stats.shape == (b, hq, sq, 1) and out.stats.dtype == torch.float32
    torch.testing.assert_close(out.stats, lse, atol=2e-2, rtol=1e-3)


def test_inference_path_returns_stats_only_on_request():
    q, k, v = _inputs(1, 2, 2, 128, 128, 64, 64, torch.bfloat16)
    with torch.no_grad():
        plain = dnnplan_torch.scaled_dot_product_attention(q, k, v)
        withs = dnnplan_torch.scaled_dot_product_attention(q, k, v, return_stats=True)
    assert plain.stats is None and withs.stats.shape == (1, 2, 128, 1)
    torch.testing.assert_close(plain.output, withs.output)
    ref = _torch_sdpa(q.float(), k.float(), v.float(), False, None, False)
    assert _rms(plain.output, ref) < 1e-2


@pytest.mark.parametrize("layout", ["bshd-view", "token-innermost"])
def test_permuted_layouts(layout):
    b, h, s, d = 2, 4, 128, 64
    base = _inputs(b, h, h, s, s, d, d, torch.bfloat16, seed=3)
    if layout == "bshd-view":  # dense, innermost stride 1: served as is
        xs = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in base]
    else:  # dense, innermost stride != 1: copied to compact by the launcher
        xs = [t.movedim(2, -1).contiguous().movedim(-1, 2) for t in base]
    for a, b_ in zip(xs, base):
        assert torch.equal(a, b_) and a.stride() != b_.stride()
    with torch.no_grad():
        got = dnnplan_torch.scaled_dot_product_attention(*xs, is_causal=True).output
        want = dnnplan_torch.scaled_dot_product_attention(*base, is_causal=True).output
    assert got.is_contiguous()
    torch.testing.assert_close(got, want, atol=1e-2, rtol=1e-2)


def test_steady_state_builds_nothing():
    q, k, v = _inputs(1, 2, 2, 64, 64, 64, 64, torch.float16, seed=5)
    with torch.no_grad():
        dnnplan_torch.scaled_dot_product_attention(q, k, v)
        misses = _launch.plan_cache_info()["misses"]
        for _ in range(5):
            dnnplan_torch.scaled_dot_product_attention(q, k, v)
        assert _launch.plan_cache_info()["misses"] == misses
        dnnplan_torch.scaled_dot_product_attention(q, k, v, is_causal=True)
        assert _launch.plan_cache_info()["misses"] == misses + 1


def test_runs_on_the_current_stream():
    q, k, v = _inputs(1, 2, 2, 128, 128, 64, 64, torch.bfloat16, seed=6)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        out = dnnplan_torch.scaled_dot_product_attention(q, k, v).output
    torch.cuda.current_stream().wait_stream(side)
    ref = _torch_sdpa(q.float(), k.float(), v.float(), False, None, False)
    assert _rms(out, ref) < 1e-2


def test_host_validation_errors():
    q, k, v = _inputs(1, 2, 2, 64, 64, 64, 64, torch.bfloat16)
    with pytest.raises(ValueError, match="4-D"):
        dnnplan_torch.scaled_dot_product_attention(q[0], k, v)
    with pytest.raises(TypeError, match="float16 or bfloat16"):
        dnnplan_torch.scaled_dot_product_attention(q.float(), k.float(), v.float())
    with pytest.raises(ValueError, match="enable_gqa"):
        dnnplan_torch.scaled_dot_product_attention(q, k[:, :1], v[:, :1])
    with pytest.raises(ValueError, match="CUDA"):
        dnnplan_torch.scaled_dot_product_attention(q.cpu(), k.cpu(), v.cpu())


def _dense_permuted(t):
    return t.movedim(2, -1).contiguous().movedim(-1, 2)


@pytest.mark.parametrize("layout", ["compact", "dense-permuted"])
def test_opcheck(layout):
    from dnnplan_torch.sdpa import sdpa_bwd, sdpa_fwd

    q, k, v = _inputs(1, 2, 2, 64, 64, 64, 64, torch.bfloat16, seed=7)
    if layout == "dense-permuted":
        q, k, v = (_dense_permuted(t) for t in (q, k, v))
    for stats in (True, False):
        torch.library.opcheck(sdpa_fwd, (q, k, v, 0.125, True, stats))
    o, st = sdpa_fwd(q, k, v, 0.125, True, True)
    d_o = torch.randn_like(o)
    if layout == "dense-permuted":
        o, d_o = _dense_permuted(o), _dense_permuted(d_o)
    torch.library.opcheck(sdpa_bwd, (q, k, v, o, d_o, st, 0.125, True))


def test_compile_fullgraph_dynamic_forward_backward():
    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    counter = CompileCounterWithBackend("inductor")

    def f(q, k, v):
        out = dnnplan_torch.scaled_dot_product_attention(q, k, v, is_causal=True).output
        return (out.float() * 2).sum(dim=-1)

    cf = torch.compile(f, backend=counter, fullgraph=True, dynamic=True)
    for b, s in ((2, 128), (3, 256), (4, 192)):
        base = _inputs(b, 4, 4, s, s, 64, 64, torch.bfloat16, seed=s)
        xe = [t.clone().requires_grad_() for t in base]
        xc = [t.clone().requires_grad_() for t in base]
        ye, yc = f(*xe), cf(*xc)
        torch.testing.assert_close(yc, ye, atol=1e-2, rtol=1e-2)
        gy = torch.randn_like(ye)
        ye.backward(gy)
        yc.backward(gy)
        for a, c in zip(xe, xc):
            torch.testing.assert_close(c.grad, a.grad, atol=2e-2, rtol=2e-2)
    assert counter.frame_count == 1, f"recompiled: {counter.frame_count} frames"


def test_cuda_graph_capture_and_replay_forward_backward():
    b, h, s, d = 1, 4, 128, 64
    static = [t.clone().requires_grad_() for t in _inputs(b, h, h, s, s, d, d, torch.bfloat16)]
    static_do = torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16)

    def step():
        for t in static:
            t.grad = None
        out = dnnplan_torch.scaled_dot_product_attention(*static, is_causal=True).output
        out.backward(static_do)
        return out

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # plans, handle for this stream, allocator warm-up
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        static_out = step()

    for seed in (11, 12):
        fresh = _inputs(b, h, h, s, s, d, d, torch.bfloat16, seed=seed)
        with torch.no_grad():
            for t, f in zip(static, fresh):
                t.copy_(f)
        graph.replay()
        torch.cuda.synchronize()
        eager_in = [t.clone().requires_grad_() for t in fresh]
        eager = dnnplan_torch.scaled_dot_product_attention(*eager_in, is_causal=True).output
        eager.backward(static_do)
        torch.testing.assert_close(static_out, eager, atol=2e-2, rtol=2e-2)
        for t, e in zip(static, eager_in):
            torch.testing.assert_close(t.grad, e.grad, atol=2e-2, rtol=2e-2)


def test_capture_of_an_unplanned_shape_is_refused_with_guidance():
    q, k, v = _inputs(1, 3, 3, 80, 80, 64, 64, torch.float16, seed=31)  # a shape no test plans
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="Run it once with the same inputs before capturing"):
        with torch.cuda.graph(graph, stream=side), torch.no_grad():
            dnnplan_torch.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    # nothing was cached for it: outside capture it plans and runs
    with torch.no_grad():
        out = dnnplan_torch.scaled_dot_product_attention(q, k, v).output
    ref = _torch_sdpa(q.float(), k.float(), v.float(), False, None, False)
    assert _rms(out, ref) < 5e-3
