# Session 10 (helper sub13): prep13 (prep10 with the inverse's diagonal substitution on 4 warps)
# and prep14 (the substitution right-looking from registers on prep10's 2 warps), both bitwise
# prep10, against prep10 (v10, the default) on the H200 in one call (<= 170 s). Stage:
# kernels/build-cubins.sh, release builds (CARGO_PROFILE_RELEASE_DEBUG=0, _STRIP=symbols) of the
# gpu_gdn / gpu_gdn_bench test binaries with --features gpu-tests, tar .device/device-env.sh +
# .device/tests/{gpu_gdn,gpu_gdn_bench}-* + gdn_hashes_session9.txt + this script into
# .xfer-sub13/device.tgz; run tool: carry [".xfer-sub13"]; command:
# `XFER=.xfer-sub13 bash .xfer-sub13/gdn_device_sub13.sh` (the cubins' sha256 in cubins.sha256). Logs into $OUT.
cd "${XFER:-.xfer-sub13}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
# 1. parity (fp64 references, repeated runs bitwise, CUDA-graph replays bitwise) with v10, v13 and
#    v14, with the O / state / gradient hashes: both must be bitwise v10 and the session-9 defaults.
H="#[0-9a-f]{16}"
for v in v10 v13 v14; do
  DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_FWD_PREP=$v timeout 40 $t --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1
  echo "prep=$v gpu_gdn: $(grep 'test result' $OUT/parity_$v.log)"
  grep -E "$H" $OUT/parity_$v.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$v
  grep -oE "$H" /tmp/h_$v > /tmp/hh_$v
done
for v in v13 v14; do
  if [ -s /tmp/h_v10 ] && cmp -s /tmp/h_v10 /tmp/h_$v; then echo "BITWISE $v == v10 same build ($(wc -l < /tmp/h_$v) hash lines)"; else echo "DIFFER $v vs v10"; diff /tmp/h_v10 /tmp/h_$v | head -6; fi
done
grep -oE "$H" gdn_hashes_session9.txt > /tmp/hh_s9
for v in v10 v13 v14; do  # every session-9 hash must appear in this run's hash lines
  miss=$(grep -vxFf /tmp/hh_$v /tmp/hh_s9 | wc -l)
  if [ -s /tmp/hh_s9 ] && [ "$miss" = 0 ]; then echo "BITWISE $v == bench/gdn_hashes_session9.txt (all $(wc -l < /tmp/hh_s9) hashes found among $(wc -l < /tmp/hh_$v))"; else echo "DIFFER $v vs session9 hashes: $miss of $(wc -l < /tmp/hh_s9) missing"; fi
done
grep -E "panicked" $OUT/parity_v1*.log | head -5
# 2. timing, two rounds alternating (fwd-prep / bwd-prep = cut after launch 2 minus after 1).
for order in v10,v13,v14 v14,v13,v10; do
  DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=$order timeout 40 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_${order//,/_}.log 2>&1
  grep -hE "BENCH prep|test result" $OUT/bench_${order//,/_}.log
done
# 3. memcheck of prep13 and prep14 (the backward's KEEP prep: the forward's tile plus the E copy).
for v in v13 v14; do
  DNNPLAN_GDN_FWD_PREP=$v timeout 30 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck $v backward_parity: /"
done
DNNPLAN_GDN_FWD_PREP=v13 timeout 25 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck v13 forward_parity: /"
