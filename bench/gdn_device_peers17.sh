#!/usr/bin/env bash
# Session 17, lead: the second device call after the final run, one call for every peer: fla's
# Triton autotuning warmed first (forward+backward, four shapes in parallel), then the GDN benchmark
# (ours per kernel, the KDA path forward and forward+backward, fla forward and forward+backward) in
# one run, then (the GPU otherwise idle) our state-checkpoint benchmarks (the forward writing rows;
# the backward reusing c = 64 io rows and seeding its replay from coarse / fp32 rows), so the ratio
# table and the training-step rows come from the same call.
# run tool: carry [".xfer-final"] (the final run's staging), command "bash bench/gdn_device_peers17.sh".
set -uo pipefail
start=$(date +%s)
budget=${PEERS_BUDGET_S:-470}
left() { echo $((budget - ($(date +%s) - start))); }
out=${OUT:-/tmp/peers17-out}; mkdir -p "$out"
tar xf .xfer-final/device.txz && rm -rf whl && cp -r .xfer-final/whl whl
source .device/device-env.sh > "$out/env.log" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl > "$out/install.log" 2>&1
export TRITON_CACHE_DIR=/tmp/triton-cache PYTHONUNBUFFERED=1
pids=()
for i in 0 1 2 3; do
  PYTHONPATH=/tmp/site:${PYTHONPATH:-} timeout "${FLA_WARM_S:-165}" python3 bench/gdn_peers_bench.py fla fwdbwd "$i" > "$out/fla_warm_$i.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
echo "fla warm-up done at $(( $(date +%s) - start )) s: $(cat "$out"/fla_warm_*.log | grep -c '^BENCH fla fwdbwd .* [0-9.]*$') of 4 shapes ran"
l=$(left)
OUT=$out/gdn GDN_PARITY=0 GDN_NCU=0 BENCH_BUDGET_S=$((l - 45)) timeout "$((l - 40))" bash bench/gdn_bench_run.sh > "$out/gdn_run.log" 2>&1
echo "benchmark done at $(( $(date +%s) - start )) s"
cat "$out/gdn/gdn_bench_table.md" 2>/dev/null | head -8
grep -E "skipped|^BENCH (fla|kda)" "$out/gdn/peers.log" | head -20
# After the peers (nothing else on the GPU): the checkpoint benchmarks, ours alone (CKPT=0 skips them:
# session 20's peers call).
if [ "${CKPT:-1}" = 1 ]; then
  source bench/device_lib.sh
  b=$(dev_bin gpu_gdn_bench)
  DNNPLAN_GDN_BENCH_CKPT=1 DNNPLAN_GDN_BENCH_CKPT_ROUNDS=1 timeout "$(left)" "$b" ${CKPT_TESTS:-gdn_checkpoint_forward gdn_backward_checkpoints} --test-threads=1 --nocapture 2>&1 \
    | grep -oE "BENCH ckpt.*|panicked.*|test result.*" | tee "$out/ckpt_bench.log"
fi
echo "elapsed $(( $(date +%s) - start )) s"
