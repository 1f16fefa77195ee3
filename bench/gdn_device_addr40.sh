#!/usr/bin/env bash
# Session 40, lead: the token tile's products half with fewer integer instructions (tc16_passes'
# dR and dD rows addressed from their first row, the wgmma descriptors advanced from one per
# operand tile; 9 % fewer static instructions in tw1 / tw3 / tw7), against main's binaries
# (.device/base, built before the change). Hashes new == base (tw7 by rule, tw3, 8 pieces),
# memcheck, whole backward alternating base / new processes, the stages alone.
set -uo pipefail
OUT=${OUT:-/tmp}/addr40; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin addr40
chmod +x .device/tests/* .device/base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_base; bb=.device/base/gpu_gdn_bench_base
export DEV_CAP_S=60
dev_bwd_case B7 "$b"
dev_bwd_case N7 "$t"
dev_same $DEV_TMP/h_N7 $DEV_TMP/h_B7 "backward by rule (tw7): new == base"
dev_bwd_case B3 "$b" DNNPLAN_GDN_BWD_TOKENS=tw3
dev_bwd_case N3 "$t" DNNPLAN_GDN_BWD_TOKENS=tw3
dev_same $DEV_TMP/h_N3 $DEV_TMP/h_B3 "backward tw3: new == base"
dev_bwd_case B8 "$b" DNNPLAN_GDN_BWD_PIECES=8
dev_bwd_case N8 "$t" DNNPLAN_GDN_BWD_PIECES=8
dev_same $DEV_TMP/h_N8 $DEV_TMP/h_B8 "backward at 8 pieces: new == base"
dev_parity "the_saved_replay (new)" "$t" the_saved_replay
dev_memcheck "$t" backward_parity
echo "elapsed ${SECONDS}s"
for x in b t b t; do
  bin=${!x}
  env DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS="tw7/" timeout 40 $bin timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "bwd stages|panicked" | sed -E "s/^/$x /; s/\| offsets.*\| dscan/| dscan/"
done
echo "elapsed ${SECONDS}s"
for x in bb tb bb tb; do
  bin=${!x}
  env DNNPLAN_GDN_BENCH_ALONE=1 timeout 60 $bin gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked" | sed -E "s/^/$x /; s/\| before the pair [^|]*//"
done
echo "elapsed ${SECONDS}s"
