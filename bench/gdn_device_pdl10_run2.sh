# Session 10 (helper pdl10), call 2: the renamed default (DNNPLAN_GDN_PDL unset = 1 = programmatic
# launches, implicit trigger at exit) checked again (gpu_gdn suite + hashes vs session 9), then
# whole-execute and per-stage times of the session-9 build (gpu_gdn_s9 = main 05160e4's kernels,
# /work/main/.xfer-base) against this build, alternating s9 / new / s9 / new 
# timing_at_benchmark_shapes with the default token stage only (<= 34 s: what is left of the helper's 4 device-minutes). Stage as
# gdn_device_pdl10.sh plus gpu_gdn_s9 in .xfer-pdl10/; command:
# `cd .xfer-pdl10 && tar xzf device.tgz && bash bench/gdn_device_pdl10_run2.sh`. Logs into $OUT.
start=$(date +%s); LIMIT=${LIMIT:-34}
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
W=/tmp/pdl10; mkdir -p $W; S=$OUT/summary.log
source .device/device-env.sh > $W/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); s9=./gpu_gdn_s9
sha256sum kernels/sm_90a/gdn_fwd.cubin kernels/sm_90a/gdn_bwd.cubin $t $s9 | tee $S
H="#[0-9a-f]{16}"
grep -oE "$H" bench/gdn_hashes_session9.txt > $W/hh_s9
DNNPLAN_GDN_TEST_HASHES=1 timeout 12 $t --test-threads=1 --nocapture > $W/suite_default.log 2>&1
grep -oE "$H" $W/suite_default.log > $W/hh_default; miss=$(grep -vxFf $W/hh_default $W/hh_s9 | wc -l)
echo "default (PDL unset) gpu_gdn: $(grep 'test result' $W/suite_default.log)" | tee -a $S
[ -s $W/hh_s9 ] && [ "$miss" = 0 ] && echo "BITWISE default == bench/gdn_hashes_session9.txt (all $(wc -l < $W/hh_s9) hashes found)" | tee -a $S || echo "DIFFER default vs session9: $miss missing" | tee -a $S
grep -E "host time per execute" $W/suite_default.log | sed "s/^/default /" | tee -a $S
tim() {  # tag binary env...
  local tag=$1 bin=$2; shift 2
  [ "$(left)" -gt 4 ] || return 0
  env DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc11 "$@" timeout $(left) $bin timing_at_benchmark_shapes --test-threads=1 --nocapture > $W/timing_$tag.log 2>&1
  grep -E "bwd stages|gdn_sm90 timing" $W/timing_$tag.log | sed "s/.*gdn_sm90/gdn_sm90/; s/^/$tag: /" | tee -a $S
  echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
}
tim s9_a $s9
tim new_a $t
tim s9_b $s9
tim new_b $t
(cd $W && tar czf $OUT/logs2.tgz *.log hh_*)
