"""The package's own graphs (the ones the torch launchers build) through the binding: they
validate, declare the launcher's buffers (compact outputs, nothing virtual), and plan. On a
machine without CUDA/cuDNN every engine declines with its reason, and those reasons must reach
the caller (explain JSON and the NotSupportedError text). Runs on CPU machines (CI)."""

from __future__ import annotations

import pytest

from dnnplan_torch import _lib
from dnnplan_torch._graphs import (
    GDN_CHUNK_FACTOR_BYTES,
    Desc,
    GdnConfig,
    PreparedPlan,
    compact,
    default_gdn_scale,
    gdn_bwd_graph,
    gdn_checkpoint_rows,
    gdn_chunk_factor_bytes,
    gdn_chunk_factor_rows,
    gdn_fwd_graph,
    sdpa_bwd_graph,
    sdpa_fwd_graph,
)
from dnnplan_torch._lib import DataType

BF16, F32, I32 = DataType.BFLOAT16, DataType.FLOAT, DataType.INT32


def d(dims, dtype=BF16, strides=None):
    return Desc(tuple(dims), tuple(strides) if strides else compact(dims), dtype)


def _cudnn_absent(explain: dict) -> bool:
    return "not loaded" in explain["backend"]["provider"]


def _cuda_absent(explain: dict) -> bool:
    return "no CUDA device" in explain["target"]["description"]


def _tensor_ids(graph: _lib.Graph) -> dict:
    import json

    doc = json.loads(graph.to_json())
    return {t["name"]: t for t in doc["tensors"]}


# ---------------------------------------------------------------------------------------------
# SDPA


def test_sdpa_forward_graph_declares_the_launcher_buffers():
    # q as a BSHD tensor viewed as BHSD (permuted, innermost stride 1)
    b, h, s, dh = 2, 4, 128, 64
    q = d((b, h, s, dh), strides=(s * h * dh, dh, h * dh, 1))
    g, args = sdpa_fwd_graph(q, d((b, 2, 256, dh)), d((b, 2, 256, 32)), scale=0.125,
                             is_causal=True, generate_stats=True)
    with g:
        assert args == [1, 2, 3, 4, 5]
        g.validate()
        o, stats = g.tensor_info(4), g.tensor_info(5)
        assert o == {"dtype": BF16, "dims": [b, h, s, 32], "strides": list(compact((b, h, s, 32))),
                     "is_virtual": False}
        assert stats["dims"] == [b, h, s, 1] and stats["dtype"] == F32
        assert g.tensor_info(1)["strides"] == [s * h * dh, dh, h * dh, 1]
        node = _tensor_ids(g)
        assert set(node) == {"q", "k", "v", "O", "Stats"}


def test_sdpa_inference_graph_has_no_stats_operand():
    g, args = sdpa_fwd_graph(d((1, 2, 64, 64)), d((1, 2, 64, 64)), d((1, 2, 64, 64)),
                             scale=0.125, is_causal=False, generate_stats=False)
    with g:
        g.validate()
        assert args[4] is None
        assert set(_tensor_ids(g)) == {"q", "k", "v", "O"}


def test_sdpa_graphs_plan_or_decline_with_the_backend_reason():
    x = d((1, 2, 128, 64))
    stats = d((1, 2, 128, 1), F32)
    for g, _ in (sdpa_fwd_graph(x, x, x, scale=0.125, is_causal=True, generate_stats=True),
                 sdpa_bwd_graph(x, x, x, x, x, stats, scale=0.125, is_causal=True)):
        ex = g.explain()
        assert ex["family"]["name"] is None  # SDPA is served by the backend alone
        if not _cudnn_absent(ex):
            pytest.skip("cuDNN is loadable here; this test checks the declining path")
        backend = ex["backend"]
        assert backend["verdict"] == "decline"
        assert "cuDNN is not loaded" in backend["reason"]
        assert ex["plans"] == []
        with pytest.raises(_lib.NotSupportedError) as info:
            PreparedPlan(g, [])
        assert "cuDNN is not loaded" in str(info.value)
        assert info.value.status_name == "DNNP_STATUS_NOT_SUPPORTED"


