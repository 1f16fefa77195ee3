#!/usr/bin/env bash
# Session 59's third call: gpu_gdn_pdl on device75.txz (its line fell outside call b's kept output),
# then issue 8's benchmark with the peers in the same run on device75 (bench/device_peers_55b.sh):
# every one-pass form on the lean step, b2c with the early test.
# run: command "bash bench/device_s59c.sh", kind nvidia-h200 (needs_h200), carry [".xfer-tests68", ".xfer-final"].
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/new
tar xJf .xfer-tests68/device75.txz -C /tmp/new
( source /tmp/new/.device/device-env.sh > /dev/null 2>&1
  pd=$(ls /tmp/new/.device/tests/gpu_gdn_pdl-* | head -1)
  timeout 30 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log )
cp .xfer-tests68/device75.txz .xfer-tests68/device68.txz
BUDGET=$(( ${LIMIT:-585} - ($(date +%s) - t0) - 15 )) bash bench/device_peers_55b.sh
