/* lesson_kernels.cu -- the divergence kernels and their C-ABI launchers.
 *
 * Three sections, so that what is proved at compile time, what runs on the
 * GPU and what the host calls can each be read alone: compile-time checks of
 * the shared predicate (the lesson's static_asserts), the kernels, and the
 * launchers.
 *
 * mixOneBranch is the lesson's Part 1 kernel: the predicate mode is a runtime
 * argument, uniform over the grid, so every row runs the same instructions
 * and only the identity of the threads on each path changes. The mask kernel
 * is the same branch around the same two chains, with the path bit read from
 * a host-built mask so any predicate can be asked without writing CUDA.
 * Part 2 moves the branch inside the loop (phase = loop index, so it cannot
 * be hoisted) and has a no-branch baseline. Each kernel exists as the lesson
 * compiles it (iteration count a compile-time constant, mode a runtime
 * argument), as a runtime-trip-count fallback, and as an untimed witness.
 *
 * The compile-time kernels' loops are the lesson's as written, in the
 * kernel's body, unrolled as nvcc unrolls the lesson's own kernel (192 to
 * 256 FMAs per trip for the chains on sm_90); a build can ask for a
 * deeper unroll with -DDV_LESSON_UNROLL=N, and then every table says so. The
 * runtime fallback unrolls the chains 128 deep and the per-iteration loop 16
 * deep so that loop overhead (counter, compare, branch) stays a small share
 * of the issued instructions: on GPUs that issue one warp instruction per
 * scheduler per cycle, every non-FMA instruction costs an FMA slot. The
 * counters (counters.h) count exactly that share.
 */
#include <cuda_runtime.h>

#include "kernels/model/model/chain.h"
#include "kernels/base/status.h"
#include "kernels/model/model/experiment.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/model/model/predicate.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/witness_device.cuh"
#include "kernels/model/model/witness_record.h"

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
 * Kernels.
 *
 * Every kernel is a template on ITERS and WITNESS. ITERS is the iteration
 * count as the lesson compiles it (`constexpr int kIters = 4096`): the loops
 * have a compile-time trip count, so the timed kernel carries no trip-count
 * arithmetic; ITERS = 0 is the fallback for any other `iterations`, read at
 * run time. WITNESS = true is the untimed witness instantiation: the same
 * kernel plus, at the top of each path, one active-lane record per warp
 * (model/model/witness_record.h, gpu/witness_device.cuh). The timed kernels are
 * the WITNESS = false instantiations and contain no witness code at all. */

/* The chains. With a compile-time trip count (ITERS) and no DV_LESSON_UNROLL
 * the Part 1 body (one_branch below, forced inline into both Part 1
 * kernels) and the no-branch kernel write the loop as the lesson does
 * (`for (int k = 0; k < kIters; ++k)` inside the if and the else, no
 * pragma), and nvcc unrolls it as it unrolls the lesson's kernel (192 to
 * 256 FMAs per trip on sm_90). The same loop written through these helpers
 * was unrolled 128 deep, which left the compiled Part 1 rows 1.3 to 2.4%
 * slower than the lesson's kernel on an H200 (tests/bench/lesson_floor.cu).
 * These helpers are the other cases: an asked-for unroll (DV_LESSON_UNROLL),
 * and the runtime fallback, unrolled 128 deep so that its loop control and
 * remainder stay a small share of the issued instructions. */

#ifndef DV_LESSON_UNROLL
#define DV_LESSON_UNROLL 0
#endif
constexpr unsigned kLessonUnroll = DV_LESSON_UNROLL ? DV_LESSON_UNROLL : 1u; /* (pragma arguments are not macro-expanded) */
constexpr unsigned kLessonStepUnroll = kLessonUnroll < 16u ? kLessonUnroll : 16u;
constexpr bool as_written(unsigned iters) { return iters != 0 && DV_LESSON_UNROLL == 0; }

