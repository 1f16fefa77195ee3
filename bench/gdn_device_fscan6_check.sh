# Ran at commit fc317ad (cubins gdn_fwd 2af4c35b…, gdn_bwd 371be3e1…, which still bundled the pairs kernels t8 / r8;
# from 022f7e0 on they are left out, and DNNPLAN_GDN_FWD_SCAN=t8 / DNNPLAN_GDN_BWD_FSCAN=r8 fall back to the defaults).
# Session 6 (helper fscan6) device check: parity of the forward-direction scans (default and the
# new switches), per-kernel timing old vs new at the four benchmark shapes (tests/gpu_gdn.rs
# timing_forward_scans), compute-sanitizer memcheck over the tests that run the new kernels, and
# the cubins' resource usage. Staged in /work/main/.xfer-fscan6 (device.tgz: .device/device-env.sh,
# the gpu_gdn test binary of `device-pack.sh --features gpu-tests`, kernels/sm_90a cubins); run
# from the repository root as `bash .xfer-fscan6/check.sh`. Steps are skipped past 185 s.
L=/tmp/fscan6logs; mkdir -p $L; T0=$(date +%s)
left() { [ $(( $(date +%s) - T0 )) -lt 185 ] || { echo "skipped (time): $*"; return 1; }; }
cd .xfer-fscan6 && tar xzf device.tgz && source .device/device-env.sh > $L/env.log 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
run() { local tag=$1; shift; left $tag || return; env "$@" > $L/p_$tag.log 2>&1; echo "$tag: $(grep 'test result' $L/p_$tag.log) [$(( $(date +%s) - T0 )) s]"; grep -E "panicked|FAILED" $L/p_$tag.log | head -3; }
run default timeout 50 $t --test-threads=1 --nocapture
run fwd_t8 DNNPLAN_GDN_FWD_SCAN=t8 timeout 25 $t forward_parity batch_invariant state_pool --test-threads=1 --nocapture
run bwd_r8 DNNPLAN_GDN_BWD_FSCAN=r8 timeout 25 $t backward_parity --test-threads=1 --nocapture
left timing && DNNPLAN_GDN_TIMING_SCANS=1 timeout 60 $t timing_forward_scans --test-threads=1 --nocapture > $L/timing_scans.log 2>&1
grep "gdn_sm90 fscan" $L/timing_scans.log; grep -E "panicked|test result" $L/timing_scans.log
run fwd_t8_p4 DNNPLAN_GDN_FWD_SCAN=t8 DNNPLAN_GDN_FWD_PIECES=4 timeout 25 $t forward_parity --test-threads=1 --nocapture
run bwd_r8_p4 DNNPLAN_GDN_BWD_FSCAN=r8 DNNPLAN_GDN_BWD_PIECES=4 timeout 25 $t backward_parity --test-threads=1 --nocapture
run bwd_r4_p4 DNNPLAN_GDN_BWD_FSCAN=r4 DNNPLAN_GDN_BWD_PIECES=4 timeout 25 $t backward_parity --test-threads=1 --nocapture
run bwd_v1 DNNPLAN_GDN_BWD_FSCAN=v1 timeout 25 $t backward_parity --test-threads=1 --nocapture
cob=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
for m in gdn_fwd gdn_bwd; do $cob --dump-resource-usage sm_90a/$m.cubin > $L/res_$m.log 2>&1; done
grep -A1 -E "scanx_bf16_k128|fscan.*bf16_k128|psum_bf16_k128|fwd_sum_bf16_k128" $L/res_gdn_*.log | grep -oE "(Function [a-z0-9_]+|REG:[0-9]+|SHARED:[0-9]+|LOCAL:[0-9]+)" | paste -sd" " | sed "s/Function /\n/g"
for c in "fwd_t8 DNNPLAN_GDN_FWD_SCAN=t8 forward_parity" "bwd_r8 DNNPLAN_GDN_BWD_FSCAN=r8 backward_parity" "bwd_r4 DNNPLAN_GDN_BWD_FSCAN=r4 backward_parity"; do
  set -- $c; left memcheck $1 || continue
  env $2 timeout 40 compute-sanitizer --tool memcheck --print-limit 5 $t $3 --test-threads=1 > $L/mc_$1.log 2>&1
  echo "memcheck $1: $(grep -E 'ERROR SUMMARY' $L/mc_$1.log) $(grep 'test result' $L/mc_$1.log) [$(( $(date +%s) - T0 )) s]"
done
tar czf $OUT/logs.tgz -C $L .
