#!/usr/bin/env bash
# Needs bench/gdn_tw8_s40.patch applied (against main 76a3805; `git apply`, then `bash kernels/build-cubins.sh`).
# Session 40, lead: tw8, third round (DNNPLAN_GDN_BWD_TW8_X bits: 1 no proxy fence before the dD
# barrier, 8 no look-ahead acquire (timing bound only), 32 the q / k rows waited before the dD
# barrier instead of the products' last barrier, 64 the q / k rows issued before the scalar rows).
set -uo pipefail
OUT=${OUT:-/tmp}/tw8z; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin tw8z
chmod +x .device/tests/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
export DEV_CAP_S=60
dev_bwd_case T7 "$t"
for x in 97; do
  dev_bwd_case X$x "$t" DNNPLAN_GDN_BWD_TOKENS=tw8 DNNPLAN_GDN_BWD_TW8_X=$x
  dev_same $DEV_TMP/h_X$x $DEV_TMP/h_T7 "backward_parity: tw8 X=$x == tw7"
done
echo "elapsed ${SECONDS}s"
for v in "tw7 0" "tw8 1" "tw8 33" "tw8 97" "tw8 105" "tw8 98"; do
  set -- $v
  env DNNPLAN_GDN_BWD_TW8_X=$2 DNNPLAN_GDN_BENCH_ALONE=1 DNNPLAN_GDN_BWD_TOKENS=$1 timeout 60 $tb gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked" | grep -E "4,8192|16,2048|panicked" | sed -E "s/^/$1 X=$2 /; s/\| before the pair [^|]*//"
done
echo "elapsed ${SECONDS}s"