template <unsigned ITERS>
__device__ __forceinline__ float chain_a(float x, unsigned iterations) {
    if constexpr (ITERS != 0) {
#pragma unroll(kLessonUnroll)
        for (int k = 0; k < (int)ITERS; ++k) x = fmaf(x, DV_MUL_A, DV_ADD_A);
    } else {
#pragma unroll 128
        for (unsigned k = 0; k < iterations; ++k) x = fmaf(x, DV_MUL_A, DV_ADD_A);
    }
    return x;
}

template <unsigned ITERS>
__device__ __forceinline__ float chain_b(float x, unsigned iterations) {
    if constexpr (ITERS != 0) {
#pragma unroll(kLessonUnroll)
        for (int k = 0; k < (int)ITERS; ++k) x = fmaf(x, DV_MUL_B, DV_ADD_B);
    } else {
#pragma unroll 128
        for (unsigned k = 0; k < iterations; ++k) x = fmaf(x, DV_MUL_B, DV_ADD_B);
    }
    return x;
}

/* One step of the Part 2 loop: the branch on phase k. */
template <bool WITNESS>
__device__ __forceinline__ float periter_step(float x, int mode, unsigned k, witness_recorder<WITNESS> &rec) {
    if (dv_takes_path_a(mode, threadIdx.x, blockIdx.x, k)) {
        rec.hit(0u);
        x = fmaf(x, DV_MUL_A, DV_ADD_A);
    } else {
        rec.hit(1u);
        x = fmaf(x, DV_MUL_B, DV_ADD_B);
    }
    return x;
}

__device__ __forceinline__ size_t global_index(unsigned *tid_out) {
    const unsigned tid = threadIdx.x + threadIdx.y * blockDim.x;
    *tid_out = tid;
    return blockIdx.x * static_cast<size_t>(blockDim.x * blockDim.y) + tid;
}

/* The Part 1 body, written once for the branch and the mask kernels (as
 * llm.c writes each kernel body once and launches it from thin wrappers):
 * the input, the branch on the path bit `path_a(i)` around the two chains,
 * the output and the witness's record. The kernels differ only in where the
 * path bit comes from. Forced inline, it leaves each kernel's machine code
 * what it was when both kernels spelled the body out: every instantiation's
 * code on sm_75, sm_80 and sm_90 was compared byte for byte, before and
 * after (nvcc 13.0), and its registers. */
template <unsigned ITERS, bool WITNESS, typename PathA>
__device__ __forceinline__ void one_branch(const float *__restrict__ in, float *__restrict__ out, size_t n,
                                           unsigned iterations, struct dv_witness_block *witness, PathA path_a) {
    __shared__ struct dv_witness_block ws;
    unsigned tid;
    const size_t i = global_index(&tid);
    witness_recorder<WITNESS> rec(&ws, tid, blockDim.x * blockDim.y);
    float x = (i < n) ? in[i] : 1.0f;
    if (path_a(i)) {
        rec.hit(0u);
        if constexpr (as_written(ITERS)) {
            for (int k = 0; k < (int)ITERS; ++k) x = fmaf(x, DV_MUL_A, DV_ADD_A);
        } else {
            x = chain_a<ITERS>(x, iterations);
        }
    } else {
        rec.hit(1u);
        if constexpr (as_written(ITERS)) {
            for (int k = 0; k < (int)ITERS; ++k) x = fmaf(x, DV_MUL_B, DV_ADD_B);
        } else {
            x = chain_b<ITERS>(x, iterations);
        }
    }
    if (i < n) out[i] = x;
    rec.end(witness);
}

/* The lesson's mixOneBranch: the path bit is the built-in predicate `mode`. */
template <unsigned ITERS, bool WITNESS>
__global__ void mixOneBranch(const float *__restrict__ in, float *__restrict__ out, size_t n, int mode,
                             unsigned iterations, struct dv_witness_block *witness) {
    one_branch<ITERS, WITNESS>(in, out, n, iterations, witness,
                               [mode](size_t) { return dv_takes_path_a(mode, threadIdx.x, blockIdx.x, 0u); });
}

