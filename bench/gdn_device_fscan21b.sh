#!/usr/bin/env bash
# Session 21, helper fscan21b: the piece path's summary (slimsum) and seeded scan (w4d) with the
# next chunk's copies spread over the mma steps (T = branch fscan21b) against main 10a9548
# (B = /work/wt/base/gpu_gdn_s21base, gpu_gdn_bench_s21base: the scans before fscan21; the same
# outputs):
# 1. forward hashes (forward_parity state_pool batch_invariant, DNNPLAN_GDN_TEST_HASHES=1) T vs B:
#    by rule, w4 forced with 7 pieces, with 4 pieces, with 2 pieces;
# 2. memcheck forward_parity on T with 7 pieces;
# 3. timing, gdn_benchmark_ours at the four shapes (default schedule, + 4 and 7 pieces forced),
#    processes in the order B T T B.
# Staging: .device/device-env.sh, .device/tests/gpu_gdn-<h>, gpu_gdn_bench-<h> (T),
# .device/base/gpu_gdn_s21base, gpu_gdn_bench_s21base (B), bench/device_lib.sh, this script.
set -uo pipefail
out=${OUT:-/tmp/fscan21b}; mkdir -p "$out"
export DEV_TMP=/tmp/fscan21bd; mkdir -p "$DEV_TMP"
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
hash_cases "rule" "p7 DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=7"
grep -h "rms" $DEV_TMP/p_T_p7.log | sed -E 's/^test [a-z_]+ \.\.\. //' | head -12
sched="default:::,p4:w4:4:,p7:w4:7:"
dev_bench_fwd_order "$sched" "$bb" "$tb"
hash_cases "p4 DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=4" "p2 DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=2"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
