# Session 11 (helper tok13): per-phase clock64 profile of the tc12 token tile on the H200 (test
# binary built against a gdn_bwd.cubin compiled with -DDNNP_TOK_PROFILE; the hooks are
# TOKPROF_* in kernels/include/gdn_bwd.cuh, no-ops in the bundled cubin). Per shape (bf16,
# K = V = 128): the timing test with tc12, overlap off and by rule; the last TOKPROF line of each
# process = cumulative clock64 cycles per phase over n tiles. Plus backward parity + hashes of the
# profile build (the hooks must not move a bit). Stage: .xfer-tok13/{device.tgz}; command:
# `cd .xfer-tok13 && tar xzf device.tgz && bash bench/gdn_device_tok13_profile.sh`. Logs into $OUT.
start=$(date +%s)
W=/tmp/tok13; mkdir -p $W; S=$OUT/summary.log
source .device/device-env.sh > $W/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $S
sha256sum kernels/sm_90a/gdn_bwd.cubin | tee -a $S
H="#[0-9a-f]{16}"
DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_BWD_TOKENS=tc12 timeout 30 $t backward_parity --test-threads=1 --nocapture > $W/par.log 2>&1
echo "parity (profile build, tc12): $(grep 'test result' $W/par.log)" | tee -a $S
grep -E "$H" $W/par.log | grep -o 'bwd .*' | grep -oE "$H" > $W/hx
grep '^bwd' bench/gdn_hashes_session9.txt | grep -oE "$H" > $W/hs9
cmp -s $W/hx $W/hs9 && [ -s $W/hs9 ] && echo "BITWISE (profile build == session9 bwd hashes, $(wc -l < $W/hs9))" | tee -a $S || echo "HASHES DIFFER ($(wc -l < $W/hx) vs $(wc -l < $W/hs9))" | tee -a $S
for s in 0 1 2 3; do
  for ov in 0 1; do
    [ $(( $(date +%s) - start )) -gt 120 ] && { echo "skip shape $s ov $ov (time)" | tee -a $S; continue; }
    DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_SHAPES=$s DNNPLAN_GDN_TIMING_VARIANTS=tc12 DNNPLAN_GDN_BWD_OVERLAP=$ov \
      timeout 25 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $W/t_${s}_$ov.log 2>&1
    echo "== shape $s overlap $ov: $(grep -c TOKPROF $W/t_${s}_$ov.log) prints" | tee -a $S
    grep -E "bwd stages" $W/t_${s}_$ov.log | sed 's/.*gdn_sm90/gdn_sm90/' | tee -a $S
    grep TOKPROF $W/t_${s}_$ov.log | tail -1 | tee -a $S
  done
done
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
(cd $W && tar czf $OUT/logs.tgz *.log)
