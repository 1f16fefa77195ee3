#!/usr/bin/env bash
# Session 65 on main's pack (device81.txz: f584814, session 64's final one-pass rule, w8c below three
# blocks per SM, b2c from there): gpu_gdn, gpu_gdn_pdl and the one-pass switch (device_s64d.sh;
# TESTS=0: the switch alone, device_s64b.sh); then on an H200 issue 8's table with the peers in the
# same run (device_peers_55b.sh), on an H100 (whose table session 63 ran on the same kernels) ncu of
# the one-pass forms (device_s65b.sh; NCU=0 skips it).
# Ran in session 65 on an H100 (the ncu branch). run: command "bash bench/device_s65a.sh", carry
# [".xfer-tests68", ".xfer-final"] (~580 s; the H200 call staged: "TESTS=0 NCU=0 bash bench/device_s65a.sh", ~450 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
if [ "${TESTS:-1}" = 0 ]; then PACK=device81.txz bash bench/device_s64b.sh; else PACK=device81.txz bash bench/device_s64d.sh; fi
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || [ -n "${TABLE:-}" ]; then
  cp .xfer-tests68/device81.txz .xfer-tests68/device68.txz
  BUDGET=${BUDGET:-400} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s65a.log"
elif [ "${NCU:-1}" != 0 ]; then
  PACK=device81.txz bash bench/device_s65b.sh
fi
