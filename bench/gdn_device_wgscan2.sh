# Session 8 (helper wgscan2): the wgmma output scan's proxy-fence question on the H200, one call
# (timeout 150 s). Carry [".xfer-wgscan2"] (device.tgz: .device with the staged lib, the gpu_gdn
# test binary and device-env.sh). Parity (the tests capture and replay every execute bitwise) with
# DNNPLAN_GDN_FWD_SCAN = wg / wgn / wgs / wgl (and wgn / wgs / wgl with 4 pieces), forward scan times
# w4 / w8 / wg / wgn / wgs / wgl at the four benchmark shapes, then memcheck with wgs and wgl.
cd .xfer-wgscan2 && tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); L=$OUT/wgscan2.log
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a $L
echo "== default forward_parity" | tee -a $L
timeout 20 $t forward_parity --test-threads=1 --nocapture > $OUT/p_default.log 2>&1; grep -E "test result|panicked" $OUT/p_default.log | tee -a $L
for s in wg wgn wgs wgl; do
  echo "== DNNPLAN_GDN_FWD_SCAN=$s" | tee -a $L
  for f in forward_parity state_pool batch_invariant; do
    DNNPLAN_GDN_FWD_SCAN=$s timeout 20 $t $f --test-threads=1 --nocapture >> $OUT/p_$s.log 2>&1
  done
  grep -E "test result|panicked|differs" $OUT/p_$s.log | tee -a $L
  if [ $s != wg ]; then
    echo "== DNNPLAN_GDN_FWD_SCAN=$s DNNPLAN_GDN_FWD_PIECES=4" | tee -a $L
    DNNPLAN_GDN_FWD_SCAN=$s DNNPLAN_GDN_FWD_PIECES=4 timeout 20 $t forward_parity --test-threads=1 --nocapture > $OUT/p_${s}_p4.log 2>&1
    grep -E "test result|panicked|differs" $OUT/p_${s}_p4.log | tee -a $L
  fi
done
echo "== timing" | tee -a $L
DNNPLAN_GDN_TIMING_SCANS=fwd DNNPLAN_GDN_TIMING_REPLAYS= DNNPLAN_GDN_TIMING_FSCANS=w4,w8,wg,wgn,wgs,wgl timeout 75 $t timing_forward_scans --test-threads=1 --nocapture 2>&1 | grep -E "fscan|test result|panicked" | tee -a $L
for s in wgl wgs; do
  echo "== memcheck $s" | tee -a $L
  DNNPLAN_GDN_FWD_SCAN=$s timeout 25 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result|Invalid" | head -6 | tee -a $L
done
