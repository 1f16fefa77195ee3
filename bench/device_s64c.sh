#!/usr/bin/env bash
# Session 64 (not run: no H200 was lent) on an H200, on this tree's pack (device80.txz: main's
# kernels of session 63, session 64's one-pass rule: w8c below three blocks per SM, b2c from there):
# with TESTS=1 first device_s64d.sh (gpu_gdn, gpu_gdn_pdl, the switch), then issue 8's
# table with the peers in the same run (device_peers_55b.sh).
# run: command "bash bench/device_s64c.sh", kind nvidia-h200, carry [".xfer-tests68", ".xfer-final"] (~580 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
[ -n "${TESTS:-}" ] && PACK=device80.txz bash bench/device_s64d.sh
cp .xfer-tests68/device80.txz .xfer-tests68/device68.txz
BUDGET=${BUDGET:-400} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s64c.log"
