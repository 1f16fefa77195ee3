#!/usr/bin/env bash
# Session 46's device call for rsqrt_ftz (rsqrt.approx.ftz: the preps' and the token tiles' l2
# norms, kernels/include/gdn_fwd.cuh) and exp_ftz in the backward's token tile
# (bwd_tokens_tc_tile's five exponentials): the fp64 tests, the hashes against the base (equal
# unless an argument is subnormal or a decay falls below 2^-126), the forward's prep and the
# backward's stages base / new alternating. One script, every step bounded, summary in
# $OUT/summary.txt.
# Staging (CPU machine): device-pack.sh --features gpu-tests; .device/base/ holds main 8f346bb's
# gpu_gdn and gpu_gdn_bench (gpu_gdn_base, gpu_gdn_bench_base); then
# XZ_OPT='-T1 -9' tar cJf .xfer-final/device.txz .device.
# run tool: command "bash bench/device_ftz46.sh", carry [".xfer-final"].
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/device_lib.sh
dev_stage ftz46
t=$(dev_bin gpu_gdn); p=$(dev_bin gpu_gdn_pdl); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_base; bb=.device/base/gpu_gdn_bench_base
start=$(date +%s)
tests() {
  DEV_CAP_S=150 dev_parity "gpu_gdn (every test)" "$t" ""
  dev_parity "gpu_gdn_pdl" "$p" ""
}
hashes() {
  for c in "R" "P7 DNNPLAN_GDN_FWD_PIECES=7" "W8 DNNPLAN_GDN_FWD_SCAN=w8"; do
    set -- $c
    dev_fwd_case "fA$1" "$t" ${2:-}; dev_fwd_case "fB$1" "$b" ${2:-}
    dev_same "$DEV_TMP/h_fA$1" "$DEV_TMP/h_fB$1" "forward $1: new == base"
  done
  for c in "R" "P8 DNNPLAN_GDN_BWD_PIECES=8"; do
    set -- $c
    dev_bwd_case "bA$1" "$t" ${2:-}; dev_bwd_case "bB$1" "$b" ${2:-}
    dev_same "$DEV_TMP/h_bA$1" "$DEV_TMP/h_bB$1" "backward $1: new == base"
  done
}
fwd_timing() {  # base, new alternating, one process each: the whole forward and its prep
  dev_fwd_ab 2 b t
}
bwd_stages() {  # the backward's stages alone, base and new alternating
  dev_bwd_stages_ab 3 bb tb
}
dev_step tests tests
dev_step hashes hashes
dev_step bwd_stages bwd_stages
dev_step fwd_timing fwd_timing
echo "elapsed $(( $(date +%s) - start )) s" >> "$DEV_OUT/summary.txt"
