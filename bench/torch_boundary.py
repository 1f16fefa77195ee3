#!/usr/bin/env python3
"""Host time per call of dnnplan's torch ops, layer by layer (run on the GPU machine).

For one small SDPA forward and one small GDN forward it times, on the host, bursts of calls
that only enqueue work (the GPU queue never fills: bursts are short and synchronized between,
outside the timed region):

  library      PreparedPlan.run: one ctypes call of dnnp_plan_list_execute with ready pointers
               (the floor from Python; the C-level figure is in bench/RESULTS.md)
  launcher     the op's CUDA kernel called directly, no dispatcher: the C++ launcher
               (dnnplan_torch._C.<op>, through pybind11) or the Python launcher (cache key,
               plan lookup, output + workspace allocation, current stream, execute)
  launcher-py  (C++ run only) the Python launcher called directly, for comparison
  op           the registered operator handle (torch.ops.dnnplan.<op>.default)
  public       dnnplan_torch.<function> under torch.no_grad()
  public+grad  the public function with inputs that require grad (autograd.Function path)
  torch        torch.nn.functional.scaled_dot_product_attention (default backend choice)
  torch-cudnn  the same, restricted to torch's cuDNN attention backend
  cudnn-fe     nvidia-cudnn-frontend 1.32.0 where importable: its Python graph API executing the
               same SDPA (built once), and its torch op cudnn.linear_attention.ops.gated_delta_net
  part:*       pieces of the launcher timed alone: the steady-state key + look-up, one output
               allocation, the zero-element Stats allocation, _launch.launch (handle of the
               current stream, cached workspace, PreparedPlan.run)

"boundary" = op - library and public - library: the host time the torch layer adds per forward
(issue 10's target: at most 10 us). Both launchers are measured in the same run: the script runs
itself twice, once with the C++ launcher (dnnplan_torch._C, when built) and once with
DNNPLAN_TORCH_CPP=0 (the pure-Python launcher; the op kernels are registered at import, so each
needs its own process), then prints both side by side. Prints a table and writes JSON to
$OUT/torch_boundary.json (or --json PATH). Median of per-call means over bursts; min also
reported. ``--launcher cpp|python`` measures one launcher in this process only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
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


def bench_sdpa(bursts, calls, reference=True) -> dict:
    b, h, s, d = 1, 2, 128, 64
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    scale = 1.0 / math.sqrt(d)
    results = {}
    with torch.no_grad():
        _launch.clear_plan_cache()
        o, st = sdpa_mod._sdpa_fwd_cuda(q, k, v, scale, False, False)
        plan = next(p for key, p in _launch._plans.items() if key[0] == "sdpa_fwd")
        ws = _launch.workspace(plan.workspace_bytes, q.device)
        ptrs = [q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), st.data_ptr()]
        handle = _launch.handle_for(q.device.index)
        ws_ptr = ws.data_ptr() if ws is not None else 0
        results["plan"] = plan.plan_name
        results["library"] = host_time_us(lambda: plan.run(handle, ptrs, ws_ptr), bursts, calls)
        py_launcher = host_time_us(
            lambda: sdpa_mod._sdpa_fwd_cuda(q, k, v, scale, False, False), bursts, calls)
        if _cpp.ACTIVE:
            cpp_fwd = _cpp.C.sdpa_fwd
            results["launcher"] = host_time_us(
                lambda: cpp_fwd(q, k, v, scale, False, False), bursts, calls)
            results["launcher-py"] = py_launcher
        else:
            results["launcher"] = py_launcher
        results["op"] = host_time_us(lambda: sdpa_mod.sdpa_fwd(q, k, v, scale, False, False),
                                     bursts, calls)
        results["public"] = host_time_us(
            lambda: dnnplan_torch.scaled_dot_product_attention(q, k, v), bursts, calls)
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    results["public+grad"] = host_time_us(
        lambda: dnnplan_torch.scaled_dot_product_attention(qg, kg, vg), bursts, calls)
    if not reference:
        return results
    with torch.no_grad():
        # where the Python launcher's time goes (each piece alone, same tensors)
        o_shape = tuple(o.shape)
        results["part:key+lookup"] = host_time_us(lambda: sdpa_mod._fwd_steady.get((
            q.shape, q.stride(), q.dtype, k.shape, k.stride(), k.dtype, v.shape, v.stride(),
            v.dtype, q.get_device(), scale, False, False)), bursts, calls)
        results["part:alloc O"] = host_time_us(lambda: q.new_empty(*o_shape), bursts, calls)
        results["part:alloc Stats(0)"] = host_time_us(
            lambda: q.new_empty(0, dtype=torch.float32), bursts, calls)
        results["part:launch"] = host_time_us(
            lambda: _launch.launch(plan, q.get_device(), q, ptrs), bursts, calls)
        results["torch"] = host_time_us(lambda: F.scaled_dot_product_attention(q, k, v),
                                        bursts, calls)
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                F.scaled_dot_product_attention(q, k, v)
                results["torch-cudnn"] = host_time_us(
                    lambda: F.scaled_dot_product_attention(q, k, v), bursts, calls)
        except Exception as e:  # noqa: BLE001
            results["torch-cudnn"] = {"skipped": f"{type(e).__name__}: {e}"}
    results["cudnn-fe"] = cudnn_frontend_sdpa(q, k, v, scale, bursts, calls)
    return results


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


def bench_gdn(bursts, calls, reference=True) -> dict:
    t, h, kd = 256, 2, 64
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (F.normalize(torch.randn(t, h, kd, device="cuda", generator=gen), dim=-1)
               .to(torch.bfloat16) for _ in range(3))
    g = F.logsigmoid(torch.randn(t, h, device="cuda", generator=gen) + 3)
    beta = torch.sigmoid(torch.randn(t, h, device="cuda", generator=gen))
    cu = torch.tensor([0, 128, 256], device="cuda", dtype=torch.int32)
    cfg = (1.0 / math.sqrt(kd), False, False, False, False, "log", False)
    results = {}
    with torch.no_grad():
        _launch.clear_plan_cache()
        try:
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
        results["plan"] = plan.plan_name
        results["library"] = host_time_us(lambda: plan.run(handle, ptrs, ws_ptr), bursts, calls)
        py_launcher = host_time_us(
            lambda: gdn_mod._gdn_fwd_cuda(q, k, v, g, beta, cu, None, None, None, False, *cfg,
                                          None), bursts, calls)
        if _cpp.ACTIVE:
            cpp_fwd = _cpp.C.gdn_fwd
            results["launcher"] = host_time_us(
                lambda: cpp_fwd(q, k, v, g, beta, cu, None, None, None, False, *cfg, None),
                bursts, calls)
            results["launcher-py"] = py_launcher
        else:
            results["launcher"] = py_launcher
        results["op"] = host_time_us(
            lambda: gdn_mod.gdn_fwd(q, k, v, g, beta, cu, None, None, None, False, *cfg, None),
            bursts, calls)
        results["part:launch"] = host_time_us(
            lambda: _launch.launch(plan, q.get_device(), q, ptrs), bursts, calls)
        results["public"] = host_time_us(
            lambda: dnnplan_torch.gated_delta_net(q, k, v, g, beta, cu), bursts, calls)
    qg = q.clone().requires_grad_()
    results["public+grad"] = host_time_us(
        lambda: dnnplan_torch.gated_delta_net(qg, k, v, g, beta, cu), bursts, calls)
    if reference:
        results["cudnn-fe"] = cudnn_frontend_gdn(q, k, v, g, beta, cu, bursts, calls)
    return results


def _fmt(r) -> str:
    if "skipped" in r:
        return f"skipped: {r['skipped']}"
    return f"{r['median_us']:8.2f} us (min {r['min_us']:.2f})"


def measure(args) -> dict:
    """This process's launcher (``_cpp.ACTIVE`` decides), every layer."""
    report = {
        "launcher": "cpp" if _cpp.ACTIVE else "python",
        "launcher_note": "" if _cpp.ACTIVE else _cpp.REASON,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "cudnn_torch": torch.backends.cudnn.version(),
        "dnnplan": dnnplan_torch.version_string(),
        "bursts": args.bursts,
        "calls_per_burst": args.calls,
    }
    for name, fn in (("sdpa_fwd", bench_sdpa), ("gdn_fwd", bench_gdn)):
        try:
            r = fn(args.bursts, args.calls, reference=not args.no_reference)
        except Exception as e:  # noqa: BLE001
            r = {"error": f"{type(e).__name__}: {e}"}
        if "library" in r:
            lib = r["library"]["median_us"]
            r["boundary_us"] = {k: r[k]["median_us"] - lib
                                for k in ("launcher", "op", "public", "public+grad") if k in r}
        report[name] = r
    return report


