# Session 9 round 2 (helper rscan10): the overlapped reverse scan's R3 producer (gdn_bwd_dscan_ov3 /
# Not on main: the ov3 kernels this script runs are on branch rscan10 (58ae8f4); stage that build to rerun it.
# dscanp_ov3, DNNPLAN_GDN_BWD_DSCAN=ov3; bitwise ov2 by construction) against the default ov2 on
# the H200 in one call (<= 150 s). Stage: /work/wt/device-pack.sh --features gpu-tests (after
# build-cubins), tar .device (gpu_gdn only) + kernels/sm_90a + bench/gdn_hashes_session9.txt + this
# script into .xfer-rscan10/device.tgz; run: carry [".xfer-rscan10"]; command: `cd .xfer-rscan10 &&
# tar xzf device.tgz && bash bench/gdn_device_rscan10.sh`. Logs into $OUT.
start=$(date +%s); LIMIT=${LIMIT:-140}
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
W=/tmp/rscan10; mkdir -p $W; S=$OUT/summary.log
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
# 1. backward matrix with gradient hashes (each case twice + CUDA-graph replay, bitwise).
par ov3 DNNPLAN_GDN_BWD_DSCAN=ov3
par ov2 DNNPLAN_GDN_BWD_DSCAN=ov2
par ov3_p4 DNNPLAN_GDN_BWD_DSCAN=ov3 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
par ov2_p4 DNNPLAN_GDN_BWD_DSCAN=ov2 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
grep '^bwd' bench/gdn_hashes_session9.txt | grep -oE "$H" > $W/hs9; grep -ohE "$H" $W/h_ov3 > $W/hx_ov3
for pr in "ov3 ov2" "ov3_p4 ov2_p4"; do set -- $pr
  cmp -s $W/h_$1 $W/h_$2 && [ -s $W/h_$1 ] && echo "BITWISE ($1 == $2, $(wc -l < $W/h_$1) hash lines)" | tee -a $S || echo "HASHES DIFFER ($1 vs $2)" | tee -a $S
done
cmp -s $W/hx_ov3 $W/hs9 && [ -s $W/hs9 ] && echo "BITWISE (ov3 == bench/gdn_hashes_session9.txt bwd lines, $(wc -l < $W/hs9) hashes)" | tee -a $S || echo "HASHES DIFFER (ov3 vs session9 file)" | tee -a $S
grep -hE "panicked|FAILED" $W/*.log | head -5 | tee -a $S
# 2. timing, ov2 then ov3, (memcheck between), ov3 then ov2.
tim() {  # variants, tag
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=$1 timeout 40 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $W/timing_$2.log 2>&1
  echo "== variants $1 ($2)" | tee -a $S; grep -E "bwd stages|gdn_sm90 timing" $W/timing_$2.log | sed 's/.*gdn_sm90/gdn_sm90/' | tee -a $S
}
tim tc11/ov2,tc11/ov3 a
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
# 3. memcheck over the backward matrix with ov3.
DNNPLAN_GDN_BWD_DSCAN=ov3 timeout 35 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc.log 2>&1
echo "memcheck ov3 by rule: $(grep -E 'ERROR SUMMARY' $W/mc.log) $(grep 'test result' $W/mc.log)" | tee -a $S
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
[ "$(left)" -gt 30 ] && tim tc11/ov3,tc11/ov2 b
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
# 4. the whole suite with ov3 (forward + backward parity), if time is left.
if [ "$(left)" -gt 15 ]; then
  DNNPLAN_GDN_BWD_DSCAN=ov3 timeout $(( $(left) - 3 )) $t --test-threads=1 --nocapture > $W/suite_ov3.log 2>&1; echo "suite DSCAN=ov3: $(grep 'test result' $W/suite_ov3.log)" | tee -a $S
fi
if [ "$(left)" -gt 40 ]; then
  DNNPLAN_GDN_BWD_DSCAN=ov3 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 timeout 35 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc4.log 2>&1
  echo "memcheck ov3 pieces 4: $(grep -E 'ERROR SUMMARY' $W/mc4.log) $(grep 'test result' $W/mc4.log)" | tee -a $S
fi
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
(cd $W && tar czf $OUT/logs.tgz *.log h_* hs9 hx_ov3)
