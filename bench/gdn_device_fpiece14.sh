# Session 14 (helper fpiece14): the forward piece path on slim factors (gdn_fwd_slimsum + chain3 +
# gdn_fwd_slimscan_*_w4d; kernels/include/gdn_fwd_slim.cuh) on the H200 in one call. This build (T)
# against the base built from main 7c9d00b (B = /work/wt/base/gpu_gdn_s13, gpu_gdn_bench_s13):
#  1. hashes proving the unchanged paths bitwise B: full factors at P = 7 (w4p + sum1) and uncut
#     (w4 / w8), slim uncut (slim w4 / w8);
#  2. every gpu_gdn test with the new default (slim pieces at the piece-chain matrix case), and
#     forward_parity (fp64 reference) at P = 7 and P = 3 with slim (default) and full forced;
#  3. memcheck forward_parity at P = 7 slim;
#  4. timing: whole forward / backward at the four shapes, both orders vs B; slim vs full factors
#     at (1,32768,16) by the rule (same binary, alternating); per stage at (1,32768,16).
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests; tar czf
# /work/main/.xfer-fpiece14/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
# .device/tests/gpu_gdn_bench-* base/ cubins.sha256 bench/device_lib.sh bench/gdn_hashes_session9.txt
# bench/gdn_device_fpiece14.sh. run tool: carry [".xfer-fpiece14"], command
# `cd .xfer-fpiece14 && tar xzf device.tgz && bash bench/gdn_device_fpiece14.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/fpiece14
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=base/gpu_gdn_s13; bb=base/gpu_gdn_bench_s13
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
fh() { DEV_CAP_S=40 dev_fwd_case "$@"; }
# 1. Unchanged paths, T vs B.
for v in "fullp7 DNNPLAN_GDN_FWD_FACTORS=full DNNPLAN_GDN_FWD_PIECES=7" "fullp1 DNNPLAN_GDN_FWD_FACTORS=full DNNPLAN_GDN_FWD_PIECES=1" "slimp1 DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_PIECES=1"; do
  set -- $v; tag=$1; shift
  fh T_$tag $t "$@"; fh B_$tag $b "$@"
  dev_same $DEV_TMP/h_T_$tag $DEV_TMP/h_B_$tag "forward $tag: T == B 7c9d00b, $(wc -l < $DEV_TMP/h_T_$tag) hash lines"
done
# The base's P = 7 (full pieces) against T's P = 7 default (slim pieces): expected to differ (numerics change).
fh T_p7 $t DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_T_p7 $DEV_TMP/h_B_fullp7 "forward p7: T slim pieces vs B full pieces (expected to differ), $(wc -l < $DEV_TMP/h_T_p7) hash lines"
fh T_p3 $t DNNPLAN_GDN_FWD_PIECES=3
fh T_fullp3 $t DNNPLAN_GDN_FWD_FACTORS=full DNNPLAN_GDN_FWD_PIECES=3
echo "elapsed ${SECONDS}s"
# 2. Every gpu_gdn test with the defaults, then with the full factors forced.
DEV_CAP_S=90 dev_parity "default gpu_gdn" $t ""
DEV_CAP_S=60 dev_parity "gpu_gdn forward_parity DNNPLAN_GDN_FWD_FACTORS=full" $t forward_parity DNNPLAN_GDN_FWD_FACTORS=full
echo "elapsed ${SECONDS}s"
# 3. memcheck: forward at 7 pieces on slim factors (every matrix case cut).
DEV_CAP_S=45 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
# 4. Timing. Slim vs full factors by the rule at (1,32768,16) (and uncut), T, 2 rounds alternating.
DNNPLAN_GDN_TIMING_FACTORS=2 DNNPLAN_GDN_TIMING_SHAPES=1 timeout 30 $t timing_forward_factors --test-threads=1 --nocapture > $DEV_TMP/tf_T.log 2>&1
echo "== timing_forward_factors T (1,32768,16)"; grep -E "factors|test result|panicked" $DEV_TMP/tf_T.log
# Per stage at (1,32768,16): B, T (slim pieces), T full, then reversed.
[ $SECONDS -lt 150 ] && for x in "B $bb" "T $tb" "Tfull $tb DNNPLAN_GDN_FWD_FACTORS=full" "Tfull $tb DNNPLAN_GDN_FWD_FACTORS=full" "T $tb" "B $bb"; do set -- $x
  echo "== bench $1"; env $3 DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="1" DNNPLAN_GDN_BENCH_SCHEDULES="rule:::" timeout 20 $2 gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd |panicked"; done
echo "elapsed ${SECONDS}s"
# Whole forward / backward at the four shapes, both orders.
[ $SECONDS -lt 175 ] && { dev_timing "B 7c9d00b (a)" $b tc12; dev_timing "T (a)" $t tc12; }
[ $SECONDS -lt 195 ] && { dev_timing "T (b)" $t tc12; dev_timing "B 7c9d00b (b)" $b tc12; }
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
