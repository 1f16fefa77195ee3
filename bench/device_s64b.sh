#!/usr/bin/env bash
# Session 64: the one-pass switch at the product level (tests/gpu_gdn_bench.rs
# gdn_benchmark_fused_switch): the forward by rule, by the two passes (DNNPLAN_GDN_FWD_FUSED=0) and
# by each form (w8c, b2c) at equal lengths and at the ragged mix's lengths from 1.2 to 4.9 waves of
# single blocks, alternating, three rounds. Where the harness's FUSED16_SHAPES=cross (s64a) showed
# b2c ahead of w8c from 1.45 waves at equal lengths; the ragged mix (harness, session 63) runs w8c
# 0.344 ms against b2c 0.427 at 2.42 waves.
# run: command "bash bench/device_s64b.sh", carry [".xfer-tests68"] (PACK, default device80.txz), any kind (~30 s warm).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
tar xJf ".xfer-tests68/${PACK:-device80.txz}"
dev_begin s64b  # (sources the pack's device-env.sh)
RAG=8192,100,4096,1,2048,7000,0,3000,512,5000
SHAPES="eq6:4096*6:16;eq8:4096*8:16;eq10:4096*10:16;eq12:4096*12:16;eq16:4096*16:16"
SHAPES+=";eq68-H1:4096*68:1;long1-H8:8192,4096*9:8;rag-H8:$RAG:8;rag-H12:$RAG:12;rag-H16:$RAG:16;rag-H24:$RAG:24;rag-H32:$RAG:32"
DNNPLAN_GDN_BENCH_SWITCH="$SHAPES" timeout 400 "$(dev_bin gpu_gdn_bench)" gdn_benchmark_fused_switch \
  --test-threads=1 --nocapture 2>&1 | grep -E "BENCH switch|test result|panicked"
echo "elapsed $SECONDS s"
