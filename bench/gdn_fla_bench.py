"""Times fla-core's chunk_gated_delta_rule forward (and forward+backward, with its Hopper Triton
version guard disabled for timing only: the guard is about a known wrong-result bug, so the
backward's numbers here are times, never results) on the GDN benchmark shapes (bf16, K = V = 128,
fp32 gates/beta, fp32 initial state, final state out) so its numbers sit next to ours from the
same run (kernels/gdn/gdn_fwd_harness.cu prints ours). CUDA events, median of 20 after warm-up."""

import statistics
import sys

import torch
import torch.nn.functional as F


def main():
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    import fla.ops.common.chunk_o as chunk_o

    chunk_o.TRITON_ABOVE_3_7_1 = True  # timing only (see the module doc)

    shapes = [
        ("(4,8192,16)", [8192] * 4, 16),
        ("(1,32768,16)", [32768], 16),
        ("(16,2048,32)", [2048] * 16, 32),
        ("ragged mix H=16", [8192, 100, 4096, 1, 2048, 7000, 0, 3000, 512, 5000], 16),
    ]
    K = V = 128
    dev = "cuda"
    for name, lens, H in shapes:
        T = sum(lens)
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0).tolist()), dtype=torch.long, device=dev)
        q = F.normalize(torch.randn(1, T, H, K, device=dev), dim=-1).bfloat16()
        k = F.normalize(torch.randn(1, T, H, K, device=dev), dim=-1).bfloat16()
        v = torch.randn(1, T, H, V, device=dev).bfloat16()
        g = torch.log(torch.empty(1, T, H, device=dev).uniform_(0.5, 1.0))
        beta = torch.rand(1, T, H, device=dev)
        h0 = torch.randn(len(lens), H, K, V, device=dev) * 0.05
        fwd = lambda: chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0, output_final_state=True, cu_seqlens=cu)
        leaves = [x.detach().requires_grad_(True) for x in (q, k, v, g, beta, h0)]
        do = torch.randn_like(v)
        dht = torch.randn_like(h0) * 0.05

        def fwd_bwd():
            o, ht = chunk_gated_delta_rule(*leaves[:5], initial_state=leaves[5], output_final_state=True, cu_seqlens=cu)
            torch.autograd.backward([o, ht], [do, dht])

        for label, fn in (("fwd", fwd), ("fwd+bwd", fwd_bwd)):
            try:
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
                print(f"fla {label:7s} {name:18s} N={len(lens):<3d} T={T:<6d} H={H:<3d} median {statistics.median(times):.3f} ms", flush=True)
            except Exception as exc:  # report and continue
                print(f"fla {label} {name}: failed: {type(exc).__name__}: {exc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
