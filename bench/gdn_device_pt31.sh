# Session 31 (helper pt31), call 1: the backward's overlapped pair (reverse scan ∥ token stage) as
# a timeline. T = this branch's timing-only build (bench/gdn_pt31_timeline.patch: %globaltimer /
# %smid records per CTA of dscan_ov2gxsc / dscan_ov2gxsh and tokens_tw1, the flag wait of each
# token CTA, each unit's publish time; read back by gpu_gdn_bench's gdn_timeline).
#   1. gdn_timeline at (4,8192,16), (16,2048,32), ragged: per shape the default pair, the plan
#      cut after the scan (scan alone), the consumer launched in stream order (tokens alone),
#      each whole-timed (median of 10) and one execute recorded; 2 reps; CSVs to $OUT.
#   2. if time is left: base (main 5f14dfe) vs T whole backward at (4,8192,16) (instrumentation cost).
# Run 0 (bench/gdn_device_pt31_run0.log) stopped in step 1 at an index bug of the read-back (fixed
# in the patch) and ran step 2; run 1 (bench/gdn_device_pt31_run1_timeline.log, CSVs in
# bench/gdn_device_pt31_run1_tl/) ran step 1 with step 2 switched off (gate `-lt 0`).
# Command: `cd .xfer-pt31 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_pt31.sh`.
source bench/device_lib.sh
dev_begin pt31
tb=$(dev_bin gpu_gdn_bench)
echo "bench binary: $tb"
mkdir -p $OUT/tl
DNNPLAN_GDN_TIMELINE=1 DNNPLAN_GDN_BENCH_SHAPES="0 2 3" DNNPLAN_GDN_TL_DUMP=$OUT/tl DNNPLAN_GDN_TL_REPS=2 \
  timeout 90 $tb gdn_timeline --test-threads=1 --nocapture > $OUT/timeline.log 2>&1
echo "timeline rc=$?"
grep -E "^TL|test result|panicked" $OUT/timeline.log
echo "elapsed ${SECONDS}s"
xz -T2 -6 $OUT/tl/*.csv 2>/dev/null
if [ $SECONDS -lt 50 ] && [ -x base/gpu_gdn_bench ]; then
  for b in base/gpu_gdn_bench $tb; do
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
      timeout 20 $b gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours bwd" | sed "s|^|$b: |"
  done
fi
echo "done ${SECONDS}s"
