# Session 31 (helper ff31), call 1: the fused uncut slim forward w4fx (fs1: the slim prep's tile
# inside w4gx's blocks, bitwise w4gx expected on every forward hash).
#   1. forward tests (DEV_FWD_TESTS) with w4fx forced vs the base (main 5f14dfe) with w4gx forced
#      (stops here unless they pass)
#   2. timing in one process (gdn_benchmark_ours), w4gx w4fx w4fx w4gx w8gx at (4,8192,16),
#      (16,2048,32), ragged
#   3. forward tests by rule (w4fx where w4gx ran) vs the base by rule; memcheck forward_parity w4fx
# Command: `cd .xfer-ff31 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_ff31.sh`.
source bench/device_lib.sh
dev_begin ff31
d=$DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
B=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, base $B"
FX="DNNPLAN_GDN_FWD_SCAN=w4fx"
GX="DNNPLAN_GDN_FWD_SCAN=w4gx"
DEV_CAP_S=40 dev_fwd_case T_fx $t $FX
echo "elapsed ${SECONDS}s"
if ! grep -q "test result: ok" $d/p_T_fx.log; then
  grep -m5 -iE "panicked|error|mismatch|timeout" $d/p_T_fx.log; tail -5 $d/p_T_fx.log
  tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null; echo "stopped ${SECONDS}s"; exit 0
fi
DEV_CAP_S=40 dev_fwd_case B_gx $B $GX
dev_same $d/h_T_fx $d/h_B_gx "forward tests: T w4fx forced == base w4gx forced, $(wc -l < $d/h_B_gx) hash lines"
echo "elapsed ${SECONDS}s"
env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="0 2 3" \
  DNNPLAN_GDN_BENCH_SCHEDULES="gx:w4gx:,fx:w4fx:,fx2:w4fx:,gx2:w4gx:,w8:w8gx:" \
  timeout 80 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $d/bench.log 2>&1
echo "bench rc=$? elapsed ${SECONDS}s"
grep -E "^BENCH ours fwd" $d/bench.log | awk '{print $4, $6, $5}'
grep -E "^BENCH ours fwd" $d/bench.log | sed -E 's/ min-traffic [0-9]+ GB\/s//' | cut -c1-260
if [ $SECONDS -lt 150 ]; then
  DEV_CAP_S=35 dev_fwd_case T_rule $t
  DEV_CAP_S=35 dev_fwd_case B_rule $B
  dev_same $d/h_T_rule $d/h_B_rule "forward tests by rule (w4fx where w4gx ran): T == base, $(wc -l < $d/h_B_rule) hash lines"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 200 ] && DEV_CAP_S=40 dev_memcheck $t forward_parity $FX
cp $d/h_* $OUT/ 2>/dev/null
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
