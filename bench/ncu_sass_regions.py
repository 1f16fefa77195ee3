#!/usr/bin/env python3
"""Attribute an ncu source page's warp-state samples to address ranges of one kernel (session 21,
helper fscan21). Input: `ncu --import R.ncu-rep --page source --csv --print-source sass > F.csv`
(profiled with --section SourceCounters --section WarpStateStats). Output: a markdown table with,
per region, the share of samples, cycles per chunk step (share x CYCLES_PER_STEP), SASS
instructions / HMMA / LDSM / LDGSTS executed per warp per step and the top sample reasons.

Usage: ncu_sass_regions.py F.csv CYCLES_PER_STEP name:lo:hi ...   (lo, hi: hex offsets from the
kernel's first instruction, inclusive). Environment: NCH (chunk steps per warp, default 128), THR
(an instruction counts as in the loop when executed at least THR times per warp, default 100;
the rest is prologue / epilogue)."""
import collections
import csv
import os
import re
import sys


def main():
    f, cyc = sys.argv[1], float(sys.argv[2])
    regs = [(n, int(a, 16), int(b, 16)) for n, a, b in (x.split(":") for x in sys.argv[3:])]
    nch = float(os.environ.get("NCH", "128"))
    thr = float(os.environ.get("THR", "100"))
    rows = list(csv.reader(open(f)))
    hdr = rows[1]
    col = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    data = [r for r in rows[2:] if len(r) >= len(hdr)]
    base = int(data[0][0], 16)
    warps = int(data[0][col["Instructions Executed"]])  # the first instruction runs once per warp
    samples = "Warp Stall Sampling (All Samples)"
    tot = sum(int(r[col[samples]] or 0) for r in data)
    agg = collections.OrderedDict((n, [0, 0, 0, 0, 0, collections.Counter()]) for n, _, _ in regs)
    agg["prologue/epilogue"] = [0, 0, 0, 0, 0, collections.Counter()]
    for r in data:
        a = int(r[0], 16) - base
        ex = int(r[col["Instructions Executed"]] or 0) / warps
        s = int(r[col[samples]] or 0)
        name = "prologue/epilogue"
        if ex >= thr:
            for n, lo, hi in regs:
                if lo <= a <= hi:
                    name = n
        g = agg[name]
        g[0] += s
        g[1] += ex
        op = re.sub(r"^@!?U?P\w+\s+", "", r[1].strip()).split()[0]
        for i, pre in ((2, "HMMA"), (3, "LDSM"), (4, "LDGSTS")):
            if op.startswith(pre):
                g[i] += ex
        for k in stalls:
            g[5][k[6:]] += int(r[col[k]] or 0)
    print(f"warps {warps}; total samples {tot}; cycles per chunk {cyc:.0f}")
    print("| region | samples % | cycles/chunk | instr/warp/chunk | HMMA | LDSM | LDGSTS | top sample reasons |")
    print("|---|---|---|---|---|---|---|---|")
    for n, g in agg.items():
        top = ", ".join(f"{k} {v * 100 / max(g[0], 1):.0f}%" for k, v in g[5].most_common(4))
        print(f"| {n} | {100 * g[0] / tot:.1f} | {cyc * g[0] / tot:.0f} | {g[1] / nch:.0f} | {g[2] / nch:.0f} | "
              f"{g[3] / nch:.0f} | {g[4] / nch:.0f} | {top} |")


if __name__ == "__main__":
    main()
