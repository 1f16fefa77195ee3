#!/usr/bin/env bash
# Session 64 on an H200, on this tree's pack (device79.txz: main's kernels of session 63, the
# one-pass rule of session 64: w8c / b2c at every uncut shape, b2c from three blocks per SM):
# with TESTS=1 first device_s64d.sh (gpu_gdn, gpu_gdn_pdl, the switch), then issue 8's
# table with the peers in the same run (device_peers_55b.sh).
# run: command "bash bench/device_s64c.sh", kind nvidia-h200, carry [".xfer-tests68", ".xfer-final"] (~580 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
[ -n "${TESTS:-}" ] && bash bench/device_s64d.sh
cp .xfer-tests68/device79.txz .xfer-tests68/device68.txz
BUDGET=${BUDGET:-400} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s64c.log"
