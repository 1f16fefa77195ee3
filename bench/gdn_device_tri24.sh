#!/usr/bin/env bash
# Session 24, helper tri24: the slim factors T and A stored and copied as packed lower-triangular
# blocks (10 of 16 16x16 blocks; prep writes, every slim scan copies only those). T = branch tri24's
# build, B = main 3d52101 (base24). Numerics unchanged by design: every forward hash must equal B's.
# 1. every gpu_gdn test by rule; 2. forward hashes T vs B by rule, at 7 pieces, overlapped, with w4,
# w8, w4d forced; the forward tests (forward_parity state_pool batch_invariant) T == B;
# 3. memcheck forward_parity by rule, at 7 pieces, overlapped, w8; 4. timing B T T B (per kernel).
# Staged as .xfer-tri24/{bench/device_lib.sh, bench/gdn_device_tri24.sh, .device/device-env.sh, bins.txz (.device/tests/gpu_gdn*-*,
# base/gpu_gdn{,_bench}_s24base)}; run: cd .xfer-tri24 && tar xJf bins.txz && OUT=$OUT bash bench/gdn_device_tri24.sh
set -uo pipefail
out=${OUT:-/tmp/tri24}; mkdir -p "$out"
export DEV_TMP=/tmp/tri24d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/* base/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s24base; bb=base/gpu_gdn_bench_s24base
echo "T $t $tb; B $b $bb"
timeout 100 $t --test-threads=1 > $DEV_TMP/tests.log 2>&1; echo "gpu_gdn (T, by rule): $(grep -E 'test result' $DEV_TMP/tests.log) $(grep -m1 panicked $DEV_TMP/tests.log)"
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=40
dev_compare fwd "forward by rule: T == B 3d52101" $t $b
dev_compare fwd "forward at 7 pieces: T == B" $t $b DNNPLAN_GDN_FWD_PIECES=7
dev_compare fwd "forward overlapped: T == B" $t $b DNNPLAN_GDN_FWD_OVERLAP=1
dev_compare fwd "forward w4 forced: T == B" $t $b DNNPLAN_GDN_FWD_SCAN=w4
dev_compare fwd "forward w8 forced: T == B" $t $b DNNPLAN_GDN_FWD_SCAN=w8
dev_compare fwd "forward w4 at 4 pieces: T == B" $t $b DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=4
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"; dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule (forward_parity state_pool batch_invariant): T == B"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_PIECES=7
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_OVERLAP=1
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w8
echo "elapsed ${SECONDS}s"
dev_bench_fwd_order "default:::,w4:w4:1:,w8:w8:1:" "$bb" "$tb"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
