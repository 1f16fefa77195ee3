# Session 9 (helper fscan9), call 2: o4 = w4 with one block barrier per chunk (module
# Not on main: the kernels this script runs are on branch fscan9 (896ed38); stage that build to rerun it.
# gdn_fwd_pair, bitwise w4 by construction): parity, O / state hashes against the default,
# memcheck, scan / whole-forward times at the four benchmark shapes (w4 and o4 alternating).
#   cd .xfer-fscan9 && tar xzf device.tgz && bash bench/gdn_device_fscan9_2.sh 2>&1 | tee $OUT/summary.log
source .device/device-env.sh > $OUT/env.log 2>&1; cat $OUT/env.log
sha256sum kernels/sm_90a/gdn_fwd.cubin kernels/sm_90a/gdn_fwd_pair.cubin
t=$(ls .device/tests/gpu_gdn-* | head -1)
F="forward_parity state_pool batch_invariant"
H="#[0-9a-f]{16}"
hashes() { local tag=$1; shift; env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 40 $t $F --test-threads=1 --nocapture > $OUT/p_$tag.log 2>&1; grep -E "$H" $OUT/p_$tag.log > $OUT/h_$tag; echo "$tag: $(grep 'test result' $OUT/p_$tag.log)"; }
hashes default; hashes o4 DNNPLAN_GDN_FWD_SCAN=o4; hashes o4_p4 DNNPLAN_GDN_FWD_SCAN=o4 DNNPLAN_GDN_FWD_PIECES=4; hashes w4_p4 DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=4
echo "hash lines: $(wc -l < $OUT/h_default) $(wc -l < $OUT/h_o4) $(wc -l < $OUT/h_o4_p4) $(wc -l < $OUT/h_w4_p4)"
[ -s $OUT/h_o4 ] && diff -q $OUT/h_o4 $OUT/h_default > /dev/null && echo "BITWISE (o4 == default)" || echo "HASHES DIFFER (o4)"
[ -s $OUT/h_o4_p4 ] && diff -q $OUT/h_o4_p4 $OUT/h_w4_p4 > /dev/null && echo "BITWISE (pieces 4: o4 == w4)" || echo "HASHES DIFFER (pieces 4)"
DNNPLAN_GDN_FWD_SCAN=o4 timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS= DNNPLAN_GDN_TIMING_FSCANS=w4,o4,w4,o4,w8 timeout 50 $t timing_forward_scans --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -E "fscan" $OUT/timing.log
echo done
