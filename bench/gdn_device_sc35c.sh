# Session 35 (helper sc35), call 3: the first-early piece path's scans with w4gxs's split copies,
# gdn_fwd_slimscan_{bf16,f16}_k128_w4gx0s / _w4gxrs (DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN=w4gx0s runs
# both; not the rule). T = the build of sc35's fb87406 (those entries reverted in 1f072af: not
# faster), B = main 330e912's binaries (base/).
#   1. forward tests with w4gx0s forced (by rule's pieces, and at 7 pieces) == B's; memcheck
#   2. timing in one process at (1,32768,16): w4gx0 w4gx0s w4gx0s w4gx0, then the other order
# Command: `cd .xfer-sc35 && tar xJf device.txz && OUT=$OUT timeout 60 bash bench/gdn_device_sc35c.sh`.
source bench/device_lib.sh
dev_begin sc35c
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
export DEV_CAP_S=15
S=DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN=w4gx0s
dev_fwd_case S "$t" $S
dev_fwd_case B "$b"
dev_same $d/h_S $d/h_B "forward tests, w4gx0s forced: T == B 330e912 by rule, $(wc -l < $d/h_B) hash lines"
dev_fwd_case S7 "$t" $S DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_S7 $d/h_B7 "forward tests at 7 pieces, w4gx0s forced: T == B 330e912, $(wc -l < $d/h_B7) hash lines"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 25 ] && DEV_CAP_S=15 dev_memcheck "$t" forward_parity $S DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
ben() {
  echo "== bench T ($1)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES=1 DNNPLAN_GDN_BENCH_SCHEDULES=$1 timeout 12 "$tb" gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH ours fwd |panicked" | sed -E 's/^test gdn_benchmark_ours \.\.\. //' | cut -c1-420
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 38 ] && ben "x::::::w4gx0,xs::::::w4gx0s,xs::::::w4gx0s,x::::::w4gx0"
[ $SECONDS -lt 48 ] && ben "xs::::::w4gx0s,x::::::w4gx0,x::::::w4gx0,xs::::::w4gx0s"
echo "done ${SECONDS}s"
