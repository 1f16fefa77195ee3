#!/usr/bin/env bash
# Session 6 (helper prep6), device call 2 (<= 50 s): prep5 / prep6 on the H200, logs into $OUT.
# Staged: /work/main/.xfer-prep6/device.tgz; run from the repository root: bash .xfer-prep6/gdn_device_prep6b.sh
cd .xfer-prep6 && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
# 1. parity with prep6 (its rms lines must equal call 1's, bench/gdn_device_prep6_run1_parity.log).
DNNPLAN_GDN_FWD_PREP=v6 timeout 9 $t --test-threads=1 --nocapture > $OUT/parity_v6.log 2>&1; echo "prep=v6: $(grep 'test result' $OUT/parity_v6.log)"
# 2. prep timing v3 (old) vs v6 vs v5 at the four benchmark shapes, same run.
DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=v3,v6,v5 timeout 17 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_prep.log 2>&1
grep -E "^BENCH prep|test result" $OUT/bench_prep.log
# 3. memcheck with prep6: backward matrix (the KEEP kernel), forward matrix.
DNNPLAN_GDN_FWD_PREP=v6 timeout 9 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity_matrix --test-threads=1 > $OUT/memcheck_bwd_v6.log 2>&1; echo "memcheck bwd v6: $(grep -E 'ERROR SUMMARY' $OUT/memcheck_bwd_v6.log) $(grep 'test result' $OUT/memcheck_bwd_v6.log)"
DNNPLAN_GDN_FWD_PREP=v6 timeout 12 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity_matrix --test-threads=1 > $OUT/memcheck_fwd_v6.log 2>&1; echo "memcheck fwd v6: $(grep -E 'ERROR SUMMARY' $OUT/memcheck_fwd_v6.log) $(grep 'test result' $OUT/memcheck_fwd_v6.log)"
