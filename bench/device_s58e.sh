#!/usr/bin/env bash
# Session 58's fifth call (harness only): the producer warps' free-stage waits with a suspend-time
# hint (GDN_F16_SLEEP_NS=1000000: a second harness build) against the system's limit, on w8c-po and
# b2c-rf; and b2c with the remote forward and the early test (b2c-rf-et). Every CHECK of the
# default build (the sleep build's outputs are compared by its timed runs only), then alternating,
# two rounds.
# run: command "bash bench/device_s58e.sh", any kind. ~150 s.
# (Rewritten after the call onto bench/device_lib.sh's preamble; GDN_F16_SLEEP_NS is gone since
# session 59, so the second build is the first one again.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1 &
nvcc $F -DGDN_F16_SLEEP_NS=1000000 bench/gdn_fused16_bench.cu -o /tmp/f16sleep > /tmp/f16s.build 2>&1 &
wait
ls -la /tmp/f16bench /tmp/f16sleep | cut -c1-80
dev_elapsed
FUSED16_ONLY=none timeout 100 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
grep -E "CHECK.*(FAIL|b2c-rf-et)|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head
for rep in 1 2; do
  FUSED16_ONLY=w8c-po,b2c-rf,b2c-rf-et timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
  FUSED16_ONLY=w8c-po,b2c-rf timeout 60 /tmp/f16sleep 20 2>&1 | grep "^FUSED16" | sed 's/^FUSED16 /FUSED16 sleep-/' | cut -c1-66
done
dev_elapsed
