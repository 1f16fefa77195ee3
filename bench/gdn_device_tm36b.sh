# Session 36 (helper tm36), call 2 (only on a machine left warm): w4gxu with its mbarriers
# initialized before any warp arrives on them (call 1: warps 1-3 could arrive in the prologue
# before thread 0's init: launch failures at 128 blocks), w4gxv (w4gxt with the O store ahead of the
# tail's copies), and the timing call 1 lost to that panic.
# T = this build (branch tm36), B = main 330e912's gpu_gdn (/work/base35 as base/).
#   1. forward tests: T w4gxu / w4gxv / w4gxt forced == B w4gx forced
#   2. memcheck forward_parity with w4gxu forced
#   3. timing in one process (T's bench), shapes (4,8192,16) and the ragged mix: w4gxs w4gxt w4gxv
#      w4gxu w4gxu w4gxv w4gxt w4gxs, then the other order
# Command (from /work/main, carry [".xfer-tm36"]): `cd .xfer-tm36 && tar xJf device.txz &&
# OUT=$OUT timeout 80 bash bench/gdn_device_tm36b.sh`; about 30-50 s of command.
source bench/device_lib.sh
dev_begin tm36b
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, B $b"
export DEV_CAP_S=20
dev_fwd_case U "$t" DNNPLAN_GDN_FWD_SCAN=w4gxu
dev_fwd_case Bx "$b" DNNPLAN_GDN_FWD_SCAN=w4gx
dev_same $d/h_U $d/h_Bx "forward tests, T w4gxu forced == B 330e912 w4gx forced, $(wc -l < $d/h_Bx) hash lines"
dev_fwd_case V "$t" DNNPLAN_GDN_FWD_SCAN=w4gxv
dev_same $d/h_V $d/h_Bx "forward tests, T w4gxv forced == B 330e912 w4gx forced"
dev_fwd_case X "$t" DNNPLAN_GDN_FWD_SCAN=w4gxt
dev_same $d/h_X $d/h_Bx "forward tests, T w4gxt forced == B 330e912 w4gx forced"
echo "host time (w4gxu forced): $(grep -h 'host time per execute' $d/p_U.log | head -2 | tr '\n' ' ')"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 30 ] && DEV_CAP_S=25 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w4gxu
echo "elapsed ${SECONDS}s"
ben() {
  echo "== bench T shapes $1 ($2)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$1" DNNPLAN_GDN_BENCH_SCHEDULES=$2 timeout 20 "$tb" gdn_benchmark_ours \
    --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd |panicked" | sed -E 's/^test gdn_benchmark_ours \.\.\. //' \
    | cut -c1-420
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 50 ] && ben "0 3" "gxs:w4gxs,gxt:w4gxt,gxv:w4gxv,gxu:w4gxu,gxu:w4gxu,gxv:w4gxv,gxt:w4gxt,gxs:w4gxs"
[ $SECONDS -lt 62 ] && ben "0 3" "gxu:w4gxu,gxv:w4gxv,gxt:w4gxt,gxs:w4gxs,gxs:w4gxs,gxt:w4gxt,gxv:w4gxv,gxu:w4gxu"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
