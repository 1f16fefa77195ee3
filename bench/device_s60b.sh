#!/usr/bin/env bash
# Session 60's second call: the persistent b2c (b2p) with its producer's and chain's registers
# trimmed (one walk, the ring's stage and phase from one counter, the step's lane offsets from the
# caller). (1) the harness: b2p against b2c at the benchmark shapes (two rounds) and the wave shapes
# (with and without states), built while (2) gpu_gdn and gpu_gdn_pdl run on device78.txz; (3) the
# forward through the product: device76 (main 876171c) against device78 by rule, and device78 with
# b2p forced at (16,2048,32), two rounds; (4) the harness's CHECKs.
# run: command "bash bench/device_s60b.sh", any kind, carry [".xfer-tests68"]. ~250 s.
# NOTE (session 60): as device_s60a.sh, ran with b2p wired into the product (not landed); the
# harness steps run on the landed bench code.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_f16_build &
dev_pack main device76.txz
dev_pack new device78.txz
dev_pack_tests new
wait
dev_elapsed
dev_f16_rounds b2c,b2p 2
dev_f16_rounds b2c,b2p 1 FUSED16_SHAPES=waves
dev_f16_rounds b2c,b2p 1 FUSED16_SHAPES=waves FUSED16_STATES=none
dev_elapsed
dev_pack_fwd_ab main new "0 2 3" 2
(
  source /tmp/new/.device/device-env.sh > /dev/null 2>&1
  b=$(ls /tmp/new/.device/tests/gpu_gdn_bench-* | head -1)
  for rep in 1 2; do
    DNNPLAN_GDN_FWD_FUSED=b2p DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="2" \
      timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > "$DEV_TMP/ours_b2p_$rep.log" 2>&1
    echo "== product new b2p round $rep rc=$?"
    grep -E "BENCH ours fwd " "$DEV_TMP/ours_b2p_$rep.log" | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-110
  done
)
dev_elapsed
dev_f16_checks "b2c|b2p"
dev_elapsed
