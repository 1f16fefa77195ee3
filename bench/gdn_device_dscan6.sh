# Session 6 (helper dscan6): the 8-warp reverse scan (default) against v1 (DNNPLAN_GDN_BWD_DSCAN=v1)
# on the H200. Run from the lead's checkout root with .xfer-dscan6 carried (device.tgz = .device).
cd .xfer-dscan6 && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 30 $t --test-threads=1 --nocapture > $OUT/parity.log 2>&1; echo "default (w8): $(grep 'test result' $OUT/parity.log)"
DNNPLAN_GDN_BWD_DSCAN=v1 timeout 20 $t backward_parity --test-threads=1 --nocapture > $OUT/parity_v1.log 2>&1; echo "dscan=v1: $(grep 'test result' $OUT/parity_v1.log)"
DNNPLAN_GDN_BWD_PIECES=4 timeout 20 $t backward_parity --test-threads=1 --nocapture > $OUT/parity_p4.log 2>&1; echo "pieces=4 (w8): $(grep 'test result' $OUT/parity_p4.log)"
DNNPLAN_GDN_BWD_PIECES=4 DNNPLAN_GDN_BWD_DSCAN=v1 timeout 20 $t backward_parity --test-threads=1 --nocapture > $OUT/parity_p4_v1.log 2>&1; echo "pieces=4 v1: $(grep 'test result' $OUT/parity_p4_v1.log)"
grep -E "panicked|FAILED" $OUT/parity*.log | head -5
f() { grep -oE "bwd (bf16|fp16) .*" "$1"; }
cmp <(f $OUT/parity.log) <(f $OUT/parity_v1.log) && echo "backward rms lines: default == v1 ($(f $OUT/parity.log | wc -l) cases)" || echo "backward rms lines differ (default vs v1)"
cmp <(f $OUT/parity_p4.log) <(f $OUT/parity_p4_v1.log) && echo "backward rms lines P=4: w8 == v1" || echo "backward rms lines P=4 differ"
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc4/v1,tc4 timeout 50 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -E "bwd stages|timing \(" $OUT/timing.log
timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $OUT/memcheck.log 2>&1; grep -E "ERROR SUMMARY|test result" $OUT/memcheck.log
DNNPLAN_GDN_TIMING_PIECES=1 timeout 30 $t timing_backward_pieces --test-threads=1 --nocapture > $OUT/timing_pieces.log 2>&1
DNNPLAN_GDN_BWD_DSCAN=v1 DNNPLAN_GDN_TIMING_PIECES=1 timeout 30 $t timing_backward_pieces --test-threads=1 --nocapture > $OUT/timing_pieces_v1.log 2>&1
echo "-- pieces w8"; grep "bwd pieces" $OUT/timing_pieces.log; echo "-- pieces v1"; grep "bwd pieces" $OUT/timing_pieces_v1.log
