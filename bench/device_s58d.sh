#!/usr/bin/env bash
# Session 58's fourth call: the remote forward (Fused16Form RF: a chain warp releases a stage on its
# own CTA's barrier only; the refilling producer warp forwards the release to the peer CTA, whose
# builder waits on it before pushing). (1) gpu_gdn and gpu_gdn_pdl on device74.txz (the product's
# w8c and b2c with RF); (2) the harness: every CHECK, then w8c-po / b2c-po against w8c-rf, b2c-rf
# and b2c-po-et (b2c with the early test), alternating, two rounds; (3) the forward by rule through
# the product, device73 (main: w8c, b2c with PO) against device74, alternating, two rounds.
# run: command "bash bench/device_s58d.sh", any kind, carry [".xfer-tests68"]. ~260 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/main /tmp/new
tar xJf .xfer-tests68/device73.txz -C /tmp/main
tar xJf .xfer-tests68/device74.txz -C /tmp/new
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
( nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1; echo "harness build rc=$?" >> /tmp/f16.build ) &
source /tmp/new/.device/device-env.sh > /dev/null 2>&1
g=$(ls /tmp/new/.device/tests/gpu_gdn-* | head -1)
timeout 170 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "test result|panicked|FAILED" $OUT/gpu_gdn.log | head -20
pd=$(ls /tmp/new/.device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > /tmp/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" /tmp/gpu_gdn_pdl.log
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
wait; tail -1 /tmp/f16.build
if [ -x /tmp/f16bench ]; then
  FUSED16_ONLY=none timeout 150 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
  grep -E "^ENTRY (w8c|b2c)|CHECK.*FAIL|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -24
  echo "checks ok: $(grep -c 'CHECK.*ok' $OUT/harness_checks.log)"
  for rep in 1 2; do
    for only in w8c-po,b2c-po w8c-rf,b2c-rf,b2c-po-et; do
      FUSED16_ONLY=$only timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
    done
  done
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
