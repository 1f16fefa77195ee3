tar xzf .xfer-final/device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
python3 - > $OUT/load.log 2>&1 <<'PY' &
import torch, time
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
t = time.time(); n = 0
while time.time() - t < 75:
    a @ a; n += 1
torch.cuda.synchronize(); print("load matmuls", n)
PY
sleep 8
for i in 1 2 3; do timeout 60 .device/tests/gpu_cudnn-* --test-threads=1 > $OUT/gpu_cudnn_$i.log 2>&1; echo "gpu_cudnn under load, run $i: $(grep -E 'test result' $OUT/gpu_cudnn_$i.log)"; grep -E "FAILED|panicked" $OUT/gpu_cudnn_$i.log | head -5; done
timeout 60 .device/tests/gpu_cudnn_perf-* --test-threads=1 > $OUT/gpu_cudnn_perf.log 2>&1; echo "gpu_cudnn_perf: $(grep 'test result' $OUT/gpu_cudnn_perf.log)"
wait
cat $OUT/load.log
OUT=$OUT/torch timeout 200 python/run_gpu_tests.sh > $OUT/torch.log 2>&1; echo "torch rc=$?"
grep -E "passed|failed" $OUT/torch/torch_tests.log 2>/dev/null | tail -2
grep -A14 -E "added over|over the library" $OUT/torch/torch_boundary.log 2>/dev/null | head -20
