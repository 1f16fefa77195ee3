#!/usr/bin/env bash
# Session 65, the H200 call: the one-pass switch (device_s64b.sh) on main's pack (device81.txz), then
# issue 8's table with the peers in the same run (device_peers_55b.sh). On an H100 (its table: session
# 63, same kernels; its switch and tests: device_s65a.sh) only the switch runs.
# Not run (no H200 lent in session 65). run: command "bash bench/device_s65c.sh", carry [".xfer-tests68", ".xfer-final"] (~450 s on an H200).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
PACK=device81.txz bash bench/device_s64b.sh
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || [ -n "${TABLE:-}" ]; then
  cp .xfer-tests68/device81.txz .xfer-tests68/device68.txz
  BUDGET=${BUDGET:-400} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s65c.log"
fi
