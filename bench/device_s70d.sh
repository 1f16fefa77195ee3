#!/usr/bin/env bash
# Session 70, call 4: where w8c's L1 traffic comes from. Session 65's ncu had the L1/TEX pipe 82 %
# busy at (4,8192,16) and session 70's harness the chain alone at 81 % of w8c's time (the producers'
# company costs a fifth). ncu's source page of one w8c launch at (4,8192,16) (the harness's first timed
# launch after its CHECK launches: --launch-skip 2): per SASS instruction its executions, shared and
# global L1 wavefronts (ideal and actual) and warp-stall samples, to split the traffic between the
# chain's step and the producer's loop (their SASS spans: bench/sass_loop_sections.py --census).
# Harness binary: .xfer-ql70/f16bench_q0 (main's header; device_s70c.sh's staging).
# run: command "bash bench/device_s70d.sh", carry [".xfer-ql70"], ~90 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
NCU=$(dev_ncu)
$NCU --version | tail -1
chmod +x .xfer-ql70/f16bench_q0
FUSED16_ONLY=w8c FUSED16_SHAPE="(4,8192,16)" timeout 200 $NCU --clock-control none -k regex:"fused16_bf16_w8c\$" \
  --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats --section MemoryWorkloadAnalysis_Tables \
  --page source --print-source sass --csv .xfer-ql70/f16bench_q0 1 > "$OUT/sass70_w8c.csv" 2> "$OUT/sass70_w8c.err"
echo "== w8c source rc=$? lines $(wc -l < "$OUT/sass70_w8c.csv")"; tail -2 "$OUT/sass70_w8c.err"
head -2 "$OUT/sass70_w8c.csv" | cut -c1-600
gzip -9 "$OUT"/*.csv
echo "elapsed $SECONDS s"
