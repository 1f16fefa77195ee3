#!/usr/bin/env bash
# Session 72, call 2: main after the TQ merge (521e772; pack .xfer-tests72/device73.txz built from
# it: gpu_gdn, gpu_gdn_pdl, gpu_gdn_bench, release, stripped).
# 1. gpu_gdn and gpu_gdn_pdl on the merged tree.
# 2. compute-sanitizer memcheck of forward_parity with b2c forced (the TQ boxes' first memcheck).
# 3. issue 8's table in one run (device_peers_55b.sh: ours, the KDA path, fla-core 0.6.0) with the
#    rest of ~590 s.
# run: command "bash bench/device_s72b.sh", carry [".xfer-tests72", ".xfer-final"], ~520 s; any kind
# (the reply's device says which card ran the table).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
DEV_PACKS=.xfer-tests72 dev_pack n device73.txz
echo "== gpu_gdn on merged main"
dev_pack_tests n
dev_elapsed
( source /tmp/n/.device/device-env.sh > /dev/null 2>&1
  DEV_CAP_S=150 dev_memcheck "$(ls /tmp/n/.device/tests/gpu_gdn-* | head -1)" forward_parity_matrix \
    DNNPLAN_GDN_FWD_FUSED=b2c ) 2>&1 | tee "$OUT/s72b_memcheck.log"
dev_elapsed
mkdir -p .xfer-tests68 && cp .xfer-tests72/device73.txz .xfer-tests68/device68.txz
BUDGET=$(( 590 - $(date +%s) + T0 )) bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s72b_table.log"
dev_elapsed
