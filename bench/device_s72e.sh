#!/usr/bin/env bash
# Staged in session 72 (not run: no device budget left). Two things in one call:
# A. this tree's own device run (device_s72d.sh's purpose without the merge's pack): gpu_gdn and
#    gpu_gdn_pdl on o, the forward hashes of o against m (500d3c7) by rule and with b2c forced (the
#    TQ candidate was BITWISE main's b2c in session 72's call 1), and the backward's by rule.
# B. a ptxas screen (bench/ptxas_variant_pack.sh): the same tree with every bundled cubin compiled
#    at `--register-usage-level` 0 (l0) and 10 (l10) against the default (o): their hashes must be
#    o's (allocation and scheduling only), then forward, backward and training step by rule at the
#    four benchmark shapes, the packs alternating in both orders.
# Packs (.xfer-tests72, git-ignored; rebuild with the recipes named): m device90.txz (500d3c7's
# pack, session 70), o device74.txz (75689b4, session 72's recipe in bench/gdn_results.md),
# l0 / l10 device74_l0.txz / device74_l10.txz (bench/ptxas_variant_pack.sh at 75689b4).
# run: command "bash bench/device_s72e.sh", carry [".xfer-tests72"] (the four packs only: 29 MB,
# with the tree ~59 MB), ~420 s; any kind.
# Reading: A green and BITWISE -> session 72's fix is validated (quote gpu_gdn's summary line);
# B: a level whose hashes are o's and that is faster at the rule's shapes -> put its flag in
# kernels/tools/build_cubins.py's COMMON_FLAGS (per kernel if the cubins disagree) and rebuild.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_packs_begin s72e .xfer-tests72 m:device90.txz o:device74.txz l0:device74_l0.txz l10:device74_l10.txz
echo "== A: gpu_gdn on o"
dev_pack_tests o
dev_elapsed
{ dev_pack_fwd_same m o "forward_parity by rule: 500d3c7 / now"
  dev_pack_fwd_same m o "forward_parity, b2c forced: 500d3c7 / now" DNNPLAN_GDN_FWD_FUSED=b2c
  for v in l0 l10; do
    dev_pack_same fwd o $v "forward_parity by rule: default / $v"
    dev_pack_same bwd o $v "backward_parity by rule: default / $v"
  done; } 2>&1 | tee "$OUT/s72e_hashes.log"
dev_elapsed
echo "== B: forward, backward, training step by rule: o, l0, l10"
{ DEV_BENCH_RE="BENCH ours (fwd|bwd|train) " dev_pack_fwd_packs "o l0 l10" "0 1 2 3" 1
  DEV_BENCH_RE="BENCH ours (fwd|bwd|train) " dev_pack_fwd_packs "l10 l0 o" "0 1 2 3" 1; } 2>&1 | tee "$OUT/s72e_bench.log"
dev_elapsed
