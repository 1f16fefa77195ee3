# Session 30 (helper m1t30): td29's M1, token stage tw1 (gdn_bwd_tokens_tw1_*, REV 30 of
# bwd_tokens_tc_tile: tc16's tile with the value products warp-specialized on wgmma; the knob
# DNNPLAN_GDN_BWD_TOKENS=tw1, off by default). T = this build (branch m1t30), B = /work/base30
# (main 7809042). One call:
#   1. backward_parity with tw1 (uncut by rule, and DNNPLAN_GDN_BWD_PIECES=8), default, B default;
#      hashes: T default == B default; per port T tw1 vs T tc16 (dV, d_initial_state: 0 expected)
#   2. the gpu_gdn backward tests with tw1
#   3. memcheck backward_parity with tw1; racecheck of the tw1 kernel only (--filter kns=tokens_tw1)
#   4. timing in one process A B B A: tc16 tw1 tw1 tc16 at the four shapes (whole + stages)
#   5. ncu (one launch past the cold one) of tw1 and tc16 at (4,8192,16), if time is left
# Command: `cd .xfer-m1t30 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_m1t30.sh`.
source bench/device_lib.sh
dev_begin m1t30
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1); tb=$(dev_bin gpu_gdn_bench)
echo "binaries: T $t, B $b, bench $tb"
W="DNNPLAN_GDN_BWD_TOKENS=tw1"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=40 dev_bwd_case T_tw1 $t $W
echo "elapsed ${SECONDS}s"
DEV_CAP_S=30 dev_bwd_case T_def $t
DEV_CAP_S=30 dev_hashes bwd $b > $d/h_B_def
dev_same $d/h_T_def $d/h_B_def "T default == B default (7809042), $(wc -l < $d/h_T_def) hash lines"
dev_port_diff $d/h_T_tw1 $d/h_T_def "T tw1 vs T default (tc16), lines differing per port"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=30 dev_bwd_case T_tw1_p8 $t $W $P8
DEV_CAP_S=30 dev_bwd_case T_def_p8 $t $P8
dev_port_diff $d/h_T_tw1_p8 $d/h_T_def_p8 "8 pieces: T tw1 vs T default, lines differing per port"
cp $d/h_* $OUT/ 2>/dev/null
grep -hE "max|err|tol" $d/b_T_tw1.log | head -12
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 100 ] && DEV_CAP_S=40 dev_parity "gpu_gdn backward (tw1)" $t backward $W
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 120 ] && DEV_CAP_S=30 dev_memcheck $t backward_parity $W
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 150 ] && DEV_CAP_S=45 dev_timing "T tc16 tw1 tw1 tc16 (A B B A)" $t "tc16/,tw1/,tw1/,tc16/"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 175 ]; then
  echo "racecheck (tw1 kernel only) backward_parity $W: $(env $W timeout 30 compute-sanitizer --tool racecheck \
    --filter kns=tokens_tw1 --print-limit 5 $t backward_parity --test-threads=1 2>&1 \
    | grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test result|Hazard' | head -6 | tr '\n' ' ')"
fi
echo "elapsed ${SECONDS}s"
prof() {
  local tag=$1 re=$2 cap=$3; shift 3
  env "$@" DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout "$cap" ncu --clock-control none --kill yes \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section LaunchStats \
      --section MemoryWorkloadAnalysis \
      -k "regex:$re" --launch-skip 1 --launch-count 1 -o "$d/$tag" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/$tag.ncu.log" 2>&1
  echo "rc=$? ncu $tag ($*)"
  if [ -f "$d/$tag.ncu-rep" ]; then
    ncu --import "$d/$tag.ncu-rep" --page details --print-details all > "$d/$tag.details.txt" 2>/dev/null
    grep -E "Duration|Elapsed Cycles|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Issued Ipc|Warp Cycles Per Issued|Registers Per|Dynamic Shared|Pipe|LSU|Tensor|Stall (Barrier|Long|Short|Wait|MIO|Math|LG|Sleeping)" "$d/$tag.details.txt" | head -40
    rm -f "$d/$tag.ncu-rep"
  else
    tail -3 "$d/$tag.ncu.log"
  fi
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 190 ] && prof tw1 '^gdn_bwd_tokens_tw1_bf16_k128$' 25 $W
[ $SECONDS -lt 212 ] && prof tc16 '^gdn_bwd_tokens_tc16_ov_bf16_k128$' 25
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
