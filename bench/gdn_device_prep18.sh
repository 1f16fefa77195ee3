# Session 18 (helper prep18): the forward's slim prep on the H200. This build (T) against the
# session's base (B, main 2f7c732's staged gpu_gdn / gpu_gdn_bench): ncu occupancy of the slim prep
# (uncut at (4,8192,16) with the overlap off, and the piece path at (1,32768,16)); forward hashes
# by rule, uncut with the overlap forced on and off, at 7 pieces, and the backward by rule (its
# KEEP prep shares the pair barrier); with PREP18_TESTS=1 every gpu_gdn test and memcheck; timing
# of the whole forward (prep / scan per shape) in both orders, same run.
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests;
# tar czf /work/main/.xfer-prep18/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
# .device/tests/gpu_gdn_bench-* bench/device_lib.sh bench/gdn_hashes_session9.txt
# bench/gdn_device_prep18.sh cubins.sha256 -C /work/wt base/gpu_gdn_s18base base/gpu_gdn_bench_s18base.
# run tool: carry [".xfer-prep18"], command
# `cd .xfer-prep18 && tar xzf device.tgz && bash bench/gdn_device_prep18.sh`.
source .device/device-env.sh > "$OUT/env.log" 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/prep18
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=base/gpu_gdn_s18base; bb=base/gpu_gdn_bench_s18base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
# 1. ncu: the slim prep's occupancy and issue (one launch after the first execute's).
prof() {
  local tag=$1 bin=$2 shape=$3; shift 3
  env "$@" DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=$shape \
    timeout 60 ncu --clock-control none --section Occupancy --section SpeedOfLight --section WarpStateStats \
    --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats -k "regex:gdn_fwd_slimprep" --launch-skip 1 --launch-count 1 \
    "$bin" gdn_benchmark_ours --test-threads=1 > $DEV_TMP/ncu_$tag.log 2>&1
  echo "ncu $tag (rc $?): $(grep -E 'Duration|Theoretical Occupancy|Achieved Occupancy|Block Limit (Barriers|Shared Mem|Registers)|Shared Memory Configuration Size|Issue Slots Busy|Executed Ipc A|^ +Executed Instructions ' $DEV_TMP/ncu_$tag.log | sed -E 's/ +/ /g' | tr '\n' ';')"
}
prof T0 $tb 0 DNNPLAN_GDN_FWD_OVERLAP=0
prof T1 $tb 1
[ "${PREP18_PROF_B:-0}" = 1 ] && prof B0 $bb 0 DNNPLAN_GDN_FWD_OVERLAP=0
echo "elapsed ${SECONDS}s"
# 2. Hashes, T vs B.
for v in "rule" "ov1 DNNPLAN_GDN_FWD_OVERLAP=1" "ov0 DNNPLAN_GDN_FWD_OVERLAP=0" "p7 DNNPLAN_GDN_FWD_PIECES=7"; do
  set -- $v; tag=$1; shift
  dev_hashes fwd $t "$@" > $DEV_TMP/f_T_$tag; dev_hashes fwd $b "$@" > $DEV_TMP/f_B_$tag
  dev_same $DEV_TMP/f_T_$tag $DEV_TMP/f_B_$tag "forward $tag: T == B 2f7c732, $(wc -l < $DEV_TMP/f_T_$tag) hash lines"
done
dev_hashes bwd $t > $DEV_TMP/h_T; dev_hashes bwd $b > $DEV_TMP/h_B
dev_same $DEV_TMP/h_T $DEV_TMP/h_B "backward rule: T == B 2f7c732, $(wc -l < $DEV_TMP/h_T) hash lines"
echo "elapsed ${SECONDS}s"
if [ "${PREP18_SAN:-0}" = 1 ]; then
  # The slim prep's named barriers and shared-memory phases under the sanitizer (uncut, overlap off).
  DEV_CAP_S=45 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_OVERLAP=0
  echo "racecheck forward_parity (overlap off): $(DNNPLAN_GDN_FWD_OVERLAP=0 timeout 45 compute-sanitizer --tool racecheck \
    --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test result' | tr '\n' ' ')"
  echo "elapsed ${SECONDS}s"
fi
if [ "${PREP18_TESTS:-0}" = 1 ]; then
  DEV_CAP_S=90 dev_parity "default gpu_gdn" $t ""
  DEV_CAP_S=60 dev_parity "overlap forced on gpu_gdn forward" $t forward DNNPLAN_GDN_FWD_OVERLAP=1
  DEV_CAP_S=40 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_OVERLAP=0
  echo "elapsed ${SECONDS}s"
fi
# 3. Timing, both orders: the default forward (prep, scan per shape) and backward, four shapes.
for x in "B $bb" "T $tb" "T $tb" "B $bb"; do set -- $x
  [ $SECONDS -lt ${PREP18_BENCH_UNTIL:-170} ] || { echo "skipped (time): bench $1"; continue; }
  echo "== bench $1"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: timeout 40 $2 gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH ours (fwd|bwd) |panicked" | sed -E 's/ min-traffic [0-9]+ GB\/s//; s/ [0-9]+ GB\/s [0-9.]+ TFLOP\/s//g'
  echo "elapsed ${SECONDS}s"
done
tar czf $OUT/res.tgz -C $DEV_TMP . 2>/dev/null
echo done
