# Session 9, round 2 (helper prep12): prep12 (prep10 with the diagonal substitution in the E phase,
# Not on main: the prep12 kernels this script runs are on branch prep12 (2facf20); stage that build to rerun it.
# bitwise prep10) against prep10 (v10, the default) on the H200 in one call (<= 150 s). Stage:
# kernels/build-cubins.sh, release builds of the lib and the gpu_gdn / gpu_gdn_bench test binaries,
# tar device-env.sh + lib + those two binaries + bench/gdn_hashes_session9.txt into
# .xfer-prep12/device.tgz; run tool: carry [".xfer-prep12"]; command:
# `XFER=.xfer-prep12 bash .xfer-prep12/gdn_device_prep12.sh`. Logs into $OUT.
cd "${XFER:-.xfer-prep12}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# 1. parity (fp64 references, repeated runs bitwise, CUDA-graph replays bitwise) with v10 and v12,
#    with the O / state / gradient hashes: v12 must be bitwise v10 and the session-9 defaults.
H="#[0-9a-f]{16}"
for v in v10 v12; do
  DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_FWD_PREP=$v timeout 30 $t --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1
  echo "prep=$v gpu_gdn: $(grep 'test result' $OUT/parity_$v.log)"
  grep -E "$H" $OUT/parity_$v.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$v
  grep -oE "$H" /tmp/h_$v > /tmp/hh_$v
done
if [ -s /tmp/h_v10 ] && cmp -s /tmp/h_v10 /tmp/h_v12; then echo "BITWISE v12 == v10 same build ($(wc -l < /tmp/h_v12) hash lines)"; else echo "DIFFER v12 vs v10"; diff /tmp/h_v10 /tmp/h_v12 | head -6; fi
grep -oE "$H" gdn_hashes_session9.txt > /tmp/hh_s9
for v in v10 v12; do  # every session-9 hash must appear in this run's hash lines
  miss=$(grep -vxFf /tmp/hh_$v /tmp/hh_s9 | wc -l)
  if [ -s /tmp/hh_s9 ] && [ "$miss" = 0 ]; then echo "BITWISE $v == bench/gdn_hashes_session9.txt (all $(wc -l < /tmp/hh_s9) hashes found among $(wc -l < /tmp/hh_$v))"; else echo "DIFFER $v vs session9 hashes: $miss of $(wc -l < /tmp/hh_s9) missing"; fi
done
grep -E "panicked" $OUT/parity_v1*.log | head -5
# 2. timing, two rounds alternating (fwd-prep / bwd-prep = cut after launch 2 minus after 1).
for order in v10,v12 v12,v10; do
  DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=$order timeout 25 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_$order.log 2>&1
  grep -hE "BENCH prep|test result" $OUT/bench_$order.log
done
# 3. memcheck of prep12 (forward, and the backward's KEEP prep).
for m in forward_parity backward_parity; do
  DNNPLAN_GDN_FWD_PREP=v12 timeout 28 compute-sanitizer --tool memcheck --print-limit 5 $t $m --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck v12 $m: /"
done
