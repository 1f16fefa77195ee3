# Session 29 (helper dw29): the split reverse scan gdn_bwd_dscan_ov2gxsh (the scalar form's uncut
# producer as two blocks per (sequence, head) unit, one warpgroup on 64 value rows each, two blocks
# per SM), forced by DNNPLAN_GDN_BWD_DSCAN_SPLIT=2 (the rule is unchanged: no plan splits by
# default). T = this build (branch dw29), B = /work/base29's gpu_gdn (main c271890).
#   0. smoke: backward_parity split (capped: a hang = a publish / ov_need bug); default; B default;
#      split == T default == B bitwise (the same per-element arithmetic)
#   1. timing in one process A B B A B A A B: tc16 tc16%2 ... at (4,8192,16), (16,2048,32), ragged
#      (the % suffix sets DNNPLAN_GDN_BWD_DSCAN_SPLIT); then tc16 with DNNPLAN_GDN_BWD_OVERLAP=0
#   2. gpu_gdn backward tests split; backward_parity at 8 pieces (default, split: the piece chain
#      has no such producer, bitwise the same)
#   3. memcheck backward_parity split
# Command: `cd .xfer-dw29 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_dw29.sh`.
source bench/device_lib.sh
dev_begin dw29
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | grep -v bench | head -1)
echo "binaries: T $t, B $b"
SH="DNNPLAN_GDN_BWD_DSCAN_SPLIT=2"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=40 dev_bwd_case sh $t $SH
DEV_CAP_S=30 dev_bwd_case def $t
DEV_CAP_S=30 dev_bwd_case base $b
dev_same $d/h_sh $d/h_def "backward_parity, T split == T default, $(wc -l < $d/h_sh) hash lines"
dev_same $d/h_def $d/h_base "backward_parity, T default == B c271890, $(wc -l < $d/h_def) hash lines"
dev_same $d/h_sh $d/h_base "backward_parity, T split == B c271890, $(wc -l < $d/h_sh) hash lines"
cp $d/h_sh $OUT/h_sh.txt; cp $d/h_def $OUT/h_def.txt
echo "elapsed ${SECONDS}s"
if grep -q "test result: ok" $d/b_sh.log; then
  [ $SECONDS -lt 60 ] && DEV_CAP_S=70 dev_timing "T A B B A B A A B (A tc16, B tc16%2 split)" $t \
    "tc16,tc16%2,tc16%2,tc16,tc16%2,tc16,tc16,tc16%2" DNNPLAN_GDN_TIMING_SHAPES=0,2,3
  echo "elapsed ${SECONDS}s"
  [ $SECONDS -lt 130 ] && DEV_CAP_S=25 dev_timing "T tc16 with DNNPLAN_GDN_BWD_OVERLAP=0" $t "tc16,tc16" \
    DNNPLAN_GDN_TIMING_SHAPES=0,2,3 DNNPLAN_GDN_BWD_OVERLAP=0
  echo "elapsed ${SECONDS}s"
  [ $SECONDS -lt 150 ] && DEV_CAP_S=45 dev_parity "gpu_gdn backward (split)" $t backward $SH
  echo "elapsed ${SECONDS}s"
  if [ $SECONDS -lt 190 ]; then
    DEV_CAP_S=15 dev_bwd_case p8 $t $P8
    DEV_CAP_S=15 dev_bwd_case p8sh $t $SH $P8
    dev_same $d/h_p8sh $d/h_p8 "8 pieces, T split == T default, $(wc -l < $d/h_p8) hash lines"
  fi
  echo "elapsed ${SECONDS}s"
  [ $SECONDS -lt 205 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity $SH
  echo "elapsed ${SECONDS}s"
else
  echo "split backward_parity failed: skipping the rest"; tail -30 $d/b_sh.log
fi
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
