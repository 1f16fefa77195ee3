source bench/device_lib.sh
dev_begin diag
t=$(dev_bin gpu_gdn)
DNNPLAN_GDN_BWD_TOKENS=tw7 timeout 60 $t backward_parity --test-threads=1 --nocapture 2>&1 | grep -E "panicked|left|right|CUDA" | head -6
DNNPLAN_GDN_BWD_TOKENS=tw7 timeout 60 compute-sanitizer --tool memcheck --print-limit 4 $t backward_parity --test-threads=1 2>&1 | grep -E "^=========" | head -40
