#!/usr/bin/env python3
"""Host time per call of dnnplan's torch ops, layer by layer, for both launchers (GPU machine).

For one small SDPA forward and one small GDN forward it times, on the host, bursts of calls
that only enqueue work (the GPU queue never fills: bursts are short and synchronized between,
outside the timed region):

  library      PreparedPlan.run: one ctypes call of dnnp_plan_list_execute with ready pointers
               (the floor from Python; the C-level figure is in bench/RESULTS.md)
  launcher     the op's CUDA kernel called directly, no dispatcher: the C++ launcher
               (dnnplan_torch._C.<op>, through pybind11) or the Python launcher (cache key,
               plan lookup, output + workspace allocation, current stream, execute)
  op           the registered operator handle (torch.ops.dnnplan.<op>.default)
  public       dnnplan_torch.<function> under torch.no_grad()
  public+grad  the public function with inputs that require grad (autograd.Function path)
  torch        torch.nn.functional.scaled_dot_product_attention (default backend choice)
  torch-cudnn  the same, restricted to torch's cuDNN attention backend
  cudnn-fe     nvidia-cudnn-frontend 1.32.0 where importable: its Python graph API executing the
               same SDPA (built once), and its torch op cudnn.linear_attention.ops.gated_delta_net
  part:*       pieces of the Python launcher timed alone: the steady-state key + look-up, one
               output allocation, the zero-element Stats allocation, _launch.launch (handle of
               the current stream, cached workspace, PreparedPlan.run)

Both launchers are measured in the same process, interleaved: ``--rounds`` rounds, each timing
every layer under the C++ launcher (dnnplan_torch._C, when built) and under the Python launcher
(its Python kernels registered over the extension's and the public functions' C++ pre-check
off: what DNNPLAN_TORCH_CPP=0 gives), alternating which goes first; a layer's figure is the
median over rounds of each round's median per-call time over its bursts (min: the fastest
burst). "boundary" = layer - library: the host time the torch layer adds per forward (issue
10's target: at most 10 us). Prints a table and writes JSON to $OUT/torch_boundary.json (or
--json PATH).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python" / "src"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import dnnplan_torch  # noqa: E402
from dnnplan_torch import _cpp, _launch  # noqa: E402
from dnnplan_torch import gdn as gdn_mod  # noqa: E402
from dnnplan_torch import sdpa as sdpa_mod  # noqa: E402


def host_time_us(fn, bursts: int, calls: int) -> dict:
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(bursts):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter_ns()
        torch.cuda.synchronize()
        per_call.append((t1 - t0) / calls / 1e3)
    return {"median_us": statistics.median(per_call), "min_us": min(per_call)}


class PythonLauncher:
    """While active, this process runs as with ``DNNPLAN_TORCH_CPP=0``: the Python launchers are
    the forward ops' CUDA kernels (registered over the extension's; restored on exit) and the
    public functions use neither the C++ pre-check nor the direct call."""

    def __enter__(self):
        self.lib = None
        if _cpp.ACTIVE:
            self.lib = torch.library.Library("dnnplan", "IMPL")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Overriding a previously registered kernel"
                self.lib.impl("sdpa_fwd", sdpa_mod._sdpa_fwd_cuda, "CUDA")
                self.lib.impl("gdn_fwd", gdn_mod._gdn_fwd_cuda, "CUDA")
            self.saved = (sdpa_mod._precheck, gdn_mod._precheck)
            sdpa_mod._precheck = gdn_mod._precheck = None
        return self

    def __exit__(self, *exc):
        if self.lib is not None:
            self.lib._destroy()
            sdpa_mod._precheck, gdn_mod._precheck = self.saved
        return False


class CppLauncher:
    """The process as imported (C++ launcher active when built)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def interleaved(layers: dict, rounds: int, bursts: int, calls: int) -> dict:
    """``layers``: ``{launcher: {layer: fn}}``; every round times each launcher's layers (the
    launcher order alternating per round). Returns ``{launcher: {layer: result}}``."""
    contexts = {"cpp": CppLauncher, "python": PythonLauncher}
    per_round = {w: {name: [] for name in fns} for w, fns in layers.items()}
    order = list(layers)
    for r in range(rounds):
        for which in (order if r % 2 == 0 else order[::-1]):
            with contexts[which]():
                for name, fn in layers[which].items():
                    # every layer but public+grad runs under no_grad (set once per burst set)
                    with torch.set_grad_enabled(name == "public+grad"):
                        per_round[which][name].append(host_time_us(fn, bursts, calls))
    out = {}
    for which, named in per_round.items():
        out[which] = {}
        for name, results in named.items():
            out[which][name] = {
                "median_us": statistics.median(x["median_us"] for x in results),
                "min_us": min(x["min_us"] for x in results),
                "round_medians_us": [round(x["median_us"], 3) for x in results],
            }
    return out


