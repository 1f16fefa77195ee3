#!/usr/bin/env bash
# Session 59's third call: gpu_gdn_pdl on device75.txz (its line fell outside call b's kept output),
# then issue 8's benchmark with the peers in the same run on device75 (bench/device_peers_55b.sh):
# every one-pass form on the lean step, b2c with the early test.
# run: command "bash bench/device_s59c.sh", kind nvidia-h200 (needs_h200), carry [".xfer-tests68", ".xfer-final"].
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same commands.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_pack new device75.txz
( source /tmp/new/.device/device-env.sh > /dev/null 2>&1
  timeout 30 "$(ls /tmp/new/.device/tests/gpu_gdn_pdl-* | head -1)" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1
  echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log )
cp .xfer-tests68/device75.txz .xfer-tests68/device68.txz
BUDGET=$(( ${LIMIT:-585} - ($(date +%s) - T0) - 15 )) bash bench/device_peers_55b.sh
