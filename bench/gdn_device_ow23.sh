#!/usr/bin/env bash
# Session 23, helper ow23: the uncut slim output scan with output warps (w4o: 4 state warps + 4
# output warps one chunk behind; T = branch ow23) against main 4e5e9a6 (B = gpu_gdn_s23base,
# gpu_gdn_bench_s23base):
# 1. forward hashes (forward_parity state_pool batch_invariant, DNNPLAN_GDN_TEST_HASHES=1) T vs B:
#    by rule; T with DNNPLAN_GDN_FWD_SCAN=w4o vs B forced w4 (w4o wherever the uncut slim w4 or
#    w8 would run; the piece shapes keep w4d); T w4o at 1 piece vs B w4 at 1 piece; the full
#    factors with prep14 (its SASS moved with the new entries: same source);
# 2. memcheck forward_parity on T with w4o forced;
# 3. timing, gdn_benchmark_ours at the four shapes: default, w4 / w4o / w8 forced at 1 piece,
#    processes in the order B T T B.
# Staging (run from its root): .device/device-env.sh, .device/lib, .device/tests/gpu_gdn-<h>,
# gpu_gdn_bench-<h> (T), .device/base/gpu_gdn_s23base, gpu_gdn_bench_s23base (B),
# bench/device_lib.sh, this script.
set -uo pipefail
out=${OUT:-/tmp/ow23}; mkdir -p "$out"
export DEV_TMP=/tmp/ow23d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_s23base; bb=.device/base/gpu_gdn_bench_s23base
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=40
# pair TAG "T env" "B env": forward hashes of T and B under their environments, dev_same's line.
pair() {
  local tag=$1; read -r -a te <<< "$2"; read -r -a be <<< "$3"
  dev_fwd_case "T_$tag" "$t" "${te[@]}"
  dev_fwd_case "B_$tag" "$b" "${be[@]}"
  dev_same $DEV_TMP/h_T_$tag $DEV_TMP/h_B_$tag "forward $tag: T == B ($(wc -l < $DEV_TMP/h_T_$tag) hash lines)"
  echo "elapsed ${SECONDS}s"
}
pair rule "" ""
pair w4o "DNNPLAN_GDN_FWD_SCAN=w4o" "DNNPLAN_GDN_FWD_SCAN=w4"
pair w4o1 "DNNPLAN_GDN_FWD_SCAN=w4o DNNPLAN_GDN_FWD_PIECES=1" "DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=1"
dev_same $DEV_TMP/h_T_w4o $DEV_TMP/h_B_rule "forward: T w4o forced == B by rule"
pair v14 "DNNPLAN_GDN_FWD_FACTORS=full DNNPLAN_GDN_FWD_PREP=v14" "DNNPLAN_GDN_FWD_FACTORS=full DNNPLAN_GDN_FWD_PREP=v14"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w4o
echo "elapsed ${SECONDS}s"
sched="default:::,w4:w4:1:,w4o:w4o:1:,w8:w8:1:"
dev_bench_fwd_order "$sched" "$bb" "$tb"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
