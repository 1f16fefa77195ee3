#!/usr/bin/env bash
# Session 21, helper fscan21, call 2: the slim output scan with its next stage's copies spread over
# the P', O' key steps (one block barrier per chunk) and O staged by stmatrix (T = branch fscan21)
# against main 10a9548 (B = /work/wt/base/gpu_gdn_s21base, gpu_gdn_bench_s21base):
# 1. forward hashes (forward_parity state_pool batch_invariant, DNNPLAN_GDN_TEST_HASHES=1) T vs B:
#    by rule (w4 / w8 / the piece path with w4d), forced w8, forced w4 with 7 pieces, overlapped (w4ov);
# 2. memcheck forward_parity on T (rule);
# 3. timing, gdn_benchmark_ours at the four shapes (default schedule, + forced w4 / w8 at shapes 0, 2),
#    processes in the order B T T B.
# Staging: .device/device-env.sh, .device/tests/gpu_gdn-<h>, gpu_gdn_bench-<h> (T),
# .device/base/gpu_gdn_s21base, gpu_gdn_bench_s21base (B), bench/device_lib.sh, this script.
set -uo pipefail
out=${OUT:-/tmp/fscan21}; mkdir -p "$out"
export DEV_TMP=/tmp/fscan21d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_s21base; bb=.device/base/gpu_gdn_bench_s21base
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=40
hash_cases() {
for v in "$@"; do
  set -- $v; tag=$1; shift
  dev_fwd_case "T_$tag" "$t" "$@"
  dev_fwd_case "B_$tag" "$b" "$@"
  dev_same $DEV_TMP/h_T_$tag $DEV_TMP/h_B_$tag "forward $tag: T == B ($(wc -l < $DEV_TMP/h_T_$tag) hash lines)"
  echo "elapsed ${SECONDS}s"
done
}
hash_cases "rule"
grep -h "rms" $DEV_TMP/p_T_rule.log | sed -E 's/^test [a-z_]+ \.\.\. //' | head -12
sched="default:::,w4:w4:1:,w8:w8:1:"
dev_bench_fwd_order "$sched" "$bb" "$tb"
hash_cases "w8 DNNPLAN_GDN_FWD_SCAN=w8" "p7 DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=7" "ov DNNPLAN_GDN_FWD_OVERLAP=1"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null

