# Session 13 round 2 (helper slim14): the slim forward factors, Ũᵀ and W̃ off the state chain
# (DNNPLAN_GDN_FWD_FACTORS=slim, kernels/include/gdn_fwd_slim.cuh) on the H200 in one call: parity against the fp64 reference
# with the switch (w4 and w8), the default unchanged, memcheck, timing full vs slim (alternating).
# Stage (from the worktree): kernels/build-cubins.sh; shared/scripts/device-pack.sh --features
# gpu-tests --test gpu_gdn (in a worktree, .git is a file: drop the script's .git/info/exclude line);
# sha256sum kernels/sm_90a/*.cubin > cubins.sha256; tar czf <CHECKOUT>/.xfer-slim14/device.tgz
# .device/device-env.sh .device/tests/gpu_gdn-* cubins.sha256 bench/gdn_device_slim14.sh
# bench/device_lib.sh bench/gdn_hashes_session9.txt, where <CHECKOUT> is the checkout the device
# tool sends (the session's, /work/main, not the helper's worktree: its /.xfer* is ignored there);
# run tool: carry [".xfer-slim14"]; command: `cd .xfer-slim14 && tar xzf device.tgz && bash
# bench/gdn_device_slim14.sh` (logs into $OUT). SLIM14_STEPS (default "parity memcheck timing")
# picks the steps; SLIM14_ROUNDS the timing rounds (default 3).
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/slim14
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn)
steps=${SLIM14_STEPS:-parity memcheck timing}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "staged binary embeds slimscan: $(grep -c gdn_fwd_slimscan_bf16_k128_w4 $t)"
fh() { local tag=$1; shift; DEV_CAP_S=60 dev_fwd_case "$tag" "$t" "$@"; }
if [[ " $steps " == *" parity "* ]]; then
  dev_parity "default gpu_gdn" $t ""
  # 1. The forward tests: default (full factors), slim by the rule's width, slim forced w4 / w8.
  fh full
  fh slim DNNPLAN_GDN_FWD_FACTORS=slim
  fh slimw4 DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w4
  fh slimw8 DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w8
  dev_same $DEV_TMP/h_slimw8 $DEV_TMP/h_slimw4 "forward slim: w8 == w4, $(wc -l < $DEV_TMP/h_slimw4) hash lines"
  dev_same $DEV_TMP/h_slim $DEV_TMP/h_full "forward slim == full (expected to differ: a numerics change)"
  # 2. The default's hashes against the session-9 reference (the default is unchanged).
  dev_hashes bwd $t > $DEV_TMP/h_rule
  dev_cover_reference "default" $DEV_TMP/h_rule $DEV_TMP/h_full
  # The per-case relative rms errors against the fp64 reference, full and slim side by side.
  for v in full slim slimw8; do grep -hE " rms " $DEV_TMP/p_$v.log > $OUT/rms_$v.log; done
fi
if [[ " $steps " == *" memcheck "* ]]; then
  DEV_CAP_S=60 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_FACTORS=slim
  DEV_CAP_S=40 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w8
fi
if [[ " $steps " == *" timing "* ]]; then
  DNNPLAN_GDN_TIMING_FACTORS=${SLIM14_ROUNDS:-3} timeout 120 $t timing_forward_factors --test-threads=1 --nocapture > $DEV_TMP/timing.log 2>&1
  grep -E "factors|test result|panicked" $DEV_TMP/timing.log
fi
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
