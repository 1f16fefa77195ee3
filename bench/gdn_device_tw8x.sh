#!/usr/bin/env bash
# Needs bench/gdn_tw8_s40.patch applied (against main 76a3805; `git apply`, then `bash kernels/build-cubins.sh`).
# Session 40, lead: tw8's fence / acquire variants (DNNPLAN_GDN_BWD_TW8_X bits: 1 no proxy fence
# before the dD barrier, 2 no dS' / dR prefetch (and no look-ahead acquire), 4 the look-ahead
# flag read by ld.acquire instead of a relaxed load + fence.acq_rel). Hashes against tw7, then
# whole backward tw7 / tw8 / tw8 / tw7 per variant at (4,8192,16) and (16,2048,32).
set -uo pipefail
OUT=${OUT:-/tmp}/tw8x; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin tw8x
chmod +x .device/tests/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
export DEV_CAP_S=60
dev_bwd_case T7 "$t"
for x in 1 3 5; do
  dev_bwd_case X$x "$t" DNNPLAN_GDN_BWD_TOKENS=tw8 DNNPLAN_GDN_BWD_TW8_X=$x
  dev_same $DEV_TMP/h_X$x $DEV_TMP/h_T7 "backward_parity: tw8 X=$x == tw7"
done
echo "elapsed ${SECONDS}s"
for x in 0 1 2 3 4 5 "2 P0"; do
  set -- $x
  pre=1; [ "${2:-}" = P0 ] && pre=0
  echo "X=$1 prefetch=$pre:"
  env DNNPLAN_GDN_BWD_TW8_X=$1 DNNPLAN_GDN_BWD_TW8_PREFETCH=$pre DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_SHAPES=0,2 DNNPLAN_GDN_TIMING_VARIANTS="tw7/,tw8/,tw8/,tw7/" timeout 60 $t timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "bwd stages|panicked" | sed -E 's/\| offsets.*\| dscan/| dscan/'
  echo "elapsed ${SECONDS}s"
done
for v in "tw7 0" "tw8 0" "tw8 3" "tw8 5"; do
  set -- $v
  env DNNPLAN_GDN_BWD_TW8_X=$2 DNNPLAN_GDN_BENCH_ALONE=1 DNNPLAN_GDN_BWD_TOKENS=$1 timeout 60 $tb gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked" | sed -E "s/^/$1 X=$2 /; s/\| before the pair [^|]*//"
done
echo "elapsed ${SECONDS}s"
