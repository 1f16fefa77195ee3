# Session 10 (helper pdl10): the GDN launch chain (programmatic dependent launch on every kernel
# boundary inside one execute, DNNPLAN_GDN_PDL=0|1|early, src/engines/gdn/pdl.rs) and the
# warp-shuffle chunk table, on the H200 in one call (<= 150 s). Stage: kernels/build-cubins.sh,
# /work/wt/device-pack.sh --features gpu-tests --test gpu_gdn --test gpu_gdn_pdl,
# tar .device (device-env.sh, lib, those test binaries) + kernels/sm_90a + bench/gdn_hashes_session9.txt
# + this script into .xfer-pdl10/device.tgz; run tool: carry [".xfer-pdl10"]; command:
# `cd .xfer-pdl10 && tar xzf device.tgz && bash bench/gdn_device_pdl10.sh`. Logs into $OUT.
start=$(date +%s); LIMIT=${LIMIT:-140}
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
W=/tmp/pdl10; mkdir -p $W; S=$OUT/summary.log
source .device/device-env.sh > $W/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); tp=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $S
sha256sum kernels/sm_90a/gdn_fwd.cubin kernels/sm_90a/gdn_bwd.cubin | tee -a $S
H="#[0-9a-f]{16}"
grep -oE "$H" bench/gdn_hashes_session9.txt > $W/hh_s9
# 1. the whole gpu_gdn suite (fp64 parity, repeated runs bitwise, CUDA-graph replays bitwise, host
#    overhead lines) with hashes, per mode; every session-9 hash must appear in each mode's run.
suite() {
  local m=$1
  DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_PDL=$m timeout 30 $t --test-threads=1 --nocapture > $W/suite_$m.log 2>&1
  grep -E "$H" $W/suite_$m.log | sed -E 's/ in [0-9.]+ ?m?s//' > $W/h_$m; grep -oE "$H" $W/h_$m > $W/hh_$m
  miss=$(grep -vxFf $W/hh_$m $W/hh_s9 | wc -l)
  echo "PDL=$m gpu_gdn: $(grep 'test result' $W/suite_$m.log)" | tee -a $S
  if [ -s $W/hh_s9 ] && [ "$miss" = 0 ]; then echo "BITWISE PDL=$m == bench/gdn_hashes_session9.txt (all $(wc -l < $W/hh_s9) hashes found among $(wc -l < $W/hh_$m))" | tee -a $S; else echo "DIFFER PDL=$m vs session9 hashes: $miss of $(wc -l < $W/hh_s9) missing" | tee -a $S; fi
  grep -E "host time per execute|captured into a CUDA graph" $W/suite_$m.log | sed "s/^/PDL=$m /" | tee -a $S
  grep -hE "panicked|FAILED" $W/suite_$m.log | head -5 | tee -a $S
}
suite 1
suite 0
cmp -s $W/h_1 $W/h_0 && [ -s $W/h_1 ] && echo "BITWISE PDL=1 == PDL=0 ($(wc -l < $W/h_1) hash lines)" | tee -a $S || echo "HASHES DIFFER PDL=1 vs PDL=0" | tee -a $S
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
# 2. timing, every mode alternating at the four shapes (+ outputs bitwise across modes), round a.
tim() {
  DNNPLAN_GDN_TIMING_PDL=1 DNNPLAN_GDN_TIMING_PDL_MODES=$1 timeout 40 $tp --test-threads=1 --nocapture > $W/timing_$2.log 2>&1
  echo "== timing modes $1 (round $2)" | tee -a $S; grep -E "gdn_sm90 pdl|test result|panicked" $W/timing_$2.log | tee -a $S
}
tim 0,1,early a
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
# 3. memcheck with the launch chain on, backward then forward matrix.
for m in backward_parity forward_parity; do
  [ "$(left)" -gt 30 ] || break
  DNNPLAN_GDN_PDL=1 timeout 28 compute-sanitizer --tool memcheck --print-limit 5 $t $m --test-threads=1 > $W/mc_$m.log 2>&1
  echo "memcheck PDL=1 $m: $(grep -E 'ERROR SUMMARY' $W/mc_$m.log) $(grep 'test result' $W/mc_$m.log)" | tee -a $S
done
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
# 4. round b, the modes in the other order; then the suite under PDL=exit if time is left.
[ "$(left)" -gt 35 ] && tim early,1,0 b
[ "$(left)" -gt 15 ] && suite early
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
(cd $W && tar czf $OUT/logs.tgz *.log h_* hh_*)
