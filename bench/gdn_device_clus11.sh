# Session 11 (helper clus11): the forward output scan on a 2-CTA cluster (c2, module gdn_fwd_c2,
# DNNPLAN_GDN_FWD_SCAN=c2), bitwise w4 by construction, against w4 / w8 on the H200 in one call.
# Stage: kernels/build-cubins.sh, /work/wt/device-pack.sh --features gpu-tests, tar
# .device/device-env.sh + .device/tests/gpu_gdn-* + bench/gdn_hashes_session9.txt + this script +
# cubins.sha256 into .xfer-clus11/device.tgz; run tool: carry [".xfer-clus11"]; command:
# `XFER=.xfer-clus11 bash .xfer-clus11/gdn_device_clus11.sh` (after unpacking). Logs into $OUT.
cd "${XFER:-.xfer-clus11}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
H="#[0-9a-f]{16}"
F="forward_parity state_pool batch_invariant"
# 1. all of gpu_gdn with the default and with c2 (the forward tests at V = 128 run c2; V = 64
#    keeps w4 by the rule), with the hashes: c2 must be bitwise the default and session 9.
run() { local tag=$1; shift; env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 60 $t --test-threads=1 --nocapture > $OUT/parity_$tag.log 2>&1
  echo "$tag gpu_gdn: $(grep 'test result' $OUT/parity_$tag.log)"; grep -E "$H" $OUT/parity_$tag.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$tag; grep -oE "$H" /tmp/h_$tag > /tmp/hh_$tag; }
run default
run c2 DNNPLAN_GDN_FWD_SCAN=c2
if [ -s /tmp/h_default ] && cmp -s /tmp/h_default /tmp/h_c2; then echo "BITWISE c2 == default same build ($(wc -l < /tmp/h_c2) hash lines)"; else echo "DIFFER c2 vs default"; diff /tmp/h_default /tmp/h_c2 | head -6; fi
grep -oE "$H" gdn_hashes_session9.txt > /tmp/hh_s9
for v in default c2; do miss=$(grep -vxFf /tmp/hh_$v /tmp/hh_s9 | wc -l)
  if [ -s /tmp/hh_s9 ] && [ "$miss" = 0 ]; then echo "BITWISE $v == bench/gdn_hashes_session9.txt (all $(wc -l < /tmp/hh_s9) hashes found among $(wc -l < /tmp/hh_$v))"; else echo "DIFFER $v vs session9 hashes: $miss of $(wc -l < /tmp/hh_s9) missing"; fi; done
grep -hE "panicked" $OUT/parity_*.log | head -5
# 2. the piece chain's output pass (4 pieces): c2 vs w4.
for v in w4 c2; do DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_FWD_SCAN=$v DNNPLAN_GDN_FWD_PIECES=4 timeout 40 $t $F --test-threads=1 --nocapture > $OUT/pieces_$v.log 2>&1
  echo "pieces 4 $v: $(grep 'test result' $OUT/pieces_$v.log)"; grep -E "$H" $OUT/pieces_$v.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/p_$v; done
if [ -s /tmp/p_w4 ] && cmp -s /tmp/p_w4 /tmp/p_c2; then echo "BITWISE (pieces 4: c2 == w4, $(wc -l < /tmp/p_c2) hash lines)"; else echo "DIFFER (pieces 4)"; fi
# 3. timing: forward output scan (whole forward minus the forward cut after the prep), alternating.
export DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS=
DNNPLAN_GDN_TIMING_FSCANS=w4,c2,w8,c2,w4 timeout 90 $t timing_forward_scans --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -E "fscan|test result" $OUT/timing.log
unset DNNPLAN_GDN_TIMING_SCANS DNNPLAN_GDN_TIMING_REPLAYS
# 4. memcheck of c2 (uncut and 4 pieces).
DNNPLAN_GDN_FWD_SCAN=c2 timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck c2 forward_parity: /"
DNNPLAN_GDN_FWD_SCAN=c2 DNNPLAN_GDN_FWD_PIECES=4 timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck c2 pieces 4 forward_parity: /"
echo done
