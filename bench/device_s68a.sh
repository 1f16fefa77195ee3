#!/usr/bin/env bash
# Session 68: the chain split over the channels (KS: w8ck / w4ck, harness and CPU emulation only).
# The one pass's chain is latency-bound (w8c: issue slots 47 % busy, tensor pipe 34 %, session 67's
# ncu on an H100; its chain alone 850 cycles per chunk of 16 tokens): KS runs each value-row slice
# on two warps, each with half the channels of X (half the mma per chunk), trading the P / Q halves
# through shared memory — w8c's bits (the CPU emulation), more instructions per SM sub-partition
# (sass_loop_sections.py --census: 244 + 214 per pair and chunk against w8c's 295).
# 1. The harness (.xfer-abl68/, built on the CPU machine with the pinned nvcc): its checks (every
#    form against fp64), then w8c, w8ck, w4c, w4ck and the chain alone (w8 / w8k), HREPS rounds
#    (default 2) at the four benchmark shapes; as built and with -DGDN_F16_ABLATE_READOUT=1 (noro)
#    at (4,8192,16).
# 2. On a card other than an H200 (or NCU=1; NCU=0: never) ncu of one w8ck launch at (4,8192,16)
#    ($OUT/ncu68_w8ck.txt).
# 3. On an H200 (TABLE=0: never; TABLE=1: on any card) issue 8's table with the peers in the same run
#    (device_peers_55b.sh on .xfer-tests68/device82.txz: main's rule, its forms' .text main's).
# Staging on the CPU machine (nvcc from ../shared/scripts/install-nvcc.sh on PATH, CU its
# site-packages/nvidia/cu13):
#   mkdir -p .xfer-abl68; for d in "" -DGDN_F16_ABLATE_READOUT=1; do nvcc -std=c++17 -O3 -L$CU/lib $d \
#     -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o .xfer-abl68/f16bench${d:+_noro}; done
# run: command "bash bench/device_s68a.sh", carry [".xfer-abl68", ".xfer-tests68", ".xfer-final"],
# kind nvidia-h200 (~450 s with the table; ~120 s without).
# Reading: w8ck faster than w8c at (4,8192,16) and the ragged mix -> a product entry (switch first).
# Ran once (session 68, H100: bench/device_s68a_h100_*): KS slower; its forms left the harness and the
# header since (bench/gdn_ro_rx_ks68.patch puts them back).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== harness checks (log harness_checks.log)"
F16BENCH=.xfer-abl68/f16bench dev_f16_checks "w8c|w8ck|w4c|w4ck|w8k|w8-chain"
echo "== harness: w8c, w8ck, w4c, w4ck, the chain alone (w8, w8k); noro = GDN_F16_ABLATE_READOUT=1"
for rep in $(seq "${HREPS:-2}"); do
  echo "-- f16bench"
  F16BENCH=.xfer-abl68/f16bench dev_f16_rounds w8c,w8ck,w4c,w4ck,w8-chain-only,w8k-chain-only 1
  echo "-- f16bench_noro"
  F16BENCH=.xfer-abl68/f16bench_noro dev_f16_rounds w8c,w8ck,w8-chain-only,w8k-chain-only 1 FUSED16_SHAPE="(4,8192,16)"
done 2>&1 | tee "$OUT/s68a_harness.log"
echo "elapsed $SECONDS s"
ISH200=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -c H200)
if [ "${NCU:-}" = 1 ] || { [ "${NCU:-}" != 0 ] && [ "$ISH200" = 0 ]; }; then
  NCUB=$(dev_ncu)
  FUSED16_ONLY=w8ck FUSED16_SHAPE="(4,8192,16)" timeout 100 $NCUB --clock-control none -k regex:"fused16_bf16_w8ck\$" \
    --launch-skip 3 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section InstructionStats --section LaunchStats \
    .xfer-abl68/f16bench 3 > "$OUT/ncu68_w8ck.txt" 2>&1
  echo "ncu w8ck rc=$?"
  grep -E "Duration|Issue Slots|Eligible|Warp Cycles Per Issued|Registers|Tensor" "$OUT/ncu68_w8ck.txt" | head -12
fi
echo "elapsed $SECONDS s"
if [ "${TABLE:-}" = 1 ] || { [ "${TABLE:-}" != 0 ] && [ "$ISH200" = 1 ]; }; then
  cp .xfer-tests68/device82.txz .xfer-tests68/device68.txz
  BUDGET=${BUDGET:-320} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s68a_table.log"
fi
echo "elapsed $SECONDS s"
