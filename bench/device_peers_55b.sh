#!/usr/bin/env bash
# Session 55: issue 8's benchmark on the landing tree's pack (the cluster forms w4c /
# b2c by rule) with the peers in the same run — bench/gdn_bench_run.sh without parity and ncu: ours
# (forward by rule, backward, training step), then the KDA path and fla-core 0.6.0 (GPU time by
# CUDA-graph replay), joined by bench/gdn_bench_table.py; budget-capped (fla's Triton autotuning is
# cold on a fresh machine, so its later steps may be cut). Worth a call on an H200 (issue 8 asks for
# the H200; sessions 51-52 ran it on H100s): the reply's device says which.
# run: command "bash bench/device_peers_55b.sh", carry [".xfer-tests68", ".xfer-final"] (device68.txz; whl/);
# PACK=DIR/NAME.txz (default .xfer-tests68/device68.txz) times another pack (carry its folder instead).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf "${PACK:-.xfer-tests68/device68.txz}"
rm -rf whl && cp -r .xfer-final/whl whl
export TRITON_CACHE_DIR=/tmp/triton-cache
OUT=$OUT/gdn GDN_PARITY=0 GDN_NCU=0 BENCH_BUDGET_S=${BUDGET:-440} FLA_CAP_S=${FLA_CAP:-190} bash bench/gdn_bench_run.sh 2>&1 | grep -vE "^running|^test .* ok$" | tail -60
echo "elapsed $(( $(date +%s) - t0 )) s"
