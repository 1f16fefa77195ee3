#!/usr/bin/env bash
# Compiles bench/bulkcopy_bench.cu with the device's nvcc and runs every family (cp.async, bulk,
# multicast bulk in a 2-CTA cluster, the producer-warp rings pc / pcmc, single-copy latency, bursts of
# N copies on one mbarrier), each bounded by `timeout`; the table
# goes to $OUT/bulkcopy_table.txt (and stdout). Run from the folder holding bulkcopy_bench.cu.
set -u
OUT=${OUT:-/tmp/bulkcopy_out}
mkdir -p "$OUT"
LOG="$OUT/bulkcopy_table.txt"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  "$NVCC" --version | tail -2
  t0=$(date +%s)
  timeout 45 "$NVCC" -O3 -arch=sm_90a -std=c++17 --ptxas-options=-v bulkcopy_bench.cu -o bulkcopy_bench 2>&1 \
    | grep -E "Compiling entry|Used|error" || true
  echo "compile: $(( $(date +%s) - t0 )) s, rc of binary: $(test -x bulkcopy_bench && echo present || echo MISSING)"
  for fam in lat cpa bulk mc pc pcmc burst; do
    t1=$(date +%s)
    timeout 12 ./bulkcopy_bench "$fam"
    echo "# family $fam: rc=$? in $(( $(date +%s) - t1 )) s"
  done
  date -u
} 2>&1 | tee "$LOG"
