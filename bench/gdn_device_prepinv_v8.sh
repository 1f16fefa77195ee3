# Session 8 (helper prepinv2): prep8 (v8, the 2x2-blocked tensor-core inverse) against prep7 (v7,
# the default) on the H200 in one call (~100-150 s). Not run by prepinv2 (no device budget): for
# the lead's final device run. Stage: /work/wt/device-pack.sh --features gpu-tests (after
# build-cubins), tar .device into .xfer-<branch>/device.tgz; run tool: carry [".xfer-<branch>"];
# command: `XFER=.xfer-<branch> bash <this script>` (or paste it). Logs into $OUT.
cd "${XFER:-.xfer-prepinv2}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# 1. parity (fp64 references, repeated runs bitwise, CUDA-graph replays bitwise) with v7 and v8.
for v in v7 v8; do
  DNNPLAN_GDN_FWD_PREP=$v timeout 60 $t --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1
  echo "prep=$v gpu_gdn: $(grep 'test result' $OUT/parity_$v.log)"
done
grep -E " rms " $OUT/parity_v7.log > $OUT/rms_v7; grep -E " rms " $OUT/parity_v8.log > $OUT/rms_v8
paste -d'\n' $OUT/rms_v7 $OUT/rms_v8 | sed 's/^/  /'
grep -E "panicked|differs|over" $OUT/parity_v8.log | head -5
# 2. memcheck over the tests that run the prep (forward, and the backward's KEEP prep).
for m in forward_parity backward_parity; do
  DNNPLAN_GDN_FWD_PREP=v8 timeout 70 compute-sanitizer --tool memcheck --print-limit 5 $t $m --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck v8 $m: /"
done
# 3. timing, two rounds in both orders (fwd-prep / bwd-prep = cut after launch 2 minus after 1).
for order in v7,v8 v8,v7; do
  DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=$order timeout 60 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_$order.log 2>&1
  grep -hE "BENCH prep|test result" $OUT/bench_$order.log
done
# 4. (if time is left) ncu of one forward prep8 launch at (4, 8192, 16), to set beside
#    bench/gdn_device_prepinv_run2_ncu.log's prep7 numbers.
DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=v8 timeout 80 ncu --clock-control none -k regex:"gdn_fwd_prep8_bf16_k128" -c 1 \
  --section SpeedOfLight --section WarpStateStats --section InstructionStats $b gdn_prep_variants --test-threads=1 > $OUT/ncu_prep8.log 2>&1
grep -E "gdn_fwd_prep|Duration|Throughput|Warp Cycles|Executed Instructions  |Stall" $OUT/ncu_prep8.log | head -20
