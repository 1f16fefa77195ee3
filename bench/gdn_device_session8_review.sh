# Session 8 lead review call: prep6 / prep7 machine code changed by the dedupe of the inverse helpers (prep_t_pairs_to_io, prep_diag_* with a row-stride parameter); parity, memcheck and gradient/O hashes of the new build vs the pre-dedupe build (gpu_gdn_old, the final run's binary).
cd .xfer-cap && tar xzf d.tgz && source .device/device-env.sh > /dev/null 2>&1
t=$(ls .device/tests/gpu_gdn-* | head -1)
for v in v6 v7 v9; do echo "prep=$v: $(DNNPLAN_GDN_FWD_PREP=$v timeout 60 $t --test-threads=1 2>&1 | grep -E 'test result|panicked')"; done
H="#[0-9a-f]{16}"; for v in v6 v7; do DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_FWD_PREP=$v timeout 60 $t --test-threads=1 --nocapture 2>&1 | grep -E "$H" > /tmp/h_$v; echo "$v hash lines $(wc -l < /tmp/h_$v)"; done
for v in v6 v7; do DNNPLAN_GDN_FWD_PREP=$v timeout 60 compute-sanitizer --tool memcheck --print-limit 5 $t forward_parity --test-threads=1 2>&1 | grep -E "ERROR SUMMARY|test result" | sed "s/^/memcheck $v: /"; done
cp /tmp/h_v6 /tmp/h_v7 $OUT/ 2>/dev/null
o=gpu_gdn_old; chmod +x $o
for v in v6 v7; do DNNPLAN_GDN_TEST_HASHES=1 DNNPLAN_GDN_FWD_PREP=$v timeout 60 ./$o --test-threads=1 --nocapture 2>&1 | grep -E "$H" > /tmp/o_$v; if [ -s /tmp/h_$v ] && cmp -s /tmp/h_$v /tmp/o_$v; then echo "BITWISE prep $v: new build == pre-dedupe build ($(wc -l < /tmp/h_$v) hashes)"; else echo "DIFFER prep $v"; diff /tmp/h_$v /tmp/o_$v | head -4; fi; done
