/* lesson_kernels.cu -- the divergence kernels and their C-ABI launchers.
 *
 * Three sections, as in llm.c: compile-time checks of the shared predicate
 * (the lesson's static_asserts), the kernels, and the launchers.
 *
 * mixOneBranch is the lesson's Part 1 kernel: the predicate mode is a runtime
 * argument, uniform over the grid, so every row runs the same instructions
 * and only the identity of the threads on each path changes. The mask kernel
 * is the same branch around the same two chains, with the path bit read from
 * a host-built mask so any predicate can be asked without writing CUDA.
 * Part 2 moves the branch inside the loop (phase = loop index, so it cannot
 * be hoisted) and has a no-branch baseline.
 *
 * The chains are unrolled 128 deep so that loop overhead (counter, compare,
 * branch) is a small share of the issued instructions: on GPUs that issue one
 * warp instruction per scheduler per cycle, every non-FMA instruction costs an
 * FMA slot.
 */
#include <cuda_runtime.h>

#include "model/chain.h"
#include "base/status.h"
#include "model/experiment.h"
#include "gpu/lesson_kernels.h"
#include "model/predicate.h"
#include "gpu/cuda_call.h"

/* ---------------------------------------------------------------------------
 * Compile-time checks: the lesson's split counts for a 256-thread block. */

constexpr unsigned kBlock = 256;
constexpr unsigned kWarpsPerBlock = kBlock / DV_WARP_SIZE;

constexpr unsigned split_warps_per_block(int mode) {
    unsigned split = 0;
    for (unsigned w = 0; w < kWarpsPerBlock; ++w) {
        unsigned on_a = 0;
        for (unsigned lane = 0; lane < DV_WARP_SIZE; ++lane)
            on_a += dv_takes_path_a(mode, w * DV_WARP_SIZE + lane, 0u, 0u) ? 1u : 0u;
        split += (on_a != 0 && on_a != DV_WARP_SIZE) ? 1u : 0u;
    }
    return split;
}

constexpr unsigned threads_on_a(int mode, unsigned block) {
    unsigned n = 0;
    for (unsigned t = 0; t < kBlock; ++t) n += dv_takes_path_a(mode, t, block, 0u) ? 1u : 0u;
    return n;
}

static_assert(split_warps_per_block(DV_LANE_PARITY) == kWarpsPerBlock, "threadIdx.x & 1 must split every warp in the block");
static_assert(split_warps_per_block(DV_LANE_HALF) == kWarpsPerBlock, "a threshold inside the warp splits every warp too");
static_assert(split_warps_per_block(DV_WARP_PARITY) == 0, "threadIdx.x / 32 is constant across a warp");
static_assert(split_warps_per_block(DV_BLOCK_PARITY) == 0, "blockIdx.x is constant across a warp");
static_assert(split_warps_per_block(DV_ALWAYS_A) == 0, "no branch, no split");
static_assert(split_warps_per_block(DV_FIRST_16) == 1, "threadIdx.x < 16 splits warp 0 only");

static_assert(threads_on_a(DV_LANE_PARITY, 0) == kBlock / 2, "lane parity sends half the block down path A");
static_assert(threads_on_a(DV_LANE_HALF, 0) == kBlock / 2, "lane half sends half the block down path A");
static_assert(threads_on_a(DV_WARP_PARITY, 0) == kBlock / 2, "warp parity sends half the block down path A");
static_assert(threads_on_a(DV_BLOCK_PARITY, 0) + threads_on_a(DV_BLOCK_PARITY, 1) == kBlock,
              "block parity sends half the grid down path A");
static_assert(threads_on_a(DV_FIRST_16, 0) == 16, "threadIdx.x < 16 sends 16 threads down path A, not 128");

/* ---------------------------------------------------------------------------
 * Kernels. */



__device__ __forceinline__ float chain_a(float x, unsigned iterations) {
#pragma unroll 128
    for (unsigned k = 0; k < iterations; ++k) x = fmaf(x, DV_MUL_A, DV_ADD_A);
    return x;
}

__device__ __forceinline__ float chain_b(float x, unsigned iterations) {
#pragma unroll 128
    for (unsigned k = 0; k < iterations; ++k) x = fmaf(x, DV_MUL_B, DV_ADD_B);
    return x;
}

__device__ __forceinline__ size_t global_index(unsigned *tid_out) {
    const unsigned tid = threadIdx.x + threadIdx.y * blockDim.x;
    *tid_out = tid;
    return blockIdx.x * static_cast<size_t>(blockDim.x * blockDim.y) + tid;
}

