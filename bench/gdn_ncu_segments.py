# Stall samples, instructions and shared-memory wavefronts of one kernel per barrier segment (the
# SASS between consecutive BAR.SYNC), from `ncu -i REPORT --page source --csv --print-source sass > X.csv`.
# Usage: python3 bench/gdn_ncu_segments.py X.csv   (session 7, helper tok7: bench/gdn_device_tok7_ncu.log)
import csv,sys,collections
fn=sys.argv[1]
rows=list(csv.reader(open(fn)))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
stalls=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
seg=0; S=collections.defaultdict(lambda: collections.Counter())
tot=collections.Counter()
for r in data:
    if len(r)<len(hdr): continue
    src=r[ix['Source']]
    def f(h):
        try: return float(r[ix[h]] or 0)
        except: return 0.0
    c=S[seg]
    c['samples']+=f('Warp Stall Sampling (All Samples)')
    c['inst']+=f('Instructions Executed')
    c['wf_shared']+=f('L1 Wavefronts Shared')
    c['wf_ideal']+=f('L1 Wavefronts Shared Ideal')
    for h in stalls: c[h]+=f(h)
    op=src.split()[0] if src else ''
    if op.startswith('@'): op=src.split()[1]
    if op.startswith('BAR'): seg+=1
allsamp=sum(S[s]['samples'] for s in S)
allwf=sum(S[s]['wf_shared'] for s in S)
print(f"total samples {allsamp:.0f}, inst {sum(S[s]['inst'] for s in S):.0f}, shared wavefronts {allwf:.0f} (ideal {sum(S[s]['wf_ideal'] for s in S):.0f})")
top=collections.Counter()
for s in S:
    for h in stalls: top[h]+=S[s][h]
print("stall totals:", ", ".join(f"{h[6:]} {100*v/allsamp:.1f}%" for h,v in top.most_common(8)))
for s in sorted(S):
    c=S[s]
    st=sorted(((c[h],h[6:]) for h in stalls),reverse=True)[:4]
    print(f"seg {s:2d}: {100*c['samples']/allsamp:5.1f}% samples, inst {c['inst']:9.0f}, wf {c['wf_shared']:9.0f} (ideal {c['wf_ideal']:8.0f}) | "+", ".join(f"{n} {100*v/allsamp:.1f}" for v,n in st))
