#!/usr/bin/env bash
# Session 74, call 2 (an H200 only, on the machine call 1's table left warm): do the one pass's and
# the piece chain's rules, set on H100 measurements (sessions 64-72), hold on the H200? The forward
# through the product of device75.txz (b76cd7b, the table's pack), two rounds each:
#   A: by rule, w8c forced, b2c forced (DNNPLAN_GDN_FWD_FUSED) at (4,8192,16), (16,2048,32), ragged;
#   B: (1,32768,16) by rule (five pieces) and at 4, 6 and 7 pieces (the benchmark's schedules p4 / p6 / p7,
#      which set DNNPLAN_GDN_FWD_PIECES, through dev_pack_fwd_packs's DEV_BENCH_SCHEDULES).
# run: command "bash bench/device_s74b.sh", carry [".xfer-tests73"], needs_h200, ~150 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_packs_begin s74b .xfer-tests73 p:device75.txz
echo "== A: the one pass by rule and by form"
for form in rule w8c b2c; do
  echo "-- $form"
  if [ "$form" = rule ]; then dev_pack_fwd_packs p "0 2 3" 2
  else DNNPLAN_GDN_FWD_FUSED=$form dev_pack_fwd_packs p "0 2 3" 2; fi
done 2>&1 | tee "$OUT/s74b_forms.log"
dev_elapsed
echo "== B: (1,32768,16) by rule and at 4, 6, 7 pieces (one process, the schedules in turn, two rounds)"
DEV_BENCH_SCHEDULES="default:::,p4::4,p6::6,p7::7" dev_pack_fwd_packs p 1 2 2>&1 | tee "$OUT/s74b_pieces.log"
for rep in 1 2; do cp "$DEV_TMP/ours_p_p_$rep.log" "$OUT/pieces_$rep.log" 2>/dev/null; done
dev_elapsed
