# Session 36 (helper tm36): gdn_fwd_slimscan_{bf16,f16}_k128_w4gxt (w4gxs with each warp's O tile
# stored by ONE tensor-map store of the o map, box {16,1,64}, 32-byte swizzle, from a dense
# double-buffered staging; a sequence's partial last chunk keeps the 16-byte stores;
# DNNPLAN_GDN_FWD_SCAN=w4gxt, not by rule in this build), w4gxu (w4gxt with q, k loaded by the q,
# k tensor maps: four {64,1,64} boxes per chunk on a per-stage mbarrier, partial chunks zero their
# rows past the end; DNNPLAN_GDN_FWD_SCAN=w4gxu) and main's staged w8gxs (session 35, w8s35;
# DNNPLAN_GDN_FWD_SCAN=w8gxs). T = this build (branch tm36), B = main 330e912's gpu_gdn
# (/work/base35 as base/).
#   1. forward tests (forward_parity state_pool batch_invariant) with hashes: T w4gxt forced == B
#      w4gx forced; T w4gxu forced == B w4gx forced; T w4gxt forced == T w4gxs forced; T by rule ==
#      B by rule; T w8gxs forced == B w8gx forced
#   2. memcheck forward_parity with w4gxu forced, then w4gxt forced (and w8gxs if time is left)
#   3. host time per execute (forward_parity_matrix's 4 x 512 H=16 case prints the overhead over
#      bare launches): by rule (w4gxs: no map encoded) and w4gxt forced (four maps encoded)
#   4. timing in one process (T's bench): w4gxs w4gxt w4gxu w4gxu w4gxt w4gxs at (4,8192,16) and
#      the ragged mix (shapes 0 3), then the other order; w8gx w8gxs w8gxs w8gx at (16,2048,32)
#      (shape 2), then the other order
# Command (from /work/main, carry [".xfer-tm36"]): `cd .xfer-tm36 && tar xJf device.txz &&
# OUT=$OUT timeout 235 bash bench/gdn_device_tm36.sh`; about 150-230 s of command.
source bench/device_lib.sh
dev_begin tm36
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, B $b"
export DEV_CAP_S=25
dev_fwd_case X "$t" DNNPLAN_GDN_FWD_SCAN=w4gxt
dev_fwd_case Bx "$b" DNNPLAN_GDN_FWD_SCAN=w4gx
dev_same $d/h_X $d/h_Bx "forward tests, T w4gxt forced == B 330e912 w4gx forced, $(wc -l < $d/h_Bx) hash lines"
dev_fwd_case U "$t" DNNPLAN_GDN_FWD_SCAN=w4gxu
dev_same $d/h_U $d/h_Bx "forward tests, T w4gxu forced == B 330e912 w4gx forced, $(wc -l < $d/h_Bx) hash lines"
dev_fwd_case S "$t" DNNPLAN_GDN_FWD_SCAN=w4gxs
dev_same $d/h_X $d/h_S "forward tests, T w4gxt forced == T w4gxs forced"
echo "elapsed ${SECONDS}s"
dev_fwd_case T "$t"
dev_fwd_case B "$b"
dev_same $d/h_T $d/h_B "forward tests by rule: T == B 330e912, $(wc -l < $d/h_B) hash lines"
echo "elapsed ${SECONDS}s"
dev_fwd_case W "$t" DNNPLAN_GDN_FWD_SCAN=w8gxs
dev_fwd_case Bw "$b" DNNPLAN_GDN_FWD_SCAN=w8gx
dev_same $d/h_W $d/h_Bw "forward tests, T w8gxs forced == B 330e912 w8gx forced, $(wc -l < $d/h_Bw) hash lines"
echo "elapsed ${SECONDS}s"
echo "host time (by rule, w4gxs): $(grep -h 'host time per execute' $d/p_T.log | head -2 | tr '\n' ' ')"
echo "host time (w4gxt forced): $(grep -h 'host time per execute' $d/p_X.log | head -2 | tr '\n' ' ')"
echo "host time (w4gxu forced): $(grep -h 'host time per execute' $d/p_U.log | head -2 | tr '\n' ' ')"
echo "host time (w4gxs forced): $(grep -h 'host time per execute' $d/p_S.log | head -2 | tr '\n' ' ')"
[ $SECONDS -lt 90 ] && DEV_CAP_S=30 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w4gxu
echo "elapsed ${SECONDS}s"
ben() {
  echo "== bench T shapes $1 ($2)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$1" DNNPLAN_GDN_BENCH_SCHEDULES=$2 timeout 25 "$tb" gdn_benchmark_ours \
    --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd |panicked" | sed -E 's/^test gdn_benchmark_ours \.\.\. //' \
    | cut -c1-420
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 130 ] && ben "0 3" "gxs:w4gxs,gxt:w4gxt,gxu:w4gxu,gxu:w4gxu,gxt:w4gxt,gxs:w4gxs,default"
[ $SECONDS -lt 150 ] && ben "2" "w8gx:w8gx,w8gxs:w8gxs,w8gxs:w8gxs,w8gx:w8gx"
[ $SECONDS -lt 165 ] && ben "0 3" "gxu:w4gxu,gxt:w4gxt,gxs:w4gxs,gxs:w4gxs,gxt:w4gxt,gxu:w4gxu"
[ $SECONDS -lt 180 ] && ben "2" "w8gxs:w8gxs,w8gx:w8gx,w8gx:w8gx,w8gxs:w8gxs"
[ $SECONDS -lt 175 ] && DEV_CAP_S=30 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w4gxt
[ $SECONDS -lt 195 ] && DEV_CAP_S=25 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w8gxs
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
