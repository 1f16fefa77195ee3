#!/usr/bin/env bash
# Session 67: session 66's staged call (device_s66a.sh: the readout warps, w8cr) with its GPU tests on
# the landing candidate instead: device83.txz is main plus bench/gdn_w8cr66_product.patch and
# bench/gdn_w8cr67_rule.patch (FUSED16_BY_RULE = (5, 3): w8cr where the rule ran w8c, below three
# blocks per SM), so gpu_gdn runs w8cr at every one-pass case the rule sends to one block per SM,
# and its forms test every form. The harness (1), the switch (2) and the table (4) as in
# device_s66a.sh, on its switch-only pack device82.txz (the table by main's rule); on a card other
# than an H200 (or NCU=1) ncu of one launch each of w8c and w8cr at (4,8192,16) through the product
# ($OUT/ncu67_{w8c,w8cr}.txt). Staged in session 67, not run (nineteen requests refused).
# Staging on the CPU machine: device_s66a.sh's (device82.txz and the two harness builds), then for
# device83.txz: git apply bench/gdn_w8cr66_product.patch bench/gdn_w8cr67_rule.patch, build the
# cubins, the release test build and the pack as there (P=/tmp/pk83), tar cJf .xfer-tests68/device83.txz,
# git checkout kernels/ src/. Reading: w8cr faster than w8c at (4,8192,16) and the ragged mix
# through the product, and gpu_gdn green -> land both patches (the README's form list too).
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
echo "== harness: w8c, w8cr, w8's chain alone; noro = GDN_F16_ABLATE_READOUT=1"
for rep in $(seq "${HREPS:-2}"); do
  for b in ${HBINS:-f16bench f16bench_noro}; do
    for sh in "(4,8192,16)" ragged; do
      echo "-- $b"
      F16BENCH=".xfer-abl/$b" dev_f16_rounds w8c,w8cr,w8-chain-only 1 FUSED16_SHAPE="$sh"
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
