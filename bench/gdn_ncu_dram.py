#!/usr/bin/env python3
"""Per-kernel DRAM traffic of one GDN execute, from an `ncu --csv` metrics log.

Input: the output of
  ncu --csv --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
      -k regex:<kernels> -c <launches> <test binary> ...
(one row per (launch, metric); ncu flushes the caches before every profiled launch by default, so
the bytes are each kernel's cold-L2 DRAM traffic). Output: one line per launch (duration, bytes
read / written, achieved DRAM bandwidth) and the totals, with the time that traffic alone takes at
the given peak bandwidth (the floor of this kernel structure, whatever the kernels compute).

The profiled launches may span several executes (a timing loop): only the first execute is kept,
i.e. the launches before the first kernel's name recurs.

Usage: gdn_ncu_dram.py LOG [--peak-tbs 4.8] [--label fwd]
"""
import argparse
import csv
import io
import sys


def rows(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    # ncu prints its own lines (==PROF==, test harness output) around the CSV block.
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def to_bytes(value, unit):
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}.get(unit)
    if scale is None:
        raise SystemExit(f"unknown byte unit {unit!r}")
    return float(value.replace(",", "")) * scale


def to_us(value, unit):
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}.get(unit)
    if scale is None:
        raise SystemExit(f"unknown time unit {unit!r}")
    return float(value.replace(",", "")) * scale


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--peak-tbs", type=float, default=4.8, help="DRAM peak, TB/s (H200: 4.8)")
    ap.add_argument("--label", default="execute")
    a = ap.parse_args()
    launches = {}
    for r in rows(a.log):
        key = (int(r["ID"]), r["Kernel Name"])
        d = launches.setdefault(key, {})
        name, unit, value = r["Metric Name"], r["Metric Unit"], r["Metric Value"]
        if name == "dram__bytes_read.sum":
            d["read"] = to_bytes(value, unit)
        elif name == "dram__bytes_write.sum":
            d["write"] = to_bytes(value, unit)
        elif name == "gpu__time_duration.sum":
            d["us"] = to_us(value, unit)
    if not launches:
        sys.exit(f"{a.log}: no ncu CSV rows")
    ordered = sorted(launches.items())
    first = ordered[0][0][1]
    cut = next((i for i, ((_, k), _) in enumerate(ordered) if i > 0 and k == first), len(ordered))
    ordered = ordered[:cut]
    tot_r = tot_w = tot_us = 0.0
    for (lid, kname), d in ordered:
        r, w, us = d.get("read", 0.0), d.get("write", 0.0), d.get("us", 0.0)
        tot_r, tot_w, tot_us = tot_r + r, tot_w + w, tot_us + us
        bw = (r + w) / (us * 1e-6) / 1e9 if us > 0 else 0.0
        print(
            f"{a.label} {kname:42s} {us:9.1f} us  read {r / 1e6:8.1f} MB  write {w / 1e6:8.1f} MB  {bw:6.0f} GB/s"
        )
    floor_us = (tot_r + tot_w) / (a.peak_tbs * 1e12) * 1e6
    print(
        f"{a.label} total {len(ordered)} launches {tot_us:.1f} us (kernels only, serialised)  "
        f"DRAM {tot_r / 1e6:.1f} MB read + {tot_w / 1e6:.1f} MB written = {(tot_r + tot_w) / 1e6:.1f} MB  "
        f"-> {floor_us:.1f} us at {a.peak_tbs} TB/s"
    )


if __name__ == "__main__":
    main()
