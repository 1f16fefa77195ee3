#!/usr/bin/env bash
# Session 59's fourth call (harness only): the chain's P and Q by wgmma over swizzled q, k rows
# (Fused16Form WG, session 57's patch on the lean step with the producer's O store) on w8c, w4c,
# b2c and w8's chain alone, against the product's forms. Every CHECK, then alternating, two rounds.
# run: command "bash bench/device_s59d.sh", any kind. ~150 s.
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same commands.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
dev_f16_checks ".*wg"
dev_f16_rounds w8c,w8c-wg,w4c,w4c-wg,b2c,b2c-wg,w8-chain-only,w8-wg-chain-only
dev_f16_rounds w8c,w8c-wg,b2c,b2c-wg 1 FUSED16_FLAGS=1 | sed 's/^FUSED16 /FUSED16 l2 /'
dev_elapsed
