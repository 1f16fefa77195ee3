#!/usr/bin/env bash
# Session 19, lead: the last device call, on final main (the forward without an overlap rule, the
# KEEP prep with bprep18's cuts): the GDN GPU tests, memcheck of the default forward, the overlap
# bitwise test at the benchmark shapes, the GDN benchmark's default schedule (ours, per kernel) and
# the whole forward / backward timing at the four benchmark shapes.
# Stage: device-pack.sh --features gpu-tests in /work/main, then
#   tar cJf .xfer-final/final19.txz .device/device-env.sh .device/lib .device/tests/gpu_gdn-* \
#     .device/tests/gpu_gdn_pdl-* .device/tests/gpu_gdn_bench-*
# run tool: carry [".xfer-final"], command "bash bench/gdn_device_final19.sh".
set -uo pipefail
out=${OUT:-/tmp/final19}; mkdir -p "$out"
tar xJf .xfer-final/final19.txz
source .device/device-env.sh > "$out/env.log" 2>&1
source bench/device_lib.sh
t=$(dev_bin gpu_gdn)
{
  for b in gpu_gdn gpu_gdn_pdl; do
    echo "$b: $(timeout 150 $(dev_bin $b) --test-threads=1 2>&1 | grep -E 'test result|panicked' | tail -2)"
  done
  dev_memcheck $t forward_parity
  timeout 60 $t overlap_forward_bitwise --test-threads=1 --nocapture 2>&1 | grep -E "gdn_sm90 overlap|panicked|test result"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: timeout 120 $(dev_bin gpu_gdn_bench) gdn_benchmark_ours \
    --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours|panicked|test result"
  dev_timing "final main" $t tc12
} 2>&1 | tee "$out/final19.log"
