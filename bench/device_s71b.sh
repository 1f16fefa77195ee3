#!/usr/bin/env bash
# Session 71, call 3: is the backward's pair (reverse scan ∥ token stage) bound by DRAM? On main's
# pack (device90.txz: 7365f3b's, product cubins byte-identical to main's):
# 1. gdn_benchmark_stages_alone at the four shapes: the whole backward, the reverse scan alone, the
#    token stage alone, the pair alone (ms).
# 2. ncu (kernels serialized) of the first reverse scan and token stage launches at (4,8192,16):
#    duration, DRAM bytes read / written and throughput, L2 bytes, SM and L1 throughput.
# run: command "bash bench/device_s71b.sh", carry [".xfer-tests69"], ~120 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
tar xJf .xfer-tests69/device90.txz
source .device/device-env.sh > /dev/null 2>&1
b=$(dev_bin gpu_gdn_bench)
echo "== stages alone"
DNNPLAN_GDN_BENCH_ALONE=1 timeout 90 "$b" gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 \
  | grep -E "BENCH alone|panicked|test result" | tee "$OUT/s71b_alone.log"
dev_elapsed
NCU=$(dev_ncu)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
for k in dscan_ov2gxsc tokens_tw7 fused16_bf16_k128_w8c; do
  echo "== ncu $k"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_TIMING_SHAPES=0 timeout 150 $NCU --clock-control none -k regex:"$k" --launch-count 1 \
    --metrics "$M" "$b" gdn_benchmark_ours --test-threads=1 > "$OUT/s71b_ncu_$k.log" 2>&1
  echo "rc=$?"
  grep -E "gdn_|__" "$OUT/s71b_ncu_$k.log" | grep -v '^BENCH' | head -14
  dev_elapsed
done
