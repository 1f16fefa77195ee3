# Session 6 (fscan6) second device call: the backward replay's occupancy rule (r4 one block per SM
# below 4 waves) at the ragged mix and (16, 2048, 32), plus the whole gpu_gdn suite on the rule.
cd .xfer-fscan6 && tar xzf device.tgz && source .device/device-env.sh > /dev/null 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 12 $t --test-threads=1 > /tmp/p.log 2>&1; echo "default: $(grep 'test result' /tmp/p.log)"; grep -E "panicked|FAILED" /tmp/p.log | head -3
DNNPLAN_GDN_TIMING_SCANS=bwd DNNPLAN_GDN_TIMING_SHAPES=3,2 DNNPLAN_GDN_TIMING_REPLAYS=v1,r4,r4/2,r4/1 timeout 16 $t timing_forward_scans --test-threads=1 --nocapture 2>&1 | grep -E "gdn_sm90 fscan|test result|panicked"
