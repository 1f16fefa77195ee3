# Session 27 (helper gx527): the storing scalar-form replay on five copy stages,
# gdn_bwd_fscan_gx5scu_* (DNNPLAN_GDN_BWD_FSCAN=gx5; the default gxr runs gx4scu where the replay
# holds an SM alone, gxscu at two per SM). T = this build (branch gx527, main 62bf010 + gx5scu).
#   1. hashes: T gx5 == T default (the stage count changes no arithmetic), uncut by rule
#   2. backward_parity and the gpu_gdn backward tests with gx5
#   3. memcheck backward_parity with gx5
#   4. timing in one process A B B A: tc16 tc16+gx5 tc16+gx5 tc16 at the four shapes
#   5. the replay step alone (timing_forward_scans, bwd): gx4 gx5 gx5 gx4 at (4,8192,16), ragged mix
# Command: `cd .xfer-gx527 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_gx527.sh`.
source bench/device_lib.sh
dev_begin gx527
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
echo "binary: T $t"
G5="DNNPLAN_GDN_BWD_FSCAN=gx5"
DEV_CAP_S=30 dev_parity "smoke backward_parity (gx5)" $t backward_parity $G5
echo "elapsed ${SECONDS}s"
DEV_CAP_S=15 dev_hashes bwd $t $G5 > $d/h_T_g5
DEV_CAP_S=15 dev_hashes bwd $t > $d/h_T_d
dev_same $d/h_T_g5 $d/h_T_d "uncut by rule, T gx5 == T default, $(wc -l < $d/h_T_g5) hash lines"
dev_port_diff $d/h_T_g5 $d/h_T_d "T gx5 vs T default, lines differing per port"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 60 ] && DEV_CAP_S=35 dev_parity "gpu_gdn backward (gx5)" $t backward $G5
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 90 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity $G5
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 110 ] && DEV_CAP_S=28 dev_timing "T tc16 tc16+gx5 tc16+gx5 tc16" $t "tc16,tc16+gx5,tc16+gx5,tc16"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 128 ]; then
  echo "replay step alone (gx4 gx5 gx5 gx4; default prep form and token stage):"
  DNNPLAN_GDN_TIMING_SCANS=bwd DNNPLAN_GDN_TIMING_REPLAYS=gx4,gx5,gx5,gx4 DNNPLAN_GDN_TIMING_SHAPES=0,3 \
    timeout 18 $t timing_forward_scans --test-threads=1 --nocapture 2>&1 | grep -E "gdn_sm90 fscan|panicked"
fi
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
