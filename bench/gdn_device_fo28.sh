# Session 28, helper fo28, call 1: the split slim output scan gdn_fwd_slimscan_{bf16,f16}_k128_w4gxo
# (w4gx's chunk step on a chain warpgroup and an output warpgroup, X's and Uᵀ's io fragments handed
# over through shared memory; DNNPLAN_GDN_FWD_SCAN=w4gxo). T = branch fo28's build, B = main 9d26f11
# (base/gpu_gdn-*, base/gpu_gdn_bench-*: w4gx / w8gx by rule).
#   0. smoke: forward_parity with w4gxo (capped: a hang = a hand-over barrier bug)
#   1. the forward tests (forward_parity state_pool batch_invariant, fp64 reference) with w4gxo;
#      hashes T w4gxo == B default (must be BITWISE: the same arithmetic as w4gx / w8gx)
#   2. timing, gdn_benchmark_ours in one process, A B B A: default, w4gxo, w4gxo, default (the four
#      shapes; (16, 2048, 32) forced w4gxo runs 4 warps instead of w8gx; (1, 32768, 16) keeps the
#      piece path w4dgx either way: w4gxo is uncut only)
#   3. forward_state_checkpoints (its forced list includes w4gxo: the chain warpgroup stores them)
#      and checkpoints_from_the_forward_reused_by_the_backward with w4gxo
#   4. memcheck forward_parity with w4gxo
#   5. T default == B default; T v14 prep == B v14 prep (prep14's SASS changed in the module)
#   6. timing again, B A A B order
# Command: `cd .xfer-fo28 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_fo28.sh`.
source bench/device_lib.sh
dev_begin fo28
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1); bb=$(ls base/gpu_gdn_bench-* | head -1)
echo "binaries: T $t $tb, B $b $bb"
X="DNNPLAN_GDN_FWD_SCAN=w4gxo"
DEV_CAP_S=40 dev_parity "smoke forward_parity (w4gxo)" $t forward_parity $X
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=40
dev_fwd_case T_w4gxo "$t" $X
grep -hiE "rms" $d/p_T_w4gxo.log 2>/dev/null | head -8
dev_fwd_case B_rule "$b"
dev_same $d/h_T_w4gxo $d/h_B_rule "forward tests: T w4gxo == B 9d26f11 default, $(wc -l < $d/h_B_rule) hash lines"
echo "elapsed ${SECONDS}s"
sched="default:::,w4gxo:w4gxo::,w4gxo:w4gxo::,default:::"
echo "== bench T A B B A ($sched)"
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$sched timeout 45 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $d/bench_abba.log 2>&1
grep -hE "BENCH ours fwd |panicked" $d/bench_abba.log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 110 ] && DEV_CAP_S=40 dev_parity "forward_state_checkpoints (w4gxo first, then its forced list)" $t forward_state_checkpoints $X
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 125 ] && DEV_CAP_S=30 dev_parity "checkpoints_from_the_forward_reused_by_the_backward (w4gxo)" $t checkpoints_from_the_forward_reused_by_the_backward $X
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 140 ] && DEV_CAP_S=40 dev_memcheck $t forward_parity $X
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 165 ]; then
  DEV_CAP_S=20 dev_fwd_case T_rule "$t"
  dev_same $d/h_T_rule $d/h_B_rule "forward tests by rule: T == B 9d26f11"
  DEV_CAP_S=20 dev_compare fwd "forward_parity with DNNPLAN_GDN_FWD_PREP=v14: T == B" "$t" "$b" DNNPLAN_GDN_FWD_PREP=v14
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 160 ]; then
  sched2="w4gxo:w4gxo::,default:::,default:::,w4gxo:w4gxo::"
  echo "== bench T B A A B ($sched2)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$sched2 timeout 30 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $d/bench_baab.log 2>&1
  grep -hE "BENCH ours fwd |panicked" $d/bench_baab.log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
fi
echo "elapsed ${SECONDS}s"
cp $d/h_T_w4gxo $OUT/h_T_w4gxo.txt 2>/dev/null; cp $d/h_B_rule $OUT/h_B_rule.txt 2>/dev/null
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
