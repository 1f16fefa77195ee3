# Session 31 (helper ff31), staged, NOT RUN by ff31 (its two calls are spent): w4gp = w4gx whose
# copies (q, k, v, T, A, scalars, Γ_last) are issued by producer warps (branch ff31gp). ~25 s.
#   1. forward tests with w4gp forced vs the base (main 5f14dfe) with w4gx forced: BITWISE expected
#   2. memcheck forward_parity with w4gp
#   3. timing in one process: w4gx w4gp w4gp w4gx w8gx at (4,8192,16), (16,2048,32), ragged
# Command: `cd .xfer-ff31 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_ff31c.sh`.
source bench/device_lib.sh
dev_begin ff31c
d=$DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
B=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, base $B"
DEV_CAP_S=40 dev_fwd_case T_gp $t DNNPLAN_GDN_FWD_SCAN=w4gp
if ! grep -q "test result: ok" $d/p_T_gp.log; then
  grep -m5 -iE "panicked|error|mismatch" $d/p_T_gp.log; tail -5 $d/p_T_gp.log
  tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null; echo "stopped ${SECONDS}s"; exit 0
fi
DEV_CAP_S=40 dev_fwd_case B_gx $B DNNPLAN_GDN_FWD_SCAN=w4gx
dev_same $d/h_T_gp $d/h_B_gx "forward tests: T w4gp forced == base w4gx forced, $(wc -l < $d/h_B_gx) hash lines"
DEV_CAP_S=40 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_SCAN=w4gp
echo "elapsed ${SECONDS}s"
env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="0 2 3" \
  DNNPLAN_GDN_BENCH_SCHEDULES="gx:w4gx:,gp:w4gp:,gp2:w4gp:,gx2:w4gx:,w8:w8gx:" \
  timeout 60 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $d/bench.log 2>&1
echo "bench rc=$? elapsed ${SECONDS}s"
grep -E "BENCH ours fwd" $d/bench.log | sed -E 's/^test gdn_benchmark_ours ... //; s/ min-traffic [0-9]+ GB\/s//' | cut -c1-230
cp $d/h_* $OUT/ 2>/dev/null
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
