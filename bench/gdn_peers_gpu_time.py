"""How much of a peer's measured time is GPU work (session 45).

bench/gdn_peers_bench.py times one eager call between two CUDA events, which counts the peer's
host work wherever the GPU waits for it (Python, autotuner lookups, the cuDNN frontend's plan
lookup). This script times the same calls, on the same inputs (it imports gdn_peers_bench's
functions), four ways:
  ev1    median of 10 single calls between two events (gdn_peers_bench's number);
  burst  events around 20 calls back to back, per call (median of 3 bursts): host work hides
         behind the GPU's queue wherever the host runs ahead;
  kern   the sum of the call's CUDA kernel times from torch.profiler (CUPTI), per call over 5
         calls: GPU work only, no gaps, no launch latency;
  graph  the call captured in a CUDA graph and replayed (median of 10), when it can be captured.
nk is the number of kernels per call. The top kernels of each shape's profile follow on `#` lines.

Usage: python3 gdn_peers_gpu_time.py {fla|kda} {fwd|fwdbwd} [shape index ...]
Prints `GPUTIME <peer> <mode> <shape> ev1=<ms> burst=<ms> kern=<ms> nk=<n>`, then `GRAPH <peer> <mode>
<shape> <ms>` (or `-` and why)."""

import statistics
import sys

import torch

import gdn_peers_bench as pb


def burst_ms(fn, calls=20, bursts=3):
    per = []
    for _ in range(bursts):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls):
            fn()
        b.record()
        b.synchronize()
        per.append(a.elapsed_time(b) / calls)
    return statistics.median(per)


def gputime_lines(peer, mode, name, fn, _plan):
    e1 = pb.median_ms(fn)
    bu = burst_ms(fn)
    km, nk, top = pb.kernel_ms(fn)
    print(f"GPUTIME {peer} {mode} {name} ev1={e1:.4f} burst={bu:.4f} kern={km:.4f} nk={nk:.1f}", flush=True)
    for kname, kms in top:
        print(f"#   {kms:8.4f} ms  {kname[:110]}", flush=True)
    try:  # last: a failed capture may leave the process unusable for this shape
        print(f"GRAPH {peer} {mode} {name} {pb.graph_ms(fn):.4f}", flush=True)
    except Exception as exc:  # not capturable: say why, go on
        print(f"GRAPH {peer} {mode} {name} - ({type(exc).__name__}: {str(exc)[:200]})", flush=True)


def main():
    return pb.for_each_shape(sys.argv, "GPUTIME", gputime_lines)


if __name__ == "__main__":
    sys.exit(main())
