# Session 18 (helper bprep18; written CPU-only, NOT yet run: for the next session's H200 call): the
# backward's KEEP prep gdn_bwd_prep15_* (and the full-factor forward prep gdn_fwd_prep15_*, one
# tile body) with prep18's instruction cuts. This build (T) against a staged base (B: BASE_GDN /
# BASE_BENCH, default main 2f7c732's base/gpu_gdn_s18base / gpu_gdn_bench_s18base; stage main
# c2b48e2's binaries instead where available: 2f7c732's prep15 still had the 16-barrier pair
# barrier, c2b48e2's is the one this branch changes):
#  1. ncu of gdn_bwd_prep15 at (4,8192,16) (executed instructions, duration, issue, occupancy); T,
#     and B with BPREP18_PROF_B=1 (the lead's 2f7c732 numbers: 399 us, 219 M instructions);
#  2. hashes: backward by rule and at 8 pieces, T vs B (and vs bench/dscan18_base, B 2f7c732's
#     recorded lines), T's v15 (new) vs T's v14 (same build, DNNPLAN_GDN_FWD_PREP=v14, unchanged
#     code), the full-factor forward (DNNPLAN_GDN_FWD_FACTORS=full, prep15) and the default forward
#     T vs B, every reference hash of bench/gdn_hashes_session9.txt;
#  3. memcheck of backward_parity and of forward_parity with full factors (BPREP18_RACE=1: racecheck
#     of backward_parity too);
#  4. timing, same run, both orders: backward stages (prep) B T T B at the four shapes, and
#     gdn_prep_variants (v14 vs v15 per shape, forward and backward prep) for T and B.
# Stage (from the worktree, after kernels/build-cubins.sh and device-pack.sh --features gpu-tests):
#   sha256sum kernels/sm_90a/gdn_fwd.cubin kernels/sm_90a/gdn_bwd.cubin > cubins.sha256
#   mkdir -p /work/main/.xfer-bprep18 && tar czf /work/main/.xfer-bprep18/device.tgz \
#     .device/device-env.sh .device/tests/gpu_gdn-* .device/tests/gpu_gdn_bench-* bench/device_lib.sh \
#     bench/gdn_hashes_session9.txt bench/dscan18_base bench/gdn_device_bprep18.sh cubins.sha256 \
#     -C /work/wt base/gpu_gdn_s18base base/gpu_gdn_bench_s18base
# run tool: carry [".xfer-bprep18"], timeout_s 300, command
#   `cd .xfer-bprep18 && tar xzf device.tgz && bash bench/gdn_device_bprep18.sh`
# Expected (~150-200 s): every line BITWISE; memcheck 0 errors; T's bwd prep below B's (the static
# code of the prep15 tile is 22 % smaller, 5,256 -> 4,096 SASS instructions at bf16 K = 128).
exec > >(tee $OUT/bprep18.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/bprep18
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=${BASE_GDN:-base/gpu_gdn_s18base}; bb=${BASE_BENCH:-base/gpu_gdn_bench_s18base}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
# 1. ncu: the KEEP prep at (4,8192,16) (the second backward launch after the first execute's).
prof() {
  local tag=$1 bin=$2; shift 2
  env "$@" DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 60 ncu --clock-control none --section Occupancy --section SpeedOfLight --section LaunchStats \
    --section ComputeWorkloadAnalysis --section InstructionStats -k "regex:gdn_bwd_prep15" --launch-skip 1 --launch-count 1 \
    "$bin" gdn_benchmark_ours --test-threads=1 > $d/ncu_$tag.log 2>&1
  echo "ncu $tag (rc $?): $(grep -E 'Duration|Theoretical Occupancy|Achieved Occupancy|Registers Per Thread|Issue Slots Busy|Executed Ipc A|^ +Executed Instructions ' $d/ncu_$tag.log | sed -E 's/ +/ /g' | tr '\n' ';')"
}
prof T $tb
[ "${BPREP18_PROF_B:-0}" = 1 ] && prof B $bb
echo "elapsed ${SECONDS}s"
# 2. Hashes.
for v in "rule" "p8 DNNPLAN_GDN_BWD_PIECES=8"; do
  set -- $v; tag=$1; shift
  dev_hashes bwd $t "$@" > $d/h_T_$tag; dev_hashes bwd $b "$@" > $d/h_B_$tag
  dev_same $d/h_T_$tag $d/h_B_$tag "backward $tag: T == B, $(wc -l < $d/h_T_$tag) hash lines"
  dev_same $d/h_T_$tag bench/dscan18_base/h_B_$tag "backward $tag: T == B 2f7c732 recorded (bench/dscan18_base)"
done
dev_hashes bwd $t DNNPLAN_GDN_FWD_PREP=v14 > $d/h_T_v14
dev_same $d/h_T_rule $d/h_T_v14 "backward rule: T v15 == T v14 same build, $(wc -l < $d/h_T_v14) hash lines"
for v in "full DNNPLAN_GDN_FWD_FACTORS=full" "rule"; do
  set -- $v; tag=$1; shift
  dev_hashes fwd $t "$@" > $d/f_T_$tag; dev_hashes fwd $b "$@" > $d/f_B_$tag
  dev_same $d/f_T_$tag $d/f_B_$tag "forward $tag: T == B, $(wc -l < $d/f_T_$tag) hash lines"
done
dev_hashes fwd $t DNNPLAN_GDN_FWD_FACTORS=full DNNPLAN_GDN_FWD_PREP=v14 > $d/f_T_full14
dev_same $d/f_T_full $d/f_T_full14 "forward full: T v15 == T v14 same build"
dev_cover_reference "T default + full" $d/h_T_rule $d/f_T_rule $d/f_T_full
echo "elapsed ${SECONDS}s"
# 3. Sanitizer.
DEV_CAP_S=60 dev_memcheck $t backward_parity
DEV_CAP_S=60 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_FACTORS=full
if [ "${BPREP18_RACE:-0}" = 1 ]; then
  echo "racecheck backward_parity: $(timeout 90 compute-sanitizer --tool racecheck --print-limit 5 $t backward_parity \
    --test-threads=1 2>&1 | grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test result' | tr '\n' ' ')"
fi
echo "elapsed ${SECONDS}s"
# 4. Timing, same run, both orders.
for x in "B $b" "T $t" "T $t" "B $b"; do set -- $x
  [ $SECONDS -lt ${BPREP18_UNTIL:-200} ] || { echo "skipped (time): timing $1"; continue; }
  DEV_CAP_S=40 dev_timing "$1" $2 tc12
  echo "elapsed ${SECONDS}s"
done
for x in "T $tb" "B $bb"; do set -- $x
  [ $SECONDS -lt ${BPREP18_UNTIL:-200} ] || { echo "skipped (time): prep variants $1"; continue; }
  echo "== prep variants $1"
  DNNPLAN_GDN_BENCH_PREP=1 timeout 60 $2 gdn_prep_variants --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH prep|panicked" | sed -E 's/ [0-9]+ GB\/s [0-9.]+ TFLOP\/s//g'
  echo "elapsed ${SECONDS}s"
done
tar czf $OUT/res.tgz -C $d . 2>/dev/null
echo done
