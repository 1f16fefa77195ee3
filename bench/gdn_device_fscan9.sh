# Session 9 (helper fscan9): the forward output scan with two warps per 16 value rows on three
# Not on main: the kernels this script runs are on branch fscan9 (896ed38); stage that build to rerun it.
# stages (p8, module gdn_fwd_pair), t8 (session 6's pairs scan) and u4 (w4 with Ũᵀ in registers),
# all bitwise w4 by construction. One call: parity (default + each variant), O / state hashes
# against the default (w4 at the test shapes), memcheck, scan / whole-forward times at the four
# benchmark shapes, the piece count at (1, 32768, 16). Run from the root of the unpacked transfer:
#   cd .xfer-fscan9 && tar xzf device.tgz && bash bench/gdn_device_fscan9.sh 2>&1 | tee $OUT/summary.log
source .device/device-env.sh > $OUT/env.log 2>&1; cat $OUT/env.log
sha256sum kernels/sm_90a/gdn_fwd.cubin kernels/sm_90a/gdn_fwd_pair.cubin
t=$(ls .device/tests/gpu_gdn-* | head -1)
F="forward_parity state_pool batch_invariant"
H="#[0-9a-f]{16}"
par() { local tag=$1; shift; env "$@" timeout 40 $t $F --test-threads=1 --nocapture > $OUT/parity_$tag.log 2>&1; echo "$tag: $(grep 'test result' $OUT/parity_$tag.log)"; }
hashes() { local tag=$1; shift; env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 40 $t $F --test-threads=1 --nocapture 2>&1 | grep -E "$H" > $OUT/h_$tag; }
timeout 60 $t --test-threads=1 --nocapture > $OUT/parity_default.log 2>&1; echo "default (all gpu_gdn): $(grep 'test result' $OUT/parity_default.log)"
par p8 DNNPLAN_GDN_FWD_SCAN=p8
par p8_pieces4 DNNPLAN_GDN_FWD_SCAN=p8 DNNPLAN_GDN_FWD_PIECES=4
hashes default; hashes p8 DNNPLAN_GDN_FWD_SCAN=p8
hashes w4_p4 DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=4; hashes p8_p4 DNNPLAN_GDN_FWD_SCAN=p8 DNNPLAN_GDN_FWD_PIECES=4
echo "hash lines: default $(wc -l < $OUT/h_default) p8 $(wc -l < $OUT/h_p8) w4_p4 $(wc -l < $OUT/h_w4_p4) p8_p4 $(wc -l < $OUT/h_p8_p4)"
[ -s $OUT/h_p8 ] && diff -q $OUT/h_p8 $OUT/h_default > /dev/null && echo "BITWISE (p8 == default)" || echo "HASHES DIFFER (p8)"
[ -s $OUT/h_p8_p4 ] && diff -q $OUT/h_p8_p4 $OUT/h_w4_p4 > /dev/null && echo "BITWISE (pieces 4: p8 == w4)" || echo "HASHES DIFFER (pieces 4)"
export DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS=
DNNPLAN_GDN_TIMING_FSCANS=w4,w8,p8,t8,u4,p8,w4 timeout 60 $t timing_forward_scans --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -E "fscan" $OUT/timing.log
DNNPLAN_GDN_FWD_SCAN=p8 timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
for v in t8 u4; do par $v DNNPLAN_GDN_FWD_SCAN=$v; hashes $v DNNPLAN_GDN_FWD_SCAN=$v
  [ -s $OUT/h_$v ] && diff -q $OUT/h_$v $OUT/h_default > /dev/null && echo "BITWISE ($v == default)" || echo "HASHES DIFFER ($v)"; done
DNNPLAN_GDN_TIMING_SHAPES=1 DNNPLAN_GDN_TIMING_FSCANS=w4/2,w4/3,w4/4,w4/8,p8/1,p8/2,p8/3,p8/4,p8/8 timeout 40 $t timing_forward_scans --test-threads=1 --nocapture > $OUT/timing_pieces.log 2>&1
grep -E "fscan" $OUT/timing_pieces.log
DNNPLAN_GDN_FWD_SCAN=p8 DNNPLAN_GDN_FWD_PIECES=4 timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result"
echo done
