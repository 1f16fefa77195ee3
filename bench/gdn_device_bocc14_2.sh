# Session 14 (helper bocc14), call 2: the p1 piece passes with the one-stage seeded reverse scan
# (dscanp1, two per SM, the token stage after it instead of beside it) and the rule's P = 8 at
# (1,32768,16). This build (T) against main 7c9d00b (B = base/gpu_gdn_s13): backward hashes at
# equal piece counts, every gpu_gdn test, memcheck at 8 pieces, per-stage times (p1 with and
# without the overlap, with the r4 replay), whole fwd / bwd in both orders, the uncut shapes with
# P = 2 and without the overlap. Staged like bench/gdn_device_bocc14.sh (run: `cd .xfer-bocc14 &&
# tar xzf device.tgz && bash bench/gdn_device_bocc14_2.sh`).
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/bocc14
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s13
cat cubins.sha256
bh() { DEV_CAP_S=40 dev_bwd_case "$@"; }
# 1. Backward hashes T vs B: defaults, 4 and 8 pieces (every matrix case cut: p1 at K = 128).
bh T_def $t; bh B_def $b
dev_same $DEV_TMP/h_T_def $DEV_TMP/h_B_def "backward default: T == B 7c9d00b, $(wc -l < $DEV_TMP/h_T_def) hash lines"
for P in 4 8; do
  bh T_p$P $t DNNPLAN_GDN_BWD_PIECES=$P; bh B_p$P $b DNNPLAN_GDN_BWD_PIECES=$P
  dev_same $DEV_TMP/h_T_p$P $DEV_TMP/h_B_p$P "backward $P pieces: T p1 (dscanp1) == B 7c9d00b, $(wc -l < $DEV_TMP/h_T_p$P) hash lines"
done
dev_cover_reference "T: backward default" $DEV_TMP/h_T_def
echo "elapsed ${SECONDS}s"
# 2. Every gpu_gdn test with the defaults; 3. memcheck at 8 pieces.
DEV_CAP_S=60 dev_parity "default gpu_gdn" $t ""
DEV_CAP_S=45 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
# 4. Per stage at (1,32768,16): s2 (P = 4, overlapped), p1 by the rule (P = 8, dscanp1), then p1
# at 8 with the overlapped scan (run 1's) and with the r4 replay.
tp() { DNNPLAN_GDN_TIMING_PIECES=1 DNNPLAN_GDN_TIMING_PIECE_RUNS=$1 timeout 30 $t timing_backward_pieces \
  --test-threads=1 --nocapture 2>&1 | grep -E "bwd pieces|panicked"; }
tp "s2:4,p1:8,p1:,p1:8,s2:4"
[ $SECONDS -lt 90 ] && { echo "== DNNPLAN_GDN_BWD_OVERLAP=1"; DNNPLAN_GDN_BWD_OVERLAP=1 tp "p1:8"; echo "== DNNPLAN_GDN_BWD_FSCAN=r4"; DNNPLAN_GDN_BWD_FSCAN=r4 tp "p1:8,p1:8"; }
echo "elapsed ${SECONDS}s"
# 5. Whole fwd / bwd at the four shapes, both orders.
[ $SECONDS -lt 100 ] && { dev_timing "B 7c9d00b (a)" $b tc12; dev_timing "T (a)" $t tc12; }
[ $SECONDS -lt 125 ] && { dev_timing "T (b)" $t tc12; dev_timing "B 7c9d00b (b)" $b tc12; }
echo "elapsed ${SECONDS}s"
# 6. The uncut shapes: P = 2 on p1, and without the overlap.
for sh in 0 3; do
  [ $SECONDS -lt 145 ] && DNNPLAN_GDN_TIMING_PIECE_SHAPE=$sh tp "s2:1,p1:2,s2:1"
  [ $SECONDS -lt 150 ] && { echo "== DNNPLAN_GDN_BWD_OVERLAP=0"; DNNPLAN_GDN_BWD_OVERLAP=0 DNNPLAN_GDN_TIMING_PIECE_SHAPE=$sh tp "s2:1"; }
done
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