def launchers() -> list:
    return ["cpp", "python"] if _cpp.ACTIVE else ["python"]


def bench_sdpa(args) -> dict:
    b, h, s, d = 1, 2, 128, 64
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    scale = 1.0 / math.sqrt(d)
    res: dict = {"shape": [b, h, s, d]}
    _launch.clear_plan_cache()
    with torch.no_grad():
        o, st = sdpa_mod._sdpa_fwd_cuda(q, k, v, scale, False, False)
    plan = next(p for key, p in _launch._plans.items() if key[0] == "sdpa_fwd")
    ws = _launch.workspace(plan.workspace_bytes, q.device)
    ptrs = [q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), st.data_ptr()]
    handle = _launch.handle_for(q.device.index)
    ws_ptr = ws.data_ptr() if ws is not None else 0
    res["plan"] = plan.plan_name
    pub = dnnplan_torch.scaled_dot_product_attention
    op = sdpa_mod.sdpa_fwd

    common = {
        "library": lambda: plan.run(handle, ptrs, ws_ptr),
        "op": lambda: op(q, k, v, scale, False, False),
        "public": lambda: pub(q, k, v),
        "public+grad": lambda: pub(qg, kg, vg),
    }
    layers = {}
    if _cpp.ACTIVE:
        cpp_fwd = _cpp.C.sdpa_fwd
        layers["cpp"] = {"launcher": lambda: cpp_fwd(q, k, v, scale, False, False),
                         **common}
    layers["python"] = {
        "launcher": lambda: sdpa_mod._sdpa_fwd_cuda(q, k, v, scale, False, False),
        **common}
    res.update(interleaved(layers, args.rounds, args.bursts, args.calls))
    if args.no_reference:
        return res
    ref: dict = {}
    with torch.no_grad():
        o_shape = tuple(o.shape)
        ref["part:key+lookup"] = host_time_us(
            lambda: sdpa_mod._fwd_steady.get(sdpa_mod._fwd_key(q, k, v, scale, False, False)),
            args.bursts, args.calls)
        ref["part:alloc O"] = host_time_us(lambda: q.new_empty(*o_shape), args.bursts,
                                           args.calls)
        ref["part:alloc Stats(0)"] = host_time_us(
            lambda: q.new_empty(0, dtype=torch.float32), args.bursts, args.calls)
        ref["part:launch"] = host_time_us(
            lambda: _launch.launch(plan, q.get_device(), q, ptrs), args.bursts, args.calls)
        ref["torch"] = host_time_us(lambda: F.scaled_dot_product_attention(q, k, v),
                                    args.bursts, args.calls)
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                F.scaled_dot_product_attention(q, k, v)
                ref["torch-cudnn"] = host_time_us(
                    lambda: F.scaled_dot_product_attention(q, k, v), args.bursts, args.calls)
        except Exception as e:  # noqa: BLE001
            ref["torch-cudnn"] = {"skipped": f"{type(e).__name__}: {e}"}
    ref["cudnn-fe"] = cudnn_frontend_sdpa(q, k, v, scale, args.bursts, args.calls)
    res["reference"] = ref
    return res


