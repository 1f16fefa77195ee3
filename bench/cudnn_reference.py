"""Reference side of the cuDNN-backend benchmark: the same graphs through nvidia-cudnn-frontend
1.32.0's Python API (PyTorch tensors), measured the way tests/gpu_cudnn.rs `bench_cudnn_backend`
measures dnnplan: kernel time = median over 5 rounds of CUDA events around N executes; host time
per execute call = wall time of the calls alone (enqueue only) in bursts of 50 with a synchronize
between bursts, as the mean over all calls (and the fastest burst); plan-list creation =
validate + build_operation_graph + create_execution_plans([A, FALLBACK]) with the library
initialised (first call, then the median of 5 more). Prints
`REF | case | plan | kernel ms | creation first; median ms | host mean (min burst) us`.
Run by bench/run_cudnn_bench.sh."""

import sys
import time
import traceback

import torch

try:
    import cudnn
except Exception as e:  # the wheel's optional deps (cutlass-dsl, tvm-ffi) may be missing
    print(f"REF | import cudnn failed: {e!r}")
    traceback.print_exc()
    sys.exit(0)

print(f"REF | cudnn frontend {getattr(cudnn, '__version__', '?')}, backend {cudnn.backend_version()}")
MODES = [cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK]
handle = cudnn.create_handle()
stream = torch.cuda.current_stream()
cudnn.set_stream(handle=handle, stream=stream.cuda_stream)


def make_graph():
    return cudnn.pygraph(
        io_data_type=cudnn.data_type.BFLOAT16,
        intermediate_data_type=cudnn.data_type.FLOAT,
        compute_data_type=cudnn.data_type.FLOAT,
        handle=handle,
    )


def sdpa_graph(b, h, s, d):
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    t0 = time.perf_counter()
    g = make_graph()
    Q, K, V = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    res = g.sdpa(name="sdpa", q=Q, k=K, v=V, is_inference=True, attn_scale=1.0 / d**0.5, use_causal_mask=True)
    O = res[0] if isinstance(res, (tuple, list)) else res
    O.set_output(True).set_dim([b, h, s, d]).set_stride([h * s * d, s * d, d, 1])
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans(MODES)
    created = (time.perf_counter() - t0) * 1e3
    return g, {Q: q, K: k, V: v, O: o}, created


def matmul_graph(m, n, k):
    a = torch.randn(1, m, k, device="cuda", dtype=torch.bfloat16)
    bm = torch.randn(1, k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(1, m, n, device="cuda", dtype=torch.bfloat16)
    t0 = time.perf_counter()
    g = make_graph()
    A, B = g.tensor_like(a), g.tensor_like(bm)
    C = g.matmul(name="mm", A=A, B=B)
    C.set_output(True).set_data_type(cudnn.data_type.BFLOAT16)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans(MODES)
    created = (time.perf_counter() - t0) * 1e3
    return g, {A: a, B: bm, C: c}, created


def measure(name, make, kernel_iters, host_iters):
    try:
        g, pack, created = make()
        g.check_support()
        g.build_plans()
        try:
            plan = g.get_plan_name_at_index(0)
        except Exception:
            plan = "?"
        ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
        run = lambda: g.execute(pack, ws, handle=handle)
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        rounds = []
        for _ in range(5):
            e0.record(stream)
            for _ in range(kernel_iters):
                run()
            e1.record(stream)
            e1.synchronize()
            rounds.append(e0.elapsed_time(e1) / kernel_iters)
        ms = sorted(rounds)[2]
        for _ in range(100):
            run()
        host, best, burst = 0.0, float("inf"), 50
        n_rounds = (host_iters + burst - 1) // burst
        for _ in range(n_rounds):
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(burst):
                run()
            dt = time.perf_counter() - t
            host += dt
            best = min(best, dt / burst)
        torch.cuda.synchronize()
        us = host * 1e6 / (n_rounds * burst)
        # creation again, warm (median of 5)
        times = sorted(make()[2] for _ in range(5))
        print(f"REF | {name} | {plan} | {ms:.4f} | {created:.1f}; {times[2]:.3f} | {us:.2f} ({best * 1e6:.2f})", flush=True)
    except Exception as e:
        print(f"REF | {name} | failed: {e!r}")
        traceback.print_exc()


for (b, h, s, d) in [(4, 16, 4096, 128), (2, 16, 8192, 128), (8, 16, 2048, 64)]:
    measure(f"sdpa fwd causal bf16 ({b},{h},{s},{d})", lambda: sdpa_graph(b, h, s, d), 20, 200)
measure("tiny sdpa (1,1,64,64)", lambda: sdpa_graph(1, 1, 64, 64), 200, 5000)
measure("matmul 256x256x128 bf16", lambda: matmul_graph(256, 256, 128), 200, 5000)
