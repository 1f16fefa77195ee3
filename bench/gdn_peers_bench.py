"""Peer side of the GDN benchmark (bench/gdn_bench_run.sh): times, on the issue's shapes,
  * fla-core 0.6.0 `chunk_gated_delta_rule` (fwd, and fwd+bwd with its Hopper Triton version guard
    disabled for timing only: the guard is about a known wrong-result bug, so its backward numbers
    are times, never results), and
  * nvidia-cudnn-frontend 1.32.0 `kimi_delta_attention` with the scalar gate broadcast over K (the
    same computation as GDN), on its Hopper CUDA engine (plan `kda_hopper_cuda`, class KdaHopperCudaEngine,
    pinned; if that plan is not offered the default plan runs and the line says so).
Inputs as in tests/gpu_gdn_bench.rs: bf16 q/k/v (q, k L2-normalised), fp32 g = log U(0.5, 1), fp32
beta = U(0, 1), fp32 initial state, final state out. The broadcast gate is materialised as a
contiguous [T, H, K] fp32 tensor before timing (its copy is not timed).

The number that counts is the call's GPU time (session 45): the call captured in a CUDA graph and
replayed between two CUDA events (median of 10 after 3 warm-ups), or, where it cannot be captured,
the sum of its kernels' times under torch.profiler. Beside it, `eager=` is one eager call between two
events (what this script reported until session 44), which also counts the GPU waiting for the
peer's host work (Python, autotuner lookups, the frontend's plan lookup): 0.2-0.7 ms per forward
call and 0.5-1.2 ms per forward+backward step on the H200 machine, enough to move the ratios by
1.1-1.8x (bench/gdn_peers_gpu_time.py has the four ways side by side). The issue's own peer figures (fla 0.93 ms, the KDA path 0.44 ms forward at
(4,8192,16)) are GPU times.

Usage: python3 gdn_peers_bench.py {fla|kda} {fwd|fwdbwd} [shape index ...]
Prints `BENCH <peer> <mode> <shape> <ms> gpu={graph|kernels} eager=<ms>` per shape (or
`BENCH <peer> <mode> <shape> failed: ...`)."""

import statistics
import sys

import torch
import torch.nn.functional as F

SHAPES = [
    ("(4,8192,16)", [8192] * 4, 16),
    ("(1,32768,16)", [32768], 16),
    ("(16,2048,32)", [2048] * 16, 32),
    ("ragged-mix-H16", [8192, 100, 4096, 1, 2048, 7000, 0, 3000, 512, 5000], 16),
]
K = V = 128


def median_ms(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def kernel_ms(fn, calls=5):
    """(ms of GPU work per call: kernels, copies and memsets from torch.profiler (CUPTI), over
    `calls` calls; their count per call; [(name, ms per call)] of the largest eight)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    total_us, count, by_name = 0.0, 0, {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = e.time_range.elapsed_us()
        total_us += us
        count += 1
        by_name[e.name] = by_name.get(e.name, 0.0) + us
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:8]
    return total_us / 1000.0 / calls, count / calls, [(n, us / 1000.0 / calls) for n, us in top]


def graph_ms(fn):
    """The call captured in a CUDA graph (after two warm-ups on a side stream), replayed: median_ms."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return median_ms(g.replay)


def gpu_ms(fn):
    """(the call's GPU time in ms, how it was measured): graph replay, else the profiler's kernel sum."""
    try:
        return graph_ms(fn), "graph"
    except Exception:  # not capturable (a host synchronisation inside the call): its kernels' sum
        torch.cuda.synchronize()
        return kernel_ms(fn)[0], "kernels"


def inputs(lens, H):
    dev = "cuda"
    T = sum(lens)
    torch.manual_seed(0)
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0).tolist()), dtype=torch.int32, device=dev)
    q = F.normalize(torch.randn(T, H, K, device=dev), dim=-1).bfloat16()
    k = F.normalize(torch.randn(T, H, K, device=dev), dim=-1).bfloat16()
    v = torch.randn(T, H, V, device=dev).bfloat16()
    g = torch.log(torch.empty(T, H, device=dev).uniform_(0.5, 1.0))
    beta = torch.rand(T, H, device=dev)
    h0 = torch.randn(len(lens), H, V, K, device=dev) * 0.05  # stored domain [N, H, V, K]
    do = torch.randn_like(v)
    dht = torch.randn_like(h0) * 0.05
    return cu, q, k, v, g, beta, h0, do, dht


