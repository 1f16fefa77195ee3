# Session 13 round 4 (helper copy17): fscan_chunks' stage copies with compile-time trip counts
# (tile_async_fixed; kernels/include/gdn_fwd_fast.cuh) on the H200 in one call. This build (T)
# against the base built from main e095309 (B, the lead's staged gpu_gdn / gpu_gdn_bench): hashes
# of the forward by default, with the full factors (the full output scans w4 / w8) and at 7 pieces
# (w4p + sum1), and of the backward (replays fscan_r4, psum, fscanp); every gpu_gdn test; memcheck;
# timing in both orders (whole forward / backward, full vs slim factors, the piece path per stage).
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests (without
# its .git/info/exclude line); tar czf /work/main/.xfer-copy17/device.tgz .device/device-env.sh
# .device/tests/gpu_gdn-* .device/tests/gpu_gdn_bench-* base/ cubins.sha256 bench/device_lib.sh
# bench/gdn_hashes_session9.txt bench/gdn_device_copy17.sh. run tool: carry [".xfer-copy17"],
# command `cd .xfer-copy17 && tar xzf device.tgz && bash bench/gdn_device_copy17.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/copy17
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-*); bb=$(ls base/gpu_gdn_bench-*)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
fh() { DEV_CAP_S=40 dev_fwd_case "$@"; }
# 1. Forward hashes, T vs B: default (slim by the rule, piece path at (1,32768,16)), full factors, 7 pieces.
for v in "default" "full DNNPLAN_GDN_FWD_FACTORS=full" "p7 DNNPLAN_GDN_FWD_PIECES=7" "fullp7 DNNPLAN_GDN_FWD_FACTORS=full DNNPLAN_GDN_FWD_PIECES=7"; do
  set -- $v; tag=$1; shift
  fh T_$tag $t "$@"; fh B_$tag $b "$@"
  dev_same $DEV_TMP/h_T_$tag $DEV_TMP/h_B_$tag "forward $tag: T == B e095309, $(wc -l < $DEV_TMP/h_T_$tag) hash lines"
done
# 2. Backward hashes, T vs B, and the session-9 reference.
dev_hashes bwd $t > $DEV_TMP/hb_T; dev_hashes bwd $b > $DEV_TMP/hb_B
dev_same $DEV_TMP/hb_T $DEV_TMP/hb_B "backward default: T == B e095309, $(wc -l < $DEV_TMP/hb_T) hash lines"
dev_cover_reference "T: backward + forward full factors" $DEV_TMP/hb_T $DEV_TMP/h_T_full
echo "elapsed ${SECONDS}s"
# 3. Every gpu_gdn test with the defaults.
DEV_CAP_S=90 dev_parity "default gpu_gdn" $t ""
echo "elapsed ${SECONDS}s"
# 4. memcheck: forward with the full factors (w4 / w8 full scans), backward (replays).
DEV_CAP_S=40 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_FACTORS=full
DEV_CAP_S=40 dev_memcheck $t backward_parity
echo "elapsed ${SECONDS}s"
# 5. Timing, both orders: whole forward / backward at the four shapes.
[ $SECONDS -lt 170 ] && { dev_timing "B e095309 (a)" $b tc12; dev_timing "T (a)" $t tc12; }
[ $SECONDS -lt 185 ] && { dev_timing "T (b)" $t tc12; dev_timing "B e095309 (b)" $b tc12; }
echo "elapsed ${SECONDS}s"
# 6. Full vs slim factors (full output scan per shape), T then B; the piece path per stage at (1,32768,16).
[ $SECONDS -lt 190 ] && for x in "T $t" "B $b"; do set -- $x
  DNNPLAN_GDN_TIMING_FACTORS=2 timeout 30 $2 timing_forward_factors --test-threads=1 --nocapture > $DEV_TMP/tf_$1.log 2>&1
  echo "== timing_forward_factors $1"; grep -E "mean of|test result|panicked" $DEV_TMP/tf_$1.log; done
[ $SECONDS -lt 212 ] && for x in "B $bb" "T $tb" "T $tb" "B $bb"; do set -- $x
  echo "== bench $1"; DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="1" DNNPLAN_GDN_BENCH_SCHEDULES="rule:::" timeout 20 $2 gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours |panicked"; done
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
