# Session 9 (helper rscan9): the overlapped reverse scan's R2 producer (gdn_bwd_dscan_ov2 /
# dscanp_ov2, DNNPLAN_GDN_BWD_DSCAN=ov2; bitwise dscan_ov / dscanp_ov) against the session-7
# producer (=ov) on the H200 in one call. Stage: /work/wt/device-pack.sh --features gpu-tests
# (after build-cubins), tar .device + kernels/sm_90a + this script into .xfer-rscan9/device.tgz;
# run tool: carry [".xfer-rscan9"]; command: `cd .xfer-rscan9 && tar xzf device.tgz && bash
# bench/gdn_device_rscan9.sh`. Logs into $OUT.
start=$(date +%s); LIMIT=${LIMIT:-150}
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
W=/tmp/rscan9; mkdir -p $W; S=$OUT/summary.log
source .device/device-env.sh > $W/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $S
sha256sum kernels/sm_90a/gdn_bwd.cubin kernels/sm_90a/gdn_fwd.cubin | tee -a $S
# 1. parity: the whole GDN suite by default (ov), and with ov2 (every case twice, graph replay bitwise).
timeout 40 $t --test-threads=1 --nocapture > $W/default.log 2>&1; echo "default (ov by rule): $(grep 'test result' $W/default.log)" | tee -a $S
DNNPLAN_GDN_BWD_DSCAN=ov2 timeout 40 $t --test-threads=1 --nocapture > $W/ov2.log 2>&1; echo "DSCAN=ov2: $(grep 'test result' $W/ov2.log)" | tee -a $S
grep -E " dQ [0-9]| rms " $W/default.log > $W/rms_ov; grep -E " dQ [0-9]| rms " $W/ov2.log > $W/rms_ov2
cmp -s $W/rms_ov $W/rms_ov2 && echo "rms lines ov == ov2 ($(wc -l < $W/rms_ov2) lines)" | tee -a $S || { echo "rms lines differ:" | tee -a $S; diff $W/rms_ov $W/rms_ov2 | head -20 | tee -a $S; }
# 2. gradient hashes of the backward matrix: ov2 == ov (uncut, and the piece chain's seeded pass at P = 4).
H="#[0-9a-f]{16}"
par() {  # name, env...
  local n=$1; shift
  env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout 25 $t backward_parity --test-threads=1 --nocapture > $W/p_$n.log 2>&1
  grep -E "$H" $W/p_$n.log | grep -o 'bwd .*' > $W/h_$n
  echo "$n ($*): $(grep 'test result' $W/p_$n.log) [$(wc -l < $W/h_$n) hash lines]" | tee -a $S
}
par ov DNNPLAN_GDN_BWD_DSCAN=ov
par ov2 DNNPLAN_GDN_BWD_DSCAN=ov2
par ov_p4 DNNPLAN_GDN_BWD_DSCAN=ov DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
par ov2_p4 DNNPLAN_GDN_BWD_DSCAN=ov2 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4
par off DNNPLAN_GDN_BWD_OVERLAP=0
for pr in "ov2 ov" "ov2_p4 ov_p4" "ov2 off"; do set -- $pr
  cmp -s $W/h_$1 $W/h_$2 && [ -s $W/h_$1 ] && echo "BITWISE ($1 == $2, $(wc -l < $W/h_$1) hash lines)" | tee -a $S || echo "HASHES DIFFER ($1 vs $2)" | tee -a $S
done
grep -hE "panicked|FAILED" $W/*.log | head -5 | tee -a $S
# 4. timing: whole backward and stages (dscan = the overlapped scan alone, tokens = what the token
#    stage adds beside it), ov then ov2, and the reverse order.
tim() {  # variants, tag
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=$1 timeout 40 $t timing_at_benchmark_shapes --test-threads=1 --nocapture > $W/timing_$2.log 2>&1
  echo "== variants $1 ($2)" | tee -a $S; grep -E "bwd stages|gdn_sm90 timing" $W/timing_$2.log | sed 's/.*gdn_sm90/gdn_sm90/' | tee -a $S
}
tim tc11/ov,tc11/ov2 a
# 3. memcheck over the backward matrix with ov2 (uncut; then 4 pieces if time is left).
DNNPLAN_GDN_BWD_DSCAN=ov2 timeout 35 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc.log 2>&1
echo "memcheck ov2 by rule: $(grep -E 'ERROR SUMMARY' $W/mc.log) $(grep 'test result' $W/mc.log)" | tee -a $S
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
[ "$(left)" -gt 30 ] && tim tc11/ov2,tc11/ov b
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
if [ "$(left)" -gt 45 ]; then
  DNNPLAN_GDN_BWD_DSCAN=ov2 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 timeout 35 compute-sanitizer --tool memcheck --print-limit 5 $t backward_parity --test-threads=1 > $W/mc4.log 2>&1
  echo "memcheck ov2 pieces 4: $(grep -E 'ERROR SUMMARY' $W/mc4.log) $(grep 'test result' $W/mc4.log)" | tee -a $S
fi
# 5. (if time is left) ncu of one producer launch each at (4, 8192, 16) (profiled alone).
for v in ov ov2; do
  [ "$(left)" -gt 18 ] || break
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_SHAPES=0 DNNPLAN_GDN_TIMING_VARIANTS=tc11/$v timeout 25 ncu --clock-control none \
    -k regex:"gdn_bwd_dscan_${v}_bf16_k128" -c 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats \
    --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
    $t timing_at_benchmark_shapes --test-threads=1 > $W/ncu_$v.log 2>&1
  echo "== ncu $v" | tee -a $S
  grep -E "gdn_bwd_dscan|Duration|Throughput|Warp Cycles|Executed Instructions  |Stall|l1tex__|sm__pipe|smsp__inst" $W/ncu_$v.log | head -30 | tee -a $S
done
echo "elapsed $(( $(date +%s) - start )) s" | tee -a $S
(cd $W && tar czf $OUT/logs.tgz *.log h_* rms_*)
