# Session 32 (helper tp32), call 1: the tw1 token tile by phase. T = the timing-only build of
# bench/gdn_tp32_phases.patch (per warp %clock64 marks at 31 points of bwd_tokens_tc_tile REV 30 /
# tw1_products; read back by gpu_gdn_bench's gdn_tile_phases; DNNPLAN_GDN_TL_NOPDL=1 runs the
# token stage alone after the scan).
#   1. gdn_tile_phases at (4,8192,16) and (16,2048,32): tokens alone and the pair; sampled CSVs.
#   2. ncu (base31's uninstrumented tw1, one launch at (4,8192,16)): WarpStateStats and
#      SourceCounters, the per-SASS stall samples as CSV (--page source), if time is left.
# Command: `cd .xfer-tp32 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_tp32a.sh`.
source bench/device_lib.sh
dev_begin tp32a
tb=$(dev_bin gpu_gdn_bench)
echo "bench binary: $tb"
mkdir -p $OUT/tp
DNNPLAN_GDN_PHASES=1 DNNPLAN_GDN_BENCH_SHAPES="0 2" DNNPLAN_GDN_TP_DUMP=$OUT/tp \
  timeout 60 $tb gdn_tile_phases --test-threads=1 --nocapture > $OUT/tp/phases.log 2>&1
echo "phases rc=$?"
grep -E "^TP|test result|panicked" $OUT/tp/phases.log
echo "elapsed ${SECONDS}s"
bb=$(ls base/gpu_gdn_bench-* 2>/dev/null | head -1)
if [ $SECONDS -lt 70 ] && [ -n "$bb" ]; then
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 40 ncu --clock-control none --kill yes --import-source no \
      --section WarpStateStats --section SourceCounters --section SpeedOfLight \
      -k "regex:^gdn_bwd_tokens_tw1_bf16_k128$" --launch-skip 1 --launch-count 1 -o $OUT/tp/ncu_tw1 \
      "$bb" gdn_benchmark_ours --test-threads=1 > $OUT/tp/ncu.log 2>&1
  echo "rc=$? ncu tw1 (base31)"
  if [ -f $OUT/tp/ncu_tw1.ncu-rep ]; then
    timeout 20 ncu --import $OUT/tp/ncu_tw1.ncu-rep --page details --print-details all > $OUT/tp/ncu_details.txt 2>&1
    grep -E "Duration|Warp Cycles Per Issued|Issue Slots|Stall|Branch|Uncoalesced|Shared" $OUT/tp/ncu_details.txt | head -40
    timeout 20 ncu --import $OUT/tp/ncu_tw1.ncu-rep --page source --csv --print-source sass > $OUT/tp/ncu_sass.csv 2>&1
    echo "sass csv lines: $(wc -l < $OUT/tp/ncu_sass.csv)"; head -c 600 $OUT/tp/ncu_sass.csv; echo
    rm -f $OUT/tp/ncu_tw1.ncu-rep
  else
    tail -5 $OUT/tp/ncu.log
  fi
fi
echo "elapsed ${SECONDS}s"
tar cJf $OUT/tp32a.txz -C $OUT tp && rm -rf $OUT/tp
echo "done ${SECONDS}s"
