# Session 22 (helper tok22), call 2 — timing only, to bound what the value products cost: a build
# whose gdn_bwd.cubin (sha256 in cubins.sha256) has tc14_ov = REV 16 (REV 14 with no wgmma product at
# all: U = Ũ, dQ⁺ = dE = dA = dL = dKᴿ = 0) and tc15_ov = REV 17 (REV 15 without pass 1 / 2, U kept);
# wrong gradients by design, never committed as entries (the patch: bench/gdn_tok22_skip.patch).
# One process each, A B B A: tc12 vs tc14 (= skip all), tc13 vs tc15 (= skip pass 1 / 2).
# run tool: carry [".xfer-tok22"], command `cd .xfer-tok22 && tar xJf device.txz && bash bench/gdn_device_tok22b.sh`.
exec > >(tee $OUT/tok22b.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/tok22b
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binary: T $t (SKIP build)"
DEV_CAP_S=60 dev_timing "SKIP tc12 tc14(=REV 16, no products) tc14 tc12" $t "tc12,tc14,tc14,tc12"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_timing "SKIP tc13 tc15(=REV 17, no pass 1 / 2) tc15 tc13" $t "tc13,tc15,tc15,tc13"
echo "elapsed ${SECONDS}s"
echo done
