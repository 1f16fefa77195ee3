#!/usr/bin/env bash
# Session 20, helper aq20: the slim forward with A built in the output scan
# (DNNPLAN_GDN_FWD_FACTORS=slimaq: gdn_fwd_slimaqprep_* + gdn_fwd_slimaqscan_*_w4|w8).
# (and slimaqm: A built after the chunk's P', O' products; bundled at commit de7c6fb, whose cubin
# gdn_fwd sha256 f3ad6d7c… run 2 ran; unbundled after it: the script's slimaqm schedules need that build).
# 1. timing, same process, A B C C B A: gdn_benchmark_ours at the four benchmark shapes with the
#    schedules default / aq / aqm / aqm / aq / default (whole forward and the per-kernel split),
#    then at (1,32768,16) uncut (P = 1, w4): slim / aq / aqm, A B C C B A;
# 2. gpu_gdn's forward tests (forward_parity, state_pool, batch_invariant) with each switch and
#    by default (their "O rms / state rms" lines vs the fp64 reference);
# 3. memcheck of forward_parity with each switch.
# Stage (from /work/wt/aq20): cargo test --release --features gpu-tests --no-run for gpu_gdn and
# gpu_gdn_bench, copied to .device/tests/, device-env.sh and lib; tar czf
# /work/main/.xfer-aq20/device.tgz .device bench/device_lib.sh bench/gdn_device_aq20.sh.
# run tool: carry [".xfer-aq20"], command "cd .xfer-aq20 && tar xzf device.tgz && bash bench/gdn_device_aq20.sh".
set -uo pipefail
out=${OUT:-/tmp/aq20}; mkdir -p "$out"
source .device/device-env.sh > "$out/env.log" 2>&1
source bench/device_lib.sh
export DEV_TMP=${DEV_TMP:-/tmp/aq20tmp}; mkdir -p "$DEV_TMP"
exec > >(tee -a "$out/summary.log") 2>&1
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
echo "T $t, bench $tb"
MODE=${1:-all}
if [ "$MODE" = all ] || [ "$MODE" = bench ]; then
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=${SCHED:-default:::,aq::::slimaq,aqm::::slimaqm,aqm::::slimaqm,aq::::slimaq,default:::} \
    timeout ${CAP_BENCH:-90} $tb gdn_benchmark_ours --test-threads=1 --nocapture > $DEV_TMP/bench.log 2>&1
  grep -E "BENCH ours fwd |panicked|test result" $DEV_TMP/bench.log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES=1 \
    DNNPLAN_GDN_BENCH_SCHEDULES=${SCHED1:-slimP1:w4:1::slim,aqP1:w4:1::slimaq,aqmP1:w4:1::slimaqm,aqmP1:w4:1::slimaqm,aqP1:w4:1::slimaq,slimP1:w4:1::slim} \
    timeout ${CAP_BENCH1:-30} $tb gdn_benchmark_ours --test-threads=1 --nocapture > $DEV_TMP/bench1.log 2>&1
  grep -E "BENCH ours fwd |panicked|test result" $DEV_TMP/bench1.log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
fi
if [ "$MODE" = all ] || [ "$MODE" = tests ]; then
  for v in "aq DNNPLAN_GDN_FWD_FACTORS=slimaq" "aqm DNNPLAN_GDN_FWD_FACTORS=slimaqm" "default"; do
    set -- $v; tag=$1; shift
    env "$@" timeout ${CAP_TESTS:-45} $t forward_parity state_pool batch_invariant --test-threads=1 --nocapture > $DEV_TMP/tests_$tag.log 2>&1
    echo "tests $tag ($*): $(grep -E 'test result' $DEV_TMP/tests_$tag.log | tr '\n' ' ') $(grep -m1 panicked $DEV_TMP/tests_$tag.log)"
    grep -E "rms" $DEV_TMP/tests_$tag.log | sed -E 's/^test [a-z_]+ \.\.\. //' > $DEV_TMP/rms_$tag.txt
    echo "  $(wc -l < $DEV_TMP/rms_$tag.txt) rms lines"
    echo "elapsed ${SECONDS}s"
    cp $DEV_TMP/tests_$tag.log "$out/" 2>/dev/null
  done
  paste -d'\n' $DEV_TMP/rms_aq.txt $DEV_TMP/rms_default.txt | head -80
  cmp -s $DEV_TMP/rms_aq.txt $DEV_TMP/rms_aqm.txt && echo "rms lines aqm == aq" || echo "rms lines aqm differ from aq"
  for f in slimaq slimaqm; do DEV_CAP_S=${CAP_MEMCHECK:-50} dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_FACTORS=$f; done
  echo "elapsed ${SECONDS}s"
fi
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
