# Session 29 (helper td29): timing only — the token stage's load floor. T = a build whose tc16_ov
# entries are the timing-only "load-only" tile (bench/gdn_td29_loadonly.patch: every copy of the
# tile issued and waited for, dq / dk / dv written from the landed tiles, every product and row
# phase dropped; wrong gradients by design, never committed as kernels). B = /work/base29 (main
# c271890, tc16 the same tile apart from ov_need). One process per binary, B T T B, default plan
# (tc16 by rule), shapes (4,8192,16) and (16,2048,32); stages = cut differences.
# Command: `cd .xfer-td29 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_td29.sh`.
source bench/device_lib.sh
dev_begin td29
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t (load-only tc16), B $b"
S="DNNPLAN_GDN_TIMING_SHAPES=0,2"
for who in B T T B; do
  [ $SECONDS -lt 100 ] || break
  bin=$b; [ $who = T ] && bin=$t
  DEV_CAP_S=30 dev_timing "$who (tc16, tc16)" $bin "tc16,tc16" $S
  echo "elapsed ${SECONDS}s"
done
echo done
