#!/usr/bin/env bash
# gdnbwdtok's device call (session 5): gpu_gdn parity (default kernels and the token stage with its
# latency cuts, DNNPLAN_GDN_BWD_TOKENS=tc2), old-vs-new engine timings with the per-stage breakdown
# at the four benchmark shapes (tests/gpu_gdn.rs timing_at_benchmark_shapes, variants tc and tc2),
# and one Nsight Compute profile of each token kernel at (4, 8192, 16) when ncu is there.
# Run from the folder holding .device/ (gpu_gdn test binary staged there). Logs go to $OUT.
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-* | head -1)
o=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$o/gpu.txt" 2>&1
timeout 60 "$t" --test-threads=1 --nocapture > "$o/parity_default.log" 2>&1; echo "rc=$?" >> "$o/parity_default.log"
DNNPLAN_GDN_BWD_TOKENS=${NEW_TOKENS:-tc2} timeout 30 "$t" backward_parity --test-threads=1 --nocapture > "$o/parity_new.log" 2>&1; echo "rc=$?" >> "$o/parity_new.log"
DNNPLAN_GDN_TIMING=1 timeout 120 "$t" timing_at_benchmark_shapes --nocapture > "$o/timing.log" 2>&1; echo "rc=$?" >> "$o/timing.log"
if [ -n "${NCU_VARIANTS:-}" ] && command -v ncu >/dev/null; then
  for v in $NCU_VARIANTS; do
    DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_SHAPES=0 DNNPLAN_GDN_TIMING_VARIANTS=$v timeout 60 \
      ncu --clock-control none -k regex:gdn_bwd_tokens_ -c 1 --section SpeedOfLight --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats \
      "$t" timing_at_benchmark_shapes --nocapture > "$o/ncu_$v.log" 2>&1; echo "rc=$?" >> "$o/ncu_$v.log"
  done
fi
grep -h "test result\|rc=\|bwd stages\|gdn_sm90 timing\|FAIL\|panicked" "$o"/parity_*.log "$o"/timing.log
