#!/usr/bin/env bash
# Session 39, lead: the final head after the review mends (host code only): the backward by rule
# (tw7) against tw3 forced, the saved replay, the misaligned operands, the forward.
# Command (~60 s): `cd .xfer-sr && tar xJf dev.txz -C .. && cd .. && OUT=$OUT bash bench/gdn_device_final39.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/final39; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin final39
chmod +x .device/tests/* 2>/dev/null
t=$(dev_bin gpu_gdn)
dev_bwd_case R "$t"
dev_bwd_case T3 "$t" DNNPLAN_GDN_BWD_TOKENS=tw3
dev_same $DEV_TMP/h_R $DEV_TMP/h_T3 "backward by rule (tw7) == tw3 forced"
dev_parity "forward_parity" "$t" forward_parity
DEV_CAP_S=90 dev_parity "the_saved_replay" "$t" the_saved_replay
dev_parity "misaligned_operands" "$t" misaligned_operands
echo "elapsed ${SECONDS}s"
