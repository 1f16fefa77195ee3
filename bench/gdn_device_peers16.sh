#!/usr/bin/env bash
# Session 16, lead: the second device call after the final run: fla's Triton autotuning warmed
# first, then the GDN benchmark (ours, the KDA path, fla-core) in one run, then (the GPU otherwise
# idle) the state-checkpoint benchmarks (the forward writing c = 64 io rows against the plain
# forward; the backward reusing them against the recompute), so the training-step row (forward
# with checkpoints + backward reusing them) and the peers come from the same call.
# run tool: carry [".xfer-final"] (the final run's staging), command "bash bench/gdn_device_peers16.sh".
set -uo pipefail
start=$(date +%s)
budget=${PEERS_BUDGET_S:-300}
left() { echo $((budget - ($(date +%s) - start))); }
out=${OUT:-/tmp/peers16-out}; mkdir -p "$out"
tar xf .xfer-final/device.txz && rm -rf whl && cp -r .xfer-final/whl whl
source .device/device-env.sh > "$out/env.log" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl > "$out/install.log" 2>&1
export TRITON_CACHE_DIR=/tmp/triton-cache PYTHONUNBUFFERED=1
pids=()
for i in 0 1 2 3; do
  PYTHONPATH=/tmp/site:${PYTHONPATH:-} timeout 170 python3 bench/gdn_peers_bench.py fla fwdbwd "$i" > "$out/fla_warm_$i.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
echo "fla warm-up done at $(( $(date +%s) - start )) s: $(cat "$out"/fla_warm_*.log | grep -c '^BENCH fla fwdbwd .* [0-9.]*$') of 4 shapes ran"
l=$(left)
OUT=$out/gdn GDN_PARITY=0 BENCH_BUDGET_S=$((l - 60)) timeout "$((l - 55))" bash bench/gdn_bench_run.sh > "$out/gdn_run.log" 2>&1
cat "$out/gdn/gdn_bench_table.md" 2>/dev/null | head -8
grep -E "skipped|^BENCH (fla|kda)" "$out/gdn/peers.log" | head -20
# After the peers (nothing else on the GPU): the checkpoint benchmarks, ours alone.
source bench/device_lib.sh
b=$(dev_bin gpu_gdn_bench)
l=$(left)
DNNPLAN_GDN_BENCH_CKPT=1 timeout "$l" "$b" gdn_checkpoint_forward gdn_backward_checkpoints --test-threads=1 --nocapture 2>&1 \
  | grep -oE "BENCH ckpt.*|panicked.*|test result.*" | tee "$out/ckpt_bench.log"
echo "elapsed $(( $(date +%s) - start )) s"
