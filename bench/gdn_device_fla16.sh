#!/usr/bin/env bash
# Session 16, lead: the third device call: fla-core's forward+backward, which the peers call
# (bench/gdn_device_peers16.sh) skipped for budget, then our checkpoint benchmarks again in the
# same call (their plain forward and recompute backward are ours without checkpoints; the
# (4,8192,16) lines, which the peers call's filter dropped, are kept here).
# run tool: carry [".xfer-final"], command "bash bench/gdn_device_fla16.sh".
set -uo pipefail
start=$(date +%s)
budget=${FLA_BUDGET_S:-270}
left() { echo $((budget - ($(date +%s) - start))); }
out=${OUT:-/tmp/fla16-out}; mkdir -p "$out"
tar xf .xfer-final/device.txz && rm -rf whl && cp -r .xfer-final/whl whl
source .device/device-env.sh > "$out/env.log" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl > "$out/install.log" 2>&1
export TRITON_CACHE_DIR=/tmp/triton-cache PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:${PYTHONPATH:-}
pids=()
for i in 0 1 2 3; do
  timeout 160 python3 bench/gdn_peers_bench.py fla fwdbwd "$i" > "$out/fla_warm_$i.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
echo "fla warm-up done at $(( $(date +%s) - start )) s: $(cat "$out"/fla_warm_*.log | grep -c '^BENCH fla fwdbwd .* [0-9.]*$') of 4 shapes ran"
timeout $(( $(left) - 45 )) python3 bench/gdn_peers_bench.py fla fwdbwd 0 1 2 3 2>&1 | grep -v -i warn | tee "$out/fla_fwdbwd.log"
echo "fla timed at $(( $(date +%s) - start )) s"
source bench/device_lib.sh
b=$(dev_bin gpu_gdn_bench)
DNNPLAN_GDN_BENCH_CKPT=1 DNNPLAN_GDN_BENCH_CKPT_ROUNDS=1 timeout "$(left)" "$b" gdn_checkpoint_forward gdn_backward_checkpoints --test-threads=1 --nocapture 2>&1 \
  | grep -oE "BENCH ckpt.*|panicked.*|test result.*" | tee "$out/ckpt_bench.log"
echo "elapsed $(( $(date +%s) - start )) s"
