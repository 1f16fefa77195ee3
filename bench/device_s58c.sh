#!/usr/bin/env bash
# Session 58's third call: the w8c form (Fused16W8CP: eight producer warps as clusters, 16 stages,
# the lean step, the producer's O store) as the rule's one-block form. (1) gpu_gdn and gpu_gdn_pdl
# on device73.txz (w8c by rule; w4c, b2c with PO as in device71); (2) the forward by rule through
# the product, device71 (main before w8c) against device73, alternating, two rounds; (3) issue 8's
# benchmark with the peers in the same run on device73 (bench/device_peers_55b.sh), with what the
# call's limit leaves.
# run: command "bash bench/device_s58c.sh", kind nvidia-h200 (else any), carry [".xfer-tests68", ".xfer-final"].
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same steps.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_pack main device71.txz
dev_pack new device73.txz
dev_pack_tests new
dev_elapsed
dev_pack_fwd_ab main new
dev_elapsed
cp .xfer-tests68/device73.txz .xfer-tests68/device68.txz
BUDGET=$(( ${LIMIT:-585} - ($(date +%s) - T0) - 15 )) bash bench/device_peers_55b.sh
