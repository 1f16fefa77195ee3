# Session 36 (helper tp36), staged confirmation of the rule flip (wgt / wgtl by rule; staged for the
# lead's final call, not run by tp36). T = branch tp36's head build (rule: wgt, wgtl from 8 to 31
# sequences), B = main 330e912's binaries (/work/base35 as base/).
#   1. forward tests by rule and at 7 pieces by rule: hashes == B's
#   2. timing in one process: the rule against wgc / wgl forced (rule wgc wgl wgl wgc rule per shape)
#   3. host time per execute (forward_parity's 4 x 512 case), the rule (4 maps encoded per execute)
#      against wgc forced (none), alternating, three each
# Command: `cd .xfer-tp36 && tar xJf device_b.txz && OUT=$OUT timeout 90 bash bench/gdn_device_tp36b.sh` (device_c.txz: the same at the head with q, k maps only)
# (~45 s of command).
source bench/device_lib.sh
dev_begin tp36b
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b"
export DEV_CAP_S=20
dev_fwd_case T "$t"
dev_fwd_case B "$b"
dev_same $d/h_T $d/h_B "forward tests by rule (wgt / wgtl): T == B 330e912, $(wc -l < $d/h_B) hash lines"
dev_fwd_case T_p7 "$t" DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_T_p7 $d/h_B_p7 "forward tests at 7 pieces by rule: T == B, $(wc -l < $d/h_B_p7) hash lines"
echo "elapsed ${SECONDS}s"
echo "timing (fwd, one process; per shape rule,wgc,wgl,wgl,wgc,rule):"
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="rule,wgc,wgl,wgl,wgc,rule" timeout 30 "$t" \
  timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
echo "elapsed ${SECONDS}s"
host() {
  echo "host time ($1): $(env "${@:2}" timeout 20 "$t" forward_parity --test-threads=1 --nocapture 2>&1 | grep -E 'host time per execute|panicked' | tr '\n' ' ')"
}
if [ $SECONDS -lt 60 ]; then
  for i in 1 2 3; do
    host rule
    host wgc DNNPLAN_GDN_FWD_SLIMPREP=wgc
  done
fi
echo "done ${SECONDS}s"
