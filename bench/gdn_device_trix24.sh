#!/usr/bin/env bash
# Session 24, helper trix24: tri24's packed lower-triangular T, A (10 of 16 16x16 blocks) under
# main de7c8e3's wgmma scans: the prep writes the packed tiles, every slim scan copies only those
# blocks (mma.sync consumers into rows of CHUNK + 8, the wgmma consumers w4gx / w8gx / slimsum_gx /
# w4dgx into the 128-byte swizzle with the 6 upper blocks zeroed once per kernel). T = branch
# trix24's build, B = main de7c8e3 (base24 s24final). Numerics unchanged by design: every forward
# hash must equal B's. Budget: <= 90 s.
# 1. forward tests (forward_parity state_pool batch_invariant forward_state_checkpoints) T and B by
#    rule and at 7 pieces: results + hashes T == B; 2. forward_parity hashes with w8gx forced T == B;
# 3. memcheck forward_parity by rule; 4. timing B T T B at (4,8192,16) and (1,32768,16).
# Staged as .xfer-trix24/{bench/device_lib.sh, bench/gdn_device_trix24.sh, .device/device-env.sh,
# .device/lib, bins.txz (.device/tests/gpu_gdn{,_bench}-*, base/gpu_gdn{,_bench}_s24final)};
# run: cd .xfer-trix24 && OUT=$OUT bash bench/gdn_device_trix24.sh
set -uo pipefail
out=${OUT:-/tmp/trix24}; mkdir -p "$out"
export DEV_TMP=/tmp/trix24d; mkdir -p "$DEV_TMP"
[ -f bins.txz ] && tar xJf bins.txz
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/* base/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s24final; bb=base/gpu_gdn_bench_s24final
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=30
DEV_FWD_TESTS="forward_parity state_pool batch_invariant forward_state_checkpoints"
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule ($DEV_FWD_TESTS): T == B de7c8e3"
dev_fwd_case T_p7 "$t" DNNPLAN_GDN_FWD_PIECES=7; dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_T_p7 $DEV_TMP/h_B_p7 "forward tests at 7 pieces: T == B"
dev_compare fwd "forward_parity w8gx forced: T == B" $t $b DNNPLAN_GDN_FWD_SCAN=w8gx
echo "elapsed ${SECONDS}s"
DEV_CAP_S=35 dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
export DNNPLAN_GDN_BENCH_SHAPES="0 1"
dev_bench_fwd_order "default:::" "$bb" "$tb"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo "total ${SECONDS}s"
