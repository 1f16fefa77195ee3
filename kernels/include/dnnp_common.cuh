// dnnp_common.cuh: small device helpers shared by dnnplan's kernels.
//
// Self-contained on purpose (no CUDA toolkit headers), so the same text compiles with nvcc for the
// bundled cubins and with NVRTC at run time without any include path. bf16 is carried as its raw
// 16-bit pattern; conversions follow IEEE round-to-nearest-even, as __float2bfloat16_rn does.
#pragma once

typedef unsigned short dnnp_bf16_bits;
typedef long long dnnp_i64;

__device__ __forceinline__ float dnnp_bf16_to_f32(dnnp_bf16_bits b) {
    return __uint_as_float(static_cast<unsigned int>(b) << 16);
}

__device__ __forceinline__ dnnp_bf16_bits dnnp_f32_to_bf16_rn(float f) {
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0u) {
        return static_cast<dnnp_bf16_bits>((u >> 16) | 0x0040u);  // NaN stays a quiet NaN
    }
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
    return static_cast<dnnp_bf16_bits>(u >> 16);
}

// Grid-stride loop start and step for a 1-D launch.
__device__ __forceinline__ dnnp_i64 dnnp_global_thread() {
    return static_cast<dnnp_i64>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ dnnp_i64 dnnp_grid_threads() {
    return static_cast<dnnp_i64>(gridDim.x) * blockDim.x;
}