/* Any predicate: the path bit of thread i read from the host-built mask. */
template <unsigned ITERS, bool WITNESS>
__global__ void mixMaskBranch(const float *__restrict__ in, float *__restrict__ out, size_t n,
                              const uint32_t *__restrict__ mask, unsigned iterations,
                              struct dv_witness_block *witness) {
    one_branch<ITERS, WITNESS>(in, out, n, iterations, witness, [mask, n](size_t i) {
        return (i < n) ? ((mask[i >> 5] >> (i & 31)) & 1u) != 0u : true;
    });
}

template <unsigned ITERS, bool WITNESS>
__global__ void mixNoBranch(const float *__restrict__ in, float *__restrict__ out, size_t n, unsigned iterations,
                            struct dv_witness_block *witness) {
    __shared__ struct dv_witness_block ws;
    unsigned tid;
    const size_t i = global_index(&tid);
    witness_recorder<WITNESS> rec(&ws, tid, blockDim.x * blockDim.y);
    float x = (i < n) ? in[i] : 1.0f;
    rec.hit(0u);
    if constexpr (as_written(ITERS)) {
        for (int k = 0; k < (int)ITERS; ++k) x = fmaf(x, DV_MUL_A, DV_ADD_A);
    } else {
        x = chain_a<ITERS>(x, iterations);
    }
    if (i < n) out[i] = x;
    rec.end(witness);
}

template <unsigned ITERS, bool WITNESS>
__global__ void mixBranchPerIteration(const float *__restrict__ in, float *__restrict__ out, size_t n, int mode,
                                      unsigned iterations, struct dv_witness_block *witness) {
    __shared__ struct dv_witness_block ws;
    unsigned tid;
    const size_t i = global_index(&tid);
    witness_recorder<WITNESS> rec(&ws, tid, blockDim.x * blockDim.y);
    float x = (i < n) ? in[i] : 1.0f;
    /* Compile-time: the lesson's loop as written (nvcc's own unrolling, or
     * DV_LESSON_UNROLL). Runtime: unrolled 16 deep, so that the loop counter
     * costs a small share and the difference from the no-branch row is the
     * branch. */
    if constexpr (ITERS != 0 && DV_LESSON_UNROLL == 0) {
        for (int k = 0; k < (int)ITERS; ++k) x = periter_step<WITNESS>(x, mode, (unsigned)k, rec);
    } else if constexpr (ITERS != 0) {
#pragma unroll(kLessonStepUnroll)
        for (int k = 0; k < (int)ITERS; ++k) x = periter_step<WITNESS>(x, mode, (unsigned)k, rec);
    } else {
#pragma unroll 16
        for (unsigned k = 0; k < iterations; ++k) x = periter_step<WITNESS>(x, mode, k, rec);
    }
    if (i < n) out[i] = x;
    rec.end(witness);
}

__global__ void clockSpin(long long cycles, long long *out) {
    const long long start = clock64();
    long long now = start;
    while (now - start < cycles) now = clock64();
    if (threadIdx.x == 0) out[blockIdx.x] = now - start;
}

/* ---------------------------------------------------------------------------
 * Launchers.
 *
 * Which kernel a launch runs is three choices, each made in one place:
 *   the row's kernel (enum dv_kernel)     which of the four kernels:
 *                                         the switch in launch_instance();
 *   dv_kernel_compiled(l->iterations)     ITERS = DV_COMPILED_ITERATIONS
 *                                         (the lesson's loops) or 0 (runtime);
 *   l->witness set                        WITNESS = true (the untimed witness)
 *                                         or false (the timed kernel).
 * dv_run_kernel() makes the last two, one line per instantiation, so the
 * library holds 4 kernels x 2 x 2 instantiations; the occupancy query asks
 * about the timed ones (timed_kernel<ITERS>). Every launch is checked by
 * DV_CUDA_LAUNCH (cuda_call.h), whose error names the kernel it launched. */

static_assert(DV_COMPILED_ITERATIONS == DV_DEFAULT_ITERATIONS, "the lesson's kIters is the default");

