#!/usr/bin/env bash
# Session 39, lead: the encoded tensor maps reused across executes at the same addresses
# (cuda::tma::EncodedMaps in both GDN plans): the whole gpu_gdn suite and the host time per execute.
# Command (~120 s): `cd .xfer-sr && tar xJf dev.txz -C .. && cd .. && OUT=$OUT bash bench/gdn_device_cache39.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/cache39; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin cache39
chmod +x .device/tests/* 2>/dev/null
t=$(dev_bin gpu_gdn)
for f in backward_parity forward_parity backward_parity forward_parity; do
  timeout 60 $t $f --test-threads=1 --nocapture 2>&1 | grep -E "host time" | sed "s/^/$f /"
done
timeout 200 $t --test-threads=1 2>&1 | grep -E "test result|panicked|FAILED"
echo "elapsed ${SECONDS}s"
