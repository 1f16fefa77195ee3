#!/usr/bin/env bash
# Session 25, helper prx25, device call 2 (<= 200 s): the split slim prep (gdn_fwd_slimprep_*_k128_split6,
# DNNPLAN_GDN_FWD_SLIMPREP=split6: Q Kᵀ and its A before K Kᵀ, 40 registers, 6 blocks per SM; bitwise
# the slim prep by construction) on branch prx25 (T = this build: trix24's packed T, A + split6),
# B = base25 (main 6b47f08).
# 1. forward tests (forward_parity state_pool batch_invariant forward_state_checkpoints) T with split6
#    forced, by rule and at 7 pieces: results + hashes == B's; 2. memcheck forward_parity with split6;
# 3. timing B T S S T B (S = T with split6) at the four benchmark shapes (whole forward + kernels);
# 4. ncu of gdn_fwd_slimprep_bf16_k128 and _split6 (T) at (4,8192,16), one launch past the cold one,
#    exported as text (summary + per-SASS csv) into $OUT/prof.tgz.
# run: cd .xfer-prx25 && OUT=$OUT bash bench/gdn_device_prx25b.sh
set -uo pipefail
[ -f bins.txz ] && tar xJf bins.txz
source bench/device_lib.sh
dev_begin prx25b
chmod +x .device/tests/* base/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s25base; bb=base/gpu_gdn_bench_s25base
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=30
DEV_FWD_TESTS="forward_parity state_pool batch_invariant forward_state_checkpoints"
dev_fwd_case S_rule "$t" DNNPLAN_GDN_FWD_SLIMPREP=split6; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_S_rule $DEV_TMP/h_B_rule "forward tests by rule, split6 forced: T == B 6b47f08"
dev_fwd_case S_p7 "$t" DNNPLAN_GDN_FWD_SLIMPREP=split6 DNNPLAN_GDN_FWD_PIECES=7; dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_S_p7 $DEV_TMP/h_B_p7 "forward tests at 7 pieces, split6 forced: T == B"
dev_compare fwd "forward_parity w8gx forced, split6: T == B" $t $b DNNPLAN_GDN_FWD_SCAN=w8gx DNNPLAN_GDN_FWD_SLIMPREP=split6
echo "elapsed ${SECONDS}s"
DEV_CAP_S=35 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SLIMPREP=split6
echo "elapsed ${SECONDS}s"
for who in B T S S T B; do
  bin=$tb; extra=DNNPLAN_GDN_FWD_SLIMPREP=plain
  [ "$who" = B ] && bin=$bb
  [ "$who" = S ] && extra=DNNPLAN_GDN_FWD_SLIMPREP=split6
  echo "== bench $who ($extra)"
  log=$DEV_TMP/bench_${who}_${SECONDS}.log
  env $extra DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: timeout 40 $bin gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
done
prof() {
  local tag=$1 re=$2; shift 2
  local cap=$(( 190 - SECONDS )); [ "$cap" -gt 35 ] && cap=35
  if [ "$cap" -lt 15 ]; then echo "ncu skipped (time): $tag"; return; fi
  env "$@" DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout "$cap" ncu --clock-control none --kill yes --warp-sampling-interval 0 \
      --section SourceCounters --section WarpStateStats --section InstructionStats \
      --section MemoryWorkloadAnalysis_Tables --section SpeedOfLight --section LaunchStats \
      --section Occupancy --section ComputeWorkloadAnalysis \
      -k "regex:$re" --launch-skip 1 --launch-count 1 -o "$DEV_TMP/prof/$tag" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$DEV_TMP/prof/$tag.ncu.log" 2>&1
  echo "ncu $tag rc=$? ($*)"; grep -E "==PROF==|rror" "$DEV_TMP/prof/$tag.ncu.log" | tail -3
  if [ -f "$DEV_TMP/prof/$tag.ncu-rep" ]; then
    ncu --import "$DEV_TMP/prof/$tag.ncu-rep" --page source --csv --print-source sass > "$DEV_TMP/prof/$tag.sass.csv" 2>/dev/null
    ncu --import "$DEV_TMP/prof/$tag.ncu-rep" --page details --print-details all > "$DEV_TMP/prof/$tag.details.txt" 2>/dev/null
    rm -f "$DEV_TMP/prof/$tag.ncu-rep"
    grep -E "Duration|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  |Registers Per|Achieved Occ|Theoretical Occ|Block Limit Reg|Block Limit Shared|DRAM Throughput|Memory Throughput|L1: Data Bank|Stall" "$DEV_TMP/prof/$tag.details.txt" | head -24
  fi
}
mkdir -p $DEV_TMP/prof
prof split6 '^gdn_fwd_slimprep_bf16_k128_split6$' DNNPLAN_GDN_FWD_SLIMPREP=split6
prof plain '^gdn_fwd_slimprep_bf16_k128$' DNNPLAN_GDN_FWD_SLIMPREP=plain
cp $DEV_TMP/bench_*.log $DEV_TMP/prof/ 2>/dev/null
tar czf "$OUT/prof.tgz" -C "$DEV_TMP" prof 2>/dev/null; ls -la "$OUT"
echo "total ${SECONDS}s"
