#!/usr/bin/env bash
# Session 72, call 3: does the TQ merge move w8c? Its entries' SASS changed although their source
# did not (the parameter block is now 128-byte aligned: every constant-bank offset moved by 0x70,
# and ptxas allocated registers differently: 5,328 instructions against 5,360 in bf16 w8c); call 1
# read +0.6 % at (4,8192,16) and the ragged mix, inside its round-to-round noise.
# 1. The forward by rule, main before the merge (m: device90.txz, 500d3c7's product) and merged main
#    (n: device73.txz), at (4,8192,16) and the ragged mix (w8c), order-balanced: m n then n m, two
#    rounds each (four samples a pack).
# 2. Host time per execute of merged main (forward_parity_matrix's 4 x 512 host-timing case, by rule
#    and with b2c forced: its q, k maps cached by address).
# 3. On an H200 only: issue 8's table on merged main with the rest of ~590 s.
# run: command "bash bench/device_s72c.sh", carry [".xfer-tests72", ".xfer-final"], ~150 s (H200:
# ~560 s); any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_packs_begin s72c .xfer-tests72 m:device90.txz n:device73.txz
echo "== w8c: main (m) / merged (n)"
{ dev_pack_fwd_packs "m n" "0 3" 2; dev_pack_fwd_packs "n m" "0 3" 2; } 2>&1 | tee "$OUT/s72c_w8c.log"
dev_elapsed
echo "== host time per execute (merged main)"
( source /tmp/n/.device/device-env.sh > /dev/null 2>&1
  t=$(ls /tmp/n/.device/tests/gpu_gdn-* | head -1)
  for form in rule b2c; do
    env $( [ $form = b2c ] && echo DNNPLAN_GDN_FWD_FUSED=b2c ) timeout 60 "$t" forward_parity_matrix \
      --test-threads=1 --nocapture 2>&1 | grep -E "host time|test result" | sed "s/^/$form: /"
  done ) 2>&1 | tee "$OUT/s72c_host.log"
dev_elapsed
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p .xfer-tests68 && cp .xfer-tests72/device73.txz .xfer-tests68/device68.txz
  BUDGET=$(( 590 - $(date +%s) + T0 )) bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s72c_table.log"
  dev_elapsed
fi
