#!/usr/bin/env bash
# Session 19, lead: the preps' shared helpers (load_kq_rows: the slim prep's and prep15's k / q
# copies; store_norm_pieces: prep_norm_row's and prep15_norm_row_half's per-element stores) leave
# every default kernel's machine code as it was, and 10 switch / K = 64 entries differ only in
# register moves (gdn_fwd_prep14_*, gdn_fwd_prep15_*_k64, gdn_bwd_prep14_*, gdn_bwd_prep15_bf16_k64).
# This build (T) against the build before (B, .xfer-final/final19.txz): forward hashes by rule, with
# full factors and with the v14 prep; backward hashes by rule and with the v14 prep; every
# session-9 reference hash; the GDN GPU tests.
# Stage: device-pack.sh --features gpu-tests in /work/main, then
#   tar cJf .xfer-final/dedup19.txz .device/device-env.sh .device/lib .device/tests/gpu_gdn-*
# run tool: carry [".xfer-final"], command "bash bench/gdn_device_dedup19.sh".
set -uo pipefail
out=${OUT:-/tmp/dedup19}; mkdir -p "$out"
mkdir -p B && tar xJf .xfer-final/final19.txz -C B && tar xJf .xfer-final/dedup19.txz
source .device/device-env.sh > "$out/env.log" 2>&1
source bench/device_lib.sh
t=$(dev_bin gpu_gdn); b=$(ls B/.device/tests/gpu_gdn-* | grep -E "/gpu_gdn-[0-9a-f]+$" | head -1)
d=$DEV_TMP
{
  for v in "rule" "full DNNPLAN_GDN_FWD_FACTORS=full" "v14 DNNPLAN_GDN_FWD_PREP=v14"; do
    set -- $v; tag=$1; shift
    dev_hashes fwd $t "$@" > $d/f_T_$tag; dev_hashes fwd $b "$@" > $d/f_B_$tag
    dev_same $d/f_T_$tag $d/f_B_$tag "forward $tag: T == B, $(wc -l < $d/f_T_$tag) hash lines"
  done
  for v in "rule" "v14 DNNPLAN_GDN_FWD_PREP=v14"; do
    set -- $v; tag=$1; shift
    dev_hashes bwd $t "$@" > $d/h_T_$tag; dev_hashes bwd $b "$@" > $d/h_B_$tag
    dev_same $d/h_T_$tag $d/h_B_$tag "backward $tag: T == B, $(wc -l < $d/h_T_$tag) hash lines"
  done
  dev_cover_reference "default backward + full-factor forward" $d/h_T_rule $d/f_T_full
  echo "gpu_gdn: $(timeout 150 $t --test-threads=1 2>&1 | grep -E 'test result|panicked' | tail -2)"
} 2>&1 | tee "$out/dedup19.log"
