#!/usr/bin/env bash
# gdnbwd's device call (session 4): parity (all gpu_gdn tests; default = io-dtype dS' reverse scan
# + the all-tensor-core token stage with direct dQ/dK/dV), the backward parity matrix with session
# 3's kernels (DNNPLAN_GDN_BWD_TOKENS=mma), engine timings with the per-stage breakdown (mma =
# session 3, tc = now), and compute-sanitizer memcheck over the backward parity matrix.
# Run from the folder holding .device/ (gpu_gdn test binary staged there).
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-* | head -1)
o=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$o/gpu.txt" 2>&1
timeout 60 "$t" --test-threads=1 --nocapture > "$o/parity_default.log" 2>&1; echo "rc=$?" >> "$o/parity_default.log"
DNNPLAN_GDN_TIMING=1 timeout 60 "$t" timing_at_benchmark_shapes --nocapture > "$o/timing.log" 2>&1; echo "rc=$?" >> "$o/timing.log"
DNNPLAN_GDN_BWD_TOKENS=mma timeout 15 "$t" backward_parity --test-threads=1 --nocapture > "$o/parity_session3.log" 2>&1; echo "rc=$?" >> "$o/parity_session3.log"
timeout 40 compute-sanitizer --tool memcheck "$t" backward_parity --test-threads=1 > "$o/memcheck.log" 2>&1; echo "rc=$?" >> "$o/memcheck.log"
grep -h "test result\|rc=\|ERROR SUMMARY\|bwd stages\|gdn_sm90 timing\|FAIL\|panicked" "$o"/*.log
