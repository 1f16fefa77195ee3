#!/usr/bin/env bash
# Session 63's sixth call: issue 8's benchmark with the peers in the same run (bench/device_peers_55b.sh)
# on this tree's pack (device77.txz: b2c on the wgmma chain).
# run: command "bash bench/device_s63f.sh", carry [".xfer-tests68", ".xfer-final"] (~500 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
cp .xfer-tests68/device77.txz .xfer-tests68/device68.txz
BUDGET=${BUDGET:-470} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s63f.log"
