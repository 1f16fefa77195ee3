# Session 15, helper ovf15, run 2: why the overlap gains little. The same kernels as run 1 (gdn_fwd.cubin
# sha256 5db8d301...); host diagnostics: DNNPLAN_GDN_FWD_OVERLAP=seq (the overlapped kernels one after
# the other: the 2-stage scan w4ov alone = whole seq - prep seq) and DNNPLAN_GDN_FWD_OVERLAP_PER_SM=1
# (one persistent prep block per SM instead of two: less issue contention for the scan, half the
# producers). Checks the new rows bitwise (overlap_forward_bitwise_at_benchmark_shapes), then times
# rows 0 (off), 1 (on, 2 per SM), 1/1 (on, 1 per SM), seq, each whole and cut after the prep.
# Stage: as bench/gdn_device_ovf15.sh (T only). run tool: carry [".xfer-ovf15"], command
# "cd .xfer-ovf15 && tar xzf device.tgz && bash bench/gdn_device_ovf15_2.sh".
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
t=$(dev_bin gpu_gdn)
echo "T $t"
timeout 50 $t overlap_forward_bitwise --test-threads=1 --nocapture 2>&1 | grep -E "gdn_sm90 overlap|panicked|test result"
echo "elapsed ${SECONDS}s"
DNNPLAN_GDN_TIMING_OVERLAP=30 DNNPLAN_GDN_TIMING_OVERLAP_ROWS=0,1,1/1,seq timeout 80 $t timing_forward_overlap --test-threads=1 --nocapture 2>&1 | grep -E "overlap timing|panicked" | tee $OUT/timing_overlap2.log
echo "elapsed ${SECONDS}s"
