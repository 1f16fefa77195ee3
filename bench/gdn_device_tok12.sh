# Session 10 (helper tok12): the token stage tc12 (gdn_bwd_tokens_tc12 / _tc12_ov,
# DNNPLAN_GDN_BWD_TOKENS=tc12; bitwise tc11 by construction) against the default tc11 on the H200
# in one call (<= 130 s). Stage: /work/wt/device-pack.sh --features gpu-tests (after build-cubins),
# tar .device (gpu_gdn only) + kernels/sm_90a + bench/gdn_hashes_session9.txt + this script into
# .xfer-tok12/device.tgz; run: carry [".xfer-tok12"]; command: `cd .xfer-tok12 && tar xzf
# device.tgz && bash bench/gdn_device_tok12.sh`. Logs into $OUT.
start=$(date +%s); LIMIT=${LIMIT:-120}
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
W=/tmp/tok12; mkdir -p $W; S=$OUT/summary.log
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
par tc12 DNNPLAN_GDN_BWD_TOKENS=tc12
par tc11 DNNPLAN_GDN_BWD_TOKENS=tc11
par tc12_off DNNPLAN_GDN_BWD_TOKENS=tc12 DNNPLAN_GDN_BWD_OVERLAP=0
par tc12_p4 DNNPLAN_GDN_BWD_TOKENS=tc12 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
par tc11_p4 DNNPLAN_GDN_BWD_TOKENS=tc11 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
grep '^bwd' bench/gdn_hashes_session9.txt | grep -oE "$H" > $W/hs9
for n in tc12 tc12_off; do grep -ohE "$H" $W/h_$n > $W/hx_$n
  cmp -s $W/hx_$n $W/hs9 && [ -s $W/hs9 ] && echo "BITWISE ($n == bench/gdn_hashes_session9.txt bwd lines, $(wc -l < $W/hs9) hashes)" | tee -a $S || echo "HASHES DIFFER ($n vs session9 file)" | tee -a $S
done
for pr in "tc12 tc11" "tc12_p4 tc11_p4" "tc12_off tc11"; do set -- $pr
  cmp -s $W/h_$1 $W/h_$2 && [ -s $W/h_$1 ] && echo "BITWISE ($1 == $2, $(wc -l < $W/h_$1) hash lines)" | tee -a $S || echo "HASHES DIFFER ($1 vs $2)" | tee -a $S
done
grep -hE "panicked|FAILED" $W/*.log | head -5 | tee -a $S
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
# 2. timing, ABBA (a: tc11 tc12 tc12 tc11), memcheck between, BAAB (b), per shape.
tim() {  # variants, tag
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=$1 timeout 45 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $W/timing_$2.log 2>&1
  echo "== variants $1 ($2)" | tee -a $S; grep -E "bwd stages|gdn_sm90 timing" $W/timing_$2.log | sed 's/.*gdn_sm90/gdn_sm90/' | tee -a $S
}
tim tc11/ov2,tc12/ov2,tc12/ov2,tc11/ov2 a
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
# 3. memcheck over the backward matrix with tc12 (the overlapped consumer by rule, and sequential).
DNNPLAN_GDN_BWD_TOKENS=tc12 timeout 35 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc.log 2>&1
echo "memcheck tc12 by rule: $(grep -E 'ERROR SUMMARY' $W/mc.log) $(grep 'test result' $W/mc.log)" | tee -a $S
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
[ "$(left)" -gt 30 ] && tim tc12/ov2,tc11/ov2,tc11/ov2,tc12/ov2 b
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
if [ "$(left)" -gt 35 ]; then
  DNNPLAN_GDN_BWD_TOKENS=tc12 DNNPLAN_GDN_BWD_OVERLAP=0 timeout 30 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc0.log 2>&1
  echo "memcheck tc12 overlap off: $(grep -E 'ERROR SUMMARY' $W/mc0.log) $(grep 'test result' $W/mc0.log)" | tee -a $S
fi
# 4. the whole suite with tc12 (forward + backward parity), if time is left.
if [ "$(left)" -gt 12 ]; then
  DNNPLAN_GDN_BWD_TOKENS=tc12 timeout $(( $(left) - 3 )) $t --test-threads=1 --nocapture > $W/suite_tc12.log 2>&1; echo "suite TOKENS=tc12: $(grep 'test result' $W/suite_tc12.log)" | tee -a $S
fi
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
(cd $W && tar czf $OUT/logs.tgz *.log h_* hs9 hx_*)
