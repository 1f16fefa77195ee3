#!/usr/bin/env bash
# Session 67: the readout warps (w8cr: Fused16Form RO, the chain's Q and O on four warps of their
# own, session 66) measured, and issue 8's table on an H200. Replaces session 66's device_s66a.sh
# (never run; the same steps) with the GPU tests on the landing candidate.
# 1. The harness (built on the CPU machine with the pinned nvcc, carried in .xfer-abl/): its checks
#    (every form against fp64), then w8c, w8cr, w8crx (w8cr whose readout takes the chain's bf16 X
#    fragments instead of keeping its own X: RX, session 67) and w8's chain alone, as built and with
#    -DGDN_F16_ABLATE_READOUT=1 (`noro`: the chain without the Q products, Uᵀ Aᵀ and the O staging,
#    the bound of what moving the readout off the chain can save), at (4,8192,16) and the ragged
#    mix, HREPS rounds (default 2).
# 2. Through the product (gdn_benchmark_fused_switch) on device82.txz (main plus
#    bench/gdn_w8cr66_product.patch: w8cr a switch-only form, the rule's forms' .text byte-identical
#    to main's): the rule, w8c, w8cr and b2c at (4,8192,16), the ragged mix at H 16, one 8,192-token
#    sequence among nine of 4,096 at H 8 and 6 × 4,096 at H 16, three rounds.
# 3. gpu_gdn and gpu_gdn_pdl on the landing candidate device83.txz (main plus that patch and
#    bench/gdn_w8cr67_rule.patch: FUSED16_BY_RULE = (5, 3), w8cr where the rule ran w8c, below three
#    blocks per SM): every one-pass case sent to one block per SM runs w8cr, and the forms test runs
#    every form against fp64 and bitwise the mma.sync forms. TESTS=0 skips them.
# 4. On a card other than an H200 (or NCU=1; NCU=0: never) ncu of one launch each of w8c and w8cr at
#    (4,8192,16) through the product ($OUT/ncu67_{w8c,w8cr}.txt).
# 5. On an H200 (TABLE=0: never; TABLE=1: on any card) issue 8's table with the peers in the same run
#    (device_peers_55b.sh on device82.txz, the table by main's rule; BUDGET seconds, default 320).
# Reading: w8cr (or w8crx in the harness) faster than w8c at (4,8192,16) and the ragged mix, and
# gpu_gdn green -> land both patches (and the README's form list); w8crx ahead of w8cr -> give it a
# product entry first.
# Staging on the CPU machine (nvcc from ../shared/scripts/install-nvcc.sh on PATH, CU its
# site-packages/nvidia/cu13; from the repository root), once per pack (NN = 82: the product patch;
# NN = 83: both patches):
#   git apply bench/gdn_w8cr66_product.patch [bench/gdn_w8cr67_rule.patch] && bash kernels/build-cubins.sh
#   CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols cargo test --release \
#     --features gpu-tests --no-run --test gpu_gdn --test gpu_gdn_pdl --test gpu_gdn_bench
#   P=/tmp/pkNN; mkdir -p $P/.device/tests .xfer-tests68; cp ../shared/scripts/device-env.sh $P/.device/
#   for t in gpu_gdn gpu_gdn_pdl gpu_gdn_bench; do cp $(ls -t target/release/deps/$t-* | grep -E "/$t-[0-9a-f]+$" | head -1) $P/.device/tests/; done
#   tar cJf .xfer-tests68/deviceNN.txz -C $P .device; git checkout kernels/ src/
# and the harness, twice (main's tree):
#   mkdir -p .xfer-abl; for d in "" -DGDN_F16_ABLATE_READOUT=1; do nvcc -std=c++17 -O3 -L$CU/lib $d \
#     -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o .xfer-abl/f16bench${d:+_noro}; done
# Staged in sessions 66-67 (no device started: thirteen and nineteen requests refused); ran in session
# 68 on an H100 (bench/device_s67a_h100_*): w8cr / w8crx slower. RO / RX left the harness and the header
# since (bench/gdn_ro_rx_ks68.patch puts them back; the two w8cr patches apply on top of it).
# run: command "bash bench/device_s67a.sh", carry [".xfer-tests68", ".xfer-final", ".xfer-abl"],
# kind nvidia-h200 (~560 s; on an H100 ~330 s). Short form for a small budget:
# HREPS=1 NCU=0 TABLE=0 (one harness round, no ncu, no table; TESTS=0 drops the GPU tests too).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
dev_pack s66t device82.txz
dev_pack s67r device83.txz
echo "== harness checks (log harness_checks.log)"
F16BENCH=.xfer-abl/f16bench dev_f16_checks "w8c"
echo "== harness: w8c, w8cr, w8crx, w8's chain alone; noro = GDN_F16_ABLATE_READOUT=1"
for rep in $(seq "${HREPS:-2}"); do
  for b in ${HBINS:-f16bench f16bench_noro}; do
    for sh in "(4,8192,16)" ragged; do
      echo "-- $b"
      F16BENCH=".xfer-abl/$b" dev_f16_rounds w8c,w8cr,w8crx,w8-chain-only 1 FUSED16_SHAPE="$sh"
    done
  done
