#!/usr/bin/env bash
# Session 41, lead: the scans' and preps' wgmma descriptors built once per operand tile and
# advanced by offsets (dnnp::wgmma_desc_advance), and the chains that start from zero on the
# scale-d-0 form (the forward scan's U^T, the reverse scan's dU^T / dR^T), against main's binaries
# (.device/base, built from 58ef246 before the change). Hashes new == base (forward by rule, at 7
# pieces, w8gx forced; backward by rule, at 8 pieces), the saved-replay test, memcheck, then the
# forward's kernels and the training step in alternating base / new processes.
# Command: cd .xfer-sr && tar xJf dev.txz -C .. && cd .. && OUT=$OUT bash bench/gdn_device_desc41.sh
set -uo pipefail
OUT=${OUT:-/tmp}/desc41; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin desc41
chmod +x .device/tests/* .device/base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_base; bb=.device/base/gpu_gdn_bench_base
export DEV_CAP_S=60
dev_fwd_case FB "$b"
dev_fwd_case FN "$t"
dev_same $DEV_TMP/h_FN $DEV_TMP/h_FB "forward by rule: new == base"
dev_fwd_case FB7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case FN7 "$t" DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_FN7 $DEV_TMP/h_FB7 "forward at 7 pieces: new == base"
dev_fwd_case FB8w "$b" DNNPLAN_GDN_FWD_SCAN=w8gx
dev_fwd_case FN8w "$t" DNNPLAN_GDN_FWD_SCAN=w8gx
dev_same $DEV_TMP/h_FN8w $DEV_TMP/h_FB8w "forward, w8gx forced: new == base"
dev_bwd_case B7 "$b"
dev_bwd_case N7 "$t"
dev_same $DEV_TMP/h_N7 $DEV_TMP/h_B7 "backward by rule: new == base"
dev_bwd_case B8 "$b" DNNPLAN_GDN_BWD_PIECES=8
dev_bwd_case N8 "$t" DNNPLAN_GDN_BWD_PIECES=8
dev_same $DEV_TMP/h_N8 $DEV_TMP/h_B8 "backward at 8 pieces: new == base"
dev_parity "the_saved_replay (new)" "$t" the_saved_replay
echo "elapsed ${SECONDS}s"
DEV_CAP_S=40 dev_memcheck "$t" forward_parity
DEV_CAP_S=60 dev_memcheck "$t" backward_parity
echo "elapsed ${SECONDS}s"
for x in bb tb bb tb; do
  bin=${!x}
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default timeout 40 $bin gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH ours fwd |panicked" | sed -E "s/^test gdn_benchmark_ours \.\.\. //; s/^/$x /" | cut -c1-400
done
echo "elapsed ${SECONDS}s"
for x in bb tb bb tb; do
  bin=${!x}
  DNNPLAN_GDN_BENCH_FACTORS=1 DNNPLAN_GDN_BENCH_FACTORS_ROUNDS=3 timeout 60 $bin gdn_benchmark_saved_factors --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH replay|panicked" | sed -E "s/^test gdn_benchmark_saved_factors \.\.\. //; s/^/$x /"
done
echo "elapsed ${SECONDS}s"
for x in bb tb; do
  bin=${!x}
  env DNNPLAN_GDN_BENCH_ALONE=1 timeout 60 $bin gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked" | sed -E "s/^/$x /"
done
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
