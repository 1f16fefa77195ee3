# Session 28 (helper pp28), one device call for both tasks. T = this build (branch pp28), B = the base
# binary of main 9d26f11 (/work/base28).
#   Task 2 (the slim prep's K Kᵀ / Q Kᵀ on wgmma, DNNPLAN_GDN_FWD_SLIMPREP=wg (4 blocks/SM) / wg5 (5)):
#     1. forward tests (forward_parity state_pool batch_invariant) by rule with wg / wg5 forced and T
#        default: results + hashes == B's; at 7 pieces (the slim piece path's prep) wg == B
#     2. memcheck forward_parity with wg (and wg5 if time)
#     3. timing in one process, per shape: mma wg wg5 wg5 wg mma (whole forward, prep by cut)
#   Task 1 (gdn_bwd_prep15sl, launched by nothing here): backward_parity T default == B (hashes)
# Command: `cd .xfer-pp28 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_pp28.sh`.
source bench/device_lib.sh
dev_begin pp28
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b"
WG=DNNPLAN_GDN_FWD_SLIMPREP=wg
WG5=DNNPLAN_GDN_FWD_SLIMPREP=wg5
P7=DNNPLAN_GDN_FWD_PIECES=7
export DEV_CAP_S=30
dev_fwd_case wg "$t" $WG
dev_fwd_case B "$b"
dev_same $d/h_wg $d/h_B "forward tests by rule, wg forced: T == B 9d26f11, $(wc -l < $d/h_B) hash lines"
dev_fwd_case wg5 "$t" $WG5
dev_same $d/h_wg5 $d/h_B "forward tests by rule, wg5 forced: T == B"
dev_fwd_case T "$t"
dev_same $d/h_T $d/h_B "forward tests by rule, T default == B"
echo "elapsed ${SECONDS}s"
dev_fwd_case wg_p7 "$t" $WG $P7
dev_fwd_case B_p7 "$b" $P7
dev_same $d/h_wg_p7 $d/h_B_p7 "forward tests at 7 pieces, wg forced: T == B, $(wc -l < $d/h_B_p7) hash lines"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 60 ] && DEV_CAP_S=30 dev_memcheck "$t" forward_parity $WG
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 90 ]; then
  echo "timing (fwd, one process; per shape mma wg wg5 wg5 wg mma):"
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="mma,wg,wg5,wg5,wg,mma" timeout 60 "$t" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 120 ]; then
  DEV_CAP_S=25 dev_bwd_case bT "$t"
  DEV_CAP_S=25 dev_bwd_case bB "$b"
  dev_same $d/h_bT $d/h_bB "backward_parity by rule: T == B 9d26f11 (prep15sl unused), $(wc -l < $d/h_bB) hash lines"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 130 ] && DEV_CAP_S=20 dev_memcheck "$t" forward_parity $WG5
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
