# Session 11 round 2 (helper swz11), call 1: c2w (the 2-CTA cluster scan with ONE multicast bulk
# copy per whole K-side tile and one per CTA for its Ũᵀ slice, unpadded rows; bitwise w4) against
# w4 and c2u on the H200. Staged with /work/wt/device-pack.sh --features gpu-tests into
# .xfer-swz11/device.tgz (+ gdn_hashes_session9.txt, cubins.sha256);
# command: `XFER=.xfer-swz11 bash .xfer-swz11/gdn_device_swz11.sh`.
cd "${XFER:-.xfer-swz11}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
H="#[0-9a-f]{16}"
F="forward_parity state_pool batch_invariant"
run() { local tag=$1 tests=$2; shift 2; env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 60 $t $tests --test-threads=1 --nocapture > $OUT/parity_$tag.log 2>&1
  echo "$tag: $(grep 'test result' $OUT/parity_$tag.log)"; grep -E "$H" $OUT/parity_$tag.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$tag; }
same() { if [ -s /tmp/h_$2 ] && cmp -s /tmp/h_$1 /tmp/h_$2; then echo "BITWISE $1 == $2 ($(wc -l < /tmp/h_$1) hash lines)"; else echo "DIFFER $1 vs $2"; diff /tmp/h_$1 /tmp/h_$2 | head -4; fi; }
# 1. all of gpu_gdn with c2w against the session-9 hashes; the forward tests w4 vs c2w, bitwise.
run c2wall "" DNNPLAN_GDN_FWD_SCAN=c2w
grep -oE "$H" /tmp/h_c2wall > /tmp/hh_c2w; grep -oE "$H" gdn_hashes_session9.txt > /tmp/hh_s9
miss=$(grep -vxFf /tmp/hh_c2w /tmp/hh_s9 | wc -l); echo "c2w (all of gpu_gdn) vs session-9 hashes: $miss of $(wc -l < /tmp/hh_s9) missing"
run w4f "$F" DNNPLAN_GDN_FWD_SCAN=w4
run c2wf "$F" DNNPLAN_GDN_FWD_SCAN=c2w; same c2wf w4f
run w4p4 forward_parity DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=4
run c2wp4 forward_parity DNNPLAN_GDN_FWD_SCAN=c2w DNNPLAN_GDN_FWD_PIECES=4; same c2wp4 w4p4
grep -hE "panicked" $OUT/parity_*.log | head -5
# 2. timing, alternating: forward output scan (whole forward minus the forward cut after the prep).
DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS= DNNPLAN_GDN_TIMING_FSCANS=w4,c2w,c2u,w8,c2u,c2w,w4,c2w,w4 timeout 120 $t timing_forward_scans --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -E "fwd scan|test result" $OUT/timing.log
# 3. memcheck of c2w (uncut and 4 pieces).
DNNPLAN_GDN_FWD_SCAN=c2w timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck c2w forward_parity: /"
DNNPLAN_GDN_FWD_SCAN=c2w DNNPLAN_GDN_FWD_PIECES=4 timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck c2w p4 forward_parity: /"
echo done
