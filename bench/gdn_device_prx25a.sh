#!/usr/bin/env bash
# Session 25, helper prx25, device call 1 (<= 120 s): trix24's checks on branch prx25 (= trix24's
# cd4603c cherry-picked onto main 6b47f08; gdn_fwd.cubin byte-identical to cd4603c's) against
# base25 (main 6b47f08 = session 24's validated defaults), plus an ncu profile of the slim prep.
# T = this branch's gpu_gdn / gpu_gdn_bench, B = /work/base25/gpu_gdn{,_bench}_s25base.
# 1. forward tests (forward_parity state_pool batch_invariant forward_state_checkpoints) T and B by
#    rule and at 7 pieces: results + hashes T == B; 2. forward_parity hashes with w8gx forced T == B;
# 3. memcheck forward_parity by rule; 4. timing B T T B at (4,8192,16) and (1,32768,16);
# 5. ncu of gdn_fwd_slimprep_bf16_k128 (T) at (4,8192,16), one launch past the cold one.
# Staged as .xfer-prx25/{bench/device_lib.sh, bench/gdn_device_prx25a.sh, bins.txz};
# run: cd .xfer-prx25 && OUT=$OUT bash bench/gdn_device_prx25a.sh
set -uo pipefail
[ -f bins.txz ] && tar xJf bins.txz
source bench/device_lib.sh
dev_begin prx25a
chmod +x .device/tests/* base/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s25base; bb=base/gpu_gdn_bench_s25base
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=30
DEV_FWD_TESTS="forward_parity state_pool batch_invariant forward_state_checkpoints"
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule ($DEV_FWD_TESTS): T == B 6b47f08"
dev_fwd_case T_p7 "$t" DNNPLAN_GDN_FWD_PIECES=7; dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_T_p7 $DEV_TMP/h_B_p7 "forward tests at 7 pieces: T == B"
dev_compare fwd "forward_parity w8gx forced: T == B" $t $b DNNPLAN_GDN_FWD_SCAN=w8gx
echo "elapsed ${SECONDS}s"
DEV_CAP_S=35 dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
export DNNPLAN_GDN_BENCH_SHAPES="0 1"
dev_bench_fwd_order "default:::" "$bb" "$tb"
cp $DEV_TMP/*.log "$OUT/" 2>/dev/null
# 5. ncu of the slim prep (T), bounded by what is left of 115 s.
cap=$(( 115 - SECONDS )); [ "$cap" -gt 40 ] && cap=40
if [ "$cap" -ge 15 ]; then
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout "$cap" ncu --clock-control none --kill yes --warp-sampling-interval 0 \
      --section SourceCounters --section WarpStateStats --section InstructionStats \
      --section MemoryWorkloadAnalysis_Tables --section SpeedOfLight --section LaunchStats \
      --section Occupancy --section ComputeWorkloadAnalysis \
      -k "regex:^gdn_fwd_slimprep_bf16_k128$" --launch-skip 1 --launch-count 1 -o "$DEV_TMP/prep" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$DEV_TMP/prep.ncu.log" 2>&1
  echo "ncu rc=$?"; grep -E "==PROF==|rror" "$DEV_TMP/prep.ncu.log" | tail -4
  if [ -f "$DEV_TMP/prep.ncu-rep" ]; then
    ncu --import "$DEV_TMP/prep.ncu-rep" --page source --csv --print-source sass > "$OUT/prep.sass.csv" 2>/dev/null
    ncu --import "$DEV_TMP/prep.ncu-rep" --page details --print-details all > "$OUT/prep.details.txt" 2>/dev/null
    ncu --import "$DEV_TMP/prep.ncu-rep" --page raw --csv > "$OUT/prep.raw.csv" 2>/dev/null
    ls -la "$DEV_TMP/prep.ncu-rep"; wc -l "$OUT/prep.sass.csv"
    grep -E "Duration|Elapsed Cycles|SM Active Cycles|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  |Registers Per|Achieved Occ|Theoretical Occ|Block Limit|Memory Throughput|DRAM Throughput|Compute \(SM\)|Shared Memory|Bank" "$OUT/prep.details.txt" | head -40
  fi
else
  echo "ncu skipped (time: ${SECONDS}s)"
fi
echo "total ${SECONDS}s"
