# Session 11 round 2 (helper swz11), call 2: the probe c2p (c2's 192 row copies per CTA and chunk
# into c2w's UNPADDED rows: bank conflicts without c2w's whole-tile copies) beside c2, c2w and w4,
# all bitwise w4. Staged like bench/gdn_device_swz11.sh;
# command: `XFER=.xfer-swz11 bash .xfer-swz11/gdn_device_swz11_2.sh`.
cd "${XFER:-.xfer-swz11}" && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
H="#[0-9a-f]{16}"
F="forward_parity state_pool batch_invariant"
run() { local tag=$1 tests=$2; shift 2; env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 60 $t $tests --test-threads=1 --nocapture > $OUT/parity_$tag.log 2>&1
  echo "$tag: $(grep 'test result' $OUT/parity_$tag.log)"; grep -E "$H" $OUT/parity_$tag.log | sed -E 's/ in [0-9.]+ ?m?s//' > /tmp/h_$tag; }
same() { if [ -s /tmp/h_$2 ] && cmp -s /tmp/h_$1 /tmp/h_$2; then echo "BITWISE $1 == $2 ($(wc -l < /tmp/h_$1) hash lines)"; else echo "DIFFER $1 vs $2"; diff /tmp/h_$1 /tmp/h_$2 | head -4; fi; }
run w4f "$F" DNNPLAN_GDN_FWD_SCAN=w4
for v in c2p c2w; do run ${v}f "$F" DNNPLAN_GDN_FWD_SCAN=$v; same ${v}f w4f; done
run w4p4 forward_parity DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=4
run c2pp4 forward_parity DNNPLAN_GDN_FWD_SCAN=c2p DNNPLAN_GDN_FWD_PIECES=4; same c2pp4 w4p4
grep -hE "panicked" $OUT/parity_*.log | head -5
DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS= DNNPLAN_GDN_TIMING_FSCANS=w4,c2,c2p,c2w,c2w,c2p,c2,w4 timeout 120 $t timing_forward_scans --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -E "fwd scan|test result" $OUT/timing.log
DNNPLAN_GDN_FWD_SCAN=c2p timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck c2p forward_parity: /"
echo done
