# Session 17 (helper coarse17), call 2: the c = 64 reuse path's summaries psum -> psumt (Mᵀ_j only)
# and the seeding rows, same call, T (branch coarse17) against B (main 16d211a, whose
# gdn_backward_checkpoints times recompute, reuse, reuse, recompute) in the order B T T B; the
# stages of T's backward at (1,32768,16) with and without seeding rows are not cut here.
# Stage and run as bench/gdn_device_coarse17.sh (the same tarball plus this script).
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/coarse17
mkdir -p $DEV_TMP
tb=$(dev_bin gpu_gdn_bench); bb=base/gpu_gdn_bench_s17base
cat cubins.sha256
for x in "B $bb" "T $tb" "T $tb" "B $bb"; do set -- $x
  [ $SECONDS -lt 70 ] && { echo "== $1"; DNNPLAN_GDN_BENCH_CKPT=1 timeout 25 $2 gdn_backward_checkpoints --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ckpt|panicked"; }
done
echo "elapsed ${SECONDS}s"
echo done
