# Session 8 (helper prepinv): prep7 (the triangular inverse on the tensor cores) on the H200 in one
# call. run tool: carry [".xfer-prepinv"] (device.tgz: .device/device-env.sh, .device/lib, the
# gpu_gdn and gpu_gdn_bench test binaries). Logs into $OUT.
cd .xfer-prepinv && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for v in v6 v7; do
  DNNPLAN_GDN_FWD_PREP=$v timeout 60 $t --test-threads=1 --nocapture > $OUT/parity_$v.log 2>&1
  echo "prep=$v gpu_gdn: $(grep 'test result' $OUT/parity_$v.log)"
done
grep -E " rms " $OUT/parity_v6.log > $OUT/rms_v6; grep -E " rms " $OUT/parity_v7.log > $OUT/rms_v7
paste -d'\n' $OUT/rms_v6 $OUT/rms_v7 | sed 's/^/  /'
grep -E "panicked|differs|over" $OUT/parity_v7.log | head -5
DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=v6,v7 timeout 60 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench1.log 2>&1
grep -hE "BENCH prep|test result" $OUT/bench1.log
for m in forward_parity backward_parity; do
  DNNPLAN_GDN_FWD_PREP=v7 timeout 70 compute-sanitizer --tool memcheck --print-limit 5 $t $m --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck v7 $m: /"
done
DNNPLAN_GDN_BENCH_PREP=1 DNNPLAN_GDN_BENCH_PREP_VARIANTS=v7,v6 timeout 60 $b gdn_prep_variants --test-threads=1 --nocapture > $OUT/bench2.log 2>&1
grep -hE "BENCH prep|test result" $OUT/bench2.log
