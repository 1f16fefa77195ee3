#!/usr/bin/env python3
"""Session 31 (helper rc31): map compute-sanitizer racecheck analysis records to SASS.

For every "Race reported between <A> access at <kernel>+0xX ... and <B> access at <kernel>+0xY
[N hazards]" pair of a racecheck log (the default `--racecheck-report analysis` output), prints the
two instructions and every synchronizing instruction that lies between the two offsets in address
order (BAR.SYNC / BAR.ARV / BAR.RED, SYNCS.* mbarrier operations, ARRIVES.LDGSTSBAR, WARPSYNC,
DEPBAR / LDGDEPBAR). Address order is only a proxy for program order (a loop's back edge can
order the later address first), so the output is for reading, not a verdict; the last column
says whether a block-wide `BAR.SYNC ... 0x0` lies between the two.

Usage (repository root; the SASS of the checked-in cubin, nvdisasm from the pip wheel
nvidia-cuda-nvdisasm):
  nvdisasm -c kernels/sm_90a/gdn_bwd.cubin > /tmp/gdn_bwd.sass
  python3 bench/rc31_race_pairs.py /tmp/gdn_bwd.sass LOG [LOG...]
The kernel of each record is taken from the record itself (its `<name>+0x...` text).
"""
import re
import sys

SYNC_RE = re.compile(r"\b(BAR\.[A-Z_.]+[^;]*|SYNCS\.[A-Z0-9_.]+[^;]*|ARRIVES\.[A-Z0-9_.]+[^;]*|WARPSYNC[^;]*|"
                     r"DEPBAR[^;]*|LDGDEPBAR)")
INSN_RE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
HEAD_RE = re.compile(r"Race reported between (Read|Write) access at ([A-Za-z0-9_]+)\+0x([0-9a-f]+)")
MORE_RE = re.compile(r"and (Read|Write) access at ([A-Za-z0-9_]+)\+0x([0-9a-f]+)(?:.*?\[(\d+) hazards?\])?")


def load_sass(path, wanted):
    """{kernel: {offset: instruction text}} for the kernels named in `wanted`."""
    out = {k: {} for k in wanted}
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^\s*\.text\.([A-Za-z0-9_]+):", line)
            if m:
                cur = m.group(1) if m.group(1) in out else None
                continue
            if cur is None:
                continue
            m = INSN_RE.search(line)
            if m:
                out[cur][int(m.group(1), 16)] = re.sub(r"\s+", " ", m.group(2))
    return out


def records(path):
    """[(kernel, (kind, off), [(kind, off, hazards)])] of one log."""
    recs = []
    with open(path, errors="replace") as f:
        for line in f:
            m = HEAD_RE.search(line)
            if m:
                recs.append((m.group(2), (m.group(1), int(m.group(3), 16)), []))
                continue
            m = MORE_RE.search(line)
            if m and recs and m.group(2) == recs[-1][0]:
                recs[-1][2].append((m.group(1), int(m.group(3), 16), int(m.group(4) or 0)))
    return recs


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    recs = [(log, r) for log in argv[2:] for r in records(log)]
    sass = load_sass(argv[1], {r[0] for _, r in recs})
    straddle = total = 0
    for log, (kern, (kind, off), others) in recs:
        code = sass.get(kern, {})
        print(f"== {log}: {kern} {kind} +0x{off:x}: {code.get(off, '?')}")
        for okind, ooff, n in others:
            lo, hi = sorted((off, ooff))
            between = [(a, code[a]) for a in sorted(code) if lo < a < hi and SYNC_RE.search(code[a])]
            bar0 = any(re.search(r"BAR\.SYNC\S* 0x0\b", t) for _, t in between)
            total += 1
            straddle += bar0
            print(f"   {okind} +0x{ooff:x}: {code.get(ooff, '?')} [{n} hazards]; between: "
                  + ("; ".join(f"+0x{a:x} {t}" for a, t in between) or "none")
                  + f" | block-wide BAR.SYNC 0x0 between: {'yes' if bar0 else 'no'}")
    print(f"pairs: {total}, with a block-wide BAR.SYNC 0x0 between the two offsets: {straddle}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
