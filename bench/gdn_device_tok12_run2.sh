# Session 10 (helper tok12), call 2: the final build with tc12 as the default token stage (no
# switch set): backward hashes vs bench/gdn_hashes_session9.txt (by rule and with 4 pieces vs
# tc11), the whole GDN suite and memcheck of the default backward (<= 50 s).
# Stage as bench/gdn_device_tok12.sh (.xfer-tok12); command: `cd .xfer-tok12 && tar xzf device.tgz
# && bash bench/gdn_device_tok12_run2.sh`. Logs into $OUT.
start=$(date +%s)
W=/tmp/tok12; mkdir -p $W; S=$OUT/summary2.log
source .device/device-env.sh > $W/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $S
sha256sum kernels/sm_90a/gdn_bwd.cubin kernels/sm_90a/gdn_fwd.cubin | tee -a $S
H="#[0-9a-f]{16}"
par() {  # name, env...
  local n=$1; shift
  env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 25 $t backward_parity --test-threads=1 --nocapture > $W/p_$n.log 2>&1
  grep -E "$H" $W/p_$n.log | grep -o 'bwd .*' > $W/h_$n
  echo "$n ($*): $(grep 'test result' $W/p_$n.log) [$(wc -l < $W/h_$n) hash lines]" | tee -a $S
}
par default
par default_p4 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
par tc11_p4 DNNPLAN_GDN_BWD_TOKENS=tc11 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
grep '^bwd' bench/gdn_hashes_session9.txt | grep -oE "$H" > $W/hs9; grep -ohE "$H" $W/h_default > $W/hx_default
cmp -s $W/hx_default $W/hs9 && [ -s $W/hs9 ] && echo "BITWISE (default == bench/gdn_hashes_session9.txt bwd lines, $(wc -l < $W/hs9) hashes)" | tee -a $S || echo "HASHES DIFFER (default vs session9 file)" | tee -a $S
cmp -s $W/h_default_p4 $W/h_tc11_p4 && [ -s $W/h_tc11_p4 ] && echo "BITWISE (default_p4 == tc11_p4, $(wc -l < $W/h_tc11_p4) hash lines)" | tee -a $S || echo "HASHES DIFFER (default_p4 vs tc11_p4)" | tee -a $S
timeout 20 $t --test-threads=1 --nocapture > $W/suite.log 2>&1; echo "suite default: $(grep 'test result' $W/suite.log)" | tee -a $S
timeout 25 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc.log 2>&1
echo "memcheck default: $(grep -E 'ERROR SUMMARY' $W/mc.log) $(grep 'test result' $W/mc.log)" | tee -a $S
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
(cd $W && tar czf $OUT/logs2.tgz *.log h_* hs9 hx_*)
