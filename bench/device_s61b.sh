#!/usr/bin/env bash
# Session 61's second call (call a hung, most likely in a bare `wait` on its own log's tee): on the warm machine,
# the product with NGX 7 on w8c and b2c (device79.txz) against main's (device76) through the
# forward by rule, the harness's next-generation entries at the benchmark shapes, gpu_gdn on it.
# Needs bench/gdn_ng61_next_gen.patch applied and device79.txz (that patch's product build, not
# kept: its header says how to rebuild it).
# run: command "bash bench/device_s61b.sh", any kind, carry [".xfer-tests68"]. ~160 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
[ -x /tmp/main/.device/tests/gpu_gdn_bench-* ] 2>/dev/null || dev_pack main device76.txz
[ -x /tmp/ng/.device/tests/gpu_gdn_bench-* ] 2>/dev/null || dev_pack ng device79.txz
[ -x "$DEV_TMP/f16bench" ] || dev_f16_build
dev_elapsed
dev_pack_fwd_ab main ng
dev_elapsed
dev_f16_rounds b2c,b2c-ng3,b2c-ng7,w8c,w8c-ng7 1
dev_f16_rounds b2c,b2c-ng7,b2c,b2c-ng7 1 FUSED16_SHAPE='(16,2048,32)'
dev_elapsed
dev_pack_tests ng
dev_elapsed