extern "C" int dv_kernel_compiled(unsigned iterations) { return iterations == DV_COMPILED_ITERATIONS; }

extern "C" const char *dv_kernel_iterations_name(unsigned iterations) {
    if (!dv_kernel_compiled(iterations)) return "runtime";
    /* A build that unrolls the lesson's loops says so in every table. */
#define DV_STR2(x) #x
#define DV_STR(x) DV_STR2(x)
    return DV_LESSON_UNROLL ? "compile-time 4096, unroll " DV_STR(DV_LESSON_UNROLL) : "compile-time 4096";
#undef DV_STR
#undef DV_STR2
}

/* One checked launch of `kernel`'s <ITERS, WITNESS> instantiation. */
template <unsigned ITERS, bool WITNESS>
static int launch_instance(enum dv_kernel kernel, const struct dv_launch *l, char *err) {
    const dim3 grid(l->blocks), block(l->block_x, l->block_y);
    switch (kernel) {
    case DV_KERNEL_BRANCH:
        return DV_CUDA_LAUNCH((mixOneBranch<ITERS, WITNESS>), grid, block, err, l->in, l->out, l->n, l->mode,
                              l->iterations, l->witness);
    case DV_KERNEL_MASK:
        return DV_CUDA_LAUNCH((mixMaskBranch<ITERS, WITNESS>), grid, block, err, l->in, l->out, l->n, l->mask,
                              l->iterations, l->witness);
    case DV_KERNEL_NOBRANCH:
        return DV_CUDA_LAUNCH((mixNoBranch<ITERS, WITNESS>), grid, block, err, l->in, l->out, l->n, l->iterations,
                              l->witness);
    case DV_KERNEL_PERITER:
        return DV_CUDA_LAUNCH((mixBranchPerIteration<ITERS, WITNESS>), grid, block, err, l->in, l->out, l->n, l->mode,
                              l->iterations, l->witness);
    default: dv_seterr(err, "launch: kernel %d is not a Part 1/2 kernel", (int)kernel); return DV_ERR;
    }
}

extern "C" int dv_run_kernel(enum dv_kernel kernel, const struct dv_launch *l, char *err) {
    const bool compiled = dv_kernel_compiled(l->iterations);
    if (l->witness && compiled) return launch_instance<DV_COMPILED_ITERATIONS, true>(kernel, l, err);
    if (l->witness) return launch_instance<0, true>(kernel, l, err);
    if (compiled) return launch_instance<DV_COMPILED_ITERATIONS, false>(kernel, l, err);
    return launch_instance<0, false>(kernel, l, err);
}

/* The timed <ITERS> instantiation of `kernel`, for the occupancy query. */
template <unsigned ITERS> static const void *timed_kernel(enum dv_kernel kernel) {
    switch (kernel) {
    case DV_KERNEL_BRANCH: return (const void *)mixOneBranch<ITERS, false>;
    case DV_KERNEL_MASK: return (const void *)mixMaskBranch<ITERS, false>;
    case DV_KERNEL_NOBRANCH: return (const void *)mixNoBranch<ITERS, false>;
    case DV_KERNEL_PERITER: return (const void *)mixBranchPerIteration<ITERS, false>;
    default: return NULL;
    }
}

extern "C" int dv_occupancy(enum dv_kernel kernel, unsigned iterations, unsigned threads, int *blocks_per_sm,
                            char *err) {
    const void *fn =
        dv_kernel_compiled(iterations) ? timed_kernel<DV_COMPILED_ITERATIONS>(kernel) : timed_kernel<0>(kernel);
    if (!fn) {
        dv_seterr(err, "occupancy: kernel %d unknown", (int)kernel);
        return DV_ERR;
    }
    return DV_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, fn, (int)threads, 0), err);
}

extern "C" int dv_run_clock_spin(long long cycles, unsigned blocks, long long *d_out, char *err) {
    return DV_CUDA_LAUNCH((clockSpin), blocks, 32, err, cycles, d_out);
}
