#!/usr/bin/env python3
"""Attribute an ncu source page's warp-state samples to address ranges of one kernel (session 21,
helper fscan21; session 22, helper tprof22: WARPS, BARS, the shared-memory wavefront columns).
Input: `ncu --import R.ncu-rep --page source --csv --print-source sass > F.csv` (profiled with
--section SourceCounters --section WarpStateStats). Output: a markdown table with, per region,
the share of samples, cycles per chunk step (share x CYCLES_PER_STEP), SASS instructions / HMMA /
LDSM / LDGSTS executed per warp per step, shared-memory wavefronts per warp per step against
their ideal, and the top sample reasons.

Usage: ncu_sass_regions.py F.csv CYCLES_PER_STEP name:lo:hi ...   (lo, hi: hex offsets from the
kernel's first instruction, inclusive; a name may repeat: its ranges add up). Environment: NCH
(chunk steps per warp, default 128; 1 for a kernel of one tile per block), THR (an instruction
counts as in the loop when executed at least THR times per warp, default 100; the rest is
prologue / epilogue), WARPS (the warp count the per-warp columns divide by; default the first
instruction's count, which includes blocks that exit at once), BARS=1 (every stall_barrier sample
goes to the row `wait at BAR <offset>` of the closest BAR.SYNC at or before its instruction: the
skew each block barrier absorbs, instead of the region of the instruction after it)."""
import collections
import csv
import os
import re
import sys


def main():
    f, cyc = sys.argv[1], float(sys.argv[2])
    regs = [(n, int(a, 16), int(b, 16)) for n, a, b in (x.rsplit(":", 2) for x in sys.argv[3:])]
    nch = float(os.environ.get("NCH", "128"))
    thr = float(os.environ.get("THR", "100"))
    bars = os.environ.get("BARS") == "1"
    rows = list(csv.reader(open(f)))
    hdr = rows[1]
    col = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    data = [r for r in rows[2:] if len(r) >= len(hdr)]
    base = int(data[0][0], 16)
    warps = float(os.environ.get("WARPS") or int(data[0][col["Instructions Executed"]]))
    samples = "Warp Stall Sampling (All Samples)"
    tot = sum(int(r[col[samples]] or 0) for r in data)

    def num(r, name):
        v = r[col[name]] if name in col else "0"
        return int(v) if v not in ("", "-") else 0

    new = lambda: [0, 0, 0, 0, 0, 0, 0, collections.Counter()]  # noqa: E731
    agg = collections.OrderedDict((n, new()) for n, _, _ in regs)
    agg["prologue/epilogue"] = new()
    bar = None
    for r in data:
        a = int(r[0], 16) - base
        ex = int(r[col["Instructions Executed"]] or 0) / warps
        s = int(r[col[samples]] or 0)
        op = re.sub(r"^@!?U?P\w+\s+", "", r[1].strip()).split()[0]
        if op.startswith("BAR.SYNC") and ex >= thr:
            bar = f"wait at BAR {a:05x}"
            agg.setdefault(bar, new())
        name = "prologue/epilogue"
        if ex >= thr:
            for n, lo, hi in regs:
                if lo <= a <= hi:
                    name = n
        g = agg[name]
        sb = num(r, "stall_barrier") if bars and bar else 0
        g[0] += s - sb
        g[1] += ex
        for i, pre in ((2, "HMMA"), (3, "LDSM"), (4, "LDGSTS")):
            if op.startswith(pre):
                g[i] += ex
        g[5] += num(r, "L1 Wavefronts Shared")
        g[6] += num(r, "L1 Wavefronts Shared Ideal")
        for k in stalls:
            g[7][k[6:]] += num(r, k) - (sb if k == "stall_barrier" else 0)
        if sb:
            agg[bar][0] += sb
            agg[bar][7]["barrier"] += sb
    print(f"warps {warps:.0f}; total samples {tot}; cycles per step {cyc:.0f}")
    print("| region | samples % | cycles/step | instr/warp/step | HMMA | LDSM | LDGSTS | smem wavefronts/warp/step (ideal) "
          "| top sample reasons |")
    print("|---|---|---|---|---|---|---|---|---|")
    steps = nch * warps
    for n, g in agg.items():
        top = ", ".join(f"{k} {v * 100 / max(g[0], 1):.0f}%" for k, v in g[7].most_common(4) if v)
        print(f"| {n} | {100 * g[0] / tot:.1f} | {cyc * g[0] / tot:.0f} | {g[1] / nch:.0f} | {g[2] / nch:.0f} | "
              f"{g[3] / nch:.0f} | {g[4] / nch:.0f} | {g[5] / steps:.0f} ({g[6] / steps:.0f}) | {top} |")


if __name__ == "__main__":
    main()
