# Session 8 (helper wgscan): the wgmma output scan on the H200, one call. Carry [".xfer-wgscan"]
# (device.tgz: .device (staged lib + gpu_gdn test binary + device-env.sh), kernels/include, bench/dnnp_wgmma_selftest.cu).
# 1. the wgmma wrappers on the hardware against an fp64 matmul (nvcc there);  2. parity, default and
# DNNPLAN_GDN_FWD_SCAN=wg / wgn / wg + 4 pieces (the tests capture and replay every execute bitwise);
# 3. memcheck over the forward tests with wg (and 4 pieces);  4. forward scan times w4 / w8 / wg / wgn at the four shapes.
# Call 1 (bench/gdn_device_wgscan_1.log) ran this script with wg0 (O stored inside its chunk; since
# replaced by wgn = no proxy fence per chunk) in place of wgn.
cd .xfer-wgscan && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); L=$OUT/wgscan.log
NV=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
echo "== selftest (nvcc: $NV)" | tee -a $L
[ -n "$NV" ] && timeout 60 $NV -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -Ikernels/include bench/dnnp_wgmma_selftest.cu -o /tmp/st > $OUT/st_build.log 2>&1 && timeout 20 /tmp/st 2>&1 | tee -a $L
echo "== default" | tee -a $L
timeout 90 $t --test-threads=1 --nocapture > $OUT/parity_default.log 2>&1; grep -E "test result|panicked" $OUT/parity_default.log | tee -a $L
for v in "DNNPLAN_GDN_FWD_SCAN=wg" "DNNPLAN_GDN_FWD_SCAN=wg DNNPLAN_GDN_FWD_PIECES=4" "DNNPLAN_GDN_FWD_SCAN=wgn"; do
  echo "== $v" | tee -a $L
  env $v timeout 40 $t forward_parity --test-threads=1 --nocapture > $OUT/p.log 2>&1
  if [ "$v" = "DNNPLAN_GDN_FWD_SCAN=wg" ]; then
    env $v timeout 40 $t state_pool --test-threads=1 --nocapture >> $OUT/p.log 2>&1
    env $v timeout 40 $t batch_invariant --test-threads=1 --nocapture >> $OUT/p.log 2>&1
  fi
  grep -E "test result|panicked|differs" $OUT/p.log | tee -a $L; grep -iE "rms|err" $OUT/p.log > $OUT/rms_$(echo $v | tr ' =' '__').log
done
grep -iE "rms|err" $OUT/parity_default.log > $OUT/rms_default.log
echo "== memcheck wg" | tee -a $L
DNNPLAN_GDN_FWD_SCAN=wg timeout 60 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result|Invalid" | head -8 | tee -a $L
DNNPLAN_GDN_FWD_SCAN=wg DNNPLAN_GDN_FWD_PIECES=4 timeout 45 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result|Invalid" | head -8 | tee -a $L
echo "== timing" | tee -a $L
DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS= DNNPLAN_GDN_TIMING_FSCANS=w4,w8,wg,wgn timeout 120 $t timing_forward_scans --test-threads=1 --nocapture 2>&1 | grep -E "fscan|test result|panicked" | tee -a $L
