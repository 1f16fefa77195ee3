#!/usr/bin/env bash
# Session 19, lead: are the piece counts the rules pick at (1,32768,16) still the fastest after
# prep18 / bprep18 (forward P = 7 by the one-wave rule, backward P = 8)? Same process, alternating:
# the forward at P = 6, 7, 8, 10 (w4 piece scan) in the order A B C D C B A D; the backward at
# P = 6, 8, 10, 12 (DNNPLAN_GDN_BWD_PIECES, one process each, order 8 12 6 10 8 12 6 10).
# Stage: as gdn_device_final19.sh (.xfer-final/final19.txz). run tool: carry [".xfer-final"],
# command "bash bench/gdn_device_pieces19.sh".
set -uo pipefail
out=${OUT:-/tmp/pieces19}; mkdir -p "$out"
tar xJf .xfer-final/final19.txz
source .device/device-env.sh > "$out/env.log" 2>&1
source bench/device_lib.sh
tb=$(dev_bin gpu_gdn_bench)
{
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES=1 \
    DNNPLAN_GDN_BENCH_SCHEDULES=p6:w4:6:,p7:w4:7:,p8:w4:8:,p10:w4:10:,p8:w4:8:,p7:w4:7:,p6:w4:6:,p10:w4:10: \
    timeout 90 $tb gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd |panicked" | sed -E 's/ \| chunk.*//'
  for p in 8 12 6 10 8 12 6 10; do
    DNNPLAN_GDN_BWD_PIECES=$p DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: \
      timeout 60 $tb gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours bwd|panicked" \
      | sed -E "s/^/P=$p: /; s/ \| chunk_order_rev.*psum1/ | psum1/"
  done
} 2>&1 | tee "$out/pieces19.log"
