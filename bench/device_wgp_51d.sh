#!/usr/bin/env bash
# Session 51's fourth device call (branch s51-wgp, third form of w8g: one m64n64k16 chain over a pair's tile,
# the next pair's barriers tested during the update, chunk b's readout deferred): the pair forms with the chain's state products on
# wgmma (w8g; b2g spills at two blocks per SM and is timed only). 1. bench/gdn_fused16_bench.cu
# (built here): every CHECK (nine forms), then w8 / w8p / w8g / b2 / b2g and the chain-alone /
# producer-alone diagnostics at the four shapes, twice; 2. gpu_gdn (every test: the forms test with
# w8p / b2p / w8g forced, 255 sequences on every form) and gpu_gdn_pdl; 3. gdn_benchmark_ours with
# w8g forced and by rule (w8 / b2); 4. memcheck of the malformed-offsets test on w8g.
# run: command "bash bench/device_wgp_51d.sh", carry [".xfer-final"] (device57.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device57.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | grep -v C7512 | tail -5
echo "built $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  FUSED16_ONLY=w8,w8p,w8g,b2,w8-chain-only,w8p-chain-only,w8g-chain-only,w8-producer,w8g-producer \
    timeout 90 /tmp/f16bench 20 > $OUT/fused16_$rep.log 2>&1
  echo "== round $rep rc=$?"; grep -E "^ENTRY .*(w8|b2)[pg]?[ :]|^CHECK|^FUSED16|all checks|FAIL" $OUT/fused16_$rep.log | grep -v "^CHECK.*ok$" | cut -c1-110
done
grep -E "^CHECK.*(w8g|b2g)" $OUT/fused16_1.log | cut -c1-120; grep -c "^CHECK.* ok$" $OUT/fused16_1.log
echo "elapsed $(( $(date +%s) - t0 )) s"
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 200 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
for sw in w8g rule; do
  if [ $sw = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$sw; fi
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 70 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_$sw.log 2>&1
  echo "== ours $sw"; grep -E "BENCH ours fwd " $OUT/ours_$sw.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
done
unset DNNPLAN_GDN_FWD_FUSED
echo "elapsed $(( $(date +%s) - t0 )) s"
if command -v compute-sanitizer > /dev/null && [ $(( $(date +%s) - t0 )) -lt 420 ]; then
  DNNPLAN_GDN_FWD_FUSED=w8g timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 "$g" --test-threads=1 --exact malformed_cu_seqlens_run_as_their_clamped_running_maximum > $OUT/memcheck.log 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck.log | head -3
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
