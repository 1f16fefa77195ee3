#!/usr/bin/env bash
# Session 60's first call: the persistent b2c (b2p, kernels/include/gdn_fwd_fused16_persist.cuh).
# (1) the harness: b2p / b2p-nosp against b2c at the benchmark shapes and the wave shapes (with and
# without states), built while (2) gpu_gdn and gpu_gdn_pdl run on device77.txz (b2p among the
# forms, at 1 / 3 / 7 clusters too); (3) the forward through the product: device76 (main 876171c)
# by rule against device77 by rule (the chain step factored out: w8c / b2c .text moved) and
# device77 with b2p forced, two rounds; (4) the harness's CHECKs.
# run: command "bash bench/device_s60a.sh", any kind, carry [".xfer-tests68"]. ~300 s.
# NOTE (session 60): ran on a tree with b2p wired into the product (a FUSED16_FORMS row `b2p`, its
# kernels/src/gdn_fused16.cu entries, grid (2, C, 1), DNNPLAN_GDN_FWD_FUSED_CLUSTERS); not landed
# (bench/gdn_results.md, session 60): its product steps need that wiring, the harness steps do not.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_f16_build &
dev_pack main device76.txz
dev_pack new device77.txz
dev_pack_tests new
wait
dev_elapsed
dev_f16_rounds b2c,b2p,b2p-nosp 2
dev_f16_rounds b2c,b2p 1 FUSED16_SHAPES=waves
dev_f16_rounds b2c,b2p 1 FUSED16_SHAPES=waves FUSED16_STATES=none
dev_elapsed
dev_pack_fwd_ab main new "0 2 3" 2
(
  source /tmp/new/.device/device-env.sh > /dev/null 2>&1
  b=$(ls /tmp/new/.device/tests/gpu_gdn_bench-* | head -1)
  for rep in 1 2; do
    DNNPLAN_GDN_FWD_FUSED=b2p DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="2 3" \
      timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > "$DEV_TMP/ours_b2p_$rep.log" 2>&1
    echo "== product new b2p round $rep rc=$?"
    grep -E "BENCH ours fwd " "$DEV_TMP/ours_b2p_$rep.log" | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-110
  done
)
dev_elapsed
dev_f16_checks "b2c|b2p"
dev_elapsed
