# Session 21 (helper drio21), call 1: token stage tc13 (DNNPLAN_GDN_BWD_TOKENS=tc13) — dR in the io
# dtype between the overlapped reverse scan gdn_bwd_dscan{,p}_ov5dr_* (DR_IO through the dS'
# staging rows, 16-byte row stores) and gdn_bwd_tokens_tc13_ov_* (REV 13). T = this build (branch
# drio21), B = base/gpu_gdn_s21base (main 10a9548). Timing in one process A B B A (tc12 tc13 tc13
# tc12) at the four benchmark shapes; backward hashes by rule (T default == B; T tc13 per gradient
# against T default: dQ, dK, dG, d_initial_state, d_a_log, d_dt_bias bitwise, dV / dBeta differ)
# and at 8 pieces; the gpu_gdn backward tests with tc13 and the default; memcheck with tc13.
# Stage: tar czf /work/main/.xfer-drio21/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
#   bench/device_lib.sh bench/gdn_device_drio21.sh cubins.sha256 -C /work/wt base/gpu_gdn_s21base
# run tool: carry [".xfer-drio21"], command `cd .xfer-drio21 && tar xzf device.tgz && bash bench/gdn_device_drio21.sh`.
exec > >(tee $OUT/drio21.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/drio21
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s21base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t, B $b"
# grad_cmp A B LABEL: per gradient name, how many hash lines of A equal B's.
grad_cmp() {
  echo "PER GRADIENT ($3): $(paste -d'|' $1 $2 | awk -F'|' '{ n = split($1, a, " "); split($2, c, " ");
    for (i = 3; i <= n; i++) if (a[i] ~ /^#/) { g = a[i-2]; tot[g]++; if (a[i] == c[i]) same[g]++ } }
    END { for (g in tot) printf "%s %d/%d same; ", g, same[g] + 0, tot[g] }')"
}
# 1. Timing, one process, A B B A.
DEV_CAP_S=75 dev_timing "T tc12 tc13 tc13 tc12" $t "tc12,tc13,tc13,tc12"
echo "elapsed ${SECONDS}s"
# 2. Backward hashes.
DEV_CAP_S=30 dev_hashes bwd $b > $d/h_B_rule
DEV_CAP_S=30 dev_hashes bwd $t > $d/h_T_rule
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_TOKENS=tc13 > $d/h_T_rule_tc13
dev_same $d/h_T_rule $d/h_B_rule "backward rule, T default == B 10a9548, $(wc -l < $d/h_T_rule) hash lines"
dev_same $d/h_T_rule_tc13 $d/h_T_rule "backward rule, T tc13 == T default, $(wc -l < $d/h_T_rule_tc13) hash lines"
grad_cmp $d/h_T_rule_tc13 $d/h_T_rule "backward rule, T tc13 vs T default"
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PIECES=8 > $d/h_T_p8
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PIECES=8 DNNPLAN_GDN_BWD_TOKENS=tc13 > $d/h_T_p8_tc13
grad_cmp $d/h_T_p8_tc13 $d/h_T_p8 "backward 8 pieces, T tc13 vs T default"
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_OVERLAP=0 DNNPLAN_GDN_BWD_TOKENS=tc13 > $d/h_T_ov0_tc13
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_OVERLAP=0 > $d/h_T_ov0
dev_same $d/h_T_ov0_tc13 $d/h_T_ov0 "backward OVERLAP=0, T tc13 (runs tc12) == T default, $(wc -l < $d/h_T_ov0) hash lines"
cp $d/h_T_rule_tc13 $OUT/h_T_rule_tc13.txt; cp $d/h_T_rule $OUT/h_T_rule.txt
echo "elapsed ${SECONDS}s"
# 3. The gpu_gdn backward tests with tc13 (backward_parity_matrix, the checkpoint tests).
DEV_CAP_S=60 dev_parity "gpu_gdn backward (tc13)" $t backward DNNPLAN_GDN_BWD_TOKENS=tc13
echo "elapsed ${SECONDS}s"
# 4. memcheck with tc13 (rule, 8 pieces).
[ $SECONDS -lt 185 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_TOKENS=tc13
[ $SECONDS -lt 200 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_TOKENS=tc13 DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
# 5. The default's backward tests (T default is bitwise B by the hashes above).
[ $SECONDS -lt 205 ] && DEV_CAP_S=25 dev_parity "gpu_gdn backward (default)" $t backward
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
