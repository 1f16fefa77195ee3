#!/usr/bin/env bash
# Session 57's third call: (1) the chain bench (bench/chain_ksplit_bench.cu) with wgpq (P and Q as
# one wgmma m64n32k16 chain of the warpgroup), the relaxed release and the O store alone; (2) gpu_gdn
# and gpu_gdn_pdl on the lean-step pack (device70.txz: the product's w8 / w4c / b2c entries with
# Fused16Form LT); (3) the harness (bench/gdn_fused16_bench.cu): every CHECK (the lean forms among
# them and the WG forms w4c-wg, w8-wg), then the lean step and the WG chain against the landing
# step, alternating, two rounds; (4) the forward by
# rule through the product, main's pack (device68.txz) against device70, alternating.
# run: command "bash bench/device_s57c.sh", any kind, carry [".xfer-tests68"]. ~200 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/main /tmp/new
tar xJf .xfer-tests68/device68.txz -C /tmp/main
tar xJf .xfer-tests68/device70.txz -C /tmp/new
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
( nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1; echo "harness build rc=$?" >> /tmp/f16.build ) &
nvcc $F bench/chain_ksplit_bench.cu -o /tmp/ksplit && timeout 100 /tmp/ksplit | grep -E "nch  2048|SMs"
echo "elapsed $(( $(date +%s) - t0 )) s"
source /tmp/new/.device/device-env.sh > /dev/null 2>&1
g=$(ls /tmp/new/.device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "test result|panicked|FAILED" $OUT/gpu_gdn.log | head -20
pd=$(ls /tmp/new/.device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > /tmp/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" /tmp/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
wait; tail -2 /tmp/f16.build
if [ -x /tmp/f16bench ]; then
  FUSED16_ONLY=none timeout 120 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
  grep -E "^ENTRY (w4c|b2c|w8)|CHECK.*FAIL|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -20
  echo "checks ok: $(grep -c 'CHECK.*ok' $OUT/harness_checks.log)"
  for rep in 1 2; do
    for only in w4c,w8,b2c,w8-chain-only w4c-lt,w8-lt,b2c-lt,w8-lt-chain-only,w4c-lt1,b2c-lt1 w4c-wg,w8-wg,w8-wg-chain-only; do
      FUSED16_ONLY=$only timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
    done
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
