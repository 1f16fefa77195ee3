#!/usr/bin/env python3
"""Map one kernel's SASS offsets to named phases by its line info (session 22, helper tprof22).

Input: `nvdisasm -gi -c -fun <symbol index> K.cubin` of a cubin built with -lineinfo whose
instructions equal the profiled cubin's (check: cuobjdump -sass of both, same text), and a phase
table: lines `name file lo hi` (file: a basename; lo..hi: source lines, inclusive). Each
instruction takes the phase of the innermost inline frame whose (file, line) a table row covers
(helpers that no row names resolve to their caller's line); the first matching row in table order
wins, so small ranges (a lambda's body) go before the function's range that contains them; a row
whose name ends with `?` is a fallback, used (without the `?`) only when no other row covers any
frame (line info without inline frames, e.g. a helper of another header).
Output: `name:lo:hi` address ranges (hex offsets, maximal runs of one phase) for
bench/ncu_sass_regions.py, or with --list one line per instruction (offset, phase, frames)."""
import re
import sys


def main():
    dis, table = sys.argv[1], sys.argv[2]
    rows = []
    for ln in open(table):
        ln = ln.split("#")[0].strip()
        if ln:
            name, f, lo, hi = ln.split()
            rows.append((name, f, int(lo), int(hi)))
    frames, out = [], []
    pend = []
    for ln in open(dis):
        m = re.match(r'\s*//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?', ln)
        if m:
            pend.append((m.group(1).rsplit("/", 1)[-1], int(m.group(2))))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", ln)
        if m:
            if pend:
                frames, pend = pend, []
            a = int(m.group(1), 16)
            name = "unmapped"
            for fb in (False, True):
                hit = next((r[0] for f, l in frames for r in rows
                            if r[0].endswith("?") == fb and r[1] == f and r[2] <= l <= r[3]), None)
                if hit:
                    name = hit.rstrip("?")
                    break
            out.append((a, name, m.group(2), frames))
    if "--list" in sys.argv:
        for a, name, ins, fr in out:
            print(f"{a:05x} {name:24} {ins[:60]:60} {' < '.join(f'{f}:{l}' for f, l in fr[:4])}")
        return
    runs = []
    for a, name, _, _ in out:
        if runs and runs[-1][0] == name:
            runs[-1][2] = a
        else:
            runs.append([name, a, a])
    print(" ".join(f"{n}:{lo:x}:{hi:x}" for n, lo, hi in runs))


if __name__ == "__main__":
    main()
