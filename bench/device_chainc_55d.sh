#!/usr/bin/env bash
# Session 55: the one pass's chain and its producer's build at chunk 32 against 16 (bench/gdn_chain_c_bench.cu: the
# chain alone, no producer, fixed stages; two rounds per shape), calibrated against the harness's
# real chain-only entries (b1-chain-only, w8-chain-only: the chain with stages handed over empty).
# With RUN_PEERS=1 on an H200 it then runs bench/device_h200_55c.sh (the wave-fill check and the same-run peers).
# run: command "bash bench/device_chainc_55d.sh", carry [".xfer-tests68", ".xfer-final"].
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader); echo "$gpu"
export PATH=/usr/local/cuda/bin:$PATH
( nvcc -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16bench.build 2>&1; echo "harness build rc=$?" >> /tmp/f16bench.build ) &
nvcc -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_chain_c_bench.cu -o /tmp/chainc 2>&1 | grep -v warning | head -5
timeout 60 /tmp/chainc 20 2>&1 | tee $OUT/chainc.log
wait; tail -1 /tmp/f16bench.build
FUSED16_ONLY=b1-chain-only,w8-chain-only,w4c-producer,w4c timeout 90 /tmp/f16bench 20 2>&1 | grep -E "^FUSED16|FAIL" | cut -c1-60
echo "elapsed $(( $(date +%s) - t0 )) s"
if [ "${RUN_PEERS:-0}" = 1 ]; then
  case "$gpu" in
    *H200*) LIMIT=$(( 570 - ($(date +%s) - t0) )) bash bench/device_h200_55c.sh ;;
  esac
fi
