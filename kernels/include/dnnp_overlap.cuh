// dnnp_overlap.cuh: hand-over between a producer kernel and a consumer kernel that run at the
// same time on one stream (programmatic dependent launch, sm_90+).
//
// Contract (what makes it deadlock-free and race-free):
// - The producer is launched first, normally; the consumer right after it with
//   `LaunchConfig::programmatic` set (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION).
//   Every producer block calls `dnnp_launch_dependents()` once it is resident; the driver then
//   starts the consumer grid when *all* producer blocks have called it (or exited). So every
//   producer block is resident before any consumer block exists; a producer never waits on a
//   consumer, so the producer always finishes, whatever occupies the GPU.
// - Each unit of hand-over has one 32-bit flag in the caller's workspace, zeroed earlier on the
//   same stream, so that replaying a captured graph resets it too: by a `Launcher::memset_u32`,
//   or by a kernel that runs before the producer (the GDN backward's `gdn_bwd_chunk_order_rev`).
//   The producer writes its unit, then `dnnp_flag_publish_block` (block barrier, then one thread:
//   gpu-scope fence and release store). The consumer calls `dnnp_flag_wait_block` before it
//   reads (issues a copy of) the unit: one thread spins with gpu-scope acquire loads, then a block
//   barrier. Data reads after the wait must not be served by a stale L1 line: use cp.async.cg /
//   ld.global.cg (L2) or plain loads after the acquire (which invalidates the SM's L1).
// - A consumer that finishes before the producer's last block must not let the stream move on:
//   it calls `dnnp_wait_prerequisites()` (griddepcontrol.wait) before it exits, so the kernel
//   after the pair (launched normally) starts only after both.
// On targets below sm_90 the griddepcontrol calls compile to nothing (no PDL there: the host
// launches the pair in sequence and every flag is already set when the consumer runs).
#pragma once

// Lets the next kernel on the stream (launched with the programmatic attribute) start once every
// block of this grid has called this or exited. Call it from every thread of the block (or from
// all after a barrier); calling it again has no effect.
__device__ __forceinline__ void dnnp_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Waits until the prerequisite grid (the producer) has completed and its memory is visible.
__device__ __forceinline__ void dnnp_wait_prerequisites() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Entry of a kernel that may be launched with programmatic dependent launch as the next kernel of
// a chain (one execute's launches on one stream; the GDN plans under DNNPLAN_GDN_PDL): call it as
// the FIRST statement of the entry, in every block and on every path, before any read of what an
// earlier kernel of the chain wrote and any write of what it reads. griddepcontrol.wait returns
// once the previous kernel has completed and its memory is visible (at once when the kernel was
// launched normally); since that kernel's blocks all passed the same wait, its completion implies
// every earlier kernel's (transitively). A block that returned early without the wait would break
// that chain. `trigger`: then let the next kernel's grid start (its blocks become resident and wait
// in their own dnnp_pdl_enter) once every block of this grid got here, instead of when this grid
// exits; the trigger comes after the wait, so the next grid never starts before this one's
// predecessors completed, and all of this grid's blocks are resident by then (no deadlock: no
// block waits on a later kernel).
__device__ __forceinline__ void dnnp_pdl_enter(bool trigger) {
    dnnp_wait_prerequisites();
    if (trigger) dnnp_launch_dependents();
}

__device__ __forceinline__ unsigned dnnp_flag_load_acquire(const unsigned* flag) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    return v;
}

__device__ __forceinline__ void dnnp_flag_store_release(unsigned* flag, unsigned value) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

// Publishes `value` in `flag` when the caller has just passed a block barrier that follows every
// thread's writes of the unit (and may go on writing other units after it). All threads of the
// block call it; thread 0 publishes.
__device__ __forceinline__ void dnnp_flag_publish_after_barrier(unsigned* flag, unsigned value) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        __threadfence();
        dnnp_flag_store_release(flag, value);
    }
}

// Adds `value` to `flag` (release, gpu scope) when the caller has just passed a block barrier that
// follows every thread's writes of its part of the unit: a unit written by several blocks, each
// adding its share, is complete when the flag reaches their sum (the consumer waits for that).
// All threads of the block call it; thread 0 adds.
__device__ __forceinline__ void dnnp_flag_add_after_barrier(unsigned* flag, unsigned value) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        __threadfence();
        asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
    }
}

// Publishes `value` in `flag` once every thread of the block has written its part of the unit.
// All threads of the block must call it (it contains a block barrier).
__device__ __forceinline__ void dnnp_flag_publish_block(unsigned* flag, unsigned value) {
    __syncthreads();
    dnnp_flag_publish_after_barrier(flag, value);
}

// One thread's spin until `flag >= value` (acquire). Backs off with nanosleep between polls.
__device__ __forceinline__ void dnnp_flag_wait_thread(const unsigned* flag, unsigned value) {
    while (dnnp_flag_load_acquire(flag) < value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
        __nanosleep(64);
#endif
    }
}

// Block-wide wait: thread 0 spins, then a block barrier. All threads of the block must call it.
__device__ __forceinline__ void dnnp_flag_wait_block(const unsigned* flag, unsigned value) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        dnnp_flag_wait_thread(flag, value);
    }
    __syncthreads();
}
