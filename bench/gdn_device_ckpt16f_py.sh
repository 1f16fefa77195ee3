# Session 16 (helper ckpt16f), second call: dnnplan_torch's GDN tests with this branch's python/
# and libdnnplan.so (state checkpoints through gated_delta_net, autograd with checkpoints ==
# without), the Python launcher (DNNPLAN_TORCH_CPP=0: no C++ build on the device). Staged with
# gdn_device_ckpt16f.sh's tarball (plus .device/lib/libdnnplan.so, python/, include/); command
# `cd .xfer-ckpt16f && tar xzf device.tgz && bash bench/gdn_device_ckpt16f_py.sh`.
export OUT=${OUT:-/tmp/ckpt16f-py}
DNNPLAN_TORCH_CPP=0 timeout ${PY_CAP_S:-85} bash python/run_gpu_tests.sh --no-bench \
  -k "test_gpu_gdn or test_torch_layer" > /tmp/ckpt16f_py.log 2>&1
grep -E "PASSED|FAILED|XFAIL|ERROR|passed|failed|run_gpu_tests" /tmp/ckpt16f_py.log | grep -vE "^$" | tail -70
echo "elapsed ${SECONDS}s"
# Then the whole forward without checkpoints at (4, 8192, 16) (the overlapped slim path), T vs B
# 9b7f993, four more rounds in alternating order.
source .device/device-env.sh > /dev/null 2>&1
source bench/device_lib.sh
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s16base
for x in "B $b" "T $t" "T $t" "B $b" "B $b" "T $t" "T $t" "B $b"; do set -- $x
  [ $SECONDS -lt 118 ] && DEV_CAP_S=12 DNNPLAN_GDN_TIMING_SHAPES=0 dev_timing "$1" $2 tc12 | grep "timing (4"
done
echo "elapsed ${SECONDS}s"
