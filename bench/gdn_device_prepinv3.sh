# Session 8 (helper prepinv3): prep9 (v9 = v8 with ldmatrix.x4 operand loads, bitwise v8) against
# prep8 (v8, the default) on the H200 in one call (~100 s). Stage: /work/wt/device-pack.sh
# --features gpu-tests (after build-cubins), tar device-env.sh + lib + the gpu_gdn / gpu_gdn_bench
# test binaries into .xfer-prepinv3/device.tgz; run tool: carry [".xfer-prepinv3"]; command:
# `XFER=.xfer-prepinv3 bash bench/gdn_device_prepinv3.sh`. Logs into $OUT.
cd "${XFER:-.xfer-prepinv3}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# 1. parity (fp64 references, repeated runs bitwise, CUDA-graph replays bitwise) with v8 and v9;
#    v9 is bitwise v8, so every rms line must be identical.
for v in v8 v9; do
  DNNPLAN_GDN_FWD_PREP=$v timeout 40 $t --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1
  echo "prep=$v gpu_gdn: $(grep 'test result' $OUT/parity_$v.log)"
done
grep -E " rms " $OUT/parity_v8.log > $OUT/rms_v8; grep -E " rms " $OUT/parity_v9.log > $OUT/rms_v9
cmp -s $OUT/rms_v8 $OUT/rms_v9 && echo "rms lines v8 == v9 ($(wc -l < $OUT/rms_v9) lines)" || { echo "rms lines differ:"; diff $OUT/rms_v8 $OUT/rms_v9 | head -20; }
grep -E "panicked|differs|over" $OUT/parity_v9.log | head -5
# 2. memcheck over the tests that run the prep (forward, and the backward's KEEP prep).
for m in forward_parity backward_parity; do
  DNNPLAN_GDN_FWD_PREP=v9 timeout 30 compute-sanitizer --tool memcheck --print-limit 5 $t $m --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck v9 $m: /"
done
# 3. timing, two rounds in both orders (fwd-prep / bwd-prep = cut after launch 2 minus after 1).
for order in v8,v9 v9,v8; do
  DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=$order timeout 25 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_$order.log 2>&1
  grep -hE "BENCH prep|test result" $OUT/bench_$order.log
done
# 4. (if time is left) ncu of one forward prep9 launch at (4, 8192, 16), beside
#    bench/gdn_device_prepinv_v8_run1_ncu.log's prep8 numbers.
DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=v9 timeout 25 ncu --clock-control none -k regex:"gdn_fwd_prep9_bf16_k128" -c 1 \
  --section SpeedOfLight --section WarpStateStats --section InstructionStats $b gdn_prep_variants --test-threads=1 > $OUT/ncu_prep9.log 2>&1
grep -E "gdn_fwd_prep|Duration|Throughput|Warp Cycles|Executed Instructions  |Stall" $OUT/ncu_prep9.log | head -20
