# run tool: carry [".xfer-cap"] (device.tgz: .device/device-env.sh, .device/lib, the gpu_gdn test binary)
cd .xfer-cap && tar xzf device.tgz && source .device/device-env.sh > /dev/null 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
for m in rule 0; do
  echo "== DNNPLAN_GDN_BWD_OVERLAP=$m"
  DNNPLAN_GDN_BWD_OVERLAP=$m timeout 60 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "captured|host time|test result|panicked|differs"
done
echo "== DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4"
DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 timeout 60 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "captured|host time|test result|panicked|differs"
echo "== forward matrix (host time)"
timeout 60 $t forward_parity_matrix --test-threads=1 --nocapture 2>&1 | grep -E "host time|test result|panicked"
echo "== whole gpu_gdn"
timeout 90 $t --test-threads=1 2>&1 | grep -E "test result|panicked"

# --- second call's script ---
# cd .xfer-cap && tar xzf device.tgz && source .device/device-env.sh > /dev/null 2>&1
# t=$(ls .device/tests/gpu_gdn-* | head -1)
# echo "== forward tests (capture + replay, host time)"
# timeout 90 $t forward --test-threads=1 --nocapture 2>&1 | grep -E "captured|host time|test result|panicked|differs"
# timeout 90 $t batch_invariant --test-threads=1 --nocapture 2>&1 | grep -E "captured|test result|panicked|differs"
# timeout 90 $t state_pool --test-threads=1 --nocapture 2>&1 | grep -E "captured|test result|panicked|differs"
# echo "== DNNPLAN_GDN_FWD_PIECES=4 forward matrix"
# DNNPLAN_GDN_FWD_PIECES=4 timeout 90 $t forward_parity_matrix --test-threads=1 --nocapture 2>&1 | grep -E "captured|test result|panicked|differs"
# echo "== whole gpu_gdn"
# timeout 90 $t --test-threads=1 2>&1 | grep -E "test result|panicked"
