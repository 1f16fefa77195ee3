#!/usr/bin/env python3
"""Session 25 (prx25): an ncu source page (--page source --csv --print-source sass, profiled with
SourceCounters + WarpStateStats) cut into segments at every BAR / EXIT instruction: per segment the
share of warp-state samples, executed instructions, shared-memory wavefronts (and their ratio to the
ideal), global L1 tag requests, the top stall reasons and the opcodes with the most wavefronts.
Usage: ncu_sass_barrier_segments.py F.csv"""
import csv,sys,collections,re
rows=list(csv.reader(open(sys.argv[1]))); hdr=rows[1]; col={h:i for i,h in enumerate(hdr)}
data=[r for r in rows[2:] if len(r)>=len(hdr)]
def n(r,k):
    v=r[col[k]]; 
    try: return float(v)
    except: return 0.0
tot_s=sum(n(r,'Warp Stall Sampling (All Samples)') for r in data)
tot_w=sum(n(r,'L1 Wavefronts Shared') for r in data)
tot_i=sum(n(r,'Instructions Executed') for r in data)
tot_g=sum(n(r,'L1 Tag Requests Global') for r in data)
print(f"total samples {tot_s:.0f} instr {tot_i:.0f} shared wavefronts {tot_w:.0f} ideal {sum(n(r,'L1 Wavefronts Shared Ideal') for r in data):.0f} global L1 tag req {tot_g:.0f}")
seg=[];cur=None
for r in data:
    op=r[col['Source']].split()
    opc=[x for x in op if not x.startswith('@')][0] if op else ''
    if cur is None or opc.startswith('BAR') or opc.startswith('EXIT'):
        cur={'start':r[0],'label':opc,'s':0,'i':0,'w':0,'wi':0,'g':0,'ops':collections.Counter(),'wops':collections.Counter(),'stall':collections.Counter()}
        seg.append(cur)
    cur['s']+=n(r,'Warp Stall Sampling (All Samples)'); cur['i']+=n(r,'Instructions Executed')
    w=n(r,'L1 Wavefronts Shared'); cur['w']+=w; cur['wi']+=n(r,'L1 Wavefronts Shared Ideal'); cur['g']+=n(r,'L1 Tag Requests Global')
    base=opc.split('.')[0]; cur['ops'][base]+=n(r,'Instructions Executed'); cur['wops'][opc]+=w
    for k in hdr:
        if k.startswith('stall_') and 'Not Issued' not in k: cur['stall'][k[6:]]+=n(r,k)
for s in seg:
    if s['i']==0: continue
    ss=s['s']; st=', '.join('%s %.0f'%(k,100*v/max(ss,1)) for k,v in s['stall'].most_common(3)); wo=', '.join('%s %.1f'%(k,100*v/max(tot_w,1)) for k,v in s['wops'].most_common(3))
    print('%s %-22s samp %5.1f%% instr %5.1f%% shwf %5.1f%% (x%.2f ideal) glob %4.1f%% | stalls %s | wf ops %s'%(s['start'],s['label'],100*ss/tot_s,100*s['i']/tot_i,100*s['w']/tot_w,s['w']/max(s['wi'],1),100*s['g']/max(tot_g,1),st,wo))
