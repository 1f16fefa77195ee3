# Session 29 (lead): the slim piece chain's piece count at (1,32768,16). The final run (one order)
# gave bwd P = 6 / 8 / 10 / 12 / 8: 2.095 / 2.133 / 2.288 / 2.233 / 2.129 ms; the rule's P = 8 was
# tuned on the full-form chain (session 19). Here: parity and memcheck at P = 6 and 5, then
# timing in one process order 8 6 7 5 5 7 6 8 (whole backward with stages), twice.
# Command: `OUT=$OUT bash bench/gdn_device_pc29.sh` from an unpacked staging (.device, bench/).
source bench/device_lib.sh
dev_begin pc29
t=$(dev_bin gpu_gdn)
for p in 6 5; do DEV_CAP_S=40 dev_parity "backward_parity P=$p" $t backward_parity DNNPLAN_GDN_BWD_PIECES=$p; done
DEV_CAP_S=40 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_PIECES=6
echo "elapsed ${SECONDS}s"
for round in 1 2; do
  for p in 8 6 7 5 5 7 6 8; do
    DEV_CAP_S=20 dev_timing "P=$p" $t tc16 DNNPLAN_GDN_TIMING_SHAPES=1 DNNPLAN_GDN_BWD_PIECES=$p | grep -E "bwd stages|timing \("
  done
  echo "elapsed ${SECONDS}s"
done
