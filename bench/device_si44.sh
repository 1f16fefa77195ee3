#!/usr/bin/env bash
# Session 44's device call for branch si-guard (state_indices outside the pool): one script, every
# step bounded, summary in $OUT/summary.txt and every log in $OUT/logs.tgz.
# Staging (CPU machine, worktree root): device-pack.sh --features gpu-tests; .device/base/ holds
# s43-staged's gpu_gdn and gpu_gdn_bench (the base: main 2cbfd17's kernels); .device/alt/ holds
# gpu_gdn_B, gpu_gdn_bench_B (form B: the load's pointer chosen by the row instead of A's in_pool
# flag; same rule, different machine code). Then tar cJf .xfer-final/device.txz .device (XZ_OPT
# '-T1 -9': the test binaries share their embedded cubins, which a 64 MiB window folds).
# run tool: command "bash bench/device_si44.sh", carry [".xfer-final"].
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/device_lib.sh
dev_stage si44
t=$(dev_bin gpu_gdn); p=$(dev_bin gpu_gdn_pdl); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_base; bb=.device/base/gpu_gdn_bench_base
x=.device/alt/gpu_gdn_B; xb=.device/alt/gpu_gdn_bench_B
start=$(date +%s)
tests() {
  DEV_CAP_S=150 dev_parity "gpu_gdn A (every test)" "$t" ""
  dev_parity "gpu_gdn_pdl A" "$p" ""
  DEV_CAP_S=60 dev_parity "gpu_gdn B state tests" "$x" state_
}
hashes() {
  for c in "R" "P7 DNNPLAN_GDN_FWD_PIECES=7" "W8 DNNPLAN_GDN_FWD_SCAN=w8"; do
    set -- $c
    dev_fwd_case "fA$1" "$t" ${2:-}; dev_fwd_case "fX$1" "$x" ${2:-}; dev_fwd_case "fB$1" "$b" ${2:-}
    dev_same "$DEV_TMP/h_fA$1" "$DEV_TMP/h_fB$1" "forward $1: A == base"
    dev_same "$DEV_TMP/h_fX$1" "$DEV_TMP/h_fB$1" "forward $1: B == base"
  done
  for c in "R" "P8 DNNPLAN_GDN_BWD_PIECES=8"; do
    set -- $c
    dev_bwd_case "bA$1" "$t" ${2:-}; dev_bwd_case "bB$1" "$b" ${2:-}
    dev_same "$DEV_TMP/h_bA$1" "$DEV_TMP/h_bB$1" "backward $1: A == base"
  done
}
memcheck() {
  DEV_CAP_S=150 dev_memcheck "$t" state_indices_outside
  dev_memcheck "$t" state_pool
  dev_memcheck "$t" forward_parity
}
fwd_timing() {  # base, A, B alternating, one process each: the whole forward three times per shape
  dev_fwd_ab 2 b t x
}
bwd_stages() {  # the backward's stages alone, base and A alternating
  dev_bwd_stages_ab 2 bb tb
}
dev_step tests tests
dev_step hashes hashes
dev_step memcheck memcheck
dev_step fwd_timing fwd_timing
dev_step bwd_stages bwd_stages
echo "elapsed $(( $(date +%s) - start )) s" >> "$DEV_OUT/summary.txt"
