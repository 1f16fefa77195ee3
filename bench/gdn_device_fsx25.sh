# Session 25 (helper fsx25), call 1: the forward-state replay on the warpgroup
# (DNNPLAN_GDN_BWD_FSCAN=gx|gx3: gdn_bwd_fscan_gx{,3}_*, kernels/include/gdn_bwd_fscan_gx.cuh).
# T = this build (branch fsx25), B = /work/base25/gpu_gdn_s25base (main 6b47f08).
# 1. backward_parity with gx (fp64 reference; quick correctness gate);  2. timing in one process
# A B B A (tc13 = the default, tc13+gx = the default with the gx replay, tc13+gx3 once in the
# middle) at the four benchmark shapes;  3. backward hashes: T default == B (the default kernels
# untouched), T gx per gradient against T default (information), at 8 pieces too (the gx kernel
# as the seeded piece replay);  4. the gpu_gdn backward tests with gx and with gx at 8 pieces;
# 5. memcheck backward_parity with gx (uncut, 8 pieces);  6. per-kernel times (gdn_benchmark_ours'
# bwd lines, processes B T T B: default, gx);  7. gx3's backward tests if time is left.
# Stage: tar czf /work/main/.xfer-fsx25/device.tgz .device/device-env.sh .device/lib .device/tests/gpu_gdn-*
#   .device/tests/gpu_gdn_bench-* bench/device_lib.sh bench/gdn_device_fsx25.sh cubins.sha256 -C /work base25
# run tool: carry [".xfer-fsx25"], command `cd .xfer-fsx25 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_fsx25.sh`.
source bench/device_lib.sh
dev_begin fsx25
d=$DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=base25/gpu_gdn_s25base; bb=base25/gpu_gdn_bench_s25base
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
# grad_cmp A B LABEL: per gradient name, how many hash lines of A equal B's.
grad_cmp() {
  echo "PER GRADIENT ($3): $(paste -d'|' $1 $2 | awk -F'|' '{ n = split($1, a, " "); split($2, c, " ");
    for (i = 3; i <= n; i++) if (a[i] ~ /^#/) { g = a[i-2]; tot[g]++; if (a[i] == c[i]) same[g]++ } }
    END { for (g in tot) printf "%s %d/%d same; ", g, same[g] + 0, tot[g] }')"
}
# 1. Correctness gate.
DEV_CAP_S=40 dev_bwd_case gx $t DNNPLAN_GDN_BWD_FSCAN=gx
echo "elapsed ${SECONDS}s"
if ! grep -q "test result: ok" $d/b_gx.log; then
  grep -m3 -E "panicked|mismatch|max_abs|FAIL" $d/b_gx.log
  echo "GX FAILED backward_parity: memcheck only"
  DEV_CAP_S=40 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_FSCAN=gx
  tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
  exit 0
fi
# 2. Timing, one process, A B B A (gx3 once in the middle).
DEV_CAP_S=75 dev_timing "T tc13 tc13+gx tc13+gx3 tc13+gx tc13" $t "tc13,tc13+gx,tc13+gx3,tc13+gx,tc13"
echo "elapsed ${SECONDS}s"
# 3. Backward hashes.
DEV_CAP_S=30 dev_hashes bwd $b > $d/h_B_rule
DEV_CAP_S=30 dev_hashes bwd $t > $d/h_T_rule
cp $d/h_gx $d/h_T_gx
dev_same $d/h_T_rule $d/h_B_rule "backward rule, T default == B 6b47f08, $(wc -l < $d/h_T_rule) hash lines"
dev_same $d/h_T_gx $d/h_T_rule "backward rule, T gx == T default, $(wc -l < $d/h_T_gx) hash lines"
grad_cmp $d/h_T_gx $d/h_T_rule "backward rule, T gx vs T default"
DEV_CAP_S=30 dev_bwd_case gx_p8 $t DNNPLAN_GDN_BWD_FSCAN=gx DNNPLAN_GDN_BWD_PIECES=8
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PIECES=8 > $d/h_T_p8
grad_cmp $d/h_gx_p8 $d/h_T_p8 "backward 8 pieces, T gx vs T default"
cp $d/h_T_gx $OUT/h_T_gx.txt; cp $d/h_T_rule $OUT/h_T_rule.txt
echo "elapsed ${SECONDS}s"
# 4. The gpu_gdn backward tests with gx (backward_parity_matrix, the checkpoint tests, ...).
DEV_CAP_S=60 dev_parity "gpu_gdn backward (gx)" $t backward DNNPLAN_GDN_BWD_FSCAN=gx
echo "elapsed ${SECONDS}s"
# 5. memcheck with gx (rule, 8 pieces).
[ $SECONDS -lt 170 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_FSCAN=gx
[ $SECONDS -lt 190 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_FSCAN=gx DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
# 6. Per-kernel times: gdn_benchmark_ours' backward lines (one forward schedule), B T T B processes.
for who in B T T B; do
  [ $SECONDS -lt 215 ] || break
  env_fs=""; [ $who = T ] && env_fs="DNNPLAN_GDN_BWD_FSCAN=gx"
  echo "== bench $who ${env_fs:-default}"
  bin=$tb; [ $who = B ] && bin=$bb
  log=$d/bench_${who}_$SECONDS.log
  env $env_fs DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: timeout 30 $bin gdn_benchmark_ours \
    --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours bwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
done
echo "elapsed ${SECONDS}s"
# 7. gx3's backward_parity.
[ $SECONDS -lt 225 ] && DEV_CAP_S=25 dev_bwd_case gx3 $t DNNPLAN_GDN_BWD_FSCAN=gx3
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
