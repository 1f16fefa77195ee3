#!/usr/bin/env bash
# Session 58's third call: the w8c form (Fused16W8CP: eight producer warps as clusters, 16 stages,
# the lean step, the producer's O store) as the rule's one-block form. (1) gpu_gdn and gpu_gdn_pdl
# on device73.txz (w8c by rule; w4c, b2c with PO as in device71); (2) the forward by rule through
# the product, device71 (main before w8c) against device73, alternating, two rounds; (3) issue 8's
# benchmark with the peers in the same run on device73 (bench/device_peers_55b.sh), with what the
# call's limit leaves.
# run: command "bash bench/device_s58c.sh", kind nvidia-h200 (else any), carry [".xfer-tests68", ".xfer-final"].
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/main /tmp/new
tar xJf .xfer-tests68/device71.txz -C /tmp/main
tar xJf .xfer-tests68/device73.txz -C /tmp/new
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
cp .xfer-tests68/device73.txz .xfer-tests68/device68.txz
BUDGET=$(( ${LIMIT:-585} - ($(date +%s) - t0) - 15 )) bash bench/device_peers_55b.sh
