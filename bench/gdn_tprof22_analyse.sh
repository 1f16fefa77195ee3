#!/usr/bin/env bash
# Session 22, helper tprof22: the token stage's ncu source pages (bench/gdn_device_tprof22_prof.sh,
# unpacked into $1) attributed to the tile's phases. Needs a -lineinfo build of gdn_bwd.cu whose
# token-stage SASS equals the bundled cubin's ($2, e.g. nvcc <build_cubins.py's flags> -lineinfo),
# /work/wt/tools/{cuobjdump,nvdisasm}. Prints per profile the phase table (bench/ncu_sass_regions.py,
# BARS=1: each block barrier's wait on its own row).
set -euo pipefail
res=$1 li=$2 here=$(cd "$(dirname "$0")" && pwd) tools=${TOOLS:-/work/wt/tools}
bundled=$here/../kernels/sm_90a/gdn_bwd.cubin
sym() { readelf -sW "$li" | awk -v f="$1" '$NF == f && $4 == "FUNC" {sub(":", "", $1); print $1}'; }
for k in gdn_bwd_tokens_tc13_ov_bf16_k128 gdn_bwd_tokens_tc12_bf16_k128; do
  a=$("$tools/cuobjdump" -sass -fun "$k" "$bundled" | grep -oE '/\*[0-9a-f]{4}\*/ +[^;]*;' | md5sum)
  b=$("$tools/cuobjdump" -sass -fun "$k" "$li" | grep -oE '/\*[0-9a-f]{4}\*/ +[^;]*;' | md5sum)
  [ "$a" = "$b" ] && echo "$k: lineinfo SASS == bundled SASS" || { echo "$k: SASS differs"; exit 1; }
  s=$(sym "$k"); [ -n "$s" ] || { echo "no symbol $k"; exit 1; }
  "$tools/nvdisasm" -gi -c -fun "$s" "$li" > "/tmp/$k.dis"
done
cyc() {  # SM active cycles per tile: SM active cycles / (tiles / SMs)
  python3 - "$1" "$2" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
act = float(re.search(r"SM Active Cycles\s+cycle\s+([\d,.]+)", t).group(1).replace(",", ""))
print(round(act / (int(sys.argv[2]) / 132)))
PY
}
run() {  # tag kernel tiles
  local c; c=$(cyc "$res/$1.details.txt" "$3")
  echo "== $1 ($2, $3 tiles, $c SM-active cycles per tile)"
  WARPS=$(( $3 * 16 )) NCH=1 THR=0.001 BARS=1 python3 "$here/ncu_sass_regions.py" "$res/$1.sass.csv" "$c" \
    $(python3 "$here/sass_line_phases.py" "/tmp/$2.dis" "$here/gdn_tprof22_phases.txt")
}
run t13 gdn_bwd_tokens_tc13_ov_bf16_k128 8192
run t12 gdn_bwd_tokens_tc12_bf16_k128 8192
run t13s2 gdn_bwd_tokens_tc13_ov_bf16_k128 16384
# The spans between consecutive block barriers (S00 = kernel start to the first BAR.SYNC, ...), with
# each span's floors: issue 4 x instr/warp (16 warps on 4 schedulers), tensor 24 x HMMA/warp
# (6 cycles per m16n8k16 per scheduler: the kernel's tensor-pipe-active cycles / its HMMA), shared
# memory 16 x wavefronts/warp (one wavefront per SM cycle, LDGSTS included).
spans() {  # tag tiles
  local c r; c=$(cyc "$res/$1.details.txt" "$2")
  r=$(python3 - "$res/$1.sass.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = rows[1]; col = {h: i for i, h in enumerate(hdr)}
data = [r for r in rows[2:] if len(r) >= len(hdr)]
base = int(data[0][0], 16)
b = [int(r[0], 16) - base for r in data if "BAR.SYNC" in r[1] and int(r[col["Instructions Executed"]]) > 1000]
end, lo, out = int(data[-1][0], 16) - base, 0, []
for i, x in enumerate(b + [end]):
    out.append(f"S{i:02d}:{lo:x}:{x:x}")
    lo = x + 0x10
print(" ".join(out))
PY
)
  echo "== $1 spans between barriers ($c cycles per tile)"
  WARPS=$(( $2 * 16 )) NCH=1 THR=0.001 BARS=1 python3 "$here/ncu_sass_regions.py" "$res/$1.sass.csv" "$c" $r | python3 -c '
import sys
for l in sys.stdin:
    p = [x.strip() for x in l.split("|")]
    if len(p) > 8 and p[1][:1] in "Swp" and not p[1].startswith("reg"):
        ins, h = float(p[4]), float(p[5])
        wf, wi = float(p[8].split()[0]), float(p[8].split()[1].strip("()"))
        print(f"{p[1]:22} {p[3]:>6} cyc  instr/warp {ins:4.0f}  floors: issue {4 * ins:5.0f} tensor {24 * h:5.0f} "
              f"smem {16 * wf:5.0f} (ideal {16 * wi:5.0f})  | {p[9]}")
    elif not l.startswith("|"):
        print(l.rstrip())'
}
spans t13 8192
spans t12 8192
spans t13s2 16384
