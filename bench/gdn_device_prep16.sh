# Session 13 round 3 (helper prep16): the slim prep at 5 blocks per SM (SLIM_PREP_MIN_BLOCKS,
# kernels/include/gdn_fwd_slim.cuh) on the H200 in one call, against a base test binary built from
# main 1628811 (the branch's first commit): every gpu_gdn test by default; slim forward hashes
# (forward_parity + state_pool + batch_invariant, rule width and w8) new == base; the default's
# backward hashes + the full-factor forward hashes against bench/gdn_hashes_session9.txt; memcheck
# of forward_parity with the slim factors; timing_forward_factors on both binaries, alternating.
# Stage (worktree): kernels/build-cubins.sh; cargo test --release --features gpu-tests --test
# gpu_gdn --no-run; copy + strip the binary as .device/tests/gpu_gdn-new and main's as
# gpu_gdn-base (not matching dev_bin's pattern: picked by name); device-env.sh; tar into
# /work/main/.xfer-prep16/device.tgz with this script, bench/device_lib.sh, the session-9 hashes.
# run: carry [".xfer-prep16"], `cd .xfer-prep16 && tar xzf device.tgz && bash bench/gdn_device_prep16.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/prep16
mkdir -p $DEV_TMP
t=.device/tests/gpu_gdn-new
b=.device/tests/gpu_gdn-base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
dev_parity "default gpu_gdn (new)" $t ""
fh() { DEV_CAP_S=60 dev_fwd_case "$@"; }
fh slim_new $t DNNPLAN_GDN_FWD_FACTORS=slim
fh slim_base $b DNNPLAN_GDN_FWD_FACTORS=slim
dev_same $DEV_TMP/h_slim_new $DEV_TMP/h_slim_base "forward slim: new == base 1628811, $(wc -l < $DEV_TMP/h_slim_base) hash lines"
fh slimw8_new $t DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w8
fh slimw8_base $b DNNPLAN_GDN_FWD_FACTORS=slim DNNPLAN_GDN_FWD_SCAN=w8
dev_same $DEV_TMP/h_slimw8_new $DEV_TMP/h_slimw8_base "forward slim w8: new == base 1628811, $(wc -l < $DEV_TMP/h_slimw8_base) hash lines"
fh def_new $t
fh def_base $b
dev_same $DEV_TMP/h_def_new $DEV_TMP/h_def_base "forward default (rule): new == base 1628811, $(wc -l < $DEV_TMP/h_def_base) hash lines"
fh full_new $t DNNPLAN_GDN_FWD_FACTORS=full
dev_hashes bwd $t > $DEV_TMP/h_bwd_new
dev_cover_reference "backward default + forward full factors (new)" $DEV_TMP/h_bwd_new $DEV_TMP/h_full_new
for v in slim_new full_new; do grep -hE " rms " $DEV_TMP/p_$v.log > $OUT/rms_$v.log; done
DEV_CAP_S=60 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_FACTORS=slim
for i in 1 2; do for x in new base; do bin=$t; [ $x = base ] && bin=$b
  echo "== timing $x (pass $i)"
  DNNPLAN_GDN_TIMING_FACTORS=2 timeout 60 $bin timing_forward_factors --test-threads=1 --nocapture > $DEV_TMP/timing_${x}_$i.log 2>&1
  grep -E "mean of|test result|panicked" $DEV_TMP/timing_${x}_$i.log; done; done
cat $DEV_TMP/timing_*.log > $OUT/timing_all.log
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
