#!/usr/bin/env bash
# Session 40, lead: the token stage tw7 alone under ncu, per SASS line (warp-stall samples and
# executed instructions, `--page source --print-source sass`) and the instruction mix
# (`--print-details all`), at (4,8192,16): the data for the next token-tile design.
set -uo pipefail
OUT=${OUT:-/tmp}/ncu40b; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin ncu40b
chmod +x .device/tests/* 2>/dev/null
tb=$(dev_bin gpu_gdn_bench)
NCU=$(dev_ncu)
env DNNPLAN_GDN_BENCH_ALONE=1 timeout 200 "$NCU" -k regex:tokens_tw7 -c 1 --import-source no \
  --section InstructionStats --section SourceCounters --section WarpStateStats \
  -o /tmp/tw7 -f "$tb" gdn_benchmark_stages_alone --test-threads=1 > /tmp/ncu_run.log 2>&1
echo "profile rc=$? elapsed ${SECONDS}s"; tail -3 /tmp/ncu_run.log
"$NCU" --import /tmp/tw7.ncu-rep --page source --csv --print-source sass > /tmp/tw7_sass.csv 2> "$OUT/src_err.txt"
echo "source rc=$? lines $(wc -l < /tmp/tw7_sass.csv)"
xz -T4 -6 -c /tmp/tw7_sass.csv > "$OUT/ncu_tw7_sass.csv.xz"
"$NCU" --import /tmp/tw7.ncu-rep --page details --print-details all > "$OUT/ncu_tw7_details.txt" 2>&1
echo "details rc=$? elapsed ${SECONDS}s"
grep -A40 "Warp State Statistics" "$OUT/ncu_tw7_details.txt" | grep -E "Stall|stall" | head -30
ls -la "$OUT"
