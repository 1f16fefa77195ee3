# Session 7 (helper ovbwd): the backward's reverse scan and token stage overlapped (PDL + per-unit
# flags, kernels/include/gdn_bwd_overlap.cuh). One call: parity with the overlap by the rule
# (default), forced off and on, forced on with 4 pieces; gradient hashes across them (bitwise);
# memcheck (serialises kernels: checks memory, not the overlap); stage / whole times at the four
# benchmark shapes with DNNPLAN_GDN_BWD_OVERLAP=0 / 1 / rule / 0 again.
cd .xfer-ovbwd && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
cat $OUT/env.log; sha256sum kernels/sm_90a/*.cubin
t=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 60 $t --test-threads=1 --nocapture > $OUT/parity.log 2>&1; echo "default (rule): $(grep 'test result' $OUT/parity.log)"
for v in "DNNPLAN_GDN_BWD_OVERLAP=0" "DNNPLAN_GDN_BWD_OVERLAP=1" "DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4"; do
  env $v timeout 40 $t backward_parity --test-threads=1 > $OUT/p.log 2>&1; echo "$v: $(grep 'test result' $OUT/p.log)"
done
H="#[0-9a-f]{16}"
hashes() { env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 40 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "$H"; }
hashes DNNPLAN_GDN_BWD_OVERLAP=0 > $OUT/h_off; hashes DNNPLAN_GDN_BWD_OVERLAP=1 > $OUT/h_on; hashes X=1 > $OUT/h_rule
hashes DNNPLAN_GDN_BWD_OVERLAP=0 DNNPLAN_GDN_BWD_PIECES=4 > $OUT/h_p4off; hashes DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 > $OUT/h_p4on
echo "hash lines: $(wc -l < $OUT/h_off) $(wc -l < $OUT/h_on) $(wc -l < $OUT/h_rule) $(wc -l < $OUT/h_p4off) $(wc -l < $OUT/h_p4on)"
for x in on rule; do [ -s $OUT/h_off ] && cmp -s $OUT/h_$x $OUT/h_off && echo "BITWISE ($x == off)" || echo "HASHES DIFFER ($x)"; done
[ -s $OUT/h_p4off ] && cmp -s $OUT/h_p4on $OUT/h_p4off && echo "BITWISE (pieces 4: on == off)" || echo "HASHES DIFFER (pieces 4)"
head -3 $OUT/h_on
DNNPLAN_GDN_BWD_OVERLAP=1 timeout 50 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 timeout 50 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
for ov in 0 1 rule 0; do
  env DNNPLAN_GDN_BWD_OVERLAP=$ov DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc5 timeout 45 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $OUT/timing.log 2>&1
  echo "== OVERLAP=$ov"; grep -E "bwd stages|gdn_sm90 timing" $OUT/timing.log
done
