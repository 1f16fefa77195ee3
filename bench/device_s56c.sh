#!/usr/bin/env bash
# Session 56's second device call (after bench/device_s56b.sh measured the first DD 1-7 % slower:
# its update's K̂ loads and reciprocal waited behind the rescale branch): DD with those hoisted ahead
# of the U product. The same four steps as the first call.
# The first call: the one pass's deferred decay (Fused16Form DD: the chain keeps X = Sᵀ / λ
# and stops scaling its 64 accumulators per lane every chunk). (1) gpu_gdn and gpu_gdn_pdl on the DD
# pack (device69.txz); (2) the harness (bench/gdn_fused16_bench.cu, built here): every CHECK, then
# w4c / b2c / w8 against their bench-only twins without DD, alternating, two rounds at flags 0, one
# at flags 1; (3) the forward by rule through the product, main's pack (device68.txz) against the DD
# pack, alternating; (4) issue 8's benchmark with the peers in the same run on the DD pack
# (bench/device_peers_55b.sh), with what the call's limit leaves.
# run: command "bash bench/device_s56c.sh", kind nvidia-h200, carry [".xfer-tests68", ".xfer-final"].
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
mkdir -p /tmp/main /tmp/new
tar xJf .xfer-tests68/device68.txz -C /tmp/main
tar xJf .xfer-tests68/device69.txz -C /tmp/new
source /tmp/new/.device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
( nvcc -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16bench.build 2>&1; echo "harness build rc=$?" >> /tmp/f16bench.build ) &
g=$(ls /tmp/new/.device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "test result|panicked|FAILED" $OUT/gpu_gdn.log | head -20
pd=$(ls /tmp/new/.device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > /tmp/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" /tmp/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
wait
tail -2 /tmp/f16bench.build
if [ -x /tmp/f16bench ]; then
  FUSED16_ONLY=none timeout 120 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
  grep -E "^ENTRY (w4c|b2c|w8)|CHECK.*(FAIL|w4c|b2c )|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -40
  for rep in 1 2; do
    for only in w4c-nodd,b2c-nodd,w8-nodd w4c,b2c,w8; do
      FUSED16_ONLY=$only timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
    done
  done
  echo "-- flags 1 (l2norm in the kernel)"
  for only in w4c-nodd w4c; do
    FUSED16_FLAGS=1 FUSED16_ONLY=$only timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
  done
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  for pk in main new; do
    b=$(ls /tmp/$pk/.device/tests/gpu_gdn_bench-* | head -1)
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 1 2 3" \
      timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > /tmp/ours_${pk}_$rep.log 2>&1
    echo "== product $pk round $rep rc=$?"
    grep -E "BENCH ours fwd " /tmp/ours_${pk}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-110
  done
done
echo "elapsed $(( $(date +%s) - t0 )) s"
cp .xfer-tests68/device69.txz .xfer-tests68/device68.txz
BUDGET=$(( ${LIMIT:-585} - ($(date +%s) - t0) - 15 )) bash bench/device_peers_55b.sh
