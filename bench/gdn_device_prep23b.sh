#!/usr/bin/env bash
# Session 23 (helper prep23), call 2: the final form (branch prep23 at ea10cb1, T2: call 1's build
# plus the row phase's bank-conflict-free row order) against main 4e5e9a6 (B) and call 1's build
# (T1, 877cc5d: its gpu_gdn_bench only):
# 1. forward hashes (forward_parity state_pool batch_invariant) T2 vs B by rule; timing,
#    gdn_benchmark_ours at the four shapes, processes B T2 T1 T2 B;
# 2. forward hashes T2 vs B at 7 pieces on w4 and with the overlap forced on (the _ov prep);
# 3. ncu of the slim prep at (4,8192,16), overlap off, T2 and B, with the memory tables (shared
#    wavefronts, bank conflicts), warp states and the L1/TEX throughput breakdown;
# 4. memcheck forward_parity on T2; backward hashes by rule T2 vs B (gdn_bwd.cubin is
#    byte-identical: insurance only).
# Every step after the first is skipped past its time mark (the call stays under ~200 s).
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests;
# tar czf /work/main/.xfer-prep23/device.tgz .device/device-env.sh .device/lib .device/tests/gpu_gdn-*
# .device/tests/gpu_gdn_bench-* bench/device_lib.sh bench/gdn_device_prep23b.sh cubins.sha256
# base23/gpu_gdn_s23base base23/gpu_gdn_bench_s23base t1/gpu_gdn_bench_t1.
# run tool: carry [".xfer-prep23"], command
# `cd .xfer-prep23 && tar xzf device.tgz && bash bench/gdn_device_prep23b.sh`.
set -uo pipefail
out=${OUT:-/tmp/prep23}; mkdir -p "$out"
export DEV_TMP=/tmp/prep23d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$out/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=base23/gpu_gdn_s23base; bb=base23/gpu_gdn_bench_s23base; t1b=t1/gpu_gdn_bench_t1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "T2 $t $tb; B $b $bb; T1 $t1b"
export DEV_CAP_S=40
hash_case() {
  local tag=$1; shift
  dev_fwd_case "T2_$tag" "$t" "$@"
  dev_fwd_case "B_$tag" "$b" "$@"
  dev_same $DEV_TMP/h_T2_$tag $DEV_TMP/h_B_$tag "forward $tag: T2 == B 4e5e9a6 ($(wc -l < $DEV_TMP/h_T2_$tag) hash lines)"
  echo "elapsed ${SECONDS}s"
}
hash_case rule
n=0
for who in B T2 T1 T2 B; do
  n=$((n + 1))
  [ $SECONDS -lt 110 ] || { echo "skipped (time): bench $who"; continue; }
  bin=$bb; [ $who = T2 ] && bin=$tb; [ $who = T1 ] && bin=$t1b
  echo "== bench $who"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: timeout 30 $bin gdn_benchmark_ours --test-threads=1 --nocapture \
    > $DEV_TMP/bench_${n}_${who}.log 2>&1
  grep -hE "BENCH ours fwd |panicked" $DEV_TMP/bench_${n}_${who}.log | sed -E 's/^test gdn_benchmark_ours \.\.\. //; s/ min-traffic [0-9]+ GB\/s//; s/ [0-9]+ GB\/s [0-9.]+ TFLOP\/s//g'
  echo "elapsed ${SECONDS}s"
done
[ $SECONDS -lt 125 ] && hash_case p7 DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_SCAN=w4
[ $SECONDS -lt 132 ] && hash_case ov1 DNNPLAN_GDN_FWD_OVERLAP=1
prof() {
  local tag=$1 bin=$2; shift 2
  DNNPLAN_GDN_FWD_OVERLAP=0 DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 30 ncu --clock-control none "$@" -k "regex:gdn_fwd_slimprep" --launch-skip 1 --launch-count 1 \
    "$bin" gdn_benchmark_ours --test-threads=1 > $DEV_TMP/ncu_$tag.log 2>&1
  echo "ncu $tag (rc $?): $(grep -E 'Duration|Executed Instructions  |Issue Slots Busy|Executed Ipc A|L1/TEX Cache Throughput|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Shared (Load|Store)  |Shared Memory  |Bank Conflicts|Stall (Long|Short|Barrier|MIO|LG|Wait|Math|Not Selected|Selected|Dispatch|Tex)|Warp Cycles Per Issued' $DEV_TMP/ncu_$tag.log | sed -E 's/ +/ /g' | tr '\n' ';')"
}
SECS="--section SpeedOfLight --section Occupancy --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats"
[ $SECONDS -lt 150 ] && prof T2 $tb $SECS
[ $SECONDS -lt 160 ] && prof B $bb $SECS
[ $SECONDS -lt 168 ] && prof T2l1 $tb --metrics breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_ldsm.sum
[ -f $DEV_TMP/ncu_T2l1.log ] && grep -E "l1tex__|smsp__inst" $DEV_TMP/ncu_T2l1.log | sed -E 's/ +/ /g' | sort -t' ' -k4 -g -r | head -14
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 178 ] && DEV_CAP_S=40 dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 185 ]; then
  DEV_CAP_S=25 dev_hashes bwd $t > $DEV_TMP/hb_T2; DEV_CAP_S=25 dev_hashes bwd $b > $DEV_TMP/hb_B
  dev_same $DEV_TMP/hb_T2 $DEV_TMP/hb_B "backward rule: T2 == B 4e5e9a6, $(wc -l < $DEV_TMP/hb_T2) hash lines"
  echo "elapsed ${SECONDS}s"
fi
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
