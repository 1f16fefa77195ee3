# Session 35 (helper w8s35), staged for the next session: gdn_fwd_slimscan_{bf16,f16}_k128_w8gxs
# (w8gx, 8 warps and 2 stages, with chunk c + 1's T, A, v and scalar copies issued in the step's
# tail instead of beside the P', O' batch, as sc35's w4gxs; DNNPLAN_GDN_FWD_SCAN=w8gxs, not by
# rule). T = this build (branch w8s35), B = main 330e912's gpu_gdn (/work/base35 as base/).
#   1. forward tests (forward_parity state_pool batch_invariant): T with w8gxs forced == B with
#      w8gx forced; T w8gxs forced == T w8gx forced; T by rule == B by rule (w8gxs unused by rule)
#   2. memcheck forward_parity with w8gxs forced
#   3. timing in one process (T's bench) at (16,2048,32) (shape 2; the rule's 8-warp uncut scan):
#      w8gx w8gxs w8gxs w8gx (then default), then the other order; the prep and scan columns are
#      the bench's per-kernel cut (kernel_parts)
# Command (from /work/main): `cd .xfer-w8s35 && tar xJf device.txz && OUT=$OUT timeout 150 bash
# bench/gdn_device_w8s35.sh` (carry [".xfer-w8s35"]); about 80-100 s of command (+ start-up).
source bench/device_lib.sh
dev_begin w8s35
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, B $b"
export DEV_CAP_S=20
dev_fwd_case S "$t" DNNPLAN_GDN_FWD_SCAN=w8gxs
dev_fwd_case Bx "$b" DNNPLAN_GDN_FWD_SCAN=w8gx
dev_same $d/h_S $d/h_Bx "forward tests, T w8gxs forced == B 330e912 w8gx forced, $(wc -l < $d/h_Bx) hash lines"
dev_fwd_case X "$t" DNNPLAN_GDN_FWD_SCAN=w8gx
dev_same $d/h_S $d/h_X "forward tests, T w8gxs forced == T w8gx forced"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 60 ]; then
  dev_fwd_case T "$t"
  dev_fwd_case B "$b"
  dev_same $d/h_T $d/h_B "forward tests by rule: T == B 330e912, $(wc -l < $d/h_B) hash lines"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 75 ] && DEV_CAP_S=25 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w8gxs
echo "elapsed ${SECONDS}s"
ben() {
  echo "== bench T ($1)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES=2 DNNPLAN_GDN_BENCH_SCHEDULES=$1 timeout 20 "$tb" gdn_benchmark_ours \
    --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd |panicked" | sed -E 's/^test gdn_benchmark_ours \.\.\. //' \
    | cut -c1-420
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 100 ] && ben "w8gx:w8gx,w8gxs:w8gxs,w8gxs:w8gxs,w8gx:w8gx,default"
[ $SECONDS -lt 120 ] && ben "w8gxs:w8gxs,w8gx:w8gx,w8gx:w8gx,w8gxs:w8gxs"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
