# Session 12 (helper chain12): the piece chain with M staged in shared memory (fwd_chain2_body:
# DNNPLAN_GDN_CHAIN=v2 on 32 state rows per block, v3 on 16 rows = twice the blocks) against the
# session-4 chain (v1) on the H200, in one call (run 2; run 1 had v1 / v2 only).
# Stage: kernels/build-cubins.sh; cargo test --release --features gpu-tests --test gpu_gdn
# --no-run; tar .device/device-env.sh + .device/tests/gpu_gdn-* + bench/device_lib.sh +
# bench/gdn_hashes_session9.txt + this script + cubins.sha256 into .xfer-chain12/device.tgz;
# run tool: carry [".xfer-chain12"]; command: `cd .xfer-chain12 && tar xzf device.tgz && bash
# bench/gdn_device_chain12.sh`. Logs into $OUT.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
t=$(dev_bin gpu_gdn); d=$DEV_TMP
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
# 1. every GDN GPU test with v3, v2, v1, with hashes: v3 == v2 == v1, each covers session 9.
for v in v3 v2 v1; do env DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_CHAIN=$v timeout 60 $t --test-threads=1 --nocapture > $OUT/all_$v.log 2>&1
  echo "chain $v gpu_gdn: $(grep -E 'test result' $OUT/all_$v.log) $(grep -m1 panicked $OUT/all_$v.log)"
  grep -E "$DEV_HASH_RE" $OUT/all_$v.log | sed -E 's/ in [0-9.]+ ?m?s//' > $d/h_$v; done
echo "hash lines: v3 $(wc -l < $d/h_v3), v2 $(wc -l < $d/h_v2), v1 $(wc -l < $d/h_v1)"
dev_same $d/h_v3 $d/h_v1 "all gpu_gdn hashes: chain v3 == v1 (incl. the forward piece cases and the backward long-span pieces)"
dev_same $d/h_v2 $d/h_v1 "all gpu_gdn hashes: chain v2 == v1"
dev_cover_reference "chain v3" $d/h_v3
dev_cover_reference "chain v2" $d/h_v2
# 2. 4 pieces forced on both parity matrices (the rule gives 16 on the long cases): v3 == v1.
for w in forward_parity backward_parity; do for v in v3 v1; do
  env DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_CHAIN=$v DNNPLAN_GDN_FWD_PIECES=4 DNNPLAN_GDN_BWD_PIECES=4 timeout 40 $t $w --test-threads=1 --nocapture > $OUT/p4_$v.log 2>&1
  echo "$w P=4 chain $v: $(grep -E 'test result' $OUT/p4_$v.log) $(grep -m1 panicked $OUT/p4_$v.log)"
  grep -E "$DEV_HASH_RE" $OUT/p4_$v.log | sed -E 's/ in [0-9.]+ ?m?s//' > $d/p4_${w}_$v; done
  dev_same $d/p4_${w}_v3 $d/p4_${w}_v1 "$w, 4 pieces forced: chain v3 == v1"; done
# 3. memcheck of v3 (forward matrix incl. the piece cases by rule, forced 4 pieces; backward by rule).
dev_memcheck $t forward_parity DNNPLAN_GDN_CHAIN=v3
dev_memcheck $t forward_parity DNNPLAN_GDN_CHAIN=v3 DNNPLAN_GDN_FWD_PIECES=4
dev_memcheck $t backward_parity DNNPLAN_GDN_CHAIN=v3
# 4. timing, alternating v1 / v2 / v3 in each round: (1,32768,16) at the rule's P and at P = 8,
#    two rounds; (4,8192,16) uncut (no chain: whole times only), one round.
DNNPLAN_GDN_TIMING_CHAIN=1,8 DNNPLAN_GDN_TIMING_SHAPES=1 timeout 90 $t timing_piece_chain --test-threads=1 --nocapture > $OUT/timing.log 2>&1
DNNPLAN_GDN_TIMING_ROUNDS=1 DNNPLAN_GDN_TIMING_CHAIN=1 DNNPLAN_GDN_TIMING_SHAPES=0 timeout 40 $t timing_piece_chain --test-threads=1 --nocapture >> $OUT/timing.log 2>&1
grep -E "gdn_sm90 chain|test result|panicked" $OUT/timing.log
echo done
