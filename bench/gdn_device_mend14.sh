# Session 14, lead's mends. Run 1: the uncut slim output scan (gdn_fwd_slimscan_*_w4 / _w8) on the shared
# chunk body slim_chunk_warp (one copy of the slim chunk update instead of two). Its machine code
# differs from the final run's build, so: forward hashes of this build (T) against the final run's
# build (B, main 9a1c… staged as base/gpu_gdn_final14) with the slim scans w4 and w8 forced uncut
# and by the rule, every gpu_gdn test, memcheck, and the uncut shapes' forward time in both orders.
# Stage: device-pack.sh --features gpu-tests; tar czf .xfer-mend/device.tgz .device/device-env.sh
# .device/tests/gpu_gdn-* -C /work/wt/base gpu_gdn_final14 (+ bench/device_lib.sh from the checkout).
# run tool: carry [".xfer-mend"], command "cd .xfer-mend && tar xzf device.tgz && bash ../bench/gdn_device_mend14.sh".
source .device/device-env.sh > $OUT/env.log 2>&1
source ../bench/device_lib.sh
DEV_REFERENCE_HASHES=../bench/gdn_hashes_session9.txt
t=$(dev_bin gpu_gdn); b=./gpu_gdn_final14; d=$DEV_TMP
echo "T $t, B $b"
for v in "rule" "w4 DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=1" "w8 DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w8 DNNPLAN_GDN_FWD_PIECES=1" "p7 DNNPLAN_GDN_FWD_PIECES=7"; do
  set -- $v; tag=$1; shift
  dev_hashes fwd $t "$@" > $d/f_T_$tag; dev_hashes fwd $b "$@" > $d/f_B_$tag
  dev_same $d/f_T_$tag $d/f_B_$tag "forward $tag: T == final-run build, $(wc -l < $d/f_T_$tag) hash lines"
done
# Run 2 (the pipeline skeleton chunk_pipeline: the slim scans and the session-5 replay change code):
# the backward with the session-5 replay (DNNPLAN_GDN_BWD_FSCAN=v1) and by the rule.
for v in "fscanv1 DNNPLAN_GDN_BWD_FSCAN=v1" "rule"; do
  set -- $v; tag=$1; shift
  dev_hashes bwd $t "$@" > $d/h_T_$tag; dev_hashes bwd $b "$@" > $d/h_B_$tag
  dev_same $d/h_T_$tag $d/h_B_$tag "backward $tag: T == final-run build, $(wc -l < $d/h_T_$tag) hash lines"
done
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_parity "default gpu_gdn" $t ""
DEV_CAP_S=40 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_PIECES=1
echo "elapsed ${SECONDS}s"
for x in "B $b" "T $t" "T $t" "B $b"; do set -- $x; dev_timing "$1" $2 tc12 | grep -E "gdn_sm90 timing|panicked"; done
echo "elapsed ${SECONDS}s"
