#!/usr/bin/env bash
# Session 63's fifth call: the product with b2c on the wgmma chain (WG + UW, CR 160 / PR 96;
# .xfer-tests68/device77.txz, this tree's pack) against main's (device76.txz): gpu_gdn and
# gpu_gdn_pdl on device77, memcheck of the one pass's 255-sequence test (every form) on it, then
# the forward by rule through the product, device76 against device77, alternating, two rounds at
# (4,8192,16), (16,2048,32) and the ragged mix.
# run: command "bash bench/device_s63e.sh", any kind, carry [".xfer-tests68"] (~250 s).
# Output: bench/device_s63e_*.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_begin s63e
dev_f16_begin
dev_pack old device76.txz
dev_pack new device77.txz
dev_pack_tests new
dev_elapsed
( source /tmp/new/.device/device-env.sh > /dev/null 2>&1
  DEV_CAP_S=150 dev_memcheck "$(ls /tmp/new/.device/tests/gpu_gdn-* | head -1)" one_pass_forward_serves_its_most_sequences )
dev_elapsed
dev_pack_fwd_ab old new "0 2 3" 2
dev_elapsed
