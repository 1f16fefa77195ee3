# Session 6, helper tok6: the token stage tc5 (tc4 with its copies consumed in four groups) and tc6
# (tc5 as a persistent block prefetching each next tile's W, S, Ũᵀ, dO) vs tc4.
# Run on the device from the lead's checkout: cd .xfer-tok6 && tar xzf device.tgz && bash bench/gdn_device_tok6.sh
# Parity (default; tc4, tc5, tc6 with output hashes: equal hashes = bitwise-equal gradients; the piece
# chain), memcheck over the backward matrix (default and tc6), per-stage timings tc4 / tc5 / tc6 at
# the four benchmark shapes, twice in opposite orders.
source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 40 $t --test-threads=1 --nocapture > $OUT/parity.log 2>&1; echo "default: $(grep 'test result' $OUT/parity.log)"
for v in tc4 tc5 tc6; do
  DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_BWD_TOKENS=$v timeout 25 $t backward_parity --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1; echo "tokens=$v: $(grep 'test result' $OUT/parity_$v.log)"
done
for v in tc5 tc6; do
  if diff <(grep -o 'bwd .*' $OUT/parity_tc4.log) <(grep -o 'bwd .*' $OUT/parity_$v.log) > $OUT/hash_diff_$v.log; then echo "tc4 vs $v: $(grep -c 'bwd ' $OUT/parity_$v.log) cases, every gradient hash equal (bitwise)"; else echo "tc4 vs $v: HASHES DIFFER"; head -4 $OUT/hash_diff_$v.log; fi
done
DNNPLAN_GDN_BWD_PIECES=4 timeout 25 $t backward_parity --test-threads=1 --nocapture > $OUT/parity_p4.log 2>&1; echo "pieces=4: $(grep 'test result' $OUT/parity_p4.log)"
grep -E "panicked|FAILED" $OUT/parity*.log | head -5
for v in default tc6; do
  DNNPLAN_GDN_BWD_TOKENS=$([ $v = default ] || echo $v) timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $OUT/memcheck_$v.log 2>&1; echo "memcheck $v: $(grep -E 'ERROR SUMMARY' $OUT/memcheck_$v.log) $(grep 'test result' $OUT/memcheck_$v.log)"
done
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc4,tc5,tc6 timeout 45 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $OUT/timing.log 2>&1
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc6,tc5,tc4 timeout 45 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $OUT/timing2.log 2>&1
grep -hE "bwd stages|timing \(" $OUT/timing.log $OUT/timing2.log | sed 's/.*gdn_sm90/gdn_sm90/'
