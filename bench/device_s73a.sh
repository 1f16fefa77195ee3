#!/usr/bin/env bash
# Session 73, call 2: this tree's device run with gdn_fwd / gdn_bwd built at ptxas
# --register-usage-level=10 (kernels/manifest.toml's `ptxas`; session 73's screen, device_s72e.sh).
# Packs (.xfer-tests73, git-ignored): p device75.txz (b76cd7b: gdn_fwd / gdn_bwd cubins byte-identical
# to device74_l10.txz's, gdn_fused16 to device74's), o device74.txz (75689b4, every cubin at the default).
# A: gpu_gdn and gpu_gdn_pdl on p; the forward and backward hashes of p against o by rule (BITWISE:
#    the screen's l10 pack was); B: forward, backward and training step by rule at the four shapes, p and o
#    alternating in both orders, ROUNDS (default 2) rounds each (the full per-kernel lines in $OUT/ours_*.log).
# run: command "bash bench/device_s73a.sh", carry [".xfer-tests73"] (15 MB), ~230 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_packs_begin s73a .xfer-tests73 p:device75.txz o:device74.txz
echo "== A: gpu_gdn on p"
dev_pack_tests p
dev_elapsed
{ dev_pack_same fwd o p "forward_parity by rule: default / manifest levels"
  dev_pack_same bwd o p "backward_parity by rule: default / manifest levels"; } 2>&1 | tee "$OUT/s73a_hashes.log"
dev_elapsed
echo "== B: forward, backward, training step by rule: p, o"
{ DEV_BENCH_RE="BENCH ours (fwd|bwd|train) " dev_pack_fwd_packs "p o" "0 1 2 3" "${ROUNDS:-2}"
  DEV_BENCH_RE="BENCH ours (fwd|bwd|train) " dev_pack_fwd_packs "o p" "0 1 2 3" "${ROUNDS:-2}"; } 2>&1 | tee "$OUT/s73a_bench.log"
cp "$DEV_TMP"/ours_*.log "$OUT/" 2>/dev/null
dev_elapsed