done 2>&1 | tee "$OUT/s67a_harness.log"
echo "elapsed $SECONDS s"
echo "== the switch through the product (0 = the two passes)"
RAG=8192,100,4096,1,2048,7000,0,3000,512,5000
(
  source /tmp/s66t/.device/device-env.sh > /dev/null 2>&1
  DNNPLAN_GDN_BENCH_SWITCH="b4:8192*4:16;rag-H16:$RAG:16;long1-H8:8192,4096*9:8;eq6:4096*6:16" \
    DNNPLAN_GDN_BENCH_SWITCH_FORMS=w8c,w8cr,b2c timeout 150 "$(ls /tmp/s66t/.device/tests/gpu_gdn_bench-* | head -1)" \
    gdn_benchmark_fused_switch --test-threads=1 --nocapture 2>&1 | grep -E "BENCH switch|test result|panicked"
) | tee "$OUT/s67a_switch.log"
echo "elapsed $SECONDS s"
if [ "${TESTS:-1}" != 0 ]; then dev_pack_tests s67r; fi
echo "elapsed $SECONDS s"
ISH200=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -c H200)
if [ "${NCU:-}" = 1 ] || { [ "${NCU:-}" != 0 ] && [ "$ISH200" = 0 ]; }; then
  (
    source /tmp/s66t/.device/device-env.sh > /dev/null 2>&1
    NCUB=$(dev_ncu)
    for f in w8c w8cr; do
      DNNPLAN_GDN_BENCH_SWITCH="s:8192*4:16" DNNPLAN_GDN_BENCH_SWITCH_FORMS=$f DNNPLAN_GDN_BENCH_SWITCH_ROUNDS=1 \
        timeout 100 $NCUB --clock-control none -k regex:"fused16.*_$f\$" --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section SchedulerStats --section InstructionStats --section LaunchStats \
        "$(ls /tmp/s66t/.device/tests/gpu_gdn_bench-* | head -1)" gdn_benchmark_fused_switch --test-threads=1 --nocapture > "$OUT/ncu67_$f.txt" 2>&1
      echo "ncu $f rc=$?"
      grep -E "fused16|Duration|Throughput|Busy|Warp Cycles Per Issued|Eligible|Registers|Issue Slots" "$OUT/ncu67_$f.txt" | head -24
    done
  )
fi
echo "elapsed $SECONDS s"
if [ "${TABLE:-}" = 1 ] || { [ "${TABLE:-}" != 0 ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; }; then
  cp .xfer-tests68/device82.txz .xfer-tests68/device68.txz
  BUDGET=${BUDGET:-320} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s67a_table.log"
fi
echo "elapsed $SECONDS s"
