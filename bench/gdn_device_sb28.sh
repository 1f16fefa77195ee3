# Session 28 (helper sb28): the backward's slim form, DNNPLAN_GDN_BWD_PREP=slim (the tc16 pair's
# storing replay rebuilding U from raw k, v, T and the scalars: gdn_bwd_fscan_gx{,4}sl). T = this
# build (branch sb28), B = /work/base28's gpu_gdn (main 9d26f11).
#   0. backward_parity slim / default (scaled) / B: default == B bitwise; per-case errors printed
#   1. timing in one process A B B A: tc16 tc16@slim tc16@slim tc16 at the four shapes
#   2. 8 pieces: slim falls back to the full form (bitwise T default at 8 pieces)
#   3. memcheck backward_parity slim; gpu_gdn backward tests with slim
# Command: `cd .xfer-sb28 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_sb28.sh`.
source bench/device_lib.sh
dev_begin sb28
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | grep -v bench | head -1)
echo "binaries: T $t, B $b"
SL="DNNPLAN_GDN_BWD_PREP=slim"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=40 dev_bwd_case slim $t $SL
DEV_CAP_S=30 dev_bwd_case def $t
DEV_CAP_S=30 dev_bwd_case base $b
dev_same $d/h_def $d/h_base "backward rule, T default (scaled) == B 9d26f11, $(wc -l < $d/h_def) hash lines"
dev_port_diff $d/h_slim $d/h_def "T slim vs T default, lines differing per port"
echo "== errors (rms ratio vs fp64) T slim:"; cat $d/h_slim
echo "== errors (rms ratio vs fp64) T default:"; cat $d/h_def
cp $d/h_slim $OUT/h_slim.txt; cp $d/h_def $OUT/h_def.txt
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 80 ] && DEV_CAP_S=60 dev_timing "T tc16 tc16@slim tc16@slim tc16" $t "tc16,tc16@slim,tc16@slim,tc16"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 130 ]; then
  DEV_CAP_S=25 dev_bwd_case p8 $t $P8
  DEV_CAP_S=25 dev_bwd_case p8slim $t $SL $P8
  dev_same $d/h_p8slim $d/h_p8 "8 pieces, T slim == T default (the fall-back), $(wc -l < $d/h_p8) hash lines"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 150 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity $SL
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 165 ] && DEV_CAP_S=$((195 - SECONDS)) dev_parity "gpu_gdn backward (slim)" $t backward $SL
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
