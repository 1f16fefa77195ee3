"""Joins the two sides of the cuDNN benchmark into markdown tables.

Reads a log holding the `DNNP | ...` lines of tests/gpu_cudnn.rs `bench_cudnn_backend`, the
`DNNP-CREATE2 | ...`, `DNNP-HEUR | ...` and `DNNP-PHASES | ...` lines of tests/gpu_cudnn_perf.rs
`bench_cudnn_creation`, the `CPP | ...` lines of bench/cudnn_cpp_reference.cpp (the reference's
C++ frontend) and the `REF | ...` lines of bench/cudnn_reference.py (its Python API), all from
the same device session, and prints:
1. kernel time, dnnplan vs the reference, with ratios;
2. plan-list creation: dnnplan cold (heuristics cache bypassed) and cached, each as a ratio to
   the reference's warm time (Python API, the target's reference; the C++ frontend for scale);
3. host time per execute: the reference's C++ frontend (uid map and sorted pointers) and Python
   layer vs dnnplan's C ABI per execution path, with the margin to "C++ + 0.5 us";
4. the instrumented breakdowns as printed.
Usage: python3 bench/cudnn_table.py LOG > table.md
"""

import re
import sys


def cells(line):
    return [c.strip() for c in line.split("|")[1:]]


def parse(path, tag, min_cells=5):
    """{case: cells} of the `tag |` lines (headers and banners skipped)."""
    out = {}
    for line in open(path, errors="replace"):
        line = line.strip()
        if line.startswith(tag + " |") and "columns:" not in line:
            c = cells(line)
            if len(c) >= min_cells and c[0] and not c[0].startswith("cudnn frontend") and c[0] != "case":
                out[c[0]] = c
    return out


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


def cpp_hosts(text):
    """{"uid map"/"sorted ptrs": (same mean, same min, alternating mean, alternating min)}"""
    out = {}
    for part in (text or "").split(";"):
        m = re.match(
            r"\s*(uid map|sorted ptrs) same ptrs ([\d.]+) \(([\d.]+)\), alternating ([\d.]+) \(([\d.]+)\)",
            part,
        )
        if m:
            out[m.group(1)] = tuple(float(m.group(i)) for i in range(2, 6))
    return out


