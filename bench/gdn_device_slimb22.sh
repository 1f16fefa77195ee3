# Session 22 (helper slimb22), call 1: the slim backward prep (gdn_bwd_prep15s: no Q⁺, no E; the
# per-token rebuild scalars in Q⁺'s region) and the reverse scans that rebuild Q⁺ and E from the raw
# q, k rows (dscan{,p}_ov5s / ov5st / ov5drs, dsums, dsum1s), DNNPLAN_GDN_BWD_PREP=slim|slimtop|keep.
# Every output is meant to stay bitwise. T = this build (branch slimb22), B = base/gpu_gdn_s22base
# (main d6063d8). 1. timing in one process, A B B A (keep slim slimtop slimtop slim keep; tc13:
# keep slim slim keep); 2. backward hashes: T keep / slim / slimtop == B by rule, at 8 pieces,
# with the overlap forced, tc13 slim == T tc13 keep; 3. the gpu_gdn backward tests with slim;
# 4. memcheck backward_parity slim (rule, 8 pieces).
# Stage: tar czf /work/main/.xfer-slimb22/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
#   bench/device_lib.sh bench/gdn_device_slimb22.sh cubins.sha256 -C /work/wt base/gpu_gdn_s22base
# run tool: carry [".xfer-slimb22"], command `cd .xfer-slimb22 && tar xzf device.tgz && bash bench/gdn_device_slimb22.sh`.
exec > >(tee $OUT/slimb22.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/slimb22
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s22base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t, B $b"
grad_cmp() {
  echo "PER GRADIENT ($3): $(paste -d'|' $1 $2 | awk -F'|' '{ n = split($1, a, " "); split($2, c, " ");
    for (i = 3; i <= n; i++) if (a[i] ~ /^#/) { g = a[i-2]; tot[g]++; if (a[i] == c[i]) same[g]++ } }
    END { for (g in tot) printf "%s %d/%d same; ", g, same[g] + 0, tot[g] }')"
}
# 1. Timing, one process, A B B A.
DEV_CAP_S=80 dev_timing "T keep slim slimtop slimtop slim keep" $t \
  "tc12/ov5/keep,tc12/ov5/slim,tc12/ov5/slimtop,tc12/ov5/slimtop,tc12/ov5/slim,tc12/ov5/keep"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_timing "T tc13: keep slim slim keep" $t "tc13/ov5/keep,tc13/ov5/slim,tc13/ov5/slim,tc13/ov5/keep"
echo "elapsed ${SECONDS}s"
# 2. Backward hashes.
DEV_CAP_S=30 dev_hashes bwd $b > $d/h_B
DEV_CAP_S=30 dev_hashes bwd $t > $d/h_T
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PREP=slim > $d/h_T_slim
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PREP=slimtop > $d/h_T_slimtop
dev_same $d/h_T $d/h_B "backward rule, T keep == B d6063d8, $(wc -l < $d/h_T) hash lines"
dev_same $d/h_T_slim $d/h_B "backward rule, T slim == B d6063d8, $(wc -l < $d/h_T_slim) hash lines"
dev_same $d/h_T_slimtop $d/h_B "backward rule, T slimtop == B d6063d8, $(wc -l < $d/h_T_slimtop) hash lines"
grad_cmp $d/h_T_slim $d/h_B "backward rule, T slim vs B"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=30 dev_hashes bwd $b DNNPLAN_GDN_BWD_PIECES=8 > $d/h_B_p8
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PIECES=8 DNNPLAN_GDN_BWD_PREP=slim > $d/h_T_p8_slim
dev_same $d/h_T_p8_slim $d/h_B_p8 "backward 8 pieces, T slim == B, $(wc -l < $d/h_T_p8_slim) hash lines"
DEV_CAP_S=30 dev_hashes bwd $b DNNPLAN_GDN_BWD_OVERLAP=1 > $d/h_B_ov1
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PREP=slim > $d/h_T_ov1_slim
dev_same $d/h_T_ov1_slim $d/h_B_ov1 "backward OVERLAP=1, T slim == B, $(wc -l < $d/h_T_ov1_slim) hash lines"
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_TOKENS=tc13 > $d/h_T_tc13
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_TOKENS=tc13 DNNPLAN_GDN_BWD_PREP=slim DNNPLAN_GDN_BWD_PIECES=8 > $d/h_T_tc13_slim_p8
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_TOKENS=tc13 DNNPLAN_GDN_BWD_PIECES=8 > $d/h_T_tc13_p8
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_TOKENS=tc13 DNNPLAN_GDN_BWD_PREP=slim > $d/h_T_tc13_slim
dev_same $d/h_T_tc13_slim $d/h_T_tc13 "backward rule tc13, T slim == T keep, $(wc -l < $d/h_T_tc13_slim) hash lines"
dev_same $d/h_T_tc13_slim_p8 $d/h_T_tc13_p8 "backward 8 pieces tc13, T slim == T keep, $(wc -l < $d/h_T_tc13_slim_p8) hash lines"
echo "elapsed ${SECONDS}s"
# 3. The gpu_gdn backward tests with the slim prep (fp64 reference at the spec tolerances).
DEV_CAP_S=60 dev_parity "gpu_gdn backward (slim)" $t backward DNNPLAN_GDN_BWD_PREP=slim
echo "elapsed ${SECONDS}s"
# 4. memcheck with the slim prep (rule; 8 pieces: dsum1s, dscanp_ov5s).
[ $SECONDS -lt 215 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_PREP=slim
[ $SECONDS -lt 235 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_PREP=slim DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
