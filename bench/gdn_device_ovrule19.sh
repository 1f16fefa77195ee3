#!/usr/bin/env bash
# Session 19, lead: does the forward's overlap rule (src/engines/gdn/fwd_overlap.rs FWD_OVERLAP_RULE,
# set in session 15 when the prep was 17 % slower) still pay at (4,8192,16), the one benchmark
# shape it overlaps? The peers call of this session measured default (overlapped) 0.5501 ms vs
# sched=w4 (the uncut slim path without overlap) 0.5385 ms in one process. Here, same process,
# alternating: gdn_benchmark_ours at (4,8192,16) with schedules default / w4 in the order
# A B B A A B, and timing_at_benchmark_shapes (whole forward) with the rule, DNNPLAN_GDN_FWD_OVERLAP=0,
# =0, the rule. Also: the cudnn_from_ir test binary of a build staged from /work/main (the final
# run's copy was built in a worktree, whose CARGO_MANIFEST_DIR examples/graphs is absent there).
# Stage: device-pack.sh --features gpu-tests in /work/main, then
#   tar cJf .xfer-final/ovrule.txz .device/device-env.sh .device/lib .device/tests/gpu_gdn-* \
#     .device/tests/gpu_gdn_bench-* .device/tests/cudnn_from_ir-*
# run tool: carry [".xfer-final"], command "bash bench/gdn_device_ovrule19.sh".
set -uo pipefail
out=${OUT:-/tmp/ovrule19}; mkdir -p "$out"
tar xJf .xfer-final/ovrule.txz
source .device/device-env.sh > "$out/env.log" 2>&1
source bench/device_lib.sh
{
  echo "cudnn_from_ir (built in /work/main): $(timeout 60 $(dev_bin cudnn_from_ir) --test-threads=1 2>&1 | grep 'test result')"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES=0 \
    DNNPLAN_GDN_BENCH_SCHEDULES=default:::,w4:w4:1:,w4:w4:1:,default:::,default:::,w4:w4:1: \
    timeout 120 $(dev_bin gpu_gdn_bench) gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH ours fwd|panicked|test result" | sed -E 's/ \| chunk.*//'
  t=$(dev_bin gpu_gdn)
  dev_timing "rule (a)" $t tc12 | grep -E "timing|panicked|:$"
  dev_timing "overlap 0 (a)" $t tc12 DNNPLAN_GDN_FWD_OVERLAP=0 | grep -E "timing|panicked|:$"
  dev_timing "overlap 0 (b)" $t tc12 DNNPLAN_GDN_FWD_OVERLAP=0 | grep -E "timing|panicked|:$"
  dev_timing "rule (b)" $t tc12 | grep -E "timing|panicked|:$"
} 2>&1 | tee "$out/ovrule19.log"
