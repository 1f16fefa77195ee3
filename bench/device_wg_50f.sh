#!/usr/bin/env bash
# Ran on branch s50-wg (its harness entries w8g, b2g, w8g-chain-only and the forms exist there only).
# Session 50's sixth device call (branch s50-wg): the one pass's q̂ / k̂ tiles in the 128-byte-swizzled
# canonical layout (bitwise the same for w8 / b2 on the CPU emulation) and the chain's two large
# products on wgmma (forms w8g / b2g). 1. bench/gdn_fused16_bench.cu: every CHECK (w8g / b2g against
# fp64 on the GPU), then w8, w8g, b2, b2g and the chains alone; 2. gpu_gdn every test (its forms test
# forces w8g / b2g: fp64 tolerance, w8g bitwise b2g) and gpu_gdn_pdl; 3. gdn_benchmark_ours by rule
# and with w8g forced.
# run: command "bash bench/device_wg_50f.sh", carry [".xfer-final"] (device54.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device54.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -E "error|spill" | tail -5
FUSED16_ONLY=w8,w8g,b2,b2g,w8-chain-only,w8g-chain-only timeout 60 /tmp/f16bench 15 > $OUT/fused16.log 2>&1
grep -E "^ENTRY w8g|^ENTRY b2g|^CHECK|^FUSED16|all checks|FAIL" $OUT/fused16.log
echo "elapsed $(( $(date +%s) - t0 )) s"
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
for form in rule w8g; do
  if [ $form = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$form; fi
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_$form.log 2>&1
  echo "== FUSED=$form"; grep -E "BENCH ours fwd " $OUT/ours_$form.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
done
echo "elapsed $(( $(date +%s) - t0 )) s"
