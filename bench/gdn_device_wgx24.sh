#!/usr/bin/env bash
# Session 24, helper wgx24: w4gx = w4gs with the rest of the slim scan's chunk step on the warpgroup
# (Uᵀ = Z Tᵀ, O += Uᵀ Aᵀ by wgmma with T, A in the 128-byte swizzle; the state update by wgmma
# m64n128k16 with k MN-major, tnspB); DNNPLAN_GDN_FWD_SCAN=w4gx. T = branch wgx24's build,
# B = main 3d52101 (gpu_gdn_s24base, gpu_gdn_bench_s24base: w4gs by rule).
# 0. the wgmma self-test (bench/gdn_wgmma_selftest.cu, built on the CPU machine with nvcc 13.0 and
#    static cudart): the session-23 K-major cases plus the tnspB m64n128 / 2 x m64n64 state-update
#    form and the T-tile form, each against a double reference;
# 1. the forward tests (forward_parity state_pool batch_invariant, fp64 reference) on T with w4gx
#    forced (the default entries' SASS is byte-identical to main's: no full gpu_gdn run here);
# 2. hashes: T by rule vs B by rule (must be BITWISE: w4gx off by rule), T w4gx vs B by rule
#    (information: w4gx need not be bitwise w4gs);
# 3. memcheck forward_parity on T with w4gx forced (run after the timing);
# 4. timing, gdn_benchmark_ours at the four shapes: default (w4gs) and w4gx forced at 1 piece,
#    processes B T T B with per-kernel parts (B does not know w4gx: an unknown
#    DNNPLAN_GDN_FWD_SCAN value, so its second row is its default again).
# Staging (run from its root): .device/device-env.sh, .device/lib, .device/tests/gpu_gdn-<h>,
# gpu_gdn_bench-<h> (T), base/gpu_gdn_s24base, base/gpu_gdn_bench_s24base (B), bench/device_lib.sh,
# this script, wgmma_selftest.
set -uo pipefail
out=${OUT:-/tmp/wgx24}; mkdir -p "$out"
export DEV_TMP=/tmp/wgx24d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/* base/* wgmma_selftest
timeout 20 ./wgmma_selftest || echo "selftest rc=$?"
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s24base; bb=base/gpu_gdn_bench_s24base
echo "T $t $tb; B $b $bb"
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=30
dev_fwd_case T_w4gx "$t" DNNPLAN_GDN_FWD_SCAN=w4gx
grep -hiE "rms|err" $DEV_TMP/p_T_w4gx.log 2>/dev/null | head -6
echo "elapsed ${SECONDS}s"
dev_bench_fwd_order "default:::,w4gx:w4gx:1:" "$bb" "$tb"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w4gx
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=25
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule: T == B (w4gs both)"
dev_same $DEV_TMP/h_T_w4gx $DEV_TMP/h_B_rule "forward tests: T w4gx vs B by rule w4gs (information)"
echo "elapsed ${SECONDS}s"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
