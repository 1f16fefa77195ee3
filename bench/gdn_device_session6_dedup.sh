# Session 6, after the duplicates review: the reverse scan's stage loads (dscan_issue_chunk) and the
# piece passes' block-to-piece mapping (piece_of_block) are shared now. Same fp/memory PTX op
# sequence in every changed kernel; this call checks the cubins on the H200: parity (default and
# forced variants), bitwise gradient hashes against the session-5 kernels, memcheck, stage times.
cd .xfer-final && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 60 $t --test-threads=1 --nocapture > $OUT/parity.log 2>&1; echo "default: $(grep 'test result' $OUT/parity.log)"
for v in "DNNPLAN_GDN_BWD_DSCAN=w8" "DNNPLAN_GDN_BWD_PIECES=4" "DNNPLAN_GDN_BWD_DSCAN=w8 DNNPLAN_GDN_BWD_PIECES=4" "DNNPLAN_GDN_FWD_PIECES=4"; do
  env $v timeout 40 $t parity --test-threads=1 > $OUT/p.log 2>&1; echo "$v: $(grep 'test result' $OUT/p.log)"
done
H="#[0-9a-f]{16}"
DNNPLAN_GDN_TEST_HASHES=1 timeout 40 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "$H" > $OUT/h_new
DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_BWD_DSCAN=w8 timeout 40 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "$H" > $OUT/h_w8
DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_BWD_PIECES=4 DNNPLAN_GDN_BWD_DSCAN=w8 timeout 40 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "$H" > $OUT/h_p4w8
DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_BWD_PIECES=4 DNNPLAN_GDN_BWD_DSCAN=v1 DNNPLAN_GDN_FWD_PREP=v3 DNNPLAN_GDN_BWD_FSCAN=v1 DNNPLAN_GDN_BWD_TOKENS=tc4 timeout 40 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "$H" > $OUT/h_p4old
DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_FWD_PREP=v3 DNNPLAN_GDN_BWD_FSCAN=v1 DNNPLAN_GDN_BWD_DSCAN=v1 DNNPLAN_GDN_BWD_TOKENS=tc4 timeout 40 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "$H" > $OUT/h_old
echo "hash lines: $(wc -l < $OUT/h_new) $(wc -l < $OUT/h_w8) $(wc -l < $OUT/h_old) $(wc -l < $OUT/h_p4w8) $(wc -l < $OUT/h_p4old)"
for x in new w8; do [ -s $OUT/h_old ] && diff -q $OUT/h_$x $OUT/h_old > /dev/null && echo "BITWISE ($x == session-5 kernels)" || echo "HASHES DIFFER ($x)"; done
[ -s $OUT/h_p4old ] && diff -q $OUT/h_p4w8 $OUT/h_p4old > /dev/null && echo "BITWISE (pieces 4: w8 == session-5 kernels)" || echo "HASHES DIFFER (pieces 4)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
DNNPLAN_GDN_BWD_DSCAN=w8 DNNPLAN_GDN_BWD_PIECES=4 timeout 60 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
DNNPLAN_GDN_FWD_PIECES=4 timeout 60 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc5 timeout 60 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -iE "bwd|dscan|tokens|prep|fwd" $OUT/timing.log | head -24
