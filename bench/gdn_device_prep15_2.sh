# Session 11 (helper prep15), second call: the build with v15 as the default. gpu_gdn with no
# switch (the default = prep15) with the hashes vs the session-9 file and vs DNNPLAN_GDN_FWD_PREP=v14
# of the same build, then two more timing rounds v14 / v15 in both orders. Stage and run as
# bench/gdn_device_prep15.sh (XFER=.xfer-prep15 bash .xfer-prep15/gdn_device_prep15_2.sh).
cd "${XFER:-.xfer-prep15}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
H="#[0-9a-f]{16}"
for v in default v14; do
  if [ $v = default ]; then unset DNNPLAN_GDN_FWD_PREP; else export DNNPLAN_GDN_FWD_PREP=$v; fi
  DNNPLAN_GDN_TEST_HASHES=1 timeout 40 $t --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1
  echo "prep=$v gpu_gdn: $(grep 'test result' $OUT/parity_$v.log)"
  grep -E "$H" $OUT/parity_$v.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$v
  grep -oE "$H" /tmp/h_$v > /tmp/hh_$v
done
unset DNNPLAN_GDN_FWD_PREP
if [ -s /tmp/h_v14 ] && cmp -s /tmp/h_v14 /tmp/h_default; then echo "BITWISE default (v15) == v14 same build ($(wc -l < /tmp/h_default) hash lines)"; else echo "DIFFER default vs v14"; diff /tmp/h_v14 /tmp/h_default | head -6; fi
grep -oE "$H" gdn_hashes_session9.txt > /tmp/hh_s9
miss=$(grep -vxFf /tmp/hh_default /tmp/hh_s9 | wc -l)
if [ -s /tmp/hh_s9 ] && [ "$miss" = 0 ]; then echo "BITWISE default == bench/gdn_hashes_session9.txt (all $(wc -l < /tmp/hh_s9) hashes found among $(wc -l < /tmp/hh_default))"; else echo "DIFFER default vs session9 hashes: $miss of $(wc -l < /tmp/hh_s9) missing"; fi
grep -E "panicked" $OUT/parity_*.log | head -5
for order in v15,v14 v14,v15; do
  DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=$order timeout 40 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_${order//,/_}.log 2>&1
  grep -hE "BENCH prep|test result" $OUT/bench_${order//,/_}.log
done