def fla_fns(lens, H):
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    import fla.ops.common.chunk_o as chunk_o

    chunk_o.TRITON_ABOVE_3_7_1 = True  # timing only (see the module doc)
    cu, q, k, v, g, beta, h0, do, dht = inputs(lens, H)
    cu = cu.long()
    # fla: [B=1, T, H, D], state [N, H, K, V] (math domain).
    q, k, v, g, beta, do = (x.unsqueeze(0) for x in (q, k, v, g, beta, do))
    h0 = h0.transpose(-1, -2).contiguous()
    dht = dht.transpose(-1, -2).contiguous()
    leaves = [x.detach().requires_grad_(True) for x in (q, k, v, g, beta, h0)]

    def fwd():
        chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0, output_final_state=True, cu_seqlens=cu)

    def fwd_bwd():
        o, ht = chunk_gated_delta_rule(*leaves[:5], initial_state=leaves[5], output_final_state=True, cu_seqlens=cu)
        torch.autograd.backward([o, ht], [do, dht])

    return fwd, fwd_bwd, ""


def kda_fns(lens, H):
    from cudnn.linear_attention.ops import kimi_delta_attention

    cu, q, k, v, g, beta, h0, do, dht = inputs(lens, H)
    gk = g.unsqueeze(-1).expand(-1, -1, K).contiguous()  # the scalar gate broadcast over K
    leaves = [x.detach().requires_grad_(True) for x in (q, k, v, gk, beta, h0)]
    plan = ["kda_hopper_cuda"]

    def call(args, **kw):
        try:
            return kimi_delta_attention(*args[:5], cu, initial_state=args[5], output_final_state=True, plan_name=plan[0], **kw)
        except Exception as exc:  # the pinned plan is not offered: run the default one
            if plan[0] is None:
                raise
            print(f"# kda: plan kda_hopper_cuda not usable ({type(exc).__name__}: {str(exc)[:300]}); default plan", flush=True)
            plan[0] = None
            return kimi_delta_attention(*args[:5], cu, initial_state=args[5], output_final_state=True, **kw)

    def fwd():
        with torch.no_grad():
            call((q, k, v, gk, beta, h0))

    def fwd_bwd():
        out = call(leaves)
        o, ht = out[0], out[1]
        torch.autograd.backward([o, ht], [do, dht])

    return fwd, fwd_bwd, plan


def for_each_shape(argv, tag, measure):
    """Runs `measure(peer, mode, shape name, fn, plan)` on each shape argv picks (`{fla|kda}
    {fwd|fwdbwd} [shape index ...]`, all without indices); a shape that fails prints `<tag> <peer>
    <mode> <shape> failed: ...` and the next one runs."""
    peer, mode = argv[1], argv[2]
    picks = [int(x) for x in argv[3:]] or list(range(len(SHAPES)))
    for i in picks:
        name, lens, H = SHAPES[i]
        try:
            fwd, fwd_bwd, plan = (fla_fns if peer == "fla" else kda_fns)(lens, H)
            measure(peer, mode, name, fwd if mode == "fwd" else fwd_bwd, plan)
        except Exception as exc:  # report and continue
            msg = str(exc).replace("\n", " ")[:400]
            print(f"{tag} {peer} {mode} {name} failed: {type(exc).__name__}: {msg}", flush=True)
        torch.cuda.empty_cache()
    return 0


def bench_line(peer, mode, name, fn, plan):
    eager = median_ms(fn)
    ms, how = gpu_ms(fn)
    note = f" plan={plan[0] or 'default'}" if peer == "kda" else ""
    print(f"BENCH {peer} {mode} {name} {ms:.4f} gpu={how} eager={eager:.4f}{note}", flush=True)


def main():
    return for_each_shape(sys.argv, "BENCH", bench_line)


if __name__ == "__main__":
    sys.exit(main())
