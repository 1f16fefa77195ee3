#!/usr/bin/env bash
# Session 64: gpu_gdn and gpu_gdn_pdl on a pack (PACK, default device79.txz: d6b350c's one-pass
# rule), then the one-pass switch at the product level (device_s64b.sh) under that rule.
# run: command "bash bench/device_s64d.sh", carry [".xfer-tests68"], any kind (~150 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
dev_pack s64t "${PACK:-device79.txz}"
dev_pack_tests s64t
PACK=${PACK:-device79.txz} bash bench/device_s64b.sh
