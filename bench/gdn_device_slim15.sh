# Session 13 round 3 (helper slim15): the slim output scan's stage copy with compile-time trip
# counts (kernels/include/gdn_fwd_slim.cuh, fwd_slim_scan_body) on the H200 in one call: every
# gpu_gdn test by default (main's new defaults: the slim factors by FACTOR_RULE), the backward and
# the full-factor forward hashes against the session-9 reference, the slim forward hashes (w4, w8)
# against main's binary (`base/gpu_gdn_main`, built from main 1628811: the change must be bitwise),
# memcheck, timing full vs slim (timing_forward_factors, alternating orders). Two candidate builds:
# B = this build (P' before Z, O' after Z Tᵀ, on top of A), A = the copy change alone (base/gpu_gdn_A).
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests (in a
# worktree .git is a file: drop the script's .git/info/exclude line); sha256sum
# kernels/sm_90a/*.cubin > cubins.sha256; tar czf /work/main/.xfer-slim15/device.tgz
# .device/device-env.sh .device/tests/gpu_gdn-* base/gpu_gdn_main base/gpu_gdn_A cubins.sha256
# bench/gdn_device_slim15.sh bench/device_lib.sh bench/gdn_hashes_session9.txt (the device tool
# sends the session's checkout, /work/main; /.xfer* is ignored there). run tool: carry
# [".xfer-slim15"]; command `cd .xfer-slim15 && tar xzf device.tgz && bash bench/gdn_device_slim15.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/slim15
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn)
b=base/gpu_gdn_main
a=base/gpu_gdn_A
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
fh() { DEV_CAP_S=60 dev_fwd_case "$@"; }
echo "binaries: B $t, A $a, main $b"
# 1. Slim forward: B (this build), A and main's binary, w4 and w8 forced and by the rule.
for w in w4 w8; do
  for x in "B $t" "A $a" "main $b"; do set -- $x; fh ${1}_slim$w $2 DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=$w; done
  dev_same $DEV_TMP/h_B_slim$w $DEV_TMP/h_main_slim$w "slim $w: B == main, $(wc -l < $DEV_TMP/h_B_slim$w) hash lines"
  dev_same $DEV_TMP/h_A_slim$w $DEV_TMP/h_main_slim$w "slim $w: A == main, $(wc -l < $DEV_TMP/h_A_slim$w) hash lines"
done
fh B_rule $t
fh main_rule $b
dev_same $DEV_TMP/h_B_rule $DEV_TMP/h_main_rule "defaults (rule): B == main, $(wc -l < $DEV_TMP/h_B_rule) hash lines"
dev_same $DEV_TMP/h_B_slimw8 $DEV_TMP/h_B_slimw4 "B slim: w8 == w4"
# 2. Backward + full-factor forward hashes of B against the session-9 reference.
dev_hashes bwd $t > $DEV_TMP/h_bwd
fh B_full $t DNNPLAN_GDN_FWD_FACTORS=full
dev_cover_reference "B: backward + forward full factors" $DEV_TMP/h_bwd $DEV_TMP/h_B_full
for v in B_full B_slimw4; do grep -hE " rms " $DEV_TMP/p_$v.log > $OUT/rms_$v.log; done
# 3. Every gpu_gdn test with the defaults (slim by the rule, full under batch_invariant).
DEV_CAP_S=90 dev_parity "B default gpu_gdn" $t ""
# 4. Timing full vs slim (timing_forward_factors alternates the order per round).
for run in "B $t 3" "A $a 2" "main $b 2" "B2 $t 2"; do set -- $run
  DNNPLAN_GDN_TIMING_FACTORS=$3 timeout 45 $2 timing_forward_factors --test-threads=1 --nocapture > $DEV_TMP/timing_$1.log 2>&1
  echo "== timing $1"; grep -E "mean of|test result|panicked" $DEV_TMP/timing_$1.log
done
# 5. memcheck of the slim scan (B w4, B w8, A w4).
DEV_CAP_S=40 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w4
DEV_CAP_S=30 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w8
DEV_CAP_S=30 dev_memcheck $a forward_parity DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w4
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
