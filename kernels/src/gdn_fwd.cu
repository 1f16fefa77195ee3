// gdn_fwd.cu: entry points of the Gated DeltaNet chunked forward (kernels/include/gdn_fwd.cuh).
//
// Per (io dtype, K = V) variant three launches on one stream, all scratch in the caller's
// workspace (layout: src/engines/gdn/params.rs, bench/gdn_fwd_harness.cu):
//   gdn_chunk_offsets                      <<<1, 1024>>>                 chunk table
//   gdn_fwd_prep_{bf16,f16}_k{64,128}      <<<(max_chunks, HO), 128, PrepSmem::bytes>>>
//   gdn_fwd_scan_{bf16,f16}_k{64,128}      <<<(V / 64, HO, N), 128, ScanSmem::bytes>>>
// The single parameter is gdn::FwdParams by value.
#include "gdn_fwd.cuh"

extern "C" __global__ void __launch_bounds__(gdn::OFFSETS_THREADS) gdn_chunk_offsets(gdn::FwdParams p) {
  gdn::chunk_offsets_body(p);
}

#define GDN_FWD_ENTRIES(TAG, T, KD)                                                                  \
  extern "C" __global__ void __launch_bounds__(gdn::PREP_THREADS)                                   \
      gdn_fwd_prep_##TAG##_k##KD(gdn::FwdParams p) {                                               \
    gdn::fwd_prep_body<T, KD, KD>(p);                                                               \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::SCAN_WARPS * 32)                                \
      gdn_fwd_scan_##TAG##_k##KD(gdn::FwdParams p) {                                               \
    gdn::fwd_scan_body<T, KD, KD, gdn::SCAN_WARPS, gdn::SCAN_STAGES>(p);                           \
  }

GDN_FWD_ENTRIES(bf16, gdn::gdn_bf16, 128)
GDN_FWD_ENTRIES(bf16, gdn::gdn_bf16, 64)
GDN_FWD_ENTRIES(f16, gdn::gdn_f16, 128)
GDN_FWD_ENTRIES(f16, gdn::gdn_f16, 64)
