# Session 9 (helper prep10): prep10 / prep11 (bitwise prep9, fewer block barriers) against prep9
# (v9, the default) on the H200 in one call (~150 s). Stage: kernels/build-cubins.sh, then
# /work/wt/device-pack.sh --features gpu-tests, tar device-env.sh + lib + the gpu_gdn /
# gpu_gdn_bench test binaries into .xfer-prep10/device.tgz; run tool: carry [".xfer-prep10"];
# command: `XFER=.xfer-prep10 bash .xfer-prep10/gdn_device_prep10.sh`. Logs into $OUT.
cd "${XFER:-.xfer-prep10}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# 1. parity (fp64 references, repeated runs bitwise, CUDA-graph replays bitwise) with v9, v10, v11,
#    with the O / state / gradient hashes: v10 and v11 are bitwise v9, so every hash line must match.
H="#[0-9a-f]{16}"
for v in v9 v10 v11; do
  DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_FWD_PREP=$v timeout 40 $t --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1
  echo "prep=$v gpu_gdn: $(grep 'test result' $OUT/parity_$v.log)"
  grep -E "$H" $OUT/parity_$v.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$v
done
for v in v10 v11; do
  if [ -s /tmp/h_v9 ] && cmp -s /tmp/h_v9 /tmp/h_$v; then echo "BITWISE $v == v9 ($(wc -l < /tmp/h_$v) hash lines)"; else echo "DIFFER $v vs v9"; diff /tmp/h_v9 /tmp/h_$v | head -6; fi
done
grep -E "panicked" $OUT/parity_v1*.log | head -5
# 2. memcheck over the tests that run the prep (forward, and the backward's KEEP prep).
for vm in v11:forward_parity v11:backward_parity v10:backward_parity; do
  v=${vm%%:*}; m=${vm#*:}
  DNNPLAN_GDN_FWD_PREP=$v timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t $m --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck $v $m: /"
done
# 3. timing, two rounds in both orders (fwd-prep / bwd-prep = cut after launch 2 minus after 1).
for order in v9,v10,v11 v11,v10,v9; do
  DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=$order timeout 40 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_$order.log 2>&1
  grep -hE "BENCH prep|test result" $OUT/bench_$order.log
done
