#!/usr/bin/env bash
# Session 68, call 2: the lazily scaled state (LS: w8cl / b2cl, harness and CPU emulation only).
# Session 68's first call (device_s68a.sh, H100) measured the channel-split chain slower (w8ck
# 0.3644-0.3696 ms against w8c 0.2757-0.2813 at (4,8192,16); its chain alone 0.31 against w8's 0.22):
# the one pass's time follows its instructions per SM sub-partition, not its mma chain's depth. LS
# removes the chain's 64 FMUL per warp and chunk that scale X by e^{Γ_last} (sass_loop_sections.py:
# ~250 instructions per warp and chunk on the lazy path against w8c's 295).
# 1. The harness (.xfer-abl68/f16bench): its checks (every form against fp64), then w8c, w8cl,
#    w8cl1 (LS with one accumulator set for P and Q: A1), b2c,
#    b2cl, HREPS rounds (default 2) at the four benchmark shapes.
# 2. On an H200 (TABLE=0: never; TABLE=1: on any card) issue 8's table with the peers in the same run
#    (device_peers_55b.sh on .xfer-tests68/device82.txz: main's rule, its forms' .text main's).
# Staging: as device_s68a.sh's (the harness alone, no noro build).
# run: command "bash bench/device_s68b.sh", carry [".xfer-abl68", ".xfer-tests68", ".xfer-final"],
# kind nvidia-h200 (~420 s with the table; ~60 s without).
# Reading: w8cl faster than w8c (and b2cl than b2c) -> LS into the product's forms (other bits than
# the mma.sync forms: the forms test's fp64 class).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== harness checks (log harness_checks.log)"
F16BENCH=.xfer-abl68/f16bench dev_f16_checks "w8c|w8cl|w8cl1|b2c|b2cl"
grep -E "^CHECK.*(w8cl|b2cl)" "$OUT/harness_checks.log" | cut -c1-120
echo "== harness: w8c, w8cl, w8cl1, b2c, b2cl"
F16BENCH=.xfer-abl68/f16bench dev_f16_rounds w8c,w8cl,w8cl1,b2c,b2cl "${HREPS:-2}" 2>&1 | tee "$OUT/s68b_harness.log"
echo "elapsed $SECONDS s"
if [ "${TABLE:-}" = 1 ] || { [ "${TABLE:-}" != 0 ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; }; then
  cp .xfer-tests68/device82.txz .xfer-tests68/device68.txz
  BUDGET=${BUDGET:-320} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s68b_table.log"
fi
echo "elapsed $SECONDS s"
