#!/usr/bin/env bash
# gdnbwdtok's device calls (session 5): gpu_gdn parity (default kernels, then the backward parity
# matrix with DNNPLAN_GDN_BWD_TOKENS=$NEW_TOKENS, default tc2), old-vs-new engine timings with the
# per-stage breakdown at the four benchmark shapes (tests/gpu_gdn.rs timing_at_benchmark_shapes,
# its default variants tc, tc2, tc3),
# with MEMCHECK=1 compute-sanitizer memcheck over the backward parity matrix (default kernels), and
# with NCU_VARIANTS="tc2 ..." one Nsight Compute profile of each named token kernel at (4, 8192, 16).
# Run from the folder holding .device/ (gpu_gdn test binary staged there). Logs go to $OUT.
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-* | head -1)
o=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$o/gpu.txt" 2>&1
timeout 60 "$t" --test-threads=1 --nocapture > "$o/parity_default.log" 2>&1; echo "rc=$?" >> "$o/parity_default.log"
DNNPLAN_GDN_BWD_TOKENS=${NEW_TOKENS:-tc2} timeout 30 "$t" backward_parity --test-threads=1 --nocapture > "$o/parity_new.log" 2>&1; echo "rc=$?" >> "$o/parity_new.log"
DNNPLAN_GDN_TIMING=1 timeout 120 "$t" timing_at_benchmark_shapes --nocapture > "$o/timing.log" 2>&1; echo "rc=$?" >> "$o/timing.log"
if [ -n "${MEMCHECK:-}" ]; then
  timeout 60 compute-sanitizer --tool memcheck "$t" backward_parity --test-threads=1 > "$o/memcheck.log" 2>&1; echo "rc=$?" >> "$o/memcheck.log"
fi
if [ -n "${NCU_VARIANTS:-}" ] && command -v ncu >/dev/null; then
  for v in $NCU_VARIANTS; do
    DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_SHAPES=0 DNNPLAN_GDN_TIMING_VARIANTS=$v timeout 60 \
      ncu --clock-control none -k regex:gdn_bwd_tokens_ -c 1 --section SpeedOfLight --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats \
      "$t" timing_at_benchmark_shapes --nocapture > "$o/ncu_$v.log" 2>&1; echo "rc=$?" >> "$o/ncu_$v.log"
  done
fi
grep -h "test result\|rc=\|bwd stages\|gdn_sm90 timing\|FAIL\|panicked\|ERROR SUMMARY" "$o"/parity_*.log "$o"/timing.log "$o"/memcheck.log 2>/dev/null
