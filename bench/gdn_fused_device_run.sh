#!/usr/bin/env bash
# The fused GDN forward on the device in one call (session 5, helper gdnfused): parity vs fp64
# (tests/gpu_gdn.rs) under the default schedule and with the fused kernels forced
# (DNNPLAN_GDN_FWD_SCAN=fused / fused_seq), then the fused-vs-staged timing at the issue's four
# shapes (tests/gpu_gdn_bench.rs gdn_fused_vs_staged; our side only). Logs in $OUT.
#
# Here (CPU machine, worktree root):
#   /work/wt/device-pack.sh --features gpu-tests
#   X=/work/main/.xfer-<name>; rm -rf $X && mkdir -p $X/bench $X/.device/tests \
#     && cp .device/device-env.sh $X/.device/ && cp .device/tests/gpu_gdn-* .device/tests/gpu_gdn_bench-* $X/.device/tests/ \
#     && cp bench/gdn_fused_device_run.sh $X/bench/
# run tool: command "bash .xfer-<name>/bench/gdn_fused_device_run.sh", carry [".xfer-<name>"].
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-/tmp/gdn-fused}
mkdir -p "$out"
# shellcheck disable=SC1091
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-* | head -1)
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$out/gpu.txt" 2>&1
echo "== parity: default schedules (forward + backward)"
timeout 90 "$t" --test-threads=1 --nocapture > "$out/parity_default.log" 2>&1
grep -E "test result|panicked|FAILED" "$out/parity_default.log"
for s in fused fused_seq; do
  echo "== parity: DNNPLAN_GDN_FWD_SCAN=$s (forward)"
  DNNPLAN_GDN_FWD_SCAN=$s timeout 45 "$t" forward_parity state_pool batch_invariant --test-threads=1 --nocapture \
    > "$out/parity_$s.log" 2>&1
  grep -E "test result|panicked|FAILED" "$out/parity_$s.log"
done
echo "== timing: fused vs staged"
DNNPLAN_GDN_BENCH_FUSED=1 timeout 90 "$b" gdn_fused_vs_staged --test-threads=1 --nocapture > "$out/bench_fused.log" 2>&1
grep -E "^BENCH|panicked|test result" "$out/bench_fused.log"
if [ "${FUSED_NCU:-0}" = 1 ] && command -v ncu > /dev/null; then
  echo "== ncu: one fused (warp-specialised) launch at (4, 8192, 16)"
  DNNPLAN_GDN_BENCH_FUSED=1 DNNPLAN_GDN_BENCH_SHAPES=0 timeout 100 ncu --clock-control none -k regex:"gdn_fwd_fused_bf16" \
    --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    "$b" gdn_fused_vs_staged --test-threads=1 > "$out/ncu_fused.log" 2>&1
  grep -E "gdn_fwd_fused|Duration|Throughput|Achieved Occupancy|Stall|Warp Cycles|Registers|Shared Memory" "$out/ncu_fused.log" | head -50
fi
