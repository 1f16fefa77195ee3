// gdn_fused16.cu: entry points of the one-pass chunk-16 GDN forward (kernels/include/gdn_fwd_fused16.cuh,
// sessions 48-49). The parameter is gdn::Fused16Params by value (gdn::FwdParams, the token rows, the
// state pool's rows), b2c's gdn::Fused16TmaParams (the same, then its q, k tensor maps;
// src/engines/gdn/fused16.rs); no workspace.
// Per io dtype (bf16, f16), K = V = 128, one launch on the caller's stream:
//   gdn_fwd_fused16_{bf16,f16}_k128_w8   <<<(2, HO, N), 384, fused16_smem_bytes<T, 64, Fused16W8>()>>>
//                                        eight producer warps, 14 stages, one block per SM
//   gdn_fwd_fused16_{bf16,f16}_k128_b2   <<<(2, HO, N), 256, fused16_smem_bytes<T, 64, Fused16B2>()>>>
//                                        four producer warps, 8 stages, two blocks per SM
//   gdn_fwd_fused16_{bf16,f16}_k128_w4c  <<<(2, HO, N), 256, ...Fused16W4C>, cluster (2, 1, 1)>>>
//                                        four producer warps, 14 stages, one block per SM; the two
//                                        value halves of a (sequence, head) as one cluster, each
//                                        CTA building every other chunk's T, A and scalars for both
//   gdn_fwd_fused16_{bf16,f16}_k128_b2c  <<<(2, HO, N), 256, ...Fused16B2CL>, cluster (2, 1, 1)>>>
//                                        b2 as such clusters, two blocks per SM, the staggered
//                                        prologue; its chain's products on wgmma (WG, UW) with 160
//                                        registers (setmaxnreg, session 63), the state's decay
//                                        applied lazily (LS, session 69), a full chunk's q, k by
//                                        tensor-map boxes multicast into both CTAs (TQ, session 71;
//                                        the maps in the parameter block)
//   gdn_fwd_fused16_{bf16,f16}_k128_w8c  <<<(2, HO, N), 384, ...Fused16W8C>, cluster (2, 1, 1)>>>
//                                        w8's eight producer warps as such clusters, 16 stages,
//                                        one block per SM, the staggered prologue
// src/engines/gdn/fused16.rs states each entry's threads and shared memory (FUSED16_FORMS); the
// static_asserts below keep the two equal. Every entry takes the lean step with the producer's O
// store (sessions 57-59): the same bits in every form on the mma.sync chain (w8, b2, w4c, w8c);
// b2c's wgmma chain sums its products in another order and scales its state lazily (other bits,
// within the tolerance).
#include "gdn_fwd_fused16.cuh"

GDN_FUSED16_ENTRY(gdn_fwd_fused16_bf16_k128_w8, gdn::gdn_bf16, Fused16W8, 1, gdn::F16_FULL)
GDN_FUSED16_ENTRY(gdn_fwd_fused16_f16_k128_w8, gdn::gdn_f16, Fused16W8, 1, gdn::F16_FULL)
GDN_FUSED16_ENTRY(gdn_fwd_fused16_bf16_k128_b2, gdn::gdn_bf16, Fused16B2, 2, gdn::F16_FULL)
GDN_FUSED16_ENTRY(gdn_fwd_fused16_f16_k128_b2, gdn::gdn_f16, Fused16B2, 2, gdn::F16_FULL)
GDN_FUSED16_ENTRY(gdn_fwd_fused16_bf16_k128_w4c, gdn::gdn_bf16, Fused16W4C, 1, gdn::F16_FULL)
GDN_FUSED16_ENTRY(gdn_fwd_fused16_f16_k128_w4c, gdn::gdn_f16, Fused16W4C, 1, gdn::F16_FULL)
GDN_FUSED16_TQ_ENTRY(gdn_fwd_fused16_bf16_k128_b2c, gdn::gdn_bf16, Fused16B2CL, 2, gdn::F16_FULL)
GDN_FUSED16_TQ_ENTRY(gdn_fwd_fused16_f16_k128_b2c, gdn::gdn_f16, Fused16B2CL, 2, gdn::F16_FULL)
GDN_FUSED16_ENTRY(gdn_fwd_fused16_bf16_k128_w8c, gdn::gdn_bf16, Fused16W8C, 1, gdn::F16_FULL)
GDN_FUSED16_ENTRY(gdn_fwd_fused16_f16_k128_w8c, gdn::gdn_f16, Fused16W8C, 1, gdn::F16_FULL)

// The shared memory src/engines/gdn/fused16.rs launches each form with (both io dtypes are 2 bytes).
static_assert(gdn::fused16_smem_bytes<gdn::gdn_bf16, 64, gdn::Fused16W8>() == 190784, "w8 smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_f16, 64, gdn::Fused16W8>() == 190784, "w8 smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_bf16, 64, gdn::Fused16B2>() == 108288, "b2 smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_f16, 64, gdn::Fused16B2>() == 108288, "b2 smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_bf16, 64, gdn::Fused16W4C>() == 185664, "w4c smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_f16, 64, gdn::Fused16W4C>() == 185664, "w4c smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_bf16, 64, gdn::Fused16B2CL>() == 112640, "b2c smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_f16, 64, gdn::Fused16B2CL>() == 112640, "b2c smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_bf16, 64, gdn::Fused16W8C>() == 216576, "w8c smem: fused16.rs");
static_assert(gdn::fused16_smem_bytes<gdn::gdn_f16, 64, gdn::Fused16W8C>() == 216576, "w8c smem: fused16.rs");
