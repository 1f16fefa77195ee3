#!/usr/bin/env bash
# Session 56's third call (H200): what session 56's second call (bench/device_s56c.sh) left out of
# issue 8's H200 table — fla-core 0.6.0's forward+backward at (16,2048,32) and the ragged mix (its
# Triton autotuning ran past that call's budget) — then, with what is left, session 55's staged
# wave-fill check (bench/device_h200_55c.sh's first part: the ragged mix and 10 x 2,995 tokens at
# H = 16, by rule against DNNPLAN_GDN_FWD_FUSED=0, one round).
# run: command "bash bench/device_h200_56d.sh", kind nvidia-h200, carry [".xfer-tests68", ".xfer-final"] (main's pack as device68.txz).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .xfer-final/whl/*.whl \
  && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/triton-cache
timeout ${FLA_CAP:-300} python3 bench/gdn_peers_bench.py fla fwdbwd 2 3 2>&1 | grep -v -i "warn" | grep -E "^BENCH|Error|error" | head -20
echo "elapsed $(( $(date +%s) - t0 )) s"
tar xJf .xfer-tests68/device68.txz
source .device/device-env.sh > /dev/null 2>&1
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
for form in rule 0; do
  if [ $form = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$form; fi
  DNNPLAN_GDN_BENCH_EXTRA="equal-10x2995-H16:2995,2995,2995,2995,2995,2995,2995,2995,2995,2995:16" \
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="3 4" \
    timeout 80 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > /tmp/fill_$form.log 2>&1
  echo "== fused=$form"; grep -E "BENCH ours fwd " /tmp/fill_$form.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-140
done
echo "elapsed $(( $(date +%s) - t0 )) s"