def _child(launcher: str, args) -> dict:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if launcher == "python":
        env["DNNPLAN_TORCH_CPP"] = "0"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        cmd = [sys.executable, __file__, "--launcher", launcher, "--json", path,
               "--bursts", str(args.bursts), "--calls", str(args.calls)]
        if launcher == "python":
            cmd.append("--no-reference")  # torch / cudnn-fe columns: measured once (C++ run)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        if r.returncode != 0 or not os.path.exists(path):
            return {"error": f"{launcher} run failed (exit {r.returncode}): "
                             f"{(r.stdout + r.stderr)[-2000:]}"}
        return json.loads(Path(path).read_text())


def _print(report: dict, title: str) -> None:
    print(f"\n== {title}: launcher {report.get('launcher')} {report.get('launcher_note', '')}")
    if "error" in report:
        print(f"  {report['error']}")
        return
    for name in ("sdpa_fwd", "gdn_fwd"):
        r = report[name]
        print(f"\n{name}  plan: {r.get('plan', '-')}")
        if "error" in r or "skipped" in r:
            print(f"  {r.get('error') or r.get('skipped')}")
            continue
        for layer, v in r.items():
            if isinstance(v, dict) and layer != "boundary_us":
                print(f"  {layer:20s} {_fmt(v)}")
        print("  added over the library call: " + ", ".join(
            f"{k} +{v:.2f} us" for k, v in r.get("boundary_us", {}).items()))


