#!/usr/bin/env bash
# Session 15, lead: the second device call after the final run (whose budget ran out before the
# peers): the GDN tests under the two switches the final run's capped step did not reach
# (DNNPLAN_GDN_PDL=0, DNNPLAN_GDN_BWD_PIECE_PASSES=s2), then the GDN benchmark (ours, the KDA
# path, fla-core) in one run, fla's Triton autotuning warmed in the background meanwhile.
# run tool: carry [".xfer-final"] (the final run's staging), command "bash bench/gdn_device_peers15.sh".
set -uo pipefail
start=$(date +%s)
budget=${PEERS_BUDGET_S:-300}
left() { echo $((budget - ($(date +%s) - start))); }
out=${OUT:-/tmp/peers15-out}; mkdir -p "$out"
tar xf .xfer-final/device.txz && rm -rf whl && cp -r .xfer-final/whl whl
source .device/device-env.sh > "$out/env.log" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl > "$out/install.log" 2>&1
export TRITON_CACHE_DIR=/tmp/triton-cache PYTHONUNBUFFERED=1
pids=()
for i in 0 1 2 3; do
  PYTHONPATH=/tmp/site:${PYTHONPATH:-} timeout 170 python3 bench/gdn_peers_bench.py fla fwdbwd "$i" > "$out/fla_warm_$i.log" 2>&1 &
  pids+=($!)
done
source bench/device_lib.sh
t=$(dev_bin gpu_gdn)
for v in DNNPLAN_GDN_PDL=0 DNNPLAN_GDN_BWD_PIECE_PASSES=s2; do DEV_CAP_S=70 dev_parity "$v" $t "" $v; done
echo "tests done at $(( $(date +%s) - start )) s"
wait "${pids[@]}"
echo "fla warm-up done at $(( $(date +%s) - start )) s: $(cat "$out"/fla_warm_*.log | grep -c '^BENCH fla fwdbwd .* [0-9.]*$') of 4 shapes ran"
l=$(left)
OUT=$out/gdn GDN_PARITY=0 BENCH_BUDGET_S=$((l - 5)) timeout "$l" bash bench/gdn_bench_run.sh > "$out/gdn_run.log" 2>&1
cat "$out/gdn/gdn_bench_table.md" 2>/dev/null | head -8
grep -E "skipped|^BENCH (fla|kda)" "$out/gdn/peers.log" | head -20
echo "elapsed $(( $(date +%s) - start )) s"
