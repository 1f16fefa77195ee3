"""Joins the two sides of the cuDNN benchmark into markdown tables.

Reads a log holding the `DNNP | ...` lines of tests/gpu_cudnn.rs `bench_cudnn_backend` and the
`REF | ...` lines of bench/cudnn_reference.py (same device session) and prints:
1. kernel time and plan-list creation, dnnplan vs the reference, with ratios;
2. host time per execute: the reference's Python layer vs dnnplan's C ABI per execution path
   (plain, reuse, graph), with the same pointers every call and with two alternating sets.
Usage: python3 bench/cudnn_table.py LOG > table.md
"""

import re
import sys


def cells(line):
    return [c.strip() for c in line.split("|")[1:]]


def parse(path):
    dnnp, ref = {}, {}
    for line in open(path, errors="replace"):
        line = line.strip()
        if line.startswith("DNNP |") and "columns:" not in line:
            c = cells(line)
            if len(c) >= 5:
                dnnp[c[0]] = c
        elif line.startswith("REF |"):
            c = cells(line)
            if len(c) >= 5 and c[0] and not c[0].startswith("cudnn frontend"):
                ref[c[0]] = c
    return dnnp, ref


def num(text, idx=0):
    found = re.findall(r"[-+]?\d+(?:\.\d+)?", text or "")
    return float(found[idx]) if len(found) > idx else float("nan")


def ratio(a, b):
    return f"{a / b:.3f}" if b == b and b > 0 and a == a else "n/a"


def hosts(text):
    """{path: (same mean, same min, alternating mean, alternating min)}"""
    out = {}
    for part in text.split(";"):
        m = re.match(
            r"\s*(\w+) same ptrs ([\d.]+) \(([\d.]+)\), alternating ([\d.]+) \(([\d.]+)\)", part
        )
        if m:
            out[m.group(1)] = tuple(float(m.group(i)) for i in range(2, 6))
    return out


def main():
    dnnp, ref = parse(sys.argv[1])
    print("| case | dnnplan plan | reference plan | kernel ms dnnplan | kernel ms reference | "
          "ratio | creation ms dnnplan (first; warm median) | reference (first; warm median) | "
          "warm ratio |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for case, d in dnnp.items():
        r = ref.get(case, [case, "not measured", "nan", "nan", "nan"])
        dk, rk = num(d[2]), num(r[2])
        dw, rw = num(d[3], 1), num(r[3], 1)
        print(f"| {case} | {d[1]} | {r[1]} | {dk:.4f} | {rk:.4f} | {ratio(dk, rk)} | {d[3]} | "
              f"{r[3]} | {ratio(dw, rw)} |")
    print()
    print("Host time per execute, us: mean over all calls (fastest burst of 50 in parentheses).")
    print()
    print("| case | reference (Python layer) | dnnplan plain | dnnplan reuse | dnnplan graph | "
          "plain, alternating ptrs | reuse, alternating | graph, alternating |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for case, d in dnnp.items():
        h = hosts(d[4])
        r = ref.get(case)
        rh = f"{num(r[4]):.2f} ({num(r[4], 1):.2f})" if r else "n/a"

        def same(p):
            return f"{h[p][0]:.2f} ({h[p][1]:.2f})" if p in h else "n/a"

        def alt(p):
            return f"{h[p][2]:.2f} ({h[p][3]:.2f})" if p in h else "n/a"

        print(f"| {case} | {rh} | {same('plain')} | {same('reuse')} | {same('graph')} | "
              f"{alt('plain')} | {alt('reuse')} | {alt('graph')} |")
    extra(sys.argv[1])


def extra(path):
    """The creation breakdown and the backend-level host times, as they were printed."""
    for tag, title in (("DNNP-CREATE |", "Plan-list creation breakdown (dnnplan, warm)"),
                       ("DNNP-RAW |", "Host time per execute of the backend plan alone (no C ABI)")):
        rows = [cells(l.strip()) for l in open(path, errors="replace") if l.strip().startswith(tag)]
        if rows:
            print()
            print(title + ":")
            print()
            print("| " + " | ".join(rows[0]) + " |")
            print("|" + "---|" * len(rows[0]))
            for r in rows[1:]:
                print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
