#!/usr/bin/env bash
# Session 58's second call: the prefetch (Fused16Form PF: the next chunk's q̂, k̂ B fragments loaded
# during the update). (1) gpu_gdn and gpu_gdn_pdl on device72.txz (the product's w4c entry with PF);
# (2) the harness: every CHECK, then w4c-po / w8-po against w4c-pf, w6c-po, w8c-po (and the w8
# chains alone), alternating, two rounds; (3) the forward by rule through the product, main's pack
# (device71.txz: w4c, b2c with PO) against device72, alternating, two rounds.
# run: command "bash bench/device_s58b.sh", any kind, carry [".xfer-tests68"]. ~250 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/main /tmp/new
tar xJf .xfer-tests68/device71.txz -C /tmp/main
tar xJf .xfer-tests68/device72.txz -C /tmp/new
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
( nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1; echo "harness build rc=$?" >> /tmp/f16.build ) &
source /tmp/new/.device/device-env.sh > /dev/null 2>&1
g=$(ls /tmp/new/.device/tests/gpu_gdn-* | head -1)
timeout 170 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "test result|panicked|FAILED" $OUT/gpu_gdn.log | head -20
pd=$(ls /tmp/new/.device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > /tmp/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" /tmp/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
wait; tail -2 /tmp/f16.build
if [ -x /tmp/f16bench ]; then
  FUSED16_ONLY=none timeout 150 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
  grep -E "^ENTRY (w4c|w6c|w8c|w8-p)|CHECK.*FAIL|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -24
  echo "checks ok: $(grep -c 'CHECK.*ok' $OUT/harness_checks.log)"
  for rep in 1 2; do
    for only in w4c-po,w8-po,w8-po-chain-only w4c-pf,w6c-po,w8c-po,w8-pf-chain-only; do
      FUSED16_ONLY=$only timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
    done
  done
fi
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