def test_sdpa_backward_graph_outputs_are_compact_like_their_inputs():
    b, h, s, dh = 1, 2, 64, 64
    permuted = d((b, h, s, dh), strides=(s * h * dh, dh, h * dh, 1))
    g, args = sdpa_bwd_graph(permuted, permuted, permuted, d((b, h, s, dh)), permuted,
                             d((b, h, s, 1), F32), scale=0.1, is_causal=False)
    with g:
        g.validate()
        assert args == list(range(1, 10))
        for uid in (7, 8, 9):
            info = g.tensor_info(uid)
            assert info["strides"] == list(compact((b, h, s, dh)))
            assert not info["is_virtual"]


def test_typed_sdpa_helper_and_builder_agree_on_outputs():
    x = d((1, 2, 64, 64))
    g1, _ = sdpa_fwd_graph(x, x, x, scale=0.125, is_causal=True, generate_stats=True)
    with g1, _lib.Graph(BF16, F32, F32) as g2:
        q, k, v = (g2.tensor(n, BF16, x.dims, uid=i + 1) for i, n in enumerate("qkv"))
        o, st = g2.sdpa(q, k, v, 0.125, True, True)
        g1.validate()
        g2.validate()
        assert g2.tensor_info(o)["dims"] == g1.tensor_info(4)["dims"]
        assert g2.tensor_info(st)["dims"] == g1.tensor_info(5)["dims"]
        assert g2.tensor_info(o)["is_virtual"]  # typed helpers leave outputs virtual


# ---------------------------------------------------------------------------------------------
# Gated delta net

T, H, K = 96, 4, 64


def _gdn_fwd(**kw):
    cu = d((3,), I32)
    gate = d((T, H), F32)
    return gdn_fwd_graph(d((T, H, K)), d((T, H, K)), d((T, H, K)), gate, gate, cu,
                         kw.pop("initial_state", None), None, None,
                         cfg=kw.pop("cfg", GdnConfig(default_gdn_scale(K))),
                         output_final_state=kw.pop("output_final_state", True), **kw)


def test_gdn_forward_graph_declares_the_launcher_buffers():
    g, args = _gdn_fwd(initial_state=d((2, H, K, K), F32))
    with g:
        g.validate()
        assert args == [1, 2, 3, 4, 5, 6, 7, None, None, None, 11, 12]
        assert g.tensor_info(11)["dims"] == [T, H, K]
        fs = g.tensor_info(12)
        assert fs["dims"] == [2, H, K, K] and fs["dtype"] == F32 and not fs["is_virtual"]


def test_gdn_overwrite_graph_declares_the_pool_as_final_state():
    pool = d((5, H, K, K), F32)
    g, args = _gdn_fwd(initial_state=pool, state_indices=d((2,), I32),
                       overwrite_initial_state=True)
    with g:
        g.validate()
        assert args[7] == 8  # state_indices bound
        assert g.tensor_info(12)["dims"] == [5, H, K, K]


def test_gdn_default_attributes_stay_unset():
    import json

    g, _ = _gdn_fwd(cfg=GdnConfig(0.5, use_qk_l2norm=True), output_final_state=False)
    with g:
        attrs = json.loads(g.to_json())["nodes"][0]["attrs"]
    assert attrs == {"scale": 0.5, "use_qk_l2norm": True}


def test_gdn_forward_engine_reasons_reach_the_caller():
    g, args = _gdn_fwd()
    with g:
        ex = g.explain()
        assert ex["family"]["name"] == "gdn"
        engines = {c["engine"]: c for c in ex["candidates"]}
        assert "gdn_sm90" in engines
        assert "has no cuDNN backend lowering" in ex["backend"]["reason"]
        if not _cuda_absent(ex):
            pytest.skip("a CUDA device is present; this test checks the declining path")
        assert engines["gdn_sm90"]["verdict"] == "decline"
        assert "needs an SM90 GPU" in engines["gdn_sm90"]["reason"]
        with pytest.raises(_lib.NotSupportedError) as info:
            PreparedPlan(g.clone(), args)
        assert "needs an SM90 GPU" in str(info.value)


