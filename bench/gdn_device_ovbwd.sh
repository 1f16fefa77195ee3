# Session 7 (helper ovbwd): the backward's reverse scan and token stage overlapped (PDL + per-unit
# flags, kernels/include/gdn_bwd_overlap.cuh). One call: parity with the overlap by the rule
# (default), forced off and on, forced on with 4 pieces; gradient hashes across them (bitwise);
# memcheck (serialises kernels: checks memory, not the overlap); stage / whole times at the four
# benchmark shapes with DNNPLAN_GDN_BWD_OVERLAP=0 / 1 / rule / 0 again.
W=/tmp/ovw; mkdir -p $W
cd .xfer-ovbwd && tar xzf device.tgz && source .device/device-env.sh > $W/env.log 2>&1
cat $W/env.log; sha256sum kernels/sm_90a/*.cubin
t=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 60 $t --test-threads=1 --nocapture > $W/parity.log 2>&1; echo "default (rule): $(grep 'test result' $W/parity.log)"
for v in "DNNPLAN_GDN_BWD_OVERLAP=0" "DNNPLAN_GDN_BWD_OVERLAP=1" "DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4"; do
  env $v timeout 40 $t backward_parity --test-threads=1 > $W/p.log 2>&1; echo "$v: $(grep 'test result' $W/p.log)"
done
H="#[0-9a-f]{16}"
hashes() { env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 40 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "$H"; }
hashes DNNPLAN_GDN_BWD_OVERLAP=0 > $W/h_off; hashes DNNPLAN_GDN_BWD_OVERLAP=1 > $W/h_on; hashes X=1 > $W/h_rule
hashes DNNPLAN_GDN_BWD_OVERLAP=0 DNNPLAN_GDN_BWD_PIECES=4 > $W/h_p4off; hashes DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 > $W/h_p4on
echo "hash lines: $(wc -l < $W/h_off) $(wc -l < $W/h_on) $(wc -l < $W/h_rule) $(wc -l < $W/h_p4off) $(wc -l < $W/h_p4on)"
for x in on rule; do [ -s $W/h_off ] && cmp -s $W/h_$x $W/h_off && echo "BITWISE ($x == off)" || echo "HASHES DIFFER ($x)"; done
[ -s $W/h_p4off ] && cmp -s $W/h_p4on $W/h_p4off && echo "BITWISE (pieces 4: on == off)" || echo "HASHES DIFFER (pieces 4)"
head -3 $W/h_on
tim() {
  env DNNPLAN_GDN_BWD_OVERLAP=$1 DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc5 timeout 45 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $W/timing_$2.log 2>&1
  echo "== OVERLAP=$1 ($2)"; grep -E "bwd stages|gdn_sm90 timing" $W/timing_$2.log
}
tim 0 a; tim 1 b
DNNPLAN_GDN_BWD_OVERLAP=1 timeout 50 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 timeout 50 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
tim 0 c; tim rule d
cp $W/parity.log $OUT/; for f in $W/timing_*.log; do echo "== $f"; cat $f; done > $OUT/timing.log
for f in $W/h_*; do echo "== $f"; cat $f; done > $OUT/hashes.log
