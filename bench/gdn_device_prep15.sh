# Session 11 (helper prep15): prep15 (prep14 with the inverse's serial pieces off the block
# barriers, bitwise prep14) against prep14 (v14, the default) on the H200 in one call (<= 200 s).
# Stage: kernels/build-cubins.sh, release builds (CARGO_PROFILE_RELEASE_DEBUG=0, _STRIP=symbols) of
# the gpu_gdn / gpu_gdn_bench test binaries with --features gpu-tests, tar .device/device-env.sh +
# .device/tests/{gpu_gdn,gpu_gdn_bench}-* + gdn_hashes_session9.txt + this script into
# .xfer-prep15/device.tgz; run tool: carry [".xfer-prep15"]; command:
# `XFER=.xfer-prep15 bash .xfer-prep15/gdn_device_prep15.sh` (the cubins' sha256 in cubins.sha256). Logs into $OUT.
cd "${XFER:-.xfer-prep15}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
# 1. parity (fp64 references, repeated runs bitwise, CUDA-graph replays bitwise) with v14 and v15,
#    with the O / state / gradient hashes: v15 must be bitwise v14 and the session-9 defaults.
H="#[0-9a-f]{16}"
for v in v14 v15; do
  DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_FWD_PREP=$v timeout 40 $t --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1
  echo "prep=$v gpu_gdn: $(grep 'test result' $OUT/parity_$v.log)"
  grep -E "$H" $OUT/parity_$v.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$v
  grep -oE "$H" /tmp/h_$v > /tmp/hh_$v
done
if [ -s /tmp/h_v14 ] && cmp -s /tmp/h_v14 /tmp/h_v15; then echo "BITWISE v15 == v14 same build ($(wc -l < /tmp/h_v15) hash lines)"; else echo "DIFFER v15 vs v14"; diff /tmp/h_v14 /tmp/h_v15 | head -6; fi
grep -oE "$H" gdn_hashes_session9.txt > /tmp/hh_s9
for v in v14 v15; do  # every session-9 hash must appear in this run's hash lines
  miss=$(grep -vxFf /tmp/hh_$v /tmp/hh_s9 | wc -l)
  if [ -s /tmp/hh_s9 ] && [ "$miss" = 0 ]; then echo "BITWISE $v == bench/gdn_hashes_session9.txt (all $(wc -l < /tmp/hh_s9) hashes found among $(wc -l < /tmp/hh_$v))"; else echo "DIFFER $v vs session9 hashes: $miss of $(wc -l < /tmp/hh_s9) missing"; fi
done
grep -E "panicked" $OUT/parity_v1*.log | head -5
# 2. timing, two rounds alternating (fwd-prep / bwd-prep = cut after launch 2 minus after 1).
for order in v14,v15 v15,v14; do
  DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=$order timeout 40 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_${order//,/_}.log 2>&1
  grep -hE "BENCH prep|test result" $OUT/bench_${order//,/_}.log
done
# 3. memcheck of prep15, both directions.
DNNPLAN_GDN_FWD_PREP=v15 timeout 30 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck v15 backward_parity: /"
DNNPLAN_GDN_FWD_PREP=v15 timeout 25 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck v15 forward_parity: /"
# 4. a third timing round (v14, v15) if time is left.
DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=v14,v15 timeout 40 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_round3.log 2>&1
grep -hE "BENCH prep|test result" $OUT/bench_round3.log
