cd .xfer-final && source .device/device-env.sh > /dev/null 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1); b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
timeout 60 $t --test-threads=1 2>&1 | grep "test result"
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_SHAPES=0,3 timeout 60 $t timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "gdn_sm90|test result"
DNNPLAN_GDN_TIMING_PIECES=1 timeout 60 $t timing_backward_pieces --test-threads=1 --nocapture 2>&1 | grep -E "gdn_sm90|test result" | head -4
DNNPLAN_GDN_TIMING_SCANS=1 DNNPLAN_GDN_TIMING_SHAPES=0 timeout 60 $t timing_forward_scans --test-threads=1 --nocapture 2>&1 | grep -E "gdn_sm90|test result"
DNNPLAN_GDN_BENCH_PREP=1 timeout 60 $b gdn_prep_variants --test-threads=1 --nocapture 2>&1 | grep -E "BENCH|test result" | head -6
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="0" timeout 60 $b gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH|test result" | head -10
