cd .xfer-final && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 60 $t --test-threads=1 --nocapture > $OUT/parity.log 2>&1; echo "default: $(grep 'test result' $OUT/parity.log)"
DNNPLAN_GDN_BWD_PIECES=4 timeout 40 $t backward_parity --test-threads=1 --nocapture > $OUT/parity_p4.log 2>&1; echo "pieces=4: $(grep 'test result' $OUT/parity_p4.log)"
DNNPLAN_GDN_BWD_TOKENS=mma timeout 40 $t backward_parity --test-threads=1 --nocapture > $OUT/parity_mma.log 2>&1; echo "tokens=mma (fp32 dS' scan): $(grep 'test result' $OUT/parity_mma.log)"
grep -E "panicked|FAILED" $OUT/parity*.log | head -5
timeout 60 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc4 timeout 60 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $OUT/timing.log 2>&1
DNNPLAN_GDN_TIMING_PIECES=1 timeout 60 $t timing_backward_pieces --test-threads=1 --nocapture > $OUT/timing_pieces.log 2>&1
grep -iE "bwd|dscan|dsum|tokens" $OUT/timing.log | head -30; grep -vE "^running|^test |^$" $OUT/timing_pieces.log | head -30
