# Session 29 (helper bp29): the backward's slim prep on the forward slim prep's tile,
# gdn_bwd_prep16sl (BWD_SLIM_PREP16_BY_RULE = true in this build; DNNPLAN_GDN_BWD_SLIMPREP=v15 runs
# prep15sl). T = this build (branch bp29), B = /work/base29's gpu_gdn (main c271890; its backward
# hashes equal bfd9ab7's by rule).
#   0. backward_parity: T default (prep16sl), T v15 (prep15sl), B default; all three bitwise
#   1. timing in one process A B B A B A A B (A tc16^v16, B tc16^v15) at the four benchmark shapes
#   2. gpu_gdn backward tests (default); backward_parity at 8 pieces T == B (no slim form there)
#   3. memcheck backward_parity (default: prep16sl)
#   4. forward hashes T == B (gdn_fwd.cubin was rebuilt from the changed headers)
# Command: `cd .xfer-bp29 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_bp29.sh`.
source bench/device_lib.sh
dev_begin bp29
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | grep -v bench | head -1)
echo "binaries: T $t, B $b"
V15="DNNPLAN_GDN_BWD_SLIMPREP=v15"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=30 dev_bwd_case def $t
DEV_CAP_S=30 dev_bwd_case v15 $t $V15
DEV_CAP_S=30 dev_bwd_case base $b
dev_same $d/h_def $d/h_base "backward_parity, T default (prep16sl) == B c271890, $(wc -l < $d/h_def) hash lines"
dev_same $d/h_v15 $d/h_base "backward_parity, T v15 (prep15sl) == B c271890, $(wc -l < $d/h_v15) hash lines"
dev_same $d/h_def $d/h_v15 "backward_parity, T default (prep16sl) == T v15 (prep15sl), $(wc -l < $d/h_def) hash lines"
cp $d/h_def $OUT/h_def.txt; cp $d/h_base $OUT/h_base.txt
echo "elapsed ${SECONDS}s"
if grep -q "test result: ok" $d/b_def.log; then
  [ $SECONDS -lt 60 ] && DEV_CAP_S=60 dev_timing "T A B B A B A A B (A tc16^v16 prep16sl, B tc16^v15 prep15sl)" $t \
    "tc16^v16,tc16^v15,tc16^v15,tc16^v16,tc16^v15,tc16^v16,tc16^v16,tc16^v15"
  echo "elapsed ${SECONDS}s"
  [ $SECONDS -lt 120 ] && DEV_CAP_S=45 dev_parity "gpu_gdn backward (default: prep16sl)" $t backward
  echo "elapsed ${SECONDS}s"
  if [ $SECONDS -lt 160 ]; then
    DEV_CAP_S=15 dev_bwd_case p8 $t $P8
    DEV_CAP_S=15 dev_bwd_case p8base $b $P8
    dev_same $d/h_p8 $d/h_p8base "8 pieces, T == B c271890, $(wc -l < $d/h_p8) hash lines"
  fi
  echo "elapsed ${SECONDS}s"
  [ $SECONDS -lt 180 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity
  echo "elapsed ${SECONDS}s"
  [ $SECONDS -lt 200 ] && DEV_CAP_S=15 dev_compare fwd "forward by rule: T == B c271890" $t $b
  echo "elapsed ${SECONDS}s"
else
  echo "default backward_parity failed: skipping the rest"; tail -30 $d/b_def.log
fi
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
