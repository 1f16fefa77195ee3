#!/usr/bin/env python3
"""ncu_sass_stalls.py CSV.gz [EXECUTIONS [TOP]]: a per-SASS-instruction stall table (ncu --page source
--print-source sass --csv, gzipped) summed by stall reason over the instructions executed EXECUTIONS
times (the chain loop: warps x chunks), and its TOP instructions by samples (session 50)."""
import csv, gzip, sys, collections
rows = list(csv.reader(gzip.open(sys.argv[1], 'rt')))
i = [k for k, r in enumerate(rows) if r and r[0] == 'Address'][0]
hdr = rows[i]; data = [r for r in rows[i+1:] if len(r) == len(hdr) and r[0].startswith('0x')]
H = {h: k for k, h in enumerate(hdr)}
stalls = [h for h in hdr if h.startswith('stall_') and '(Not Issued)' not in h]
def num(x):
    try: return float(x.replace(',', ''))
    except: return 0.0
target = int(sys.argv[2]) if len(sys.argv) > 2 else None
tot = collections.Counter(); n = 0; samples = 0
groups = collections.Counter()
for r in data:
    ex = num(r[H['Instructions Executed']])
    if target and ex != target: continue
    n += 1
    s = num(r[H['Warp Stall Sampling (All Samples)']]); samples += s
    for st in stalls: tot[st] += num(r[H[st]])
print('instructions', n, 'samples', samples)
for st, v in tot.most_common(12): print(f'  {st:28s} {v:8.0f} {100*v/max(samples,1):5.1f}%')
# top instructions
top = sorted([r for r in data if (not target or num(r[H['Instructions Executed']]) == target)], key=lambda r: -num(r[H['Warp Stall Sampling (All Samples)']]))[:int(sys.argv[3]) if len(sys.argv)>3 else 25]
for r in top:
    best = max(stalls, key=lambda st: num(r[H[st]]))
    print(f"{r[0][-5:]} {num(r[H['Warp Stall Sampling (All Samples)']]):6.0f} {best:18s} {num(r[H[best]]):5.0f} | {r[1].strip()[:70]}")
