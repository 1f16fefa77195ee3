#!/usr/bin/env bash
# Staged in session 49 for the next device session (branch s49-fused-order): the one pass's
# longest-first block order. 1. bench/gdn_fused16_bench.cu in batch order and longest-first
# (FUSED16_ORDER=1; b1, w8, b2) at the four shapes; 2. gpu_gdn every test and gpu_gdn_pdl on the
# branch's product (its one pass runs longest-first); 3. gdn_benchmark_ours by rule, and the ragged
# mix with the one pass forced (DNNPLAN_GDN_FWD_FUSED=w8, =b2) against the two passes (=0);
# 4. memcheck of the malformed-offsets test. Decide: if the one pass forced beats the two passes on
# the ragged mix, widen fused16's rule to every uncut shape (FUSED16_TWO_PER_SM_WAVES's band).
# run: command "bash bench/device_fused16_50.sh", carry [".xfer-final"] (device50.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device50.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
FUSED16_ONLY=b1,w8,b2 timeout 60 /tmp/f16bench 15 > $OUT/fused16_batch_order.log 2>&1
FUSED16_ORDER=1 FUSED16_ONLY=b1,w8,b2 timeout 60 /tmp/f16bench 15 > $OUT/fused16_longest_first.log 2>&1
for f in batch_order longest_first; do echo "== $f"; grep -E "FUSED16|all checks|FAIL" $OUT/fused16_$f.log; done
echo "elapsed $(( $(date +%s) - t0 )) s"
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 80 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
grep -E "BENCH ours fwd " $OUT/ours.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-160
for form in w8 b2 0; do
  DNNPLAN_GDN_FWD_FUSED=$form DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="3" timeout 40 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_ragged_$form.log 2>&1
  echo "ragged FUSED=$form: $(grep -E 'BENCH ours fwd ' $OUT/ours_ragged_$form.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-120)"
done
echo "elapsed $(( $(date +%s) - t0 )) s"
if command -v compute-sanitizer > /dev/null; then
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 "$g" --test-threads=1 --exact malformed_cu_seqlens_run_as_their_clamped_running_maximum > $OUT/memcheck.log 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck.log | head -3
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
