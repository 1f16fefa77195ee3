#!/usr/bin/env bash
# Session 61's first call: the next generation's L2 hints (Fused16Form NG: b2c-ng1/3/5/7,
# w8c-ng5/7) against b2c / w8c, and b2ph, in the harness at the benchmark shapes (two rounds) and
# the wave shapes; the product with NGX 7 on w8c and b2c (device79.txz) against main's (device76)
# through the forward by rule, and gpu_gdn on it; the harness's CHECKs; then what bounds the one
# pass's steady state: ncu's throughput sections (speed of light, compute pipes, memory tables:
# shared-memory wavefronts and bank conflicts, warp states) of one launch each of b2c at
# (16,2048,32) (two blocks per SM) and w8c at (4,8192,16) (one block per SM), $OUT/ncu61_<entry>.txt.
# Needs bench/gdn_ng61_next_gen.patch applied (the NG entries) and .xfer-tests68/device79.txz (that
# patch's product build, not kept: see the patch's header). As it ran in session 61 the call hung
# after the build (560 s lost), most likely in its bare `wait`, which recent bash lets wait for the
# log's tee too (the last process substitution); the wait below names the build's pid. Its steps
# then ran as calls b-d.
# run: command "bash bench/device_s61a.sh", any kind, carry [".xfer-tests68"]. ~450 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
exec > >(tee "$OUT/s61a.log") 2>&1
dev_f16_begin
dev_f16_build &
build=$!
dev_pack main device76.txz
dev_pack ng device79.txz
wait $build
dev_elapsed
E=b2c,b2c-ng1,b2c-ng3,b2c-ng5,b2c-ng7,b2ph,w8c,w8c-ng5,w8c-ng7
dev_f16_rounds $E 2
dev_f16_rounds b2c,b2c-ng3,b2c-ng7,b2ph,w8c,w8c-ng7 1 FUSED16_SHAPES=waves
dev_f16_rounds b2c,b2c-ng7,b2c,b2c-ng7 1 FUSED16_SHAPE='(16,2048,32)'
dev_elapsed
dev_pack_fwd_ab main ng
dev_elapsed
dev_pack_tests ng
dev_elapsed
dev_f16_checks "b2c|w8c"
dev_elapsed
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --version | tail -1
for k in "b2c:(16,2048,32)" "w8c:(4,8192,16)"; do
  name=${k%%:*} shape=${k#*:}
  FUSED16_ONLY=$name FUSED16_SHAPE="$shape" timeout 150 $NCU --clock-control none -k regex:"fused16_bf16_${name}\$" \
    --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --section MemoryWorkloadAnalysis_Chart --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section LaunchStats --section Occupancy \
    --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_lsu.sum,sm__inst_executed_pipe_uniform.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,sm__memory_throughput.avg.pct_of_peak_sustained_active \
    "$DEV_TMP/f16bench" 1 > $OUT/ncu61_$name.txt 2>&1
  echo "== $name $shape rc=$?"
  grep -E "Duration|Throughput|Pipe|Busy|Wavefronts|Bank|hmma|wavefronts|Issued|Warp Cycles Per Issued|Eligible|No Eligible" $OUT/ncu61_$name.txt | head -60
  dev_elapsed
done
