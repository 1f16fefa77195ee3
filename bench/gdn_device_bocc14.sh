# Session 14 (helper bocc14): the backward's piece passes on one-stage phased kernels (psum1,
# fscanp1, dsum1; kernels/include/gdn_bwd_chain.cuh, gdn_bwd.cuh) on the H200 in one call. This
# build (T) against the base built from main 7c9d00b (B = /work/wt/base/gpu_gdn_s13): backward
# hashes at equal piece counts (new passes p1 vs B, and T's old passes s2 vs B), every gpu_gdn
# test, backward_parity (fp64 reference) at forced piece counts, memcheck, per-stage times at
# (1,32768,16) per (passes, P), P = 2 at the uncut shapes, whole fwd / bwd in both orders.
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests; tar czf
# /work/main/.xfer-bocc14/device.tgz .device/device-env.sh .device/tests/gpu_gdn-* base/ cubins.sha256
# bench/device_lib.sh bench/gdn_hashes_session9.txt bench/gdn_device_bocc14.sh. run tool: carry
# [".xfer-bocc14"], command `cd .xfer-bocc14 && tar xzf device.tgz && bash bench/gdn_device_bocc14.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/bocc14
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s13
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t, B $b"
# bh TAG BIN [VAR=VALUE ...]: backward_parity once: its result line and its hash lines.
bh() { DEV_CAP_S=40 dev_bwd_case "$@"; }
# 1. Backward hashes: defaults, 4 pieces (p1 and s2 vs B), 6 and 8 pieces (p1 vs s2 in T, vs B).
bh T_def $t; bh B_def $b
dev_same $DEV_TMP/h_T_def $DEV_TMP/h_B_def "backward default: T == B 7c9d00b, $(wc -l < $DEV_TMP/h_T_def) hash lines"
bh B_p4 $b DNNPLAN_GDN_BWD_PIECES=4; bh T_p4 $t DNNPLAN_GDN_BWD_PIECES=4
bh T_p4s2 $t DNNPLAN_GDN_BWD_PIECES=4 DNNPLAN_GDN_BWD_PIECE_PASSES=s2
dev_same $DEV_TMP/h_T_p4 $DEV_TMP/h_B_p4 "backward 4 pieces: T p1 == B 7c9d00b, $(wc -l < $DEV_TMP/h_T_p4) hash lines"
dev_same $DEV_TMP/h_T_p4s2 $DEV_TMP/h_B_p4 "backward 4 pieces: T s2 == B 7c9d00b"
for P in 6 8; do
  bh T_p$P $t DNNPLAN_GDN_BWD_PIECES=$P; bh B_p$P $b DNNPLAN_GDN_BWD_PIECES=$P
  dev_same $DEV_TMP/h_T_p$P $DEV_TMP/h_B_p$P "backward $P pieces: T p1 == B 7c9d00b, $(wc -l < $DEV_TMP/h_T_p$P) hash lines"
done
bh T_p7 $t DNNPLAN_GDN_BWD_PIECES=7; bh T_p7s2 $t DNNPLAN_GDN_BWD_PIECES=7 DNNPLAN_GDN_BWD_PIECE_PASSES=s2
dev_same $DEV_TMP/h_T_p7 $DEV_TMP/h_T_p7s2 "backward 7 pieces: T p1 == T s2"
dev_hashes fwd $t DNNPLAN_GDN_FWD_FACTORS=full > $DEV_TMP/h_T_ffull
dev_cover_reference "T: backward default + forward full factors" $DEV_TMP/h_T_def $DEV_TMP/h_T_ffull
echo "elapsed ${SECONDS}s"
# 2. Every gpu_gdn test with the defaults.
DEV_CAP_S=90 dev_parity "default gpu_gdn" $t ""
echo "elapsed ${SECONDS}s"
# 3. memcheck: backward_parity at the default and at 8 pieces (p1 kernels on every matrix case).
DEV_CAP_S=50 dev_memcheck $t backward_parity
DEV_CAP_S=50 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
# 4. Per stage at (1,32768,16): old passes (s2) and new (p1) per P, both orders.
runs="s2:4,p1:4,p1:6,p1:7,p1:8,p1:8,p1:7,p1:6,p1:4,s2:4"
[ $SECONDS -lt 150 ] && DNNPLAN_GDN_TIMING_PIECES=1 DNNPLAN_GDN_TIMING_PIECE_RUNS=$runs timeout 40 $t timing_backward_pieces \
  --test-threads=1 --nocapture 2>&1 | grep -E "bwd pieces|panicked"
echo "elapsed ${SECONDS}s"
# 5. Whole fwd / bwd at the four shapes, both orders.
[ $SECONDS -lt 175 ] && { dev_timing "B 7c9d00b (a)" $b tc12; dev_timing "T (a)" $t tc12; }
[ $SECONDS -lt 195 ] && { dev_timing "T (b)" $t tc12; dev_timing "B 7c9d00b (b)" $b tc12; }
echo "elapsed ${SECONDS}s"
# 6. P = 2 on the uncut shapes (4,8192,16) and the ragged mix.
for sh in 0 3; do
  [ $SECONDS -lt 210 ] && DNNPLAN_GDN_TIMING_PIECES=1 DNNPLAN_GDN_TIMING_PIECE_SHAPE=$sh DNNPLAN_GDN_TIMING_PIECE_RUNS="s2:1,p1:2,s2:2,s2:1" \
    timeout 20 $t timing_backward_pieces --test-threads=1 --nocapture 2>&1 | grep -E "bwd pieces|panicked"
done
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
