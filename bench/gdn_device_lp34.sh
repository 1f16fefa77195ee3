# Session 34 (helper lp34): longest-first dispatch of the uncut scans (DNNPLAN_GDN_SEQ_ORDER,
# FLAG_SEQ_ORDER; src/engines/gdn/seq_order.rs). One device call:
#   1. hashes against base 83a5e86 (base/gpu_gdn-*): forward_parity and backward_parity, this
#      build by rule and with the order forced on (DNNPLAN_GDN_SEQ_ORDER=1; the base ignores it)
#   2. timing in ONE process each, A B B A (order off / on / on / off): the forward by
#      gdn_benchmark_ours (per-kernel cut differences) at (4,8192,16), (16,2048,32) and the ragged
#      mix; the backward stages by timing_at_benchmark_shapes (the plan by rule, "=0" / "=1") at
#      the ragged mix and (4,8192,16)
#   3. memcheck of forward_parity and backward_parity with the order on
#   4. the whole gpu_gdn test binary with the order on (as time allows)
# Command: `cd .xfer-lp34 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_lp34.sh`
# (~200 s of command at most: SECONDS guards).
source bench/device_lib.sh
dev_begin lp34
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | grep -v bench | head -1)
echo "binaries: T $t, bench $tb, base $b"
ON="DNNPLAN_GDN_SEQ_ORDER=1"
DEV_CAP_S=30 dev_hashes fwd $b > $d/f_base
DEV_CAP_S=30 dev_hashes fwd $t > $d/f_rule
DEV_CAP_S=30 dev_hashes fwd $t $ON > $d/f_on
dev_same $d/f_rule $d/f_base "forward_parity by rule: this build == base, $(wc -l < $d/f_base) hash lines"
dev_same $d/f_on $d/f_base "forward_parity order on: this build == base, $(wc -l < $d/f_base) hash lines"
DEV_CAP_S=30 dev_hashes bwd $b > $d/b_base
DEV_CAP_S=30 dev_hashes bwd $t > $d/b_rule
DEV_CAP_S=30 dev_hashes bwd $t $ON > $d/b_on
dev_same $d/b_rule $d/b_base "backward_parity by rule: this build == base, $(wc -l < $d/b_base) hash lines"
dev_same $d/b_on $d/b_base "backward_parity order on: this build == base, $(wc -l < $d/b_base) hash lines"
cp $d/f_* $d/b_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
echo "== forward, one process, A B B A (off / on / on / off)"
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="0 2 3" DNNPLAN_GDN_BENCH_SCHEDULES="off:::::::0,on:::::::1,on:::::::1,off:::::::0" \
  timeout 60 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $d/bench.log 2>&1
grep -hE "BENCH ours|panicked" $d/bench.log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
cp $d/bench.log $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
DEV_CAP_S=40 DNNPLAN_GDN_TIMING_SHAPES=3,0 dev_timing "backward stages off / on / on / off (A B B A)" $t "=0,=1,=1,=0"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 150 ] && DEV_CAP_S=45 dev_memcheck $t forward_parity $ON
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 190 ] && DEV_CAP_S=45 dev_memcheck $t backward_parity $ON
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 200 ] && DEV_CAP_S=$((250 - SECONDS)) dev_parity "gpu_gdn whole binary (order on)" $t "" $ON
echo "done ${SECONDS}s"
