#!/usr/bin/env bash
# Session 55's first device call: the one-block forms' early test of the next chunk's full barrier
# (Fused16Form ET: w4c and w8 by default, b2 / b2c not), with fused16_build's gate scan shared by
# both builds and session 53's bulk copies removed. gpu_gdn and gpu_gdn_pdl on the landing tree's
# pack; the harness (bench/gdn_fused16_bench.cu, built here) timing w4c / w8 against their
# bench-only twins without the early test (w4c-late, w8-late) and b2c, alternating, two rounds at
# flags 0 and one at flags 1 (l2norm in the kernel); the forward by rule through the product.
# run: command "bash bench/device_s55a.sh", carry [".xfer-tests68"] (device68.txz: gpu_gdn, gpu_gdn_pdl, gpu_gdn_bench).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
mkdir -p /tmp/new
tar xJf .xfer-tests68/device68.txz -C /tmp/new
source /tmp/new/.device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
( nvcc -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16bench.build 2>&1; echo "harness build rc=$?" >> /tmp/f16bench.build ) &
g=$(ls /tmp/new/.device/tests/gpu_gdn-* | head -1)
timeout 200 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "test result|panicked|FAILED|bitwise" $OUT/gpu_gdn.log | head -20
pd=$(ls /tmp/new/.device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
wait
cat /tmp/f16bench.build | tail -3
if [ -x /tmp/f16bench ]; then
  FUSED16_ONLY=none timeout 120 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
  grep -E "^ENTRY|CHECK.*(FAIL|w4c|w8)|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -40
  for rep in 1 2; do
    for only in w4c-late,w8-late w4c,w8,b2c; do
      FUSED16_ONLY=$only timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
    done
  done
  echo "-- flags 1 (l2norm in the kernel)"
  for only in w4c-late w4c; do
    FUSED16_FLAGS=1 FUSED16_ONLY=$only timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
  done
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls /tmp/new/.device/tests/gpu_gdn_bench-* | head -1)
for rep in 1 2; do
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" \
    timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_$rep.log 2>&1
  echo "== product round $rep rc=$?"
  grep -E "BENCH ours fwd " $OUT/ours_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-110
done
echo "elapsed $(( $(date +%s) - t0 )) s"
