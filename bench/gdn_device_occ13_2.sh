# Session 13 (helper occ13): NOT RUN by occ13 (its brief allowed two device calls; the first went to
# the tool's checkout semantics, see bench/gdn_results.md). For the lead's final run, staged from a
# build of this branch: the new default piece path (w4p + sum1, P = 7 at
# (1,32768,16)) on the H200: every gpu_gdn test, the default's hashes against the session-9
# reference, P = 7 bitwise the session-12 kernels, memcheck, and timing against the session-12
# build (/work/wt/base/gpu_gdn_s12, staged as base/gpu_gdn_s12) in the order new, base, base, new,
# plus the piece path per stage (the rule against the session-12 path w4 + s2 at P = 4, both orders).
# Stage as bench/gdn_device_occ13.sh plus base/gpu_gdn_s12, in /work/main/.xfer-occ13 (the run
# tool sends the session's checkout, /work/main, not a helper's worktree); command:
# `cd .xfer-occ13 && tar xzf device.tgz && bash bench/gdn_device_occ13_2.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/occ13
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); b=$(dev_bin gpu_gdn_bench); base=base/gpu_gdn_s12
cat cubins.sha256
echo "staged binary embeds w4p / sum1 / sum1b4: $(grep -c gdn_fwd_scanx_bf16_k128_w4p $t) $(grep -c gdn_fwd_sum1_bf16_k128 $t) $(grep -c gdn_fwd_sum1b4_bf16_k128 $t)"
dev_parity "default gpu_gdn" $t ""
dev_hashes bwd $t > $DEV_TMP/h_rule; dev_hashes fwd $t > $DEV_TMP/f_rule
dev_cover_reference "default" $DEV_TMP/h_rule $DEV_TMP/f_rule
dev_hashes fwd $base > $DEV_TMP/f_base
dev_same $DEV_TMP/f_rule $DEV_TMP/f_base "forward default == session-12 build, $(wc -l < $DEV_TMP/f_base) hash lines"
fh() { DEV_CAP_S=40 dev_fwd_case "$@"; }
fh newP7 $t DNNPLAN_GDN_FWD_PIECES=7
fh baseP7 $base DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_newP7 $DEV_TMP/h_baseP7 "forward, 7 pieces: default kernels (w4p + sum1) == session-12 build (w4 + sum), $(wc -l < $DEV_TMP/h_baseP7) hash lines"
DEV_CAP_S=50 dev_memcheck $t forward_parity
for x in new base base new; do bin=$t; [ $x = base ] && bin=$base
  DEV_CAP_S=50 dev_timing "timing $x" $bin tc12; done
S1="rule:::,s12-path:w4:4:s2"; S2="s12-path:w4:4:s2,rule:::"
for S in $S1 $S2; do DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="1" DNNPLAN_GDN_BENCH_SCHEDULES=$S timeout 40 $b gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours fwd |panicked"; done
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
