"""The torch layer without a GPU (needs torch; skipped where torch is absent, as on CI): the hand
written schemas and their mutation annotations, module-level op handles, the fakes' exact output
metadata (compact outputs for permuted inputs, zero-element placeholders), host-side validation,
and that the public functions trace into a single graph (strict export, i.e. Dynamo with
fullgraph) with dynamic dims, holding exactly one dnnplan op each."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.export import Dim  # noqa: E402

import dnnplan_torch  # noqa: E402
from dnnplan_torch import gdn as gdn_mod  # noqa: E402
from dnnplan_torch import sdpa as sdpa_mod  # noqa: E402

BF16 = torch.bfloat16

SCHEMAS = {
    "sdpa_fwd": "dnnplan::sdpa_fwd(Tensor q, Tensor k, Tensor v, float scale, bool is_causal, "
                "bool generate_stats) -> (Tensor, Tensor)",
    "sdpa_bwd": "dnnplan::sdpa_bwd(Tensor q, Tensor k, Tensor v, Tensor o, Tensor d_o, "
                "Tensor stats, float scale, bool is_causal) -> (Tensor, Tensor, Tensor)",
    "gdn_fwd": "dnnplan::gdn_fwd(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, "
               "Tensor cu_seqlens, Tensor? initial_state, Tensor? a_log, Tensor? dt_bias, "
               "bool output_final_state, float scale, bool use_qk_l2norm, bool use_beta_sigmoid, "
               "bool allow_neg_eigval, bool safe_gate, str gate_domain, bool batch_invariant, "
               "str? plan_name) -> (Tensor, Tensor)",
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schemas_are_the_hand_written_ones(name):
    assert str(getattr(torch.ops.dnnplan, name).default._schema) == SCHEMAS[name]


def test_only_the_overwrite_op_mutates_and_it_declares_it():
    for name in ("sdpa_fwd", "sdpa_bwd", "gdn_fwd", "gdn_bwd", "gdn_fwd_overwrite_state"):
        schema = getattr(torch.ops.dnnplan, name).default._schema
        written = [a.name for a in schema.arguments if a.alias_info and a.alias_info.is_write]
        assert written == (["initial_state"] if name == "gdn_fwd_overwrite_state" else []), name


def test_op_handles_are_bound_at_module_level():
    assert sdpa_mod.sdpa_fwd is torch.ops.dnnplan.sdpa_fwd.default
    assert sdpa_mod.sdpa_bwd is torch.ops.dnnplan.sdpa_bwd.default
    assert gdn_mod.gdn_fwd is torch.ops.dnnplan.gdn_fwd.default
    assert gdn_mod.gdn_bwd is torch.ops.dnnplan.gdn_bwd.default


def _fake_cuda(*shape, dtype=BF16):
    return torch.empty(*shape, device="cuda", dtype=dtype)


def test_sdpa_fakes_are_compact_for_permuted_inputs():
    with FakeTensorMode():
        q = _fake_cuda(2, 128, 4, 64).transpose(1, 2)  # BSHD memory viewed as BHSD
        k = _fake_cuda(2, 2, 64, 96).movedim(-1, 2)  # token-innermost
        v = _fake_cuda(2, 2, 96, 32)
        o, st = sdpa_mod.sdpa_fwd(q, k, v, 0.1, False, True)
        assert o.shape == (2, 4, 128, 32) and o.dtype == BF16 and o.is_contiguous()
        assert st.shape == (2, 4, 128, 1) and st.dtype == torch.float32 and st.is_contiguous()
        o2, st2 = sdpa_mod.sdpa_fwd(q, k, v, 0.1, False, False)
        assert st2.shape == (0,) and st2.dtype == torch.float32
        dq, dk, dv = sdpa_mod.sdpa_bwd(q, k, v, o, o, st, 0.1, False)
        assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)
        assert all(t.is_contiguous() for t in (dq, dk, dv))


def test_gdn_fakes():
    cfg = (0.125, False, False, False, False, "log", False)
    with FakeTensorMode():
        t, h, hv, kd, vd = 200, 2, 4, 64, 64
        q = _fake_cuda(kd, t, h).permute(1, 2, 0)  # dense, token-innermost
        k = _fake_cuda(t, h, kd)
        v = _fake_cuda(t, hv, vd)
        g = _fake_cuda(t, hv, dtype=torch.float32)
        cu = torch.empty(4, device="cuda", dtype=torch.int32)
        init = _fake_cuda(3, hv, vd, kd)
        o, fs = gdn_mod.gdn_fwd(q, k, v, g, g, cu, init, None, None, True, *cfg, None)
        assert o.shape == (t, hv, vd) and o.dtype == BF16 and o.is_contiguous()
        assert fs.shape == (3, hv, vd, kd) and fs.dtype == BF16 and fs.is_contiguous()
        o, fs = gdn_mod.gdn_fwd(q, k, v, g, g, cu, None, None, None, False, *cfg, None)
        assert fs.shape == (0,) and fs.dtype == torch.float32
        o, fs = gdn_mod.gdn_fwd(q, k, v, g, g, cu, None, None, None, True, *cfg, None)
        assert fs.shape == (3, hv, vd, kd) and fs.dtype == torch.float32
        grads = gdn_mod.gdn_bwd(q, k, v, g, g, cu, o, init, init, None, None, *cfg)
        assert [tuple(x.shape) for x in grads[:6]] == [
            (t, h, kd), (t, h, kd), (t, hv, vd), (t, hv), (t, hv), (3, hv, vd, kd)]
        assert all(x.is_contiguous() for x in grads)
        assert [tuple(x.shape) for x in grads[6:]] == [(0,), (0,)]
        assert grads[3].dtype == torch.float32 and grads[0].dtype == BF16


def test_public_functions_validate_on_the_host():
    q = torch.empty(1, 2, 64, 64, dtype=BF16)
    with pytest.raises(ValueError, match="CUDA"):
        dnnplan_torch.scaled_dot_product_attention(q, q, q)
    x = torch.empty(64, 2, 64, dtype=BF16)
    g = torch.empty(64, 2)
    cu = torch.tensor([0, 64], dtype=torch.int32)
    with pytest.raises(ValueError, match="CUDA"):
        dnnplan_torch.gated_delta_net(x, x, x, g, g, cu)
    with pytest.raises(ValueError, match="CUDA"):
        dnnplan_torch.gated_delta_net(x, x, x, g, g, cu, checkpoint_every_n_tokens=64)
    with pytest.raises(ValueError, match="multiple of 64"):
        dnnplan_torch.gated_delta_net(x, x, x, g, g, cu, checkpoint_every_n_tokens=96)
    with pytest.raises(TypeError, match="checkpoint_dtype"):
        dnnplan_torch.gated_delta_net(x, x, x, g, g, cu, checkpoint_every_n_tokens=64,
                                      checkpoint_dtype=torch.float16)


def _dnnplan_calls(ep) -> list:
    return [n.target for n in ep.graph.nodes
            if n.op == "call_function" and "dnnplan" in str(n.target)]


def test_sdpa_traces_into_one_graph_with_dynamic_dims():
    class M(torch.nn.Module):
        def forward(self, q, k, v):
            return dnnplan_torch.scaled_dot_product_attention(q, k, v, is_causal=True).output

    with FakeTensorMode(allow_non_fake_inputs=True):
        q, k, v = (_fake_cuda(2, 4, 128, 64) for _ in range(3))
        b, s = Dim("b", min=2, max=64), Dim("s", min=2, max=8192)
        spec = {0: b, 2: s}
        ep = torch.export.export(M(), (q, k, v), dynamic_shapes=(spec, spec, spec), strict=True)
    assert _dnnplan_calls(ep) == [torch.ops.dnnplan.sdpa_fwd.default]


def test_gdn_traces_into_one_graph_with_dynamic_token_count():
    class M(torch.nn.Module):
        def forward(self, q, k, v, g, beta, cu, init):
            out = dnnplan_torch.gated_delta_net(q, k, v, g, beta, cu, initial_state=init,
                                                output_final_state=True)
            return out.output, out.final_state

    with FakeTensorMode(allow_non_fake_inputs=True):
        q, k, v = (_fake_cuda(200, 2, 64) for _ in range(3))
        g, beta = (_fake_cuda(200, 2, dtype=torch.float32) for _ in range(2))
        cu = torch.empty(3, device="cuda", dtype=torch.int32)
        init = _fake_cuda(2, 2, 64, 64, dtype=torch.float32)
        t = Dim("t", min=2, max=1 << 20)
        ep = torch.export.export(M(), (q, k, v, g, beta, cu, init),
                                 dynamic_shapes=({0: t}, {0: t}, {0: t}, {0: t}, {0: t}, None,
                                                 None), strict=True)
    assert _dnnplan_calls(ep) == [torch.ops.dnnplan.gdn_fwd.default]


def test_compile_fullgraph_reuses_one_graph_across_dynamic_shapes():
    """Dynamo (fullgraph, dynamic) over fake CUDA inputs: each public function compiles once and
    is reused for new batch/sequence/token counts (the head dim is specialized: the default
    scale is a constant)."""
    from torch._dynamo.testing import CompileCounter

    torch._dynamo.reset()
    sdpa_count, gdn_count = CompileCounter(), CompileCounter()

    def attn(q, k, v):
        return dnnplan_torch.scaled_dot_product_attention(q, k, v, is_causal=True).output * 2

    def delta(q, k, v, g, beta, cu, init):
        out = dnnplan_torch.gated_delta_net(q, k, v, g, beta, cu, initial_state=init,
                                            output_final_state=True)
        return out.output * 0.5, out.final_state

    c_attn = torch.compile(attn, backend=sdpa_count, fullgraph=True, dynamic=True)
    c_delta = torch.compile(delta, backend=gdn_count, fullgraph=True, dynamic=True)
    with FakeTensorMode(allow_non_fake_inputs=True):
        for b, s in ((2, 128), (3, 256), (5, 96)):
            q = _fake_cuda(b, 4, s, 64)
            assert c_attn(q, q, q).shape == (b, 4, s, 64)
        for t in (200, 300, 77):
            x = _fake_cuda(t, 2, 64)
            g = _fake_cuda(t, 2, dtype=torch.float32)
            cu = torch.empty(3, device="cuda", dtype=torch.int32)
            init = _fake_cuda(2, 2, 64, 64, dtype=torch.float32)
            o, fs = c_delta(x, x, x, g, g, cu, init)
            assert o.shape == (t, 2, 64) and fs.shape == (2, 2, 64, 64)
    assert (sdpa_count.frame_count, gdn_count.frame_count) == (1, 1)
    assert sdpa_count.op_count >= 1 and gdn_count.op_count >= 1


def test_cpp_eager_context_is_plain_only_when_nothing_watches():
    """The C++ launcher's "plain eager" conditions (the public functions call it directly only
    then): true by default and under no_grad; false under a dispatch mode, a function mode, the
    profiler and inference mode (whose tensors take the registered op)."""
    from dnnplan_torch import _cpp
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    if not _cpp.ACTIVE:
        pytest.skip(f"C++ launcher not active: {_cpp.REASON}")
    ctx = _cpp.C.eager_context
    assert ctx()["plain"], ctx()
    with torch.no_grad():
        assert ctx()["plain"], ctx()

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Dispatch():
        assert ctx()["dispatch_mode"] and not ctx()["plain"]
    with Function():
        assert ctx()["function_mode"] and not ctx()["plain"]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        assert ctx()["record_callbacks"] and not ctx()["plain"]
    with torch.inference_mode():
        assert not ctx()["plain"]
    assert ctx()["plain"]
