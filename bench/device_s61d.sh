#!/usr/bin/env bash
# Session 61's fourth call: call c's L1/TEX bound broken down for one launch of harness entry ENTRY
# (default b2c) at the shape whose name contains SHAPE (default (16,2048,32)): LSU data-pipe
# wavefronts (shared loads / stores, global), bank conflicts, global sectors, ldmatrix / LDS / STS /
# LDGSTS instructions, $OUT/ncu61d_<ENTRY>.txt. E.g. the next session's w8c:
# bash bench/device_s61d.sh w8c '(4,8192,16)'. run: command "bash bench/device_s61d.sh [ENTRY]
# [SHAPE]", any kind (builds the harness unless the machine has it; ENTRY names a kernel
# fused16_bf16_<ENTRY, - as _> whose two CHECK launches precede the timed ones). ~20 s warm.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
[ -x "$DEV_TMP/f16bench" ] || dev_f16_build
NCU=$(dev_ncu)
M=l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed,l1tex__f_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,sm__cycles_elapsed.avg,smsp__inst_executed_op_ldsm.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_ldgsts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum
ENTRY=${1:-b2c}
SHAPE=${2:-(16,2048,32)}
FN=fused16_bf16_${ENTRY//-/_}
FUSED16_ONLY=$ENTRY FUSED16_SHAPE="$SHAPE" timeout 60 $NCU --clock-control none -k regex:"$FN\$" \
  --launch-skip 3 --launch-count 1 --metrics $M "$DEV_TMP/f16bench" 1 > $OUT/ncu61d_$ENTRY.txt 2>&1
echo "ncu rc=$?"
sed -n "/$FN (/,\$p" $OUT/ncu61d_$ENTRY.txt | head -40
