# Session 18 (helper dscan18), run 1 (build 30e32405…; its ov3 / ov4 were then removed from the bundle:
# R3_LATE, R3_LATE | R3_DR16): the overlapped reverse scan's LATE loops (dscan_mma_chunks LATE 1 =
# gdn_bwd_dscan{,p}_ov3_*: each chunk's stores and the previous chunk's publish after its state
# update; LATE 2 = _ov4_*: also dR by 16-byte stores through the dS' staging rows) on the H200 in
# one call. This build (T) against main 2f7c732's staged gpu_gdn (B, base/gpu_gdn_s18base): backward
# hashes by rule, overlap forced on, overlap off, at 8 pieces (T with DNNPLAN_GDN_BWD_DSCAN=ov3 / ov4);
# the gpu_gdn backward tests and memcheck of backward_parity with ov4 / ov3; timing in both orders
# (backward stages of ov2 / ov3 / ov4 in T's run, B's default).
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests; tar czf
# /work/main/.xfer-dscan18/device.tgz .device/device-env.sh .device/tests/gpu_gdn-* cubins.sha256
# bench/device_lib.sh bench/gdn_hashes_session9.txt bench/gdn_device_dscan18.sh -C /work/wt base/gpu_gdn_s18base.
# run tool: carry [".xfer-dscan18"], command `cd .xfer-dscan18 && tar xzf device.tgz && bash bench/gdn_device_dscan18.sh`.
exec > >(tee $OUT/dscan18.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/dscan18
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s18base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t, B $b"
V="tc12/ov2,tc12/ov3,tc12/ov4"
# 1. Timing, order (a): B's default (ov2), then T's ov2 / ov3 / ov4 (backward stages, whole).
DEV_CAP_S=40 dev_timing "B 2f7c732 (a)" $b tc12; DEV_CAP_S=80 dev_timing "T (a)" $t $V
echo "elapsed ${SECONDS}s"
# 2. Backward hashes, T (ov3, ov4) vs B's default: by rule, at 8 pieces, overlap forced on; T's
# default with the overlap off.
for v in "rule" "p8 DNNPLAN_GDN_BWD_PIECES=8" "ovon DNNPLAN_GDN_BWD_OVERLAP=1" "ovoff DNNPLAN_GDN_BWD_OVERLAP=0"; do
  set -- $v; tag=$1; shift
  dev_hashes bwd $b "$@" > $d/h_B_$tag
  for s in ov3 ov4 default; do
    case "$tag:$s" in rule:default|p8:default|ovon:ov3|ovoff:ov3|ovoff:ov4) continue;; esac
    if [ $s = default ]; then dev_hashes bwd $t "$@" > $d/h_T_${tag}_$s; else dev_hashes bwd $t "$@" DNNPLAN_GDN_BWD_DSCAN=$s > $d/h_T_${tag}_$s; fi
    dev_same $d/h_T_${tag}_$s $d/h_B_$tag "backward $tag, T dscan $s == B 2f7c732, $(wc -l < $d/h_T_${tag}_$s) hash lines"
  done
done
dev_cover_reference "T ov4: backward by rule" $d/h_T_rule_ov4
echo "elapsed ${SECONDS}s"
# 3. Timing, order (b).
[ $SECONDS -lt 150 ] && { DEV_CAP_S=80 dev_timing "T (b)" $t $V; DEV_CAP_S=40 dev_timing "B 2f7c732 (b)" $b tc12; }
echo "elapsed ${SECONDS}s"
# 4. The gpu_gdn backward tests and memcheck with the LATE loops (as time allows).
[ $SECONDS -lt 190 ] && DEV_CAP_S=40 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_DSCAN=ov4
[ $SECONDS -lt 200 ] && DEV_CAP_S=40 dev_parity "gpu_gdn backward tests, ov4" $t backward DNNPLAN_GDN_BWD_DSCAN=ov4
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
