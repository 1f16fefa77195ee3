# Session 12 (helper occ12): the one-stage output scans w4s1 / w4p (two blocks per SM; bitwise w4 by
# construction) against w4 / w8 on the H200 in one call: parity, bitwise, memcheck, timing.
# (Run 1 used the build that still bundled w4s1, gdn_fwd.cubin sha256 9f9efa92...; from commit a72f9b1 on
# w4s1 is not bundled and DNNPLAN_GDN_FWD_SCAN=w4s1 falls back to the rule, like any unknown value.)
# Stage: kernels/build-cubins.sh; /work/wt/device-pack.sh --features gpu-tests --test gpu_gdn; tar
# .device/device-env.sh + .device/tests/gpu_gdn-* + bench/device_lib.sh + bench/gdn_hashes_session9.txt
# + this script + cubins.sha256 into .xfer-occ12/device.tgz; run tool: carry [".xfer-occ12"];
# command: `cd .xfer-occ12 && tar xzf device.tgz && bash bench/gdn_device_occ12.sh` (logs into $OUT).
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/occ12
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "staged binary embeds w4p: $(grep -c gdn_fwd_scanx_bf16_k128_w4p $t)"
# 1. Every gpu_gdn test with the default (the rule's choice: w8 at (16,2048,32)-like shapes, else w4).
dev_parity "default gpu_gdn" $t ""
# 2. The forward tests per output scan, their O / state hashes bitwise w4's (whole and 4 pieces).
fh() { local tag=$1; shift; DEV_CAP_S=60 dev_fwd_case "$tag" "$t" "$@"; }
fh w4 DNNPLAN_GDN_FWD_SCAN=w4
for v in w4s1 w4p w8; do fh $v DNNPLAN_GDN_FWD_SCAN=$v; dev_same $DEV_TMP/h_$v $DEV_TMP/h_w4 "forward: $v == w4, $(wc -l < $DEV_TMP/h_$v) hash lines"; done
fh w4P4 DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=4
for v in w4s1 w4p; do fh ${v}P4 DNNPLAN_GDN_FWD_SCAN=$v DNNPLAN_GDN_FWD_PIECES=4; dev_same $DEV_TMP/h_${v}P4 $DEV_TMP/h_w4P4 "forward, 4 pieces: $v == w4, $(wc -l < $DEV_TMP/h_${v}P4) hash lines"; done
# 3. The defaults' hashes against the session-9 reference (backward module untouched: unchanged).
dev_hashes bwd $t > $DEV_TMP/h_rule; dev_hashes fwd $t > $DEV_TMP/f_rule
dev_cover_reference "default" $DEV_TMP/h_rule $DEV_TMP/f_rule
dev_hashes fwd $t DNNPLAN_GDN_FWD_SCAN=w4p > $DEV_TMP/f_w4p
dev_cover_reference "forward w4p + backward default" $DEV_TMP/h_rule $DEV_TMP/f_w4p
# 4. memcheck of the new kernels (whole and per piece).
DEV_CAP_S=50 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_SCAN=w4s1
DEV_CAP_S=50 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_SCAN=w4p
DEV_CAP_S=50 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_SCAN=w4p DNNPLAN_GDN_FWD_PIECES=4
# 5. Timing, same run, alternating (ABCD DCBA ...): output scan = whole forward minus the forward
#    cut after the prep; the four benchmark shapes (the piece rule as the default: (1,32768,16)
#    "scan" is summary + chain + seeded scan).
DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS= DNNPLAN_GDN_TIMING_FSCANS=w4,w8,w4s1,w4p,w4p,w4s1,w8,w4 \
  timeout 150 $t timing_forward_scans --test-threads=1 --nocapture > $DEV_TMP/timing.log 2>&1
grep -E "fwd scan|test result|panicked" $DEV_TMP/timing.log
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
