# Session 14 (helper fpiece14), call 2: the slim piece path's piece count at (1,32768,16) (the rule's
# P = 7 against 5, 6, 8; whole forward and per stage), both orders, one binary (T = this branch's
# gpu_gdn_bench). Staged as gdn_device_fpiece14.sh (same tarball).
source .device/device-env.sh > $OUT/env2.log 2>&1
source bench/device_lib.sh
tb=$(dev_bin gpu_gdn_bench)
for order in "s5::5,s6::6,s7::7,s8::8" "s8::8,s7::7,s6::6,s5::5"; do
  echo "== bench T slim $order"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="1" DNNPLAN_GDN_BENCH_SCHEDULES="$order" timeout 40 $tb gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd |panicked"
done
echo "elapsed ${SECONDS}s"
