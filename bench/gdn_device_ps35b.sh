# Session 35 (helper ps35), staged (not run): ncu counts of the slim prep wgc against its lean form
# wgn at (16,2048,32) — instructions per warp, issue activity and the stall mix — to see where the
# ~8 % instruction cut went (bench/gdn_results.md, "Session 35 (helper ps35"). gpu_gdn_bench of
# branch ps35 (built at c6fcb99: the kernels and plan code of the head); ~40 s of command.
# Command: `cd .xfer-ps35 && tar xJf device_b.txz && OUT=$OUT timeout 60 bash bench/gdn_device_ps35b.sh`.
source bench/device_lib.sh
dev_begin ps35b
d=$DEV_TMP
chmod +x .device/tests/* 2>/dev/null
tb=$(dev_bin gpu_gdn_bench)
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__warps_launched.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
M=$M,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
for f in wgc wgn wgn wgc; do
  echo "== $f"
  DNNPLAN_GDN_FWD_SLIMPREP=$f DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default DNNPLAN_GDN_BENCH_SHAPES=2 \
    timeout 12 ncu --clock-control none --metrics $M -k "regex:^gdn_fwd_slimprep_bf16_k128_$f\$" \
      --launch-skip 1 --launch-count 1 "$tb" gdn_benchmark_ours --test-threads=1 > "$d/$f.$SECONDS.log" 2>&1
  grep -E "gpu__time|inst_executed|warps_launched|issue_active|stalled" "$d/$f.$SECONDS.log" | sed -E 's/ +/ /g'
  echo "elapsed ${SECONDS}s"
done
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