def main():
    log = sys.argv[1]
    dnnp, ref = parse(log, "DNNP"), parse(log, "REF")
    cpp, create = parse(log, "CPP", 4), parse(log, "DNNP-CREATE2", 4)
    print("| case | dnnplan plan | reference plan (Python; C++) | kernel ms dnnplan | kernel ms reference | ratio |")
    print("|---|---|---|---:|---:|---:|")
    for case, d in dnnp.items():
        r = ref.get(case, [case, "not measured", "nan", "nan", "nan"])
        c = cpp.get(case, [case, "n/a"])
        dk, rk = num(d[2]), num(r[2])
        print(f"| {case} | {d[1]} | {r[1]}; {c[1]} | {dk:.4f} | {rk:.4f} | {ratio(dk, rk)} |")
    print()
    print("Plan-list creation (validate + create the plan list with [A, FALLBACK], library "
          "initialised), ms, median of 5, measured after the graph's plan was built and executed "
          "once (the state the Python reference measures its warm creation in). Target: dnnplan "
          "<= 1/3 of the reference (Python API, warm).")
    print()
    print("| case | reference Python (first; warm) | reference C++ warm (heuristics alone) | "
          "dnnplan never seen (both tiers bypassed) | / Python | / C++ | dnnplan seen by an earlier "
          "process (disk tier) | / Python | / C++ | dnnplan seen in this process | / Python | / C++ |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in dict.fromkeys(list(create) + list(ref)):
        cr, r, c = create.get(case), ref.get(case), cpp.get(case)
        rw = num(r[3], 1) if r else float("nan")
        cw = num(c[5]) if c and len(c) > 6 else float("nan")
        ch = num(c[6]) if c and len(c) > 6 else float("nan")
        cold = num(cr[2]) if cr and len(cr) > 4 else float("nan")
        cached = num(cr[4]) if cr and len(cr) > 4 else float("nan")
        disk = num(cr[6]) if cr and len(cr) > 6 else float("nan")
        print(f"| {case} | {r[3] if r else 'n/a'} | {cw:.3f} ({ch:.3f}) | {cold:.3f} | {ratio(cold, rw)} | "
              f"{ratio(cold, cw)} | {disk:.3f} | {ratio(disk, rw)} | {ratio(disk, cw)} | "
              f"{cached:.3f} | {ratio(cached, rw)} | {ratio(cached, cw)} |")
    fresh(log, ref, cpp)
    print()
    print("The same before the graph's plan was ever built in the process (cold only; the first "
          "creation of the process is the library's own initialisation and is left out):")
    print()
    print("| case | reference C++ warm (heuristics alone) | dnnplan cold, cache bypassed | cold / C++ |")
    print("|---|---:|---:|---:|")
    for case, cr in create.items():
        c = cpp.get(case)
        cw = num(c[2], 1) if c else float("nan")
        ch = num(c[3]) if c else float("nan")
        cold = num(cr[1])
        print(f"| {case} | {cw:.3f} ({ch:.3f}) | {cold:.3f} | {ratio(cold, cw)} |")
    print()
    print("Host time per execute, us: mean over all calls (fastest burst of 50 in parentheses); "
          "same pointers every call. Target: dnnplan <= reference C++ + 0.5 us.")
    print()
    print("| case | reference C++ (uid map) | reference C++ (sorted ptrs) | reference Python | "
          "dnnplan plain | dnnplan reuse (default) | dnnplan graph | reuse - (C++ uid map + 0.5), mean; fastest |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for case, d in dnnp.items():
        h = hosts(d[4])
        ch = cpp_hosts(cpp[case][4]) if case in cpp and len(cpp[case]) > 4 else {}
        r = ref.get(case)
        rh = f"{num(r[4]):.2f} ({num(r[4], 1):.2f})" if r else "n/a"

        def fmt(t, i):
            return f"{t[i]:.2f} ({t[i + 1]:.2f})" if t else "n/a"

        um, sp = ch.get("uid map"), ch.get("sorted ptrs")
        ru = h.get("reuse")
        margin = (f"{ru[0] - um[0] - 0.5:+.2f}; {ru[1] - um[1] - 0.5:+.2f}" if ru and um else "n/a")
        print(f"| {case} | {fmt(um, 0)} | {fmt(sp, 0)} | {rh} | {fmt(h.get('plain'), 0)} | "
              f"{fmt(ru, 0)} | {fmt(h.get('graph'), 0)} | {margin} |")
        am = (f"{ru[2] - um[2] - 0.5:+.2f}; {ru[3] - um[3] - 0.5:+.2f}" if ru and um else "n/a")
        rows.append(f"| {case} | {fmt(um, 2)} | {fmt(sp, 2)} | {fmt(h.get('plain'), 2)} | "
                    f"{fmt(ru, 2)} | {fmt(h.get('graph'), 2)} | {am} |")
    print()
    print("The same, with two pointer sets alternating every call:")
    print()
    print("| case | reference C++ (uid map) | reference C++ (sorted ptrs) | dnnplan plain | "
          "dnnplan reuse (default) | dnnplan graph | reuse - (C++ uid map + 0.5), mean; fastest |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(row)
    extra(log)


def fresh(path, ref, cpp):
    """The fresh-process rows (`DNNP-FRESH-PASS` / `DNNP-FRESH` lines), with ratios to the
    references' warm creation."""
    rows, current = [], None
    for line in open(path, errors="replace"):
        if line.startswith("DNNP-FRESH-PASS |"):
            current = line.split("|", 1)[1].strip()
        elif line.startswith("DNNP-FRESH |") and "first creation in" not in line:
            rows.append((current, [x.strip() for x in line.split("|")[1:]]))
    if not rows:
        return
    print()
    print("Each graph's first creation in a fresh process (library initialised: driver, context, "
          "cuDNN loaded, one handle), ms; the first pass finds the disk tier empty, the second "
          "process finds every graph on it:")
    print()
    print("| pass | case | first creation | listed from | / Python warm | / C++ warm | "
          "then from disk (map emptied), median of 5 | then cached, median of 5 |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    for p, f in rows:
        r, c = ref.get(f[0]), cpp.get(f[0])
        rw = num(r[3], 1) if r else float("nan")
        cw = num(c[5]) if c and len(c) > 6 else float("nan")
        first = num(f[1])
        print(f"| {p} | {f[0]} | {first:.3f} | {f[2]} | {ratio(first, rw)} | {ratio(first, cw)} | "
              f"{f[3]} | {f[4]} |")


def extra(path):
    """The creation breakdown and the backend-level host times, as they were printed."""
    for tag, title in (("DNNP-CREATE |", "Plan-list creation breakdown (dnnplan, warm)"),
                       ("DNNP-PHASES |", "Plan-list creation phases, now (dnnplan, ms, median of 5)"),
                       ("DNNP-CREATE-CONC |", "A never-seen graph's creation through the C ABI, modes in turn vs at once (DNNPLAN_CUDNN_CONCURRENT_MODES=1)"),
                       ("DNNP-CONC |", "The two modes of a never-seen graph asked sequentially vs concurrently (dnnplan, ms, median of 5)"),
                       ("DNNP-HEUR |", "One heuristics query, per backend call (raw calls, us, median of 5)"),
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
