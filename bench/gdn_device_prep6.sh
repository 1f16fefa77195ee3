#!/usr/bin/env bash
# Session 6 (helper prep6): the persistent prep (prep4) on the H200 in one call, logs into $OUT.
# Staged: /work/main/.xfer-prep6/device.tgz (.device from device-pack.sh --features gpu-tests);
# run from the repository root: bash .xfer-prep6/gdn_device_prep6.sh
cd .xfer-prep6 && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.log
# 1. parity, default (prep4) and the old prep3; the printed rms digits must be identical.
timeout 25 $t --test-threads=1 --nocapture > $OUT/parity.log 2>&1; echo "default (prep4): $(grep 'test result' $OUT/parity.log)"
DNNPLAN_GDN_FWD_PREP=v3 timeout 25 $t --test-threads=1 --nocapture > $OUT/parity_v3.log 2>&1; echo "prep=v3: $(grep 'test result' $OUT/parity_v3.log)"
grep -E "panicked|FAILED" $OUT/parity*.log | head -5
strip_t() { grep -vE "finished in|host|^running|^test result" "$1" | sed -E 's/[0-9.]+ ?(ms|us|µs|s)\b//g'; }
if diff <(strip_t $OUT/parity.log) <(strip_t $OUT/parity_v3.log) > $OUT/parity_diff.log; then echo "parity logs v4 vs v3: identical (timings stripped), $(grep -c rms $OUT/parity.log) rms lines"; else echo "parity logs v4 vs v3 differ: $(wc -l < $OUT/parity_diff.log) lines"; head -8 $OUT/parity_diff.log; fi
# 2. prep timing, old (v3) vs new (v4) at the four benchmark shapes, same run.
DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=v3,v4 timeout 40 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench_prep.log 2>&1
grep -E "^BENCH prep|test result" $OUT/bench_prep.log
# 3. memcheck over the forward and backward parity matrices (both run prep4).
timeout 30 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity_matrix --test-threads=1 > $OUT/memcheck_fwd.log 2>&1; echo "memcheck fwd: $(grep -E 'ERROR SUMMARY' $OUT/memcheck_fwd.log) $(grep 'test result' $OUT/memcheck_fwd.log)"
timeout 35 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity_matrix --test-threads=1 > $OUT/memcheck_bwd.log 2>&1; echo "memcheck bwd: $(grep -E 'ERROR SUMMARY' $OUT/memcheck_bwd.log) $(grep 'test result' $OUT/memcheck_bwd.log)"
# 4. whole forward and the backward's stages with the new prep (tc4 token stage).
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc4 timeout 20 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $OUT/timing_v4.log 2>&1; grep -E "^gdn_sm90" $OUT/timing_v4.log