def _summary(both: dict) -> None:
    print("\n== boundary over the library call (us, medians; same run)")
    print(f"  {'op':8s} {'launcher':9s} {'library':>8s} {'launcher':>9s} {'op':>8s} "
          f"{'public':>8s} {'+grad':>8s}   op-lib  public-lib")
    for name in ("sdpa_fwd", "gdn_fwd"):
        for which in ("cpp", "python"):
            r = both.get(which, {}).get(name, {})
            if "library" not in r:
                continue
            m = {k: r[k]["median_us"] for k in ("library", "launcher", "op", "public",
                                                "public+grad") if k in r}
            b = r["boundary_us"]
            print(f"  {name:8s} {which:9s} {m['library']:8.2f} {m['launcher']:9.2f} "
                  f"{m['op']:8.2f} {m['public']:8.2f} {m.get('public+grad', float('nan')):8.2f}"
                  f"   {b['op']:+6.2f}  {b['public']:+6.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bursts", type=int, default=50)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--json", default=None)
    ap.add_argument("--launcher", choices=("cpp", "python"), default=None,
                    help="measure only this process's launcher (internal: the parent runs both)")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the torch / cudnn-frontend reference columns")
    args = ap.parse_args()
    path = args.json or (os.path.join(os.environ["OUT"], "torch_boundary.json")
                         if os.environ.get("OUT") else None)
    if args.launcher is not None:
        if args.launcher == "cpp" and not _cpp.ACTIVE:
            print(f"C++ launcher not active: {_cpp.REASON}", file=sys.stderr)
            return 3
        report = measure(args)
        _print(report, args.launcher)
        if path:
            Path(path).write_text(json.dumps(report, indent=2))
        return 0
    both = {"cpp": _child("cpp", args), "python": _child("python", args)}
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}, "
          f"dnnplan {dnnplan_torch.version_string()}")
    for which in ("cpp", "python"):
        _print(both[which], f"{which} launcher")
    _summary(both)
    if path:
        Path(path).write_text(json.dumps(both, indent=2))
        print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
