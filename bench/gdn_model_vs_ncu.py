"""Compares the benchmark's per-kernel byte models (tests/support/gdn_counts.rs, printed as
`MODEL` lines by `cargo test --test gdn_counts -- --nocapture`) with ncu's DRAM bytes
(`dram__bytes_read.sum`, `dram__bytes_write.sum`, `gpu__time_duration.sum`) of an
`ncu --set full` run of tests/gpu_gdn_bench.rs (bench/gdn_device_prof18.sh): raw CSV pages
(`--page raw --csv`: header row 0, units row 1) or details pages (the default text page).

Usage: python3 gdn_model_vs_ncu.py MODEL_LOG SHAPE:DIR:NCU_FILE [SHAPE:DIR:NCU_FILE ...]
  SHAPE: a benchmark shape name, e.g. "(4,8192,16)"; DIR: the MODEL lines' direction/schedule,
  e.g. "bwd" or "fwd/w4" (ncu's kernels are matched by entry name within it).
Prints one markdown row per profiled kernel: ncu and model MB read and written, their ratios,
ncu's time and DRAM rate, and the model's rate at ncu's time."""

import csv
import re
import sys

UNITS = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
         "ns": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0, "nsecond": 1e-9}
METRICS = {"dram__bytes_read.sum": "read", "dram__bytes_write.sum": "write", "gpu__time_duration.sum": "time"}


def models(path):
    out = {}
    for line in open(path, errors="replace"):
        m = re.match(r"MODEL (\S+) (\S+) P=(\d+) (\S+) grid=.* read (\d+) write (\d+) flops (\d+)", line.strip())
        if m:
            shape, d, _, entry, r, w, f = m.groups()
            out[(shape, d, entry)] = (float(r), float(w), float(f))
    return out


def ncu_raw(path):
    rows = list(csv.reader(open(path, errors="replace")))
    head, units = rows[0], rows[1]
    name = head.index("Kernel Name")
    cols = {m: head.index(m) for m in METRICS if m in head}
    out = []
    for r in rows[2:]:
        vals = {METRICS[m]: float(r[i].replace(",", "")) * UNITS.get(units[i], 1.0) for m, i in cols.items()}
        out.append((r[name], vals))
    return out


def ncu_details(path):
    out, cur = [], None
    for line in open(path, errors="replace"):
        m = re.match(r"  (\w+) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line)
        if m:
            cur = (m.group(1), {})
            out.append(cur)
            continue
        f = line.split()
        if cur and len(f) == 3 and f[0] in METRICS and f[1] in UNITS:
            cur[1].setdefault(METRICS[f[0]], float(f[2].replace(",", "")) * UNITS[f[1]])
        elif cur and len(f) == 3 and f[0] == "Duration" and f[1] in UNITS:
            cur[1].setdefault("time", float(f[2].replace(",", "")) * UNITS[f[1]])
    return out


def main():
    model = models(sys.argv[1])
    print("| shape | kernel | ncu read MB | model read MB | ncu/model | ncu write MB | model write MB | ncu/model | ncu us | ncu DRAM GB/s | model GB/s at ncu time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in sys.argv[2:]:
        shape, d, path = spec.split(":", 2)
        kernels = ncu_raw(path) if path.endswith(".csv") else ncu_details(path)
        for entry, v in kernels:
            mr, mw, _ = model.get((shape, d, entry), (None, None, None))
            if mr is None:
                print(f"| {shape} | {entry} | no MODEL line for {d} |")
                continue
            r, w, t = v.get("read", 0.0), v.get("write", 0.0), v.get("time", 0.0)
            rate = (r + w) / t / 1e9 if t else 0.0
            mrate = (mr + mw) / t / 1e9 if t else 0.0
            print(f"| {shape} | {entry} | {r / 1e6:.1f} | {mr / 1e6:.1f} | {r / mr:.3f} | {w / 1e6:.1f} | {mw / 1e6:.1f} | {w / mw:.3f} | {t * 1e6:.1f} | {rate:.0f} | {mrate:.0f} |")


if __name__ == "__main__":
    main()
