# Session 13 (helper occ13), call 1: the one-stage phased kernels w4p (output scan, two blocks per
# SM) and sum1 / sum1b4 (piece summary, three / four per SM) on the H200: bitwise against w4 and
# the two-stage summary (whole and per piece, P = 4, 7, 8), parity, memcheck, and the piece path
# at (1,32768,16) per schedule (gdn_benchmark_ours, per stage, both orders).
# Stage: kernels/build-cubins.sh; device-pack.sh --features gpu-tests --test gpu_gdn --test gpu_gdn_bench;
# tar .device + bench/device_lib.sh + bench/gdn_hashes_session9.txt + this script + cubins.sha256 into
# /work/main/.xfer-occ13/device.tgz (the run tool sends the session checkout); carry [".xfer-occ13"], command
# `cd .xfer-occ13 && tar xzf device.tgz && bash bench/gdn_device_occ13.sh` (logs into $OUT).
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/occ13
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); b=$(dev_bin gpu_gdn_bench)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "staged binary embeds w4p / sum1 / sum1b4: $(grep -c gdn_fwd_scanx_bf16_k128_w4p $t) $(grep -c gdn_fwd_sum1_bf16_k128 $t) $(grep -c gdn_fwd_sum1b4_bf16_k128 $t)"
# 1. Every gpu_gdn test with the default (unchanged rule: w4 + two-stage summary, P = 4 at (1,32768,16)).
dev_parity "default gpu_gdn" $t ""
# 2. The forward tests per schedule, their O / state hashes bitwise the reference schedule's.
fh() { local tag=$1; shift; DEV_CAP_S=40 dev_fwd_case "$tag" "$t" "$@"; }
fh w4 DNNPLAN_GDN_FWD_SCAN=w4
fh w4p DNNPLAN_GDN_FWD_SCAN=w4p
dev_same $DEV_TMP/h_w4p $DEV_TMP/h_w4 "forward: w4p == w4, $(wc -l < $DEV_TMP/h_w4) hash lines"
for P in 8 7 4; do
  fh w4s2P$P DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_SUM=s2 DNNPLAN_GDN_FWD_PIECES=$P
  for v in w4p:s2 w4p:p3 w4p:p4 w4:p4; do s=${v%%:*}; m=${v##*:}
    fh ${s}${m}P$P DNNPLAN_GDN_FWD_SCAN=$s DNNPLAN_GDN_FWD_SUM=$m DNNPLAN_GDN_FWD_PIECES=$P
    dev_same $DEV_TMP/h_${s}${m}P$P $DEV_TMP/h_w4s2P$P "forward, $P pieces: $s + $m == w4 + s2, $(wc -l < $DEV_TMP/h_w4s2P$P) hash lines"
  done
done
# 3. memcheck of the new kernels per piece.
DEV_CAP_S=40 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_SCAN=w4p DNNPLAN_GDN_FWD_SUM=p4 DNNPLAN_GDN_FWD_PIECES=8
DEV_CAP_S=40 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_SCAN=w4p DNNPLAN_GDN_FWD_SUM=p3 DNNPLAN_GDN_FWD_PIECES=7
# 4. The piece path at (1,32768,16), per stage, both orders (label:scan:pieces:sum).
S1="rule:::,w4p-p8-s2:w4p:8:s2,w4p-p8-p3:w4p:8:p3,w4p-p8-p4:w4p:8:p4,w4p-p7-p3:w4p:7:p3,w4p-p7-p4:w4p:7:p4,w4p-p6-p3:w4p:6:p3,w4-p4-p3:w4:4:p3"
S2=$(echo $S1 | tr ',' '\n' | tac | paste -sd,)
for S in $S1 $S2; do DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="1" DNNPLAN_GDN_BENCH_SCHEDULES=$S timeout 50 $b gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd |panicked"; done
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
