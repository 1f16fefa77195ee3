# Session 18 (helper dscan18), run 2 (build 06e68f76…; its ov6 / ov7 were then removed from the bundle, ov5
# kept with the same machine code): the overlapped reverse scan's publish options on the R2 loop
# (dscan_mma_chunks R3 bits; gdn_bwd_dscan{,p}_ov5_*: a publisher warp, R3_PUBW; _ov6_*: one fence
# per publish, R3_FENCE1; _ov7_*: one fence per two chunks, R3_PUB2) on the H200 in one call. This
# build (T) against main 2f7c732's staged gpu_gdn (B, base/gpu_gdn_s18base): timing in both orders
# (backward stages of ov2 / ov5 / ov6 / ov7 in T's run, B's default; order (b) at (4,8192,16) and the
# ragged mix only); backward hashes of T's ov5 / ov6 / ov7 by rule and at 8 pieces against B's from
# run 1 (bench/dscan18_base/: the same binary, DNNPLAN_GDN_TEST_HASHES); memcheck of backward_parity.
# Stage: as gdn_device_dscan18.sh plus bench/dscan18_base; command
# `cd .xfer-dscan18 && tar xzf device.tgz && bash bench/gdn_device_dscan18b.sh`.
exec > >(tee $OUT/dscan18b.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/dscan18b
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s18base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t, B $b"
V="tc12/ov2,tc12/ov5,tc12/ov6,tc12/ov7"
# 1. Timing, order (a): B's default (ov2), then T's ov2 / ov5 / ov6 / ov7.
DEV_CAP_S=30 dev_timing "B 2f7c732 (a)" $b tc12; DEV_CAP_S=60 dev_timing "T (a)" $t $V
echo "elapsed ${SECONDS}s"
# 2. Backward hashes of T's publish options vs B's (run 1).
for v in "rule" "p8 DNNPLAN_GDN_BWD_PIECES=8"; do
  set -- $v; tag=$1; shift
  for s in ov5 ov6 ov7; do
    dev_hashes bwd $t "$@" DNNPLAN_GDN_BWD_DSCAN=$s > $d/h_T_${tag}_$s
    dev_same $d/h_T_${tag}_$s bench/dscan18_base/h_B_$tag "backward $tag, T dscan $s == B 2f7c732, $(wc -l < $d/h_T_${tag}_$s) hash lines"
  done
done
echo "elapsed ${SECONDS}s"
# 3. Timing, order (b), (4,8192,16) and the ragged mix.
[ $SECONDS -lt 95 ] && { DEV_CAP_S=40 DNNPLAN_GDN_TIMING_SHAPES=0,3 dev_timing "T (b)" $t $V; DEV_CAP_S=20 DNNPLAN_GDN_TIMING_SHAPES=0,3 dev_timing "B 2f7c732 (b)" $b tc12; }
echo "elapsed ${SECONDS}s"
# 4. memcheck with the fewest fences (ov7), as time allows.
[ $SECONDS -lt 115 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_DSCAN=ov7
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