def cudnn_frontend_sdpa(q, k, v, scale, bursts, calls) -> dict:
    """nvidia-cudnn-frontend's Python graph API on the same tensors, executed with a built graph
    (what a torch integration of it does per call: variant-pack dict + graph.execute); built as
    bench/cudnn_reference.py builds it."""
    try:
        import cudnn
    except Exception as e:  # noqa: BLE001
        return {"skipped": f"nvidia-cudnn-frontend not importable ({type(e).__name__}: {e})"}
    try:
        handle = cudnn.create_handle()
        cudnn.set_stream(handle=handle, stream=torch.cuda.current_stream().cuda_stream)
        g = cudnn.pygraph(io_data_type=cudnn.data_type.BFLOAT16,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
        tq, tk, tv = (g.tensor_like(t) for t in (q, k, v))
        res = g.sdpa(name="sdpa", q=tq, k=tk, v=tv, is_inference=True, attn_scale=scale)
        to = res[0] if isinstance(res, (tuple, list)) else res
        to.set_output(True).set_dim(list(q.shape)).set_stride(list(q.stride()))
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()
        out = torch.empty_like(q)
        ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
        pack = {tq: q, tk: k, tv: v, to: out}
        r = host_time_us(lambda: g.execute(pack, ws, handle=handle), bursts, calls)
        r["version"] = getattr(cudnn, "__version__", "?")
        return r
    except Exception as e:  # noqa: BLE001
        return {"skipped": f"{type(e).__name__}: {e}"}


def cudnn_frontend_gdn(q, k, v, g, beta, cu, bursts, calls) -> dict:
    """nvidia-cudnn-frontend's torch op ``cudnn.linear_attention.ops.gated_delta_net`` (spec §8),
    where an SM90 engine of it runs (1.32.0: only ``gdn_cutile``, which needs cuda.tile)."""
    try:
        from cudnn.linear_attention import ops as la_ops
    except Exception as e:  # noqa: BLE001
        return {"skipped": f"cudnn.linear_attention.ops not importable ({type(e).__name__}: {e})"}
    try:
        la_ops.gated_delta_net(q, k, v, g, beta, cu)
        r = host_time_us(lambda: la_ops.gated_delta_net(q, k, v, g, beta, cu), bursts, calls)
        return r
    except Exception as e:  # noqa: BLE001
        return {"skipped": f"{type(e).__name__}: {e}"}


def bench_gdn(args) -> dict:
    t, h, kd = 256, 2, 64
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (F.normalize(torch.randn(t, h, kd, device="cuda", generator=gen), dim=-1)
               .to(torch.bfloat16) for _ in range(3))
    g = F.logsigmoid(torch.randn(t, h, device="cuda", generator=gen) + 3)
    beta = torch.sigmoid(torch.randn(t, h, device="cuda", generator=gen))
    cu = torch.tensor([0, 128, 256], device="cuda", dtype=torch.int32)
    qg = q.clone().requires_grad_()
    cfg = (1.0 / math.sqrt(kd), False, False, False, False, "log", False)
    res: dict = {"shape": {"T": t, "H": h, "K": kd, "N": 2}}
    _launch.clear_plan_cache()
    try:
        with torch.no_grad():
            o, fs = gdn_mod._gdn_fwd_cuda(q, k, v, g, beta, cu, None, None, None, False, *cfg,
                                          None)
    except Exception as e:  # noqa: BLE001
        return {"skipped": f"{type(e).__name__}: {e}"}
    plan = next(p for key, p in _launch._plans.items() if key[0] == "gdn_fwd")
    ws = _launch.workspace(plan.workspace_bytes, q.device)
    ptrs = [q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(), beta.data_ptr(),
            cu.data_ptr(), 0, 0, 0, 0, o.data_ptr(), fs.data_ptr()]
    handle = _launch.handle_for(q.device.index)
    ws_ptr = ws.data_ptr() if ws is not None else 0
    res["plan"] = plan.plan_name
    pub = dnnplan_torch.gated_delta_net
    op = gdn_mod.gdn_fwd

    common = {
        "library": lambda: plan.run(handle, ptrs, ws_ptr),
        "op": lambda: op(q, k, v, g, beta, cu, None, None, None, False, *cfg, None),
        "public": lambda: pub(q, k, v, g, beta, cu),
        "public+grad": lambda: pub(qg, k, v, g, beta, cu),
    }
    layers = {}
    if _cpp.ACTIVE:
        cpp_fwd = _cpp.C.gdn_fwd
        layers["cpp"] = {"launcher": (
            lambda: cpp_fwd(q, k, v, g, beta, cu, None, None, None, False, *cfg, None)),
            **common}
    layers["python"] = {"launcher": (
        lambda: gdn_mod._gdn_fwd_cuda(q, k, v, g, beta, cu, None, None, None, False, *cfg, None)),
        **common}
    res.update(interleaved(layers, args.rounds, args.bursts, args.calls))
    if not args.no_reference:
        res["reference"] = {
            "part:launch": host_time_us(lambda: _launch.launch(plan, q.get_device(), q, ptrs),
                                        args.bursts, args.calls),
            "cudnn-fe": cudnn_frontend_gdn(q, k, v, g, beta, cu, args.bursts, args.calls),
        }
    return res


def _fmt(r) -> str:
    if "skipped" in r:
        return f"skipped: {r['skipped']}"
    return f"{r['median_us']:8.2f} us (min {r['min_us']:.2f})"


LAYERS = ("library", "launcher", "op", "public", "public+grad")


def _print(report: dict) -> None:
    print(f"torch {report['torch']} on {report['device']}, dnnplan {report['dnnplan']}; "
          f"launchers: {', '.join(report['launchers'])} {report.get('cpp_note', '')}; "
          f"{report['rounds']} rounds x {report['bursts']} bursts x {report['calls_per_burst']} "
          "calls")
    for name in ("sdpa_fwd", "gdn_fwd"):
        r = report[name]
        print(f"\n{name}  plan: {r.get('plan', '-')}")
        if "error" in r or "skipped" in r:
            print(f"  {r.get('error') or r.get('skipped')}")
            continue
        for which in report["launchers"]:
            lib = r[which]["library"]["median_us"]
            print(f"  [{which} launcher]")
            for layer in LAYERS:
                v = r[which][layer]
                extra = (f"   ({v['median_us'] - lib:+.2f} over library)"
                         if layer != "library" else "")
                print(f"    {layer:14s} {_fmt(v)}{extra}")
        for layer, v in r.get("reference", {}).items():
            print(f"  {layer:16s} {_fmt(v)}")
    print("\n== boundary over the library call (us, medians over rounds; same process)")
    print(f"  {'op':8s} {'launcher':9s} {'library':>8s} {'launcher':>9s} {'op':>8s} "
          f"{'public':>8s} {'+grad':>8s}  launcher-lib  op-lib  public-lib")
    for name in ("sdpa_fwd", "gdn_fwd"):
        r = report[name]
        for which in report["launchers"]:
            if which not in r:
                continue
            m = {k: r[which][k]["median_us"] for k in LAYERS}
            b = r["boundary_us"][which]
            print(f"  {name:8s} {which:9s} {m['library']:8.2f} {m['launcher']:9.2f} "
                  f"{m['op']:8.2f} {m['public']:8.2f} {m['public+grad']:8.2f}  "
                  f"{b['launcher']:+11.2f}  {b['op']:+6.2f}  {b['public']:+10.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--bursts", type=int, default=20, help="bursts per layer and round")
    ap.add_argument("--calls", type=int, default=100, help="calls per burst")
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the torch / cudnn-frontend columns and the launcher parts")
    args = ap.parse_args()
    report = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "cudnn_torch": torch.backends.cudnn.version(),
        "dnnplan": dnnplan_torch.version_string(),
        "launchers": launchers(),
        "cpp_note": "" if _cpp.ACTIVE else f"(C++ launcher not active: {_cpp.REASON})",
        "rounds": args.rounds,
        "bursts": args.bursts,
        "calls_per_burst": args.calls,
    }
    for name, fn in (("sdpa_fwd", bench_sdpa), ("gdn_fwd", bench_gdn)):
        try:
            r = fn(args)
        except Exception as e:  # noqa: BLE001
            r = {"error": f"{type(e).__name__}: {e}"}
        if all(w in r for w in report["launchers"]):
            r["boundary_us"] = {
                w: {k: r[w][k]["median_us"] - r[w]["library"]["median_us"]
                    for k in LAYERS if k != "library"} for w in report["launchers"]}
        report[name] = r
    _print(report)
    path = args.json or (os.path.join(os.environ["OUT"], "torch_boundary.json")
                         if os.environ.get("OUT") else None)
    if path:
        Path(path).write_text(json.dumps(report, indent=2))
        print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
