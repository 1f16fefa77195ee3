# Session 11 (helper clus11), call 2: the producer-warp scans of module gdn_fwd_c2 (c2 cluster +
# multicast bulk rows; c2u the same with Ũᵀ by cp.async; b2 bulk rows without sharing; m4 w4's
# cp.async from a producer warp), all bitwise w4, against w4 / w8 on the H200 in one call.
# Staged like bench/gdn_device_clus11.sh; command: `XFER=.xfer-clus11 bash .xfer-clus11/gdn_device_clus11_2.sh`.
cd "${XFER:-.xfer-clus11}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
H="#[0-9a-f]{16}"
F="forward_parity state_pool batch_invariant"
run() { local tag=$1 tests=$2; shift 2; env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 60 $t $tests --test-threads=1 --nocapture > $OUT/parity_$tag.log 2>&1
  echo "$tag: $(grep 'test result' $OUT/parity_$tag.log)"; grep -E "$H" $OUT/parity_$tag.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$tag; }
same() { if [ -s /tmp/h_$2 ] && cmp -s /tmp/h_$1 /tmp/h_$2; then echo "BITWISE $1 == $2 ($(wc -l < /tmp/h_$1) hash lines)"; else echo "DIFFER $1 vs $2"; diff /tmp/h_$1 /tmp/h_$2 | head -4; fi; }
# 1. all of gpu_gdn (default) against the session-9 hashes; the forward tests per scan, bitwise.
run default ""
grep -oE "$H" /tmp/h_default > /tmp/hh_default; grep -oE "$H" gdn_hashes_session9.txt > /tmp/hh_s9
miss=$(grep -vxFf /tmp/hh_default /tmp/hh_s9 | wc -l); echo "default vs session-9 hashes: $miss of $(wc -l < /tmp/hh_s9) missing"
run w4f "$F" DNNPLAN_GDN_FWD_SCAN=w4
for v in c2 c2u b2 m4; do run $v "$F" DNNPLAN_GDN_FWD_SCAN=$v; same $v w4f; done
run w4p4 forward_parity DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=4
for v in c2u b2 m4; do run ${v}p4 forward_parity DNNPLAN_GDN_FWD_SCAN=$v DNNPLAN_GDN_FWD_PIECES=4; same ${v}p4 w4p4; done
grep -hE "panicked" $OUT/parity_*.log | head -5
# 2. timing, alternating: forward output scan (whole forward minus the forward cut after the prep).
DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS= DNNPLAN_GDN_TIMING_FSCANS=w4,m4,c2,c2u,b2,w8,b2,c2u,c2,m4,w4 timeout 120 $t timing_forward_scans --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -E "fwd scan|test result" $OUT/timing.log
# 3. memcheck of the new copy paths (cp.async + mbarrier arrive: m4, c2u; bulk rows: b2).
for v in m4 c2u b2; do DNNPLAN_GDN_FWD_SCAN=$v timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck $v forward_parity: /"; done
echo done
