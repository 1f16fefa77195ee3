#!/usr/bin/env bash
# Session 59's second call: (1) the harness (every form on the lean step; the two-block forms'
# registers moved to the chain's warpgroup, CR / PR) — every CHECK, then alternating timings, two
# rounds; (2) gpu_gdn and gpu_gdn_pdl on device75.txz (every product form on the lean step, b2c
# with the early test); (3) the forward by rule through the product, main (devicemain58.txz)
# against device75, two rounds.
# run: command "bash bench/device_s59b.sh", any kind, carry [".xfer-tests68"]. ~330 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1 &
mkdir -p /tmp/main /tmp/new
tar xJf .xfer-tests68/devicemain58.txz -C /tmp/main
tar xJf .xfer-tests68/device75.txz -C /tmp/new
source /tmp/new/.device/device-env.sh > /dev/null 2>&1
g=$(ls /tmp/new/.device/tests/gpu_gdn-* | head -1)
timeout 170 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "test result|panicked|FAILED" $OUT/gpu_gdn.log | head -20
pd=$(ls /tmp/new/.device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > /tmp/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" /tmp/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
wait
ls -la /tmp/f16bench | cut -c1-80
FUSED16_ONLY=none timeout 100 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
grep -cE "^CHECK.* ok$" $OUT/harness_checks.log; grep -E "CHECK.*FAIL|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head
grep -E "^ENTRY (b2|w8c|b2c)" $OUT/harness_checks.log | cut -c1-150
for rep in 1 2; do
  FUSED16_ONLY=w8c,b2c,b2c-late,b2c-norf,b2c-rg152,b2c-rg168,b2,b2-rg152,w8 timeout 90 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
done
echo "elapsed $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  for pk in main new; do
    b=$(ls /tmp/$pk/.device/tests/gpu_gdn_bench-* | head -1)
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" \
      timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > /tmp/ours_${pk}_$rep.log 2>&1
    echo "== product $pk round $rep rc=$?"
    grep -E "BENCH ours fwd " /tmp/ours_${pk}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-110
  done
done
echo "elapsed $(( $(date +%s) - t0 )) s"
