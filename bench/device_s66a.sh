#!/usr/bin/env bash
# Session 66: the readout warps (w8cr: Fused16Form RO, the chain's Q and O on four warps of their
# own, switch only) on the session's pack (device82.txz: main 5c14ce7 plus w8cr; the rule's forms'
# .text byte-identical to main's), and issue 8's table on an H200.
# 1. The harness (built on the CPU machine with the pinned nvcc, carried in .xfer-abl/): its
#    checks (w8cr against fp64), then w8c, w8cr and w8's chain alone as built and with
#    -DGDN_F16_ABLATE_READOUT=1 (`noro`: the chain without the Q products, Uᵀ Aᵀ and the O
#    staging, the bound of what moving the readout off the chain can save), at (4,8192,16) and the
#    ragged mix, alternating, two rounds.
# 2. Through the product (gdn_benchmark_fused_switch): the rule, w8c, w8cr and b2c at (4,8192,16),
#    the ragged mix at H 16, one 8,192-token sequence among nine of 4,096 at H 8 and 6 × 4,096 at
#    H 16, three rounds.
# 3. gpu_gdn (its one-pass test runs every form, w8cr too: against fp64 and bitwise the mma.sync
#    forms) and gpu_gdn_pdl; TESTS=0 skips them.
# 4. On an H200 (TABLE=0: never; TABLE=1: on any card) issue 8's table with the peers in the same
#    run (device_peers_55b.sh on the same pack, BUDGET seconds, default 320; carry .xfer-final).
# Staged in session 66, not run (no device started: thirteen requests refused or taken back);
# superseded by device_s67a.sh (the same steps, its GPU tests on the landing candidate).
# Staging on the CPU machine (nvcc from ../shared/scripts/install-nvcc.sh on PATH, CU its
# site-packages/nvidia/cu13; from the repository root):
#   git apply bench/gdn_w8cr66_product.patch && bash kernels/build-cubins.sh
#   CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols cargo test --release \
#     --features gpu-tests --no-run --test gpu_gdn --test gpu_gdn_pdl --test gpu_gdn_bench
#   P=/tmp/pk82; mkdir -p $P/.device/tests .xfer-tests68 .xfer-abl; cp ../shared/scripts/device-env.sh $P/.device/
#   for t in gpu_gdn gpu_gdn_pdl gpu_gdn_bench; do cp $(ls target/release/deps/$t-* | grep -E "/$t-[0-9a-f]+$") $P/.device/tests/; done
#   tar cJf .xfer-tests68/device82.txz -C $P .device
#   for d in "" -DGDN_F16_ABLATE_READOUT=1; do nvcc -std=c++17 -O3 -L$CU/lib $d -gencode arch=compute_90a,code=sm_90a \
#     -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o .xfer-abl/f16bench${d:+_noro}; done
#   git checkout kernels/ src/   (the patch stays staged only: the pack carries it)
# run: command "bash bench/device_s66a.sh", carry [".xfer-tests68", ".xfer-final", ".xfer-abl"],
# kind nvidia-h200 (~560 s; on an H100 steps 1-3, ~220 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
dev_pack s66t device82.txz
echo "== harness checks (log harness_checks.log)"
F16BENCH=.xfer-abl/f16bench dev_f16_checks "w8c"
echo "== harness: w8c, w8cr, w8's chain alone; noro = GDN_F16_ABLATE_READOUT=1"
for rep in 1 2; do
  for b in f16bench f16bench_noro; do
    for sh in "(4,8192,16)" ragged; do
      echo "-- $b"
      F16BENCH=".xfer-abl/$b" dev_f16_rounds w8c,w8cr,w8-chain-only 1 FUSED16_SHAPE="$sh"
    done
  done
done 2>&1 | tee "$OUT/s66a_harness.log"
echo "elapsed $SECONDS s"
echo "== the switch through the product (0 = the two passes)"
RAG=8192,100,4096,1,2048,7000,0,3000,512,5000
(
  source /tmp/s66t/.device/device-env.sh > /dev/null 2>&1
  DNNPLAN_GDN_BENCH_SWITCH="b4:8192*4:16;rag-H16:$RAG:16;long1-H8:8192,4096*9:8;eq6:4096*6:16" \
    DNNPLAN_GDN_BENCH_SWITCH_FORMS=w8c,w8cr,b2c timeout 150 "$(ls /tmp/s66t/.device/tests/gpu_gdn_bench-* | head -1)" \
    gdn_benchmark_fused_switch --test-threads=1 --nocapture 2>&1 | grep -E "BENCH switch|test result|panicked"
) | tee "$OUT/s66a_switch.log"
echo "elapsed $SECONDS s"
if [ "${TESTS:-1}" != 0 ]; then dev_pack_tests s66t; fi
echo "elapsed $SECONDS s"
if [ "${TABLE:-}" = 1 ] || { [ "${TABLE:-}" != 0 ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; }; then
  cp .xfer-tests68/device82.txz .xfer-tests68/device68.txz
  BUDGET=${BUDGET:-320} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s66a_table.log"
fi
echo "elapsed $SECONDS s"
