# Session 8, helper tok8: the token stage tc9 (tc5 with the fp32 dR tile by cp.async, consumed after
# U) and tc10 (tc9 with conflict-free fp32 result staging), both bitwise tc5, against tc5. One call:
# parity of the whole gpu_gdn suite (default), the backward matrix per token kernel with the overlap
# by rule / off / on with 4 pieces and the gradient hashes of each against tc5's, memcheck of tc10
# (overlapped consumer and sequential kernel), stage / whole times at the four benchmark shapes
# with the overlap off and by rule, the variants in both orders.
# Run on the device from the lead's checkout: cd .xfer-tok8 && tar xzf device.tgz && bash bench/gdn_device_tok8.sh
W=/tmp/tok8w; mkdir -p $W; S=$OUT/summary.log
source .device/device-env.sh > $W/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
sha256sum kernels/sm_90a/gdn_bwd.cubin kernels/sm_90a/gdn_fwd.cubin | tee $S
timeout 40 $t --test-threads=1 > $W/default.log 2>&1; echo "default: $(grep 'test result' $W/default.log)" | tee -a $S
H="#[0-9a-f]{16}"
par() {  # name, env...
  local n=$1; shift
  env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 25 $t backward_parity --test-threads=1 --nocapture > $W/p_$n.log 2>&1
  grep -E "$H" $W/p_$n.log | grep -o 'bwd .*' > $W/h_$n
  echo "$n ($*): $(grep 'test result' $W/p_$n.log) [$(wc -l < $W/h_$n) hash lines]" | tee -a $S
}
par tc5_rule DNNPLAN_GDN_BWD_TOKENS=tc5
par tc5_off DNNPLAN_GDN_BWD_TOKENS=tc5 DNNPLAN_GDN_BWD_OVERLAP=0
par tc5_p4 DNNPLAN_GDN_BWD_TOKENS=tc5 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
for v in tc9 tc10; do
  par ${v}_rule DNNPLAN_GDN_BWD_TOKENS=$v
  par ${v}_off DNNPLAN_GDN_BWD_TOKENS=$v DNNPLAN_GDN_BWD_OVERLAP=0
  par ${v}_p4 DNNPLAN_GDN_BWD_TOKENS=$v DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
done
for v in tc9 tc10; do for m in rule off p4; do
  [ -s $W/h_tc5_$m ] && cmp -s $W/h_${v}_$m $W/h_tc5_$m && echo "BITWISE ($v $m == tc5 $m)" || echo "HASHES DIFFER ($v $m)"
done; done | tee -a $S
cmp -s $W/h_tc5_rule $W/h_tc5_off && echo "BITWISE (tc5 rule == tc5 off)" | tee -a $S
grep -hE "panicked|FAILED" $W/p_*.log | head -5 | tee -a $S
mc() {
  env "$@" timeout 45 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc.log 2>&1
  echo "memcheck ($*): $(grep -E 'ERROR SUMMARY' $W/mc.log) $(grep 'test result' $W/mc.log)" | tee -a $S
}
mc DNNPLAN_GDN_BWD_TOKENS=tc10
mc DNNPLAN_GDN_BWD_TOKENS=tc10 DNNPLAN_GDN_BWD_OVERLAP=0
tim() {  # overlap, variants, tag
  env DNNPLAN_GDN_BWD_OVERLAP=$1 DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=$2 timeout 40 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $W/timing_$3.log 2>&1
  echo "== OVERLAP=$1 variants $2 ($3)" | tee -a $S; grep -E "bwd stages|gdn_sm90 timing" $W/timing_$3.log | sed 's/.*gdn_sm90/gdn_sm90/' | tee -a $S
}
tim 0 tc5,tc9,tc10 a
tim rule tc5,tc9,tc10 b
tim rule tc10,tc9,tc5 c
tim 0 tc10,tc9,tc5 d
(cd $W && tar czf $OUT/logs.tgz *.log h_*)
