"""Joins the `BENCH` lines of one bench/gdn_bench_run.sh run (ours: tests/gpu_gdn_bench.rs; peers:
bench/gdn_peers_bench.py) into markdown tables: forward and forward+backward per shape with the
same-run ratios peer / ours (peers at their GPU time: see gdn_peers_bench.py), then every forward schedule of ours and the backward with each kernel's
time, achieved bandwidth and TFLOP/s (the kernels of the plan's launch list, counts from
tests/support/gdn_counts.rs; a "producer+consumer" part is an overlapped pair over both launches'
time).  Usage: python3 gdn_bench_table.py LOG [LOG ...]"""

import re
import sys

SHAPES = ["(4,8192,16)", "(1,32768,16)", "(16,2048,32)", "ragged-mix-H16"]


def main():
    ours_fwd, ours_sched, ours_bwd, ours_fb, ours_train, ours_replay, peers, notes = {}, {}, {}, {}, {}, {}, {}, []
    for path in sys.argv[1:]:
        for line in open(path, errors="replace"):
            line = line.strip()
            if "BENCH " not in line:
                continue
            line = line[line.index("BENCH "):]  # libtest may print "test name ... " first
            f = line.split()
            who, mode, shape = f[1], f[2], f[3]
            if "failed" in line:
                notes.append(line)
                continue
            ms = float(f[4])
            if who == "ours" and mode == "fwd":
                sched = re.search(r"sched=(\S+)", line).group(1)
                ours_sched.setdefault(shape, []).append((sched, ms, line.split("|", 1)[1].strip() if "|" in line else "", re.search(r"pieces=(\S+)", line).group(1), re.search(r"min-traffic (\d+) GB/s", line).group(1)))
                if sched == "default":
                    ours_fwd[shape] = ms
            elif who == "ours" and mode == "bwd":
                pieces = re.search(r"pieces=(\S+)", line)
                parts = line.split("|", 1)[1].strip() if "|" in line else ""
                ours_bwd[shape] = (ms, pieces.group(1) if pieces else "-", parts)
            elif who == "ours" and mode == "fwdbwd":
                ours_fb[shape] = ms
            elif who == "ours" and mode == "train":
                ours_train[shape] = ms
            elif who == "ours" and mode == "replay":
                ours_replay[shape] = ms
            else:
                plan = re.search(r"plan=(\S+)", line)
                peers[(who, mode, shape)] = (ms, plan.group(1) if plan else "")

    def cell(x):
        return "-" if x is None else f"{x:.3f}"

    def ratio(a, b):
        return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"

    print("| shape | ours fwd | fla fwd | KDA path fwd | fla / ours | KDA / ours | ours fwd+bwd | fla fwd+bwd | KDA path fwd+bwd | fla / ours | KDA / ours |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in SHAPES:
        of, ofb = ours_fwd.get(s), ours_fb.get(s)
        ff = peers.get(("fla", "fwd", s), (None,))[0]
        kf = peers.get(("kda", "fwd", s), (None,))[0]
        ffb = peers.get(("fla", "fwdbwd", s), (None,))[0]
        kfb = peers.get(("kda", "fwdbwd", s), (None,))[0]
        print(f"| {s} | {cell(of)} | {cell(ff)} | {cell(kf)} | {ratio(ff, of)} | {ratio(kf, of)} | {cell(ofb)} | {cell(ffb)} | {cell(kfb)} | {ratio(ffb, ofb)} | {ratio(kfb, ofb)} |")
    print()
    print("(ms, CUDA events, median of 10 after 3 warm-ups; ours: one execute; peers: their GPU time, one call replayed from a CUDA graph (bench/gdn_peers_bench.py; the eager call's time is in the log as eager=); ours fwd+bwd = fwd + bwd timed apart; peers' fwd+bwd is one autograd step.)")
    if ours_train:
        print()
        print("| shape | ours train step (saved chunk factors) | ours train step (saved replay) | ours fwd+bwd (recompute) | fla fwd+bwd | KDA path fwd+bwd | fla / ours best train | KDA / ours best train |")
        print("|---|---|---|---|---|---|---|---|")
        for s in SHAPES:
            ot, orp, ofb = ours_train.get(s), ours_replay.get(s), ours_fb.get(s)
            best = min((x for x in (ot, orp) if x is not None), default=None)
            ffb = peers.get(("fla", "fwdbwd", s), (None,))[0]
            kfb = peers.get(("kda", "fwdbwd", s), (None,))[0]
            print(f"| {s} | {cell(ot)} | {cell(orp)} | {cell(ofb)} | {cell(ffb)} | {cell(kfb)} | {ratio(ffb, best)} | {ratio(kfb, best)} |")
        print()
        print("(ours train step = the forward saving its chunk factors + the backward reading them, timed apart; saved replay = the forward also checkpointing every chunk and saving the U tiles, the backward running neither prep nor replay.)")
    kda_plans = sorted({v[1] for k, v in peers.items() if k[0] == "kda" and v[1]})
    if kda_plans:
        print(f"KDA path plans: {', '.join(kda_plans)}")
    print()
    print("| shape | schedule | pieces | fwd ms | min-traffic rate | per kernel: ms, GB/s, TFLOP/s |")
    print("|---|---|---|---|---|---|")
    for s in SHAPES:
        for sched, ms, parts, pieces, rate in ours_sched.get(s, []):
            print(f"| {s} | {sched} | {pieces} | {ms:.3f} | {rate} GB/s | {parts.replace(' | ', '; ')} |")
    if ours_bwd:
        print()
        print("| shape | bwd ms | pieces | per kernel: ms, GB/s, TFLOP/s |")
        print("|---|---|---|---|")
        for s in SHAPES:
            if s in ours_bwd:
                ms, pieces, parts = ours_bwd[s]
                print(f"| {s} | {ms:.3f} | {pieces} | {parts.replace(' | ', '; ') or '-'} |")
    for n in notes:
        print(f"note: {n}")


if __name__ == "__main__":
    main()
