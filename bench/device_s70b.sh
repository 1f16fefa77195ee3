#!/usr/bin/env bash
# Session 70, call 3: issue 8's table in one run on main's product (device90.txz: 7365f3b's pack; its
# product cubins are byte-identical to main's) — ours (forward by rule, backward, the saved-replay
# training step), the KDA path and fla-core 0.6.0 (device_peers_55b.sh). Issue 8 asks for the H200
# (its last H200 table is session 59's); the reply's device says which card ran it.
# run: command "bash bench/device_s70b.sh" (BUDGET=S caps the table, default 560), carry
# [".xfer-tests69", ".xfer-final"], ~300 s. Session 70 ran it on an H100 (the H200 requests were refused).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p .xfer-tests68 && cp .xfer-tests69/device90.txz .xfer-tests68/device68.txz
BUDGET=${BUDGET:-560} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s70b_table.log"
echo "elapsed $SECONDS s"
