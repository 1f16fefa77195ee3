# Session 36 (helper tp36): gdn_fwd_slimprep_{bf16,f16}_k128_wgt / _wgtl (fwd_slim_prep_tile's
# G = 3 / 4: wgc / wgl with a whole chunk's q, k rows by four tensor-map box loads on an mbarrier;
# DNNPLAN_GDN_FWD_SLIMPREP=wgt / wgtl; rule not flipped in this build).
# T = this build (branch tp36 on main's tensor-map commit), B = main 330e912's binaries
# (/work/base35 as base/).
#   1. forward tests (forward_parity state_pool batch_invariant) by rule, with wgt and wgtl forced,
#      and at 7 pieces with wgt: hashes == B's
#   2. memcheck forward_parity with wgt (and wgtl if time is left)
#   3. timing in one process: wgc wgt wgt wgc wgl wgtl wgtl wgl (whole, prep by cut) at the four
#      benchmark shapes; then the other order in a second process
#   4. host time per execute (forward_parity's 4 x 512 case) by rule and with wgt
# Command: `cd .xfer-tp36 && tar xJf device.txz && OUT=$OUT timeout 170 bash bench/gdn_device_tp36.sh`.
source bench/device_lib.sh
dev_begin tp36
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b"
W=DNNPLAN_GDN_FWD_SLIMPREP=wgt
WL=DNNPLAN_GDN_FWD_SLIMPREP=wgtl
export DEV_CAP_S=20
dev_fwd_case T "$t"
dev_fwd_case B "$b"
dev_same $d/h_T $d/h_B "forward tests by rule: T == B 330e912, $(wc -l < $d/h_B) hash lines"
dev_fwd_case wgt "$t" $W
dev_same $d/h_wgt $d/h_B "forward tests, wgt forced: T == B 330e912"
dev_fwd_case wgtl "$t" $WL
dev_same $d/h_wgtl $d/h_B "forward tests, wgtl forced: T == B 330e912"
echo "elapsed ${SECONDS}s"
dev_fwd_case wgt_p7 "$t" $W DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_wgt_p7 $d/h_B_p7 "forward tests at 7 pieces, wgt forced: T == B, $(wc -l < $d/h_B_p7) hash lines"
echo "elapsed ${SECONDS}s"
dev_memcheck "$t" forward_parity $W
echo "elapsed ${SECONDS}s"
tim() {
  echo "timing (fwd, one process; per shape $1):"
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="$1" timeout 30 "$t" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 60 ] && tim "wgc,wgt,wgt,wgc,wgl,wgtl,wgtl,wgl"
host() {
  echo "host time ($1): $(env "${@:2}" timeout 20 "$t" forward_parity --test-threads=1 --nocapture 2>&1 | grep -E 'host time per execute|panicked' | tr '\n' ' ')"
}
if [ $SECONDS -lt 95 ]; then
  host rule
  host wgt $W
  host rule
  host wgt $W
  echo "elapsed ${SECONDS}s"
fi
[ $SECONDS -lt 110 ] && tim "wgt,wgc,wgc,wgt,wgtl,wgl,wgl,wgtl"
[ $SECONDS -lt 135 ] && DEV_CAP_S=20 dev_memcheck "$t" forward_parity $WL
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
