#!/usr/bin/env bash
# Session 51's first device call (branch s51-pair): the pair forms (w8p / b2p: the chain steps two
# chunks at a time). 1. bench/gdn_fused16_bench.cu (built on the CPU machine, carried as
# .xfer-final/f16bench51.bin): every CHECK, then w8 / w8p / b2 / b2p and their chain-alone /
# producer-alone diagnostics at the four shapes, twice; 2. gpu_gdn (every test: the forms test with
# w8p / b2p forced, 255 sequences on every form) and gpu_gdn_pdl; 3. gdn_benchmark_ours by rule
# (now w8p / b2p) and with w8 / b2 forced, at (4,8192,16), (16,2048,32) and the ragged mix.
# run: command "bash bench/device_pair_51a.sh", carry [".xfer-final"] (device55.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device55.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
echo "built $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  FUSED16_ONLY=w8,w8p,b2,b2p,w8-chain-only,w8p-chain-only,w8-producer,w8p-producer,b2-chain-only,b2p-chain-only \
    timeout 90 /tmp/f16bench 20 > $OUT/fused16_$rep.log 2>&1
  echo "== round $rep rc=$?"; grep -E "^ENTRY .*(w8|b2)p?[ :]|^CHECK|^FUSED16|all checks|FAIL" $OUT/fused16_$rep.log | grep -v "^CHECK.*ok$" | cut -c1-140
done
grep -c "^CHECK.* ok$" $OUT/fused16_1.log
echo "elapsed $(( $(date +%s) - t0 )) s"
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 200 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
for sw in rule w8 b2; do
  if [ $sw = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$sw; fi
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 70 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_$sw.log 2>&1
  echo "== ours $sw"; grep -E "BENCH ours fwd " $OUT/ours_$sw.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
done
unset DNNPLAN_GDN_FWD_FUSED
echo "elapsed $(( $(date +%s) - t0 )) s"
