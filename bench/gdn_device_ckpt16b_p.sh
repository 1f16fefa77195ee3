# Session 16 (helper ckpt16b), second call: the piece count with reused checkpoints at
# (1,32768,16) (gdn_backward_checkpoints at DNNPLAN_GDN_BWD_PIECES = n: recompute, reuse, reuse,
# recompute; the rule's P = 8 is the unforced row), to see whether the piece rule should know
# about the reuse. Staged as bench/gdn_device_ckpt16b.sh.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
tb=$(dev_bin gpu_gdn_bench)
for p in rule 2 4 6 8 12 16 rule; do
  [ $SECONDS -lt 100 ] || break
  if [ $p = rule ]; then
    echo "P = rule: $(DNNPLAN_GDN_BENCH_CKPT=1 DNNPLAN_GDN_BENCH_SHAPES=1 timeout 20 $tb gdn_backward_checkpoints --test-threads=1 --nocapture 2>&1 | grep -E 'BENCH ckpt|panicked')"
  else
    echo "P = $p: $(DNNPLAN_GDN_BWD_PIECES=$p DNNPLAN_GDN_BENCH_CKPT=1 DNNPLAN_GDN_BENCH_SHAPES=1 timeout 20 $tb gdn_backward_checkpoints --test-threads=1 --nocapture 2>&1 | grep -E 'BENCH ckpt|panicked')"
  fi
done
echo "elapsed ${SECONDS}s"
echo done