def test_gdn_forward_on_a_declared_sm90_target_plans_and_refuses_to_build_without_a_device():
    g, args = _gdn_fwd()
    with g:
        g.set_target(None, 132, 90)
        ex = g.explain()
        device = ex["target"]["device"]
        if device is not None and device["ordinal"] >= 0:
            pytest.skip("a CUDA device is present; the build would really run")
        assert ex["target"]["arch"] == 90
        engines = {c["engine"]: c for c in ex["candidates"]}
        assert engines["gdn_sm90"]["verdict"] == "accept"
        assert [p["name"] for p in ex["plans"]][:1] == ["gdn_sm90"]
        with pytest.raises(_lib.NotSupportedError) as info:
            PreparedPlan(g.clone(), args)
        assert "real CUDA device" in str(info.value)


def test_gdn_forward_engine_declines_unsupported_head_dims_with_the_rule():
    cu, gate = d((3,), I32), d((T, H), F32)
    g, _ = gdn_fwd_graph(d((T, H, 32)), d((T, H, 32)), d((T, H, 48)), gate, gate, cu, None, None,
                         None, cfg=GdnConfig(0.2), output_final_state=False)
    with g:
        g.set_target(None, 132, 90)
        engines = {c["engine"]: c for c in g.explain()["candidates"]}
        assert "needs K = V in {64, 128}; got K = 32, V = 48" in engines["gdn_sm90"]["reason"]


def test_gdn_backward_graph_and_its_reasons():
    cu, gate = d((3,), I32), d((T, H), F32)
    x = d((T, H, K))
    state = d((2, H, K, K), F32)
    g, args = gdn_bwd_graph(x, x, x, gate, gate, cu, x, state, state, None, None,
                            cfg=GdnConfig(0.125))
    with g:
        g.validate()
        assert args[:9] == list(range(1, 10)) and args[9:11] == [None, None]
        assert args[11:17] == [12, 13, 14, 15, 16, 17] and args[17:] == [None, None]
        assert g.tensor_info(17)["dims"] == [2, H, K, K]  # d_initial_state
        g.set_target(None, 132, 90)
        ex = g.explain()
        engines = {c["engine"]: c for c in ex["candidates"]}
        assert "gdn_sm90" in engines
        if engines["gdn_sm90"]["verdict"] == "accept":  # a backward engine has landed
            assert ex["plans"] and ex["plans"][0]["engine_id"] == engines["gdn_sm90"]["engine_id"]
            return
        reason = engines["gdn_sm90"]["reason"]
        assert "backward" in reason
        with pytest.raises(_lib.NotSupportedError) as info:
            PreparedPlan(g.clone(), args)
        assert reason in str(info.value)


def test_gdn_chunk_factors_declared_as_the_library_infers_them():
    # The forward's saved factors: the declared [max(T/64 + N, 1), H, GDN_CHUNK_FACTOR_BYTES]
    # UINT8 output validates against the library's exact shape rule; the backward binds them.
    k128 = 128
    cu, gate = d((3,), I32), d((T, H), F32)
    x = d((T, H, k128))
    g, args = gdn_fwd_graph(x, x, x, gate, gate, cu, None, None, None,
                            cfg=GdnConfig(default_gdn_scale(k128)), output_final_state=False,
                            save_factors=True)
    rows = gdn_chunk_factor_rows(T, 2)
    assert rows == T // 64 + 2
    with g:
        g.validate()
        assert args[-1] == 14
        info = g.tensor_info(14)
        assert info["dims"] == [rows, H, GDN_CHUNK_FACTOR_BYTES]
        assert info["dtype"] == DataType.UINT8 and not info["is_virtual"]
    # A wrong size is refused by the library's rule (the dims are exact).
    bad = d((rows, H, GDN_CHUNK_FACTOR_BYTES - 1), DataType.UINT8)
    g, args = gdn_bwd_graph(x, x, x, gate, gate, cu, x, None, None, None, None,
                            cfg=GdnConfig(0.1), chunk_factors=bad)
    with g:
        g.validate()  # an input's size is the engine's to check
        assert args[-1] == 21
        g.set_target(None, 132, 90)
        reason = {c["engine"]: c for c in g.explain()["candidates"]}["gdn_sm90"]["reason"]
        assert "chunk_factors must be UINT8" in reason, reason


