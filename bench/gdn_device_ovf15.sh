# Session 15, helper ovf15: the uncut slim forward with its prep and output scan at the same time
# (DNNPLAN_GDN_FWD_OVERLAP; gdn_fwd_chunk_order -> persistent gdn_fwd_slimprep_*_k128_ov ∥
# gdn_fwd_slimscan_*_k128_w4ov). T = this branch's build, B = main 6875042's (staged as
# base/gpu_gdn_s15base). Checks: forward hashes T (overlap forced on / off / rule) == B, backward
# hashes T == B, every gpu_gdn test with the overlap by rule / forced on / off, memcheck of the
# forward parity matrix overlapped, then timing: overlap off / on alternating in one process
# (whole forward and cut after the prep), and T vs B whole forward in both orders.
# Stage: device-pack.sh --features gpu-tests; tar czf .xfer-ovf15/device.tgz .device/device-env.sh
# .device/tests/gpu_gdn-* bench/device_lib.sh bench/gdn_device_ovf15.sh bench/gdn_hashes_session9.txt
# -C /work/wt/base gpu_gdn_s15base.
# run tool: carry [".xfer-ovf15"], command "cd .xfer-ovf15 && tar xzf device.tgz && bash bench/gdn_device_ovf15.sh".
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
t=$(dev_bin gpu_gdn); b=./gpu_gdn_s15base; d=$DEV_TMP
echo "T $t, B $b"
dev_hashes fwd $b DNNPLAN_GDN_FWD_PIECES=1 > $d/f_B_p1; dev_hashes fwd $b > $d/f_B_rule
for v in "on_p1 DNNPLAN_GDN_FWD_OVERLAP=1 DNNPLAN_GDN_FWD_PIECES=1" "off_p1 DNNPLAN_GDN_FWD_OVERLAP=0 DNNPLAN_GDN_FWD_PIECES=1" "rule" "on DNNPLAN_GDN_FWD_OVERLAP=1" "on_pdl0_p1 DNNPLAN_GDN_FWD_OVERLAP=1 DNNPLAN_GDN_PDL=0 DNNPLAN_GDN_FWD_PIECES=1"; do
  set -- $v; tag=$1; shift
  dev_hashes fwd $t "$@" > $d/f_T_$tag
  case $tag in *_p1) bb=p1 ;; *) bb=rule ;; esac
  dev_same $d/f_T_$tag $d/f_B_$bb "forward $tag: T == base, $(wc -l < $d/f_T_$tag) hash lines"
done
cp $d/f_T_on_p1 $OUT/hashes_fwd_T_on_p1.txt
dev_hashes bwd $t > $d/h_T; dev_hashes bwd $b > $d/h_B
dev_same $d/h_T $d/h_B "backward rule: T == base, $(wc -l < $d/h_T) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_parity "gpu_gdn (rule)" $t ""
DEV_CAP_S=60 dev_parity "gpu_gdn overlap forced on" $t "" DNNPLAN_GDN_FWD_OVERLAP=1
DEV_CAP_S=60 dev_parity "gpu_gdn overlap off" $t "" DNNPLAN_GDN_FWD_OVERLAP=0
timeout 40 $t overlap_forward_bitwise --test-threads=1 --nocapture 2>&1 | grep -E "gdn_sm90 overlap|panicked|test result"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=50 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_OVERLAP=1 DNNPLAN_GDN_FWD_PIECES=1
echo "elapsed ${SECONDS}s"
DNNPLAN_GDN_TIMING_OVERLAP=30 timeout 60 $t timing_forward_overlap --test-threads=1 --nocapture 2>&1 | grep -E "overlap timing|panicked" | tee $OUT/timing_overlap.log
echo "elapsed ${SECONDS}s"
for x in "B $b" "T $t" "T $t" "B $b"; do set -- $x; DEV_CAP_S=40 dev_timing "$1" $2 tc12 | grep -E "gdn_sm90 timing|panicked"; done
echo "elapsed ${SECONDS}s"
