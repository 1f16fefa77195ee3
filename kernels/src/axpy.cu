// axpy.cu: dnnplan's first bundled kernels, small on purpose. They exercise the whole kernel path
// (checked-in cubin, NVRTC fallback with knob defines, launches on a caller stream, clusters).
//
//   dnnp_fill_f32(n, value, y)          y[i] = value
//   dnnp_axpy_f32(n, alpha, x, y)       y[i] = alpha * x[i] + y[i]          (fp32, one fma)
//   dnnp_axpy_bf16(n, alpha, x, y)      y[i] = bf16_rn(alpha * x[i] + y[i]) (bf16 storage, fp32 math)
//   dnnp_cluster_ranks(out)             out[2*b] = rank of block b in its cluster, out[2*b+1] = cluster size
//
// Knob: DNNP_AXPY_UNROLL (elements per thread per grid-stride step, default 4). It changes the
// access pattern only, never the result: each element is computed by exactly one fma.
#include "dnnp_common.cuh"

#ifndef DNNP_AXPY_UNROLL
#define DNNP_AXPY_UNROLL 4
#endif

extern "C" __global__ void dnnp_fill_f32(dnnp_i64 n, float value, float* __restrict__ y) {
    for (dnnp_i64 i = dnnp_global_thread(); i < n; i += dnnp_grid_threads()) {
        y[i] = value;
    }
}

extern "C" __global__ void dnnp_axpy_f32(dnnp_i64 n, float alpha, const float* __restrict__ x,
                                         float* __restrict__ y) {
    const dnnp_i64 stride = dnnp_grid_threads();
    for (dnnp_i64 base = dnnp_global_thread(); base < n; base += stride * DNNP_AXPY_UNROLL) {
#pragma unroll
        for (int u = 0; u < DNNP_AXPY_UNROLL; ++u) {
            const dnnp_i64 i = base + u * stride;
            if (i < n) {
                y[i] = fmaf(alpha, x[i], y[i]);
            }
        }
    }
}

extern "C" __global__ void dnnp_axpy_bf16(dnnp_i64 n, float alpha,
                                          const dnnp_bf16_bits* __restrict__ x,
                                          dnnp_bf16_bits* __restrict__ y) {
    const dnnp_i64 stride = dnnp_grid_threads();
    for (dnnp_i64 base = dnnp_global_thread(); base < n; base += stride * DNNP_AXPY_UNROLL) {
#pragma unroll
        for (int u = 0; u < DNNP_AXPY_UNROLL; ++u) {
            const dnnp_i64 i = base + u * stride;
            if (i < n) {
                const float r = fmaf(alpha, dnnp_bf16_to_f32(x[i]), dnnp_bf16_to_f32(y[i]));
                y[i] = dnnp_f32_to_bf16_rn(r);
            }
        }
    }
}

// Reads the cluster special registers (sm_90+): proves a launch carried its cluster dimensions.
extern "C" __global__ void dnnp_cluster_ranks(unsigned int* __restrict__ out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned int rank, size;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = rank;
        out[2 * blockIdx.x + 1] = size;
    }
#else
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = 0xffffffffu;
        out[2 * blockIdx.x + 1] = 0u;
    }
#endif
}