__global__ void mixOneBranch(const float *__restrict__ in, float *__restrict__ out, size_t n, int mode,
                             unsigned iterations) {
    unsigned tid;
    const size_t i = global_index(&tid);
    float x = (i < n) ? in[i] : 1.0f;
    if (dv_takes_path_a(mode, threadIdx.x, blockIdx.x, 0u)) {
        x = chain_a(x, iterations);
    } else {
        x = chain_b(x, iterations);
    }
    if (i < n) out[i] = x;
}

__global__ void mixMaskBranch(const float *__restrict__ in, float *__restrict__ out, size_t n,
                              const uint32_t *__restrict__ mask, unsigned iterations) {
    unsigned tid;
    const size_t i = global_index(&tid);
    float x = (i < n) ? in[i] : 1.0f;
    const bool path_a = (i < n) ? ((mask[i >> 5] >> (i & 31)) & 1u) != 0u : true;
    if (path_a) {
        x = chain_a(x, iterations);
    } else {
        x = chain_b(x, iterations);
    }
    if (i < n) out[i] = x;
}

__global__ void mixNoBranch(const float *__restrict__ in, float *__restrict__ out, size_t n, unsigned iterations) {
    unsigned tid;
    const size_t i = global_index(&tid);
    float x = (i < n) ? in[i] : 1.0f;
    x = chain_a(x, iterations);
    if (i < n) out[i] = x;
}

__global__ void mixBranchPerIteration(const float *__restrict__ in, float *__restrict__ out, size_t n, int mode,
                                      unsigned iterations) {
    unsigned tid;
    const size_t i = global_index(&tid);
    float x = (i < n) ? in[i] : 1.0f;
    /* Unrolled like the chains, so that the loop counter costs the same share
     * here as in the no-branch row and the difference is the branch. */
#pragma unroll 16
    for (unsigned k = 0; k < iterations; ++k) {
        if (dv_takes_path_a(mode, threadIdx.x, blockIdx.x, k)) {
            x = fmaf(x, DV_MUL_A, DV_ADD_A);
        } else {
            x = fmaf(x, DV_MUL_B, DV_ADD_B);
        }
    }
    if (i < n) out[i] = x;
}

__global__ void clockSpin(long long cycles, long long *out) {
    const long long start = clock64();
    long long now = start;
    while (now - start < cycles) now = clock64();
    if (threadIdx.x == 0) out[blockIdx.x] = now - start;
}

/* ---------------------------------------------------------------------------
 * Launchers. */

static int after_launch(const char *what, char *err) { return cuda_launched(what, err); }

extern "C" int dv_run_kernel(int kernel, const struct dv_launch *l, char *err) {
    const dim3 grid(l->blocks), block(l->block_x, l->block_y);
    switch (kernel) {
    case DV_KERNEL_BRANCH:
        mixOneBranch<<<grid, block>>>(l->in, l->out, l->n, l->mode, l->iterations);
        return after_launch("launch mixOneBranch", err);
    case DV_KERNEL_MASK:
        mixMaskBranch<<<grid, block>>>(l->in, l->out, l->n, l->mask, l->iterations);
        return after_launch("launch mixMaskBranch", err);
    case DV_KERNEL_NOBRANCH:
        mixNoBranch<<<grid, block>>>(l->in, l->out, l->n, l->iterations);
        return after_launch("launch mixNoBranch", err);
    case DV_KERNEL_PERITER:
        mixBranchPerIteration<<<grid, block>>>(l->in, l->out, l->n, l->mode, l->iterations);
        return after_launch("launch mixBranchPerIteration", err);
    default:
        dv_seterr(err, "launch: kernel %d is not a Part 1/2 kernel", kernel);
        return DV_ERR;
    }
}

extern "C" int dv_occupancy(int kernel, unsigned threads, int *blocks_per_sm, char *err) {
    const void *fn;
    switch (kernel) {
    case DV_KERNEL_BRANCH: fn = (const void *)mixOneBranch; break;
    case DV_KERNEL_MASK: fn = (const void *)mixMaskBranch; break;
    case DV_KERNEL_NOBRANCH: fn = (const void *)mixNoBranch; break;
    case DV_KERNEL_PERITER: fn = (const void *)mixBranchPerIteration; break;
    default: dv_seterr(err, "occupancy: kernel %d unknown", kernel); return DV_ERR;
    }
    return cuda_call(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, fn, (int)threads, 0),
                     "cudaOccupancyMaxActiveBlocksPerMultiprocessor", err);
}

extern "C" int dv_run_clock_spin(long long cycles, unsigned blocks, long long *d_out, char *err) {
    clockSpin<<<blocks, 32>>>(cycles, d_out);
    return after_launch("launch clockSpin", err);
}