def test_gdn_saved_replay_declares_the_u_tiles_as_the_library_infers_them():
    # The saved replay: checkpoints every 64 tokens beside the factors, which then hold each
    # chunk's U tile too (gdn_chunk_factor_bytes); the backward binds both.
    k128 = 128
    cu, gate = d((3,), I32), d((T, H), F32)
    x = d((T, H, k128))
    g, args = gdn_fwd_graph(x, x, x, gate, gate, cu, None, None, None,
                            cfg=GdnConfig(default_gdn_scale(k128)), output_final_state=False,
                            checkpoint_every=64, save_factors=True)
    rows = gdn_chunk_factor_rows(T, 2)
    assert gdn_chunk_factor_bytes(k128, 64) == GDN_CHUNK_FACTOR_BYTES + 64 * k128 * 2
    assert gdn_chunk_factor_bytes(k128, 128) == GDN_CHUNK_FACTOR_BYTES
    with g:
        g.validate()
        assert args[-2:] == [13, 14]
        assert g.tensor_info(14)["dims"] == [rows, H, gdn_chunk_factor_bytes(k128, 64)]
    ck = d((gdn_checkpoint_rows(T, 2, 64), H, k128, k128))
    cf = d((rows, H, gdn_chunk_factor_bytes(k128, 64)), DataType.UINT8)
    g, args = gdn_bwd_graph(x, x, x, gate, gate, cu, x, None, None, None, None,
                            cfg=GdnConfig(0.1), state_checkpoints=ck, checkpoint_every=64,
                            chunk_factors=cf)
    with g:
        g.validate()
        assert args[-2:] == [20, 21]
        g.set_target(None, 132, 90)
        verdict = {c["engine"]: c for c in g.explain()["candidates"]}["gdn_sm90"]["verdict"]
        assert verdict == "accept"


def test_gdn_invalid_graph_is_reported_with_the_rule():
    cu, gate = d((3,), I32), d((T, H), F32)
    x = d((T, H, K))
    g, _ = gdn_fwd_graph(x, x, x, gate, gate, cu, None, None, None,
                         cfg=GdnConfig(0.1, allow_neg_eigval=True), output_final_state=False)
    with g, pytest.raises(_lib.InvalidGraphError) as info:
        g.validate()
    assert "allow_neg_eigval" in str(info.value) and "use_beta_sigmoid" in str(info.value)


def test_plan_name_that_is_not_in_the_list_is_refused():
    g, args = _gdn_fwd()
    g.set_target(None, 132, 90)
    with pytest.raises(ValueError, match="plan_name 'nope' is not in this graph's plan list"):
        PreparedPlan(g, args, plan_name="nope")


def _without_names(doc: dict) -> dict:
    for t in doc["tensors"]:
        t.pop("name", None)
        for key in [k for k in t if k.endswith("_assigned")]:  # builder bookkeeping
            del t[key]
    for n in doc["nodes"]:
        n.pop("name", None)
    return doc


@pytest.mark.parametrize("example", ["sdpa_forward", "sdpa_backward"])
def test_sdpa_graphs_equal_the_shipped_examples_the_backend_lowers(repo_root, example):
    """examples/graphs/sdpa_*.json are lowered by the cuDNN backend's CPU tests; the package's
    graphs for the same request are the same graphs (up to names)."""
    import json

    want = json.loads((repo_root / "examples" / "graphs" / f"{example}.json").read_text())
    q = d((2, 4, 128, 64), DataType.HALF)
    kv = d((2, 2, 256, 64), DataType.HALF)
    if example == "sdpa_forward":
        g, _ = sdpa_fwd_graph(q, kv, kv, scale=0.125, is_causal=True, generate_stats=True)
    else:
        g, _ = sdpa_bwd_graph(q, kv, kv, q, q, d((2, 4, 128, 1), F32), scale=0.125,
                              is_causal=True)
    with g:
        got = json.loads(g.to_json())
    assert _without_names(got) == _without_names(want)
