# Session 8, helper tok8, second call: the default plan with tc10 by rule (BWD_TOKENS_DEFAULT), and tc11
# (tc10 with phase A's G tile in rows of CHUNK + 8; bitwise tc5) against tc10. The gradient hashes are
# compared with the first call's tc5 hashes (bench/gdn_device_tok8_hashes.log) on the CPU machine.
# Run on the device from the lead's checkout: cd .xfer-tok8 && tar xzf device.tgz && bash bench/gdn_device_tok8_run2.sh
W=/tmp/tok8w2; mkdir -p $W; S=$OUT/summary2.log
source .device/device-env.sh > $W/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
sha256sum kernels/sm_90a/gdn_bwd.cubin kernels/sm_90a/gdn_fwd.cubin | tee $S
timeout 40 $t --test-threads=1 > $W/default.log 2>&1; echo "default (tc10 by rule): $(grep 'test result' $W/default.log)" | tee -a $S
H="#[0-9a-f]{16}"
par() {  # name, env...
  local n=$1; shift
  env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 25 $t backward_parity --test-threads=1 --nocapture > $W/p_$n.log 2>&1
  grep -E "$H" $W/p_$n.log | grep -o 'bwd .*' > $W/h_$n
  echo "$n ($*): $(grep 'test result' $W/p_$n.log) [$(wc -l < $W/h_$n) hash lines]" | tee -a $S
}
par default_rule X=1
par tc11_rule DNNPLAN_GDN_BWD_TOKENS=tc11
par tc11_off DNNPLAN_GDN_BWD_TOKENS=tc11 DNNPLAN_GDN_BWD_OVERLAP=0
grep -hE "panicked|FAILED" $W/p_*.log | head -5 | tee -a $S
env DNNPLAN_GDN_BWD_TOKENS=tc11 timeout 30 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc.log 2>&1
echo "memcheck tc11 by rule: $(grep -E 'ERROR SUMMARY' $W/mc.log) $(grep 'test result' $W/mc.log)" | tee -a $S
tim() {  # overlap, variants, tag
  env DNNPLAN_GDN_BWD_OVERLAP=$1 DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=$2 timeout 30 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $W/timing_$3.log 2>&1
  echo "== OVERLAP=$1 variants $2 ($3)" | tee -a $S; grep -E "bwd stages|gdn_sm90 timing" $W/timing_$3.log | sed 's/.*gdn_sm90/gdn_sm90/' | tee -a $S
}
tim rule tc10,tc11 e
tim rule tc11,tc10 f
cp $W/h_* $OUT/ 2>/dev/null; (cd $W && tar czf $OUT/logs2.tgz *.log h_*)
