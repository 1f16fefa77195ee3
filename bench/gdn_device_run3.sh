#!/usr/bin/env bash
# gdn3's single device call: parity (all gpu_gdn tests, default = tensor-core dscan + tokens),
# engine timings with per-stage breakdown (fp32 vs mma variants), the backward parity matrix with
# each tensor-core stage alone, and compute-sanitizer memcheck over the backward parity matrix.
# Run from the folder holding .device/ (staged by /work/wt/device-pack.sh --features gpu-tests).
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-* | head -1)
o=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$o/gpu.txt" 2>&1
timeout 60 "$t" --test-threads=1 --nocapture > "$o/parity_default.log" 2>&1; echo "rc=$?" >> "$o/parity_default.log"
DNNPLAN_GDN_TIMING=1 timeout 80 "$t" timing_at_benchmark_shapes --nocapture > "$o/timing.log" 2>&1; echo "rc=$?" >> "$o/timing.log"
DNNPLAN_GDN_BWD_TOKENS=fp32 timeout 15 "$t" backward_parity --test-threads=1 --nocapture > "$o/parity_dscan_mma_only.log" 2>&1; echo "rc=$?" >> "$o/parity_dscan_mma_only.log"
DNNPLAN_GDN_BWD_DSCAN=fp32 timeout 15 "$t" backward_parity --test-threads=1 --nocapture > "$o/parity_tokens_mma_only.log" 2>&1; echo "rc=$?" >> "$o/parity_tokens_mma_only.log"
timeout 28 compute-sanitizer --tool memcheck "$t" backward_parity --test-threads=1 > "$o/memcheck.log" 2>&1; echo "rc=$?" >> "$o/memcheck.log"
grep -h "test result\|rc=\|ERROR SUMMARY" "$o"/*.log
