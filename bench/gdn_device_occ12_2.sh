# Session 12 (helper occ12), call 2: the one-stage scans per piece at (1,32768,16) (P = 4 and 8: at
# P = 8 the seeded scan has 256 blocks, two waves of w4 or one of w4p at two per SM) and at
# (Run 1 used the build that still bundled w4s1, gdn_fwd.cubin sha256 9f9efa92...; from commit a72f9b1 on
# w4s1 is not bundled and DNNPLAN_GDN_FWD_SCAN=w4s1 falls back to the rule, like any unknown value.)
# (16,2048,32) uncut, per stage (gdn_benchmark_ours), both orders; parity + bitwise at P = 8.
# Stage as bench/gdn_device_occ12.sh plus .device/tests/gpu_gdn_bench-*; command:
# `cd .xfer-occ12 && tar xzf device.tgz && bash bench/gdn_device_occ12_2.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/occ12
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); b=$(dev_bin gpu_gdn_bench)
cat cubins.sha256
for v in w4 w4p; do dev_hashes fwd $t DNNPLAN_GDN_FWD_SCAN=$v DNNPLAN_GDN_FWD_PIECES=8 > $DEV_TMP/f8_$v; done
dev_same $DEV_TMP/f8_w4p $DEV_TMP/f8_w4 "forward, 8 pieces: w4p == w4, $(wc -l < $DEV_TMP/f8_w4) hash lines"
dev_parity "forward_parity w4p 8 pieces" $t forward_parity DNNPLAN_GDN_FWD_SCAN=w4p DNNPLAN_GDN_FWD_PIECES=8
S1="w4-p4:w4:4,w4p-p4:w4p:4,w4-p8:w4:8,w4p-p8:w4p:8,w4s1-p8:w4s1:8"
S2="w4s1-p8:w4s1:8,w4p-p8:w4p:8,w4-p8:w4:8,w4p-p4:w4p:4,w4-p4:w4:4"
for S in $S1 $S2; do DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="1" DNNPLAN_GDN_BENCH_SCHEDULES=$S timeout 60 $b gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd|panicked"; done
for S in "w8:w8:1,w4p:w4p:1,w4:w4:1" "w4:w4:1,w4p:w4p:1,w8:w8:1"; do DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="2 3" DNNPLAN_GDN_BENCH_SCHEDULES=$S timeout 60 $b gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd|panicked"; done
echo done
