#!/usr/bin/env bash
# Ran on branch s50-lookahead (27b72a1; the lookahead forms w8a / b2a and the bench entries w8a-free,
# b2a-free, w8-chain-only, w8a-chain-only, w8a-producer exist there only, not on main).
# Session 50's device call (branch s50-lookahead: the one pass's lookahead forms w8a / b2a and the
# longest-first block order). 1. bench/gdn_fused16_bench.cu: every CHECK, then b1, w8, b2, w8a, b2a in
# batch order and longest-first (FUSED16_ORDER=1), and the chain-alone / producer-alone diagnostics
# of w8 and w8a; 2. gpu_gdn every test (its forms test forces w8a / b2a against fp64 and each other)
# and gpu_gdn_pdl; 3. gdn_benchmark_ours by rule and with each form forced (shapes 0 2 3 and the
# ragged mix with the two passes); 4. memcheck of the malformed-offsets test on w8a.
# run: command "bash bench/device_lookahead_50.sh", carry [".xfer-final"] (device51.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device51.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
FUSED16_ONLY=b1,w8,b2,w8a,b2a,w8a-free,b2a-free,w8-chain-only,w8a-chain-only,w8-producer,w8a-producer timeout 90 /tmp/f16bench 15 > $OUT/fused16_batch_order.log 2>&1
FUSED16_ORDER=1 FUSED16_ONLY=w8,b2,w8a,b2a,w8a-free timeout 60 /tmp/f16bench 15 > $OUT/fused16_longest_first.log 2>&1
for f in batch_order longest_first; do echo "== $f"; grep -E "FUSED16|all checks|FAIL|spill" $OUT/fused16_$f.log; done
echo "elapsed $(( $(date +%s) - t0 )) s"
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
for form in rule w8 b2 w8a b2a; do
  shapes="0 2 3"; [ $form = rule ] || shapes="0 2 3"
  if [ $form = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$form; fi
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="$shapes" timeout 70 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_$form.log 2>&1
  echo "== FUSED=$form"; grep -E "BENCH ours fwd " $OUT/ours_$form.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
  [ $(( $(date +%s) - t0 )) -gt 420 ] && { echo "time guard"; break; }
done
unset DNNPLAN_GDN_FWD_FUSED
DNNPLAN_GDN_FWD_FUSED=0 DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="3" timeout 40 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_0.log 2>&1
echo "== FUSED=0"; grep -E "BENCH ours fwd " $OUT/ours_0.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
echo "elapsed $(( $(date +%s) - t0 )) s"
if command -v compute-sanitizer > /dev/null && [ $(( $(date +%s) - t0 )) -lt 450 ]; then
  DNNPLAN_GDN_FWD_FUSED=w8a timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 "$g" --test-threads=1 --exact malformed_cu_seqlens_run_as_their_clamped_running_maximum > $OUT/memcheck.log 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck.log | head -3
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
