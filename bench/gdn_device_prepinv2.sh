# Session 8 (helper prepinv), call 2: prep7 as the default (engine rule), the whole gpu_gdn suite
# with it and with v6 forced, the engine timings at the four benchmark shapes, and ncu of one
# forward prep launch each (prep6, prep7) at (4, 8192, 16). run tool: carry [".xfer-prepinv"].
cd .xfer-prepinv && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
timeout 60 $t --test-threads=1 --nocapture > $OUT/parity_default.log 2>&1
echo "default (v7) gpu_gdn: $(grep 'test result' $OUT/parity_default.log)"
DNNPLAN_GDN_FWD_PREP=v6 timeout 60 $t --test-threads=1 > $OUT/p6.log 2>&1; echo "v6 gpu_gdn: $(grep 'test result' $OUT/p6.log)"
grep -E " rms |^bwd .* dQ" $OUT/parity_default.log | grep -v "^test" | sed 's/^/  /'
DNNPLAN_GDN_TIMING=1 timeout 60 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $OUT/timing.log 2>&1
grep -E "gdn_sm90 timing|test result" $OUT/timing.log
for v in 6 7; do
  DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=v$v timeout 80 ncu --clock-control none -k regex:"gdn_fwd_prep${v}_bf16_k128" -c 1 \
    --section SpeedOfLight --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables \
    $b gdn_prep_variants --test-threads=1 > $OUT/ncu_prep$v.log 2>&1
  grep -E "gdn_fwd_prep|Duration|Throughput|Warp Cycles|Executed Ipc|Issue Slots|Executed Instructions  |Shared.*(Wavefronts|Bank|Instructions)|Stall" $OUT/ncu_prep$v.log | head -30
done
