#!/usr/bin/env bash
# Session 68, call 3: the lazily scaled state (LS) in the harness and through the product.
# Never ran: session 69's bench/device_s69a.sh ran its steps. bench/gdn_ls68_product.patch, named below,
# left the tree when its b2c half landed (session 69; `git show c4fbf4e:bench/gdn_ls68_product.patch`).
# 1. The harness (.xfer-abl68/f16bench, the tree after RO / RX / KS left it): its checks (every form
#    against fp64), then w8c, w8cl (LS), w8cl1 (LS with one accumulator set for P and Q: A1), b2c,
#    b2cl, HREPS rounds (default 2) at the four benchmark shapes.
# 2. The forward by rule through the product, main (device82.txz: main plus the switch-only w8cr, the
#    rule's forms' .text main's) against the LS candidate (device84.txz: w8c and b2c with LS,
#    Fused16State::Lazy), alternating, two rounds at the one pass's shapes (dev_pack_fwd_ab).
# 3. gpu_gdn and gpu_gdn_pdl on the LS candidate (TESTS=0: skip): the forms test holds w8c and b2c to
#    the fp64 reference and to themselves.
# 4. On an H200 with TABLE=1 only: issue 8's table (device_peers_55b.sh on device82.txz, main's rule).
# Staging on the CPU machine (nvcc from ../shared/scripts/install-nvcc.sh on PATH, CU its
# site-packages/nvidia/cu13; from the repository root):
#   mkdir -p .xfer-abl68; nvcc -std=c++17 -O3 -L$CU/lib -gencode arch=compute_90a,code=sm_90a \
#     -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o .xfer-abl68/f16bench
#   git apply bench/gdn_ls68_product.patch && bash kernels/build-cubins.sh   (the candidate: w8c / b2c
#     on Fused16W8CL / Fused16B2CL, Fused16State in src/engines/gdn/fused16.rs and tests/gpu_gdn.rs)
#   CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols cargo test --release \
#     --features gpu-tests --no-run --test gpu_gdn --test gpu_gdn_pdl --test gpu_gdn_bench
#   P=/tmp/pk84; mkdir -p $P/.device/tests; cp ../shared/scripts/device-env.sh $P/.device/
#   for t in gpu_gdn gpu_gdn_pdl gpu_gdn_bench; do cp $(ls -t target/release/deps/$t-* | grep -E "/$t-[0-9a-f]+$" | head -1) $P/.device/tests/; done
#   tar cJf .xfer-tests68/device84.txz -C $P .device; git checkout kernels/ src/ tests/
# (device82.txz: device_s67a.sh's staging.) Staged in session 68, not run: the device budget ran out
# (nine requests refused or taken back).
# run: command "bash bench/device_s68c.sh", carry [".xfer-abl68", ".xfer-tests68", ".xfer-final"],
# kind nvidia-h200 (~170 s; with TABLE=1 ~500 s).
# Reading: w8cl / b2cl faster than w8c / b2c in the harness and the candidate faster through the
# product with gpu_gdn green -> land LS in the product's forms.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
dev_pack s66t device82.txz
dev_pack s68l device84.txz
echo "== harness checks (log harness_checks.log)"
F16BENCH=.xfer-abl68/f16bench dev_f16_checks "w8c|w8cl|w8cl1|b2c|b2cl"
grep -E "^CHECK.*(w8cl|b2cl)" "$OUT/harness_checks.log" | cut -c1-120
echo "== harness: w8c, w8cl, w8cl1, b2c, b2cl"
F16BENCH=.xfer-abl68/f16bench dev_f16_rounds w8c,w8cl,w8cl1,b2c,b2cl "${HREPS:-2}" 2>&1 | tee "$OUT/s68c_harness.log"
echo "elapsed $SECONDS s"
echo "== the forward by rule: main (s66t) against LS (s68l)"
dev_pack_fwd_ab s66t s68l "0 2 3" 2 2>&1 | tee "$OUT/s68c_fwd_ab.log"
echo "elapsed $SECONDS s"
if [ "${TESTS:-1}" != 0 ]; then dev_pack_tests s68l; fi
echo "elapsed $SECONDS s"
if [ "${TABLE:-0}" = 1 ]; then
  cp .xfer-tests68/device82.txz .xfer-tests68/device68.txz
  BUDGET=${BUDGET:-320} bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s68c_table.log"
fi
echo "elapsed $SECONDS s"
