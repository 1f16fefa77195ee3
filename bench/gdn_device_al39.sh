#!/usr/bin/env bash
# Session 39, lead: the backward's reverse scan and token stage alone and as the overlapped pair
# (tests/gpu_gdn_bench.rs gdn_benchmark_stages_alone, DNNPLAN_GDN_BWD_FROM) at the four benchmark
# shapes. Command (~40 s): `cd .xfer-sr && tar xJf dev.txz -C .. && cd .. && OUT=$OUT bash bench/gdn_device_al39.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/al39; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin al39
chmod +x .device/tests/* 2>/dev/null
tb=$(dev_bin gpu_gdn_bench)
DNNPLAN_GDN_BENCH_ALONE=1 timeout 120 $tb gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked|test result"
DNNPLAN_GDN_BENCH_ALONE=1 DNNPLAN_GDN_TIMING_SHAPES=0,3 timeout 60 $tb gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked|test result"
echo "elapsed ${SECONDS}s"
