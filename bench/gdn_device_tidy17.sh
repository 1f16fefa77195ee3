#!/usr/bin/env bash
# Session 17 (helper tidy17): the torch package's GDN tests with this branch's python/ (the
# backward's launch written once, `_gdn_bwd_launch`, serving `gdn_bwd` and `gdn_bwd_ckpt`) against
# this branch's library on the H200; no C++ launcher build (DNNPLAN_TORCH_CPP=0: the backward runs
# the Python launcher either way), no boundary benchmark.
# Stage (worktree root): CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols
#   cargo build --release; mkdir -p .device/lib; cp target/release/libdnnplan.so .device/lib/;
#   cp /work/shared/scripts/device-env.sh .device/; tar czf /work/main/.xfer-tidy17/t.tgz python
#   include .device/lib/libdnnplan.so .device/device-env.sh bench/gdn_device_tidy17.sh
# run tool: carry [".xfer-tidy17"], timeout_s 150,
#   command "cd .xfer-tidy17 && tar xzf t.tgz && bash bench/gdn_device_tidy17.sh".
set -u
SECONDS=0
out=${OUT:-/tmp/tidy17-out}
mkdir -p "$out"
DNNPLAN_TORCH_CPP=0 OUT=$out timeout 120 bash python/run_gpu_tests.sh --no-bench -k gdn \
  > "$out/run.log" 2>&1
echo "run_gpu_tests rc=$? elapsed ${SECONDS}s"
grep -E "^run_gpu_tests: (library|torch)" "$out/torch_tests.log"
grep -E "passed|failed|error" "$out/torch_tests.log" | tail -3
grep -E "^(FAILED|ERROR) " "$out/torch_tests.log" | head -10
