# Session 25 (helper fsx25), call 2: the rule variant of the warpgroup replay
# (DNNPLAN_GDN_BWD_FSCAN=gxr: gx4 = four stages where the replay holds its SM alone, below
# REPLAY_SHARE_MIN_WAVES; gx = two stages, two per SM, from it and per piece), after call 1
# (bench/gdn_device_fsx25_run1.log: gx bitwise r4's S_c and gradients; gx3 faster at the
# one-per-SM shapes, gx at (16,2048,32) and per piece). T = this build (branch fsx25), B =
# /work/base25/gpu_gdn_s25base (main 6b47f08).
# 1. backward_parity with gx4 and gxr (fp64 reference);  2. timing in one process, tc13 (the
# default) against tc13+gxr A B B A with gx4 and gx3 in the middle, then B A A B;  3. hashes: T gxr
# and T gx4 against T default (uncut), T gxr at 8 pieces against T default at 8 pieces;  4. the
# gpu_gdn backward tests with gxr;  5. memcheck backward_parity with gxr (uncut, 8 pieces) and gx4;
# 6. per-kernel times (gdn_benchmark_ours' bwd lines, processes B T T B: default, gxr).
# Stage: tar czf /work/main/.xfer-fsx25/device.tgz .device/device-env.sh .device/lib .device/tests/gpu_gdn-*
#   .device/tests/gpu_gdn_bench-* bench/device_lib.sh bench/gdn_device_fsx25b.sh cubins.sha256 -C /work base25
# run tool: carry [".xfer-fsx25"], command `cd .xfer-fsx25 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_fsx25b.sh`.
source bench/device_lib.sh
dev_begin fsx25b
d=$DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=base25/gpu_gdn_s25base; bb=base25/gpu_gdn_bench_s25base
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
grad_cmp() {
  echo "PER GRADIENT ($3): $(paste -d'|' $1 $2 | awk -F'|' '{ n = split($1, a, " "); split($2, c, " ");
    for (i = 3; i <= n; i++) if (a[i] ~ /^#/) { g = a[i-2]; tot[g]++; if (a[i] == c[i]) same[g]++ } }
    END { for (g in tot) printf "%s %d/%d same; ", g, same[g] + 0, tot[g] }')"
}
# 1. Correctness gate.
DEV_CAP_S=30 dev_bwd_case gx4 $t DNNPLAN_GDN_BWD_FSCAN=gx4
DEV_CAP_S=30 dev_bwd_case gxr $t DNNPLAN_GDN_BWD_FSCAN=gxr
echo "elapsed ${SECONDS}s"
if ! grep -q "test result: ok" $d/b_gxr.log || ! grep -q "test result: ok" $d/b_gx4.log; then
  grep -m3 -E "panicked|mismatch|max_abs|FAIL" $d/b_gx4.log $d/b_gxr.log
  echo "GX4 / GXR FAILED backward_parity: memcheck only"
  DEV_CAP_S=40 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_FSCAN=gx4
  tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
  exit 0
fi
# 2. Timing, one process each: A B B A with gx4, gx3 in the middle, then B A A B.
DEV_CAP_S=60 dev_timing "T tc13 tc13+gxr tc13+gx4 tc13+gx3 tc13+gxr tc13" $t "tc13,tc13+gxr,tc13+gx4,tc13+gx3,tc13+gxr,tc13"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=45 dev_timing "T tc13+gxr tc13 tc13 tc13+gxr" $t "tc13+gxr,tc13,tc13,tc13+gxr"
echo "elapsed ${SECONDS}s"
# 3. Backward hashes.
DEV_CAP_S=30 dev_hashes bwd $t > $d/h_T_rule
dev_same $d/h_gxr $d/h_T_rule "backward rule, T gxr == T default, $(wc -l < $d/h_gxr) hash lines"
dev_same $d/h_gx4 $d/h_T_rule "backward rule, T gx4 == T default, $(wc -l < $d/h_gx4) hash lines"
grad_cmp $d/h_gxr $d/h_T_rule "backward rule, T gxr vs T default"
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_FSCAN=gxr DNNPLAN_GDN_BWD_PIECES=8 > $d/h_gxr_p8
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PIECES=8 > $d/h_T_p8
dev_same $d/h_gxr_p8 $d/h_T_p8 "backward 8 pieces, T gxr == T default, $(wc -l < $d/h_T_p8) hash lines"
echo "elapsed ${SECONDS}s"
# 4. The gpu_gdn backward tests with gxr.
[ $SECONDS -lt 110 ] && DEV_CAP_S=45 dev_parity "gpu_gdn backward (gxr)" $t backward DNNPLAN_GDN_BWD_FSCAN=gxr
echo "elapsed ${SECONDS}s"
# 5. memcheck.
[ $SECONDS -lt 135 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_FSCAN=gxr
[ $SECONDS -lt 150 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_FSCAN=gx4
[ $SECONDS -lt 160 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_FSCAN=gxr DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
# 6. Per-kernel times, B T T B processes.
for who in B T T B; do
  [ $SECONDS -lt 180 ] || break
  env_fs=""; [ $who = T ] && env_fs="DNNPLAN_GDN_BWD_FSCAN=gxr"
  echo "== bench $who ${env_fs:-default}"
  bin=$tb; [ $who = B ] && bin=$bb
  log=$d/bench_${who}_$SECONDS.log
  env $env_fs DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: timeout 20 $bin gdn_benchmark_ours \
    --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours bwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
done
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
