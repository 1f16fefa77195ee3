# Session 31 (helper ro31): the token stage's tile order (DNNPLAN_GDN_BWD_TOKEN_ORDER=rank|trail1|
# trail1l1, gdn_bwd_chunk_order_rev's tail; only that entry's .text changed in gdn_bwd.cubin).
#   1. backward_parity hashes under each order; BITWISE vs the default (rank) of the same build
#   2. timing in one process: rank trail1 trail1l1 trail1l1 trail1 rank at (4,8192,16),
#      (16,2048,32), ragged (whole backward and stages)
#   3. memcheck backward_parity under trail1, if time is left
# Command: `cd .xfer-ro31 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_ro31.sh`.
source bench/device_lib.sh
dev_begin ro31
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
echo "binary: T $t"
DEV_CAP_S=25 dev_bwd_case T_rank $t
DEV_CAP_S=25 dev_bwd_case T_trail1 $t DNNPLAN_GDN_BWD_TOKEN_ORDER=trail1
DEV_CAP_S=25 dev_bwd_case T_trail1l1 $t DNNPLAN_GDN_BWD_TOKEN_ORDER=trail1l1
dev_same $d/h_T_trail1 $d/h_T_rank "trail1 == rank (default), $(wc -l < $d/h_T_rank) hash lines"
dev_same $d/h_T_trail1l1 $d/h_T_rank "trail1l1 == rank (default), $(wc -l < $d/h_T_rank) hash lines"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 40 ] && DEV_CAP_S=40 DNNPLAN_GDN_TIMING_SHAPES=0,2,3 dev_timing "orders A B C C B A" $t "~rank,~trail1,~trail1l1,~trail1l1,~trail1,~rank"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 70 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_TOKEN_ORDER=trail1
echo "done ${SECONDS}s"
