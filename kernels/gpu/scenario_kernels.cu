/* scenario_kernels.cu -- the scenario suite's kernels and their launchers.
 *
 * Three kernels, each reading one float per thread and writing one:
 *   k-way  a switch over 32 paths; path P is an FMA chain with its own
 *          constants (scenario_kway_a/b(P)), run in chunks of 32 unrolled
 *          FMAs under `#pragma unroll 1`, so every path stays a separate
 *          loop behind its own branch target (distinct constants keep the
 *          compiler from merging paths; `cuobjdump -sass` shows 32 FFMA
 *          chains with distinct immediates);
 *   loop   a per-thread trip count over a one-unit body: a warp keeps
 *          looping until its longest thread is done;
 *   short  a tiny if/else per iteration, the side picked by a bit of a
 *          per-thread pattern word (so the compiler cannot hoist it), in two
 *          sizes: 1|2 FMAs, which ptxas predicates (@P FFMA, no BSSY), and
 *          3|4 FMAs (worked case C7), which it keeps as a branch (BSSY, @P BRA,
 *          BSYNC per if/else).
 * Each kernel is instantiated with the suites' unit (the lesson's 4096
 * iterations / 8 = 512 FMAs = 16 chunks; 128 rounds of the short kernel) as
 * a compile-time constant, with a runtime fallback for other sizes, and as an
 * untimed witness (model/model/witness_record.h).
 * The constants come from scenario.h, which the CPU reference shares.
 * Launchers check cudaGetLastError() after every launch and classify errors
 * with cuda_call.h.
 */
#include <cuda_runtime.h>

#include "kernels/gpu/cuda_call.h"
#include "kernels/model/model/scenario.h"
#include "kernels/gpu/scenario_kernels.h"
#include "kernels/gpu/witness_device.cuh"
#include "kernels/model/model/witness_record.h"

static_assert(SCENARIO_MAX_PATHS == 32, "the k-way switch has 32 cases");

/* ---- kernels ----------------------------------------------------------- */

/* CHUNKS: the unit in SCENARIO_CHUNK-FMA chunks as a compile-time constant
 * (the suites' unit at the lesson's 4096 iterations), 0 = read at run time. */
template <unsigned CHUNKS>
__device__ __forceinline__ unsigned unit_chunks(unsigned chunks_per_unit) {
    return CHUNKS ? CHUNKS : chunks_per_unit;
}

template <unsigned P>
__device__ __forceinline__ float kway_path(float x, unsigned chunks) {
    const float a = scenario_kway_a(P), b = scenario_kway_b(P);
#pragma unroll 1
    for (unsigned c = 0; c < chunks; ++c) {
#pragma unroll
        for (unsigned k = 0; k < SCENARIO_CHUNK; ++k) x = fmaf(x, a, b);
    }
    return x;
}

__device__ __forceinline__ unsigned long long thread_index(unsigned *tid_out) {
    unsigned tid = threadIdx.x + threadIdx.y * blockDim.x;
    *tid_out = tid;
    return (unsigned long long)blockIdx.x * (blockDim.x * blockDim.y) + tid;
}

template <unsigned CHUNKS, bool WITNESS>
__global__ void scenario_kway_kernel(const float *__restrict__ in, float *__restrict__ out,
                                     const uint8_t *__restrict__ path, unsigned long long n,
                                     struct scenario_lengths L, unsigned chunks_per_unit,
                                     struct dv_witness_block *witness) {
    __shared__ struct dv_witness_block ws;
    unsigned tid;
    const unsigned long long g = thread_index(&tid);
    const unsigned chunks = unit_chunks<CHUNKS>(chunks_per_unit);
    if (!WITNESS && g >= n) return;
    witness_recorder<WITNESS> rec(&ws, tid, blockDim.x * blockDim.y);
    if (g < n) {
        float x = in[g];
        unsigned p = path[g];
#define SCENARIO_CASE(P)                                                                                               \
    case P:                                                                                                            \
        rec.hit(0u);                                                                                                   \
        x = kway_path<P>(x, L.len[P] * chunks);                                                                        \
        break;
        switch (p) {
            SCENARIO_CASE(0) SCENARIO_CASE(1) SCENARIO_CASE(2) SCENARIO_CASE(3)
            SCENARIO_CASE(4) SCENARIO_CASE(5) SCENARIO_CASE(6) SCENARIO_CASE(7)
            SCENARIO_CASE(8) SCENARIO_CASE(9) SCENARIO_CASE(10) SCENARIO_CASE(11)
            SCENARIO_CASE(12) SCENARIO_CASE(13) SCENARIO_CASE(14) SCENARIO_CASE(15)
            SCENARIO_CASE(16) SCENARIO_CASE(17) SCENARIO_CASE(18) SCENARIO_CASE(19)
            SCENARIO_CASE(20) SCENARIO_CASE(21) SCENARIO_CASE(22) SCENARIO_CASE(23)
            SCENARIO_CASE(24) SCENARIO_CASE(25) SCENARIO_CASE(26) SCENARIO_CASE(27)
            SCENARIO_CASE(28) SCENARIO_CASE(29) SCENARIO_CASE(30) SCENARIO_CASE(31)
        default: break;
        }
#undef SCENARIO_CASE
        out[g] = x;
    }
    rec.end(witness);
}

template <unsigned CHUNKS, bool WITNESS>
__global__ void scenario_loop_kernel(const float *__restrict__ in, float *__restrict__ out,
                                     const uint32_t *__restrict__ trips, unsigned long long n,
                                     unsigned chunks_per_unit, struct dv_witness_block *witness) {
    __shared__ struct dv_witness_block ws;
    unsigned tid;
    const unsigned long long g = thread_index(&tid);
    const unsigned chunks = unit_chunks<CHUNKS>(chunks_per_unit);
    if (!WITNESS && g >= n) return;
    witness_recorder<WITNESS> rec(&ws, tid, blockDim.x * blockDim.y);
    if (g < n) {
        float x = in[g];
        unsigned t = trips[g];
#pragma unroll 1
        for (unsigned i = 0; i < t; ++i) {
            rec.hit(0u);
#pragma unroll 1
            for (unsigned c = 0; c < chunks; ++c) {
#pragma unroll
                for (unsigned k = 0; k < SCENARIO_CHUNK; ++k)
                    x = fmaf(x, SCENARIO_LOOP_A, SCENARIO_LOOP_B);
            }
        }
        out[g] = x;
    }
    rec.end(witness);
}

/* ROUNDS: rounds of 32 iterations as a compile-time constant, 0 = runtime. */
template <unsigned L0, unsigned L1, unsigned ROUNDS, bool WITNESS>
__global__ void scenario_short_kernel(const float *__restrict__ in, float *__restrict__ out,
                                      const uint32_t *__restrict__ pattern, unsigned long long n,
                                      unsigned rounds_rt, struct dv_witness_block *witness) {
    __shared__ struct dv_witness_block ws;
    unsigned tid;
    const unsigned long long g = thread_index(&tid);
    const unsigned rounds = ROUNDS ? ROUNDS : rounds_rt;
    if (!WITNESS && g >= n) return;
    witness_recorder<WITNESS> rec(&ws, tid, blockDim.x * blockDim.y);
    if (g < n) {
        float x = in[g];
        uint32_t pat = pattern[g];
#pragma unroll 1
        for (unsigned r = 0; r < rounds; ++r) {
#pragma unroll
            for (unsigned k = 0; k < 32u; ++k) {
                if ((pat >> k) & 1u) {
                    rec.hit(0u);
                    x = scenario_short_side(x, 1u, L1);
                } else {
                    rec.hit(1u);
                    x = scenario_short_side(x, 0u, L0);
                }
            }
        }
        out[g] = x;
    }
    rec.end(witness);
}

/* ---- launchers ---------------------------------------------------------
 *
 * Each launcher checks its arguments, then picks one instantiation, one line
 * each: the suites' compile-time size (the lesson's 4096 iterations) or the
 * runtime one, times the timed kernel or the witness. DV_CUDA_LAUNCH
 * (cuda_call.h) checks every launch and names the kernel it launched. */

static int check_geometry(unsigned blocks, unsigned bx, unsigned by, const char *what, char *err) {
    if (blocks == 0 || bx == 0 || by == 0 || bx * by > 1024u) {
        dv_seterr(err, "%s: bad geometry %u blocks of %u x %u", what, blocks, bx, by);
        return DV_ERR;
    }
    return 0;
}

/* A unit is whole chunks of SCENARIO_CHUNK FMAs. */
static int check_unit(unsigned unit_fmas, const char *what, char *err) {
    if (unit_fmas == 0 || unit_fmas % SCENARIO_CHUNK) {
        dv_seterr(err, "%s: unit %u is not a multiple of %u", what, unit_fmas, SCENARIO_CHUNK);
        return DV_ERR;
    }
    return 0;
}

extern "C" int scenario_launch_kway(const float *in, float *out, const uint8_t *path,
                                    unsigned blocks, unsigned block_x, unsigned block_y,
                                    const struct scenario_lengths *lengths, unsigned unit_fmas,
                                    struct dv_witness_block *witness, char *err) {
    if (check_geometry(blocks, block_x, block_y, "scenario_launch_kway", err)) return DV_ERR;
    if (check_unit(unit_fmas, "scenario_launch_kway", err)) return DV_ERR;
    unsigned long long n = (unsigned long long)blocks * block_x * block_y;
    const unsigned chunks = unit_fmas / SCENARIO_CHUNK;
    const bool compiled = chunks == SCENARIO_COMPILED_CHUNKS;
    const dim3 block(block_x, block_y);
    if (compiled && witness)
        return DV_CUDA_LAUNCH((scenario_kway_kernel<SCENARIO_COMPILED_CHUNKS, true>), blocks, block, err, in, out, path,
                              n, *lengths, chunks, witness);
    if (compiled)
        return DV_CUDA_LAUNCH((scenario_kway_kernel<SCENARIO_COMPILED_CHUNKS, false>), blocks, block, err, in, out,
                              path, n, *lengths, chunks, NULL);
    if (witness)
        return DV_CUDA_LAUNCH((scenario_kway_kernel<0, true>), blocks, block, err, in, out, path, n, *lengths, chunks,
                              witness);
    return DV_CUDA_LAUNCH((scenario_kway_kernel<0, false>), blocks, block, err, in, out, path, n, *lengths, chunks,
                          NULL);
}

extern "C" int scenario_launch_loop(const float *in, float *out, const uint32_t *trips,
                                    unsigned blocks, unsigned block_x, unsigned block_y,
                                    unsigned unit_fmas, struct dv_witness_block *witness, char *err) {
    if (check_geometry(blocks, block_x, block_y, "scenario_launch_loop", err)) return DV_ERR;
    if (check_unit(unit_fmas, "scenario_launch_loop", err)) return DV_ERR;
    unsigned long long n = (unsigned long long)blocks * block_x * block_y;
    const unsigned chunks = unit_fmas / SCENARIO_CHUNK;
    const bool compiled = chunks == SCENARIO_COMPILED_CHUNKS;
    const dim3 block(block_x, block_y);
    if (compiled && witness)
        return DV_CUDA_LAUNCH((scenario_loop_kernel<SCENARIO_COMPILED_CHUNKS, true>), blocks, block, err, in, out,
                              trips, n, chunks, witness);
    if (compiled)
        return DV_CUDA_LAUNCH((scenario_loop_kernel<SCENARIO_COMPILED_CHUNKS, false>), blocks, block, err, in, out,
                              trips, n, chunks, NULL);
    if (witness)
        return DV_CUDA_LAUNCH((scenario_loop_kernel<0, true>), blocks, block, err, in, out, trips, n, chunks, witness);
    return DV_CUDA_LAUNCH((scenario_loop_kernel<0, false>), blocks, block, err, in, out, trips, n, chunks, NULL);
}

/* The short kernel with sides of L0 and L1 FMAs (template constants: the
 * compiler sees the sides' sizes, which is what decides whether it
 * predicates them). */
template <unsigned L0, unsigned L1>
static int launch_short(const float *in, float *out, const uint32_t *pattern, unsigned blocks, dim3 block,
                        unsigned long long n, unsigned rounds, struct dv_witness_block *witness, char *err) {
    const bool compiled = rounds == SCENARIO_COMPILED_ROUNDS;
    if (compiled && witness)
        return DV_CUDA_LAUNCH((scenario_short_kernel<L0, L1, SCENARIO_COMPILED_ROUNDS, true>), blocks, block, err, in,
                              out, pattern, n, rounds, witness);
    if (compiled)
        return DV_CUDA_LAUNCH((scenario_short_kernel<L0, L1, SCENARIO_COMPILED_ROUNDS, false>), blocks, block, err, in,
                              out, pattern, n, rounds, NULL);
    if (witness)
        return DV_CUDA_LAUNCH((scenario_short_kernel<L0, L1, 0, true>), blocks, block, err, in, out, pattern, n, rounds,
                              witness);
    return DV_CUDA_LAUNCH((scenario_short_kernel<L0, L1, 0, false>), blocks, block, err, in, out, pattern, n, rounds,
                          NULL);
}

extern "C" int scenario_launch_short(const float *in, float *out, const uint32_t *pattern,
                                     unsigned blocks, unsigned block_x, unsigned block_y,
                                     unsigned len0, unsigned len1, unsigned iterations, struct dv_witness_block *witness, char *err) {
    if (check_geometry(blocks, block_x, block_y, "scenario_launch_short", err)) return DV_ERR;
    if (iterations % 32u) {
        dv_seterr(err, "scenario_launch_short: %u iterations is not a multiple of 32", iterations);
        return DV_ERR;
    }
    unsigned long long n = (unsigned long long)blocks * block_x * block_y;
    dim3 block(block_x, block_y);
    const unsigned rounds = iterations / 32u;
    if (len0 == 1u && len1 == 2u) return launch_short<1u, 2u>(in, out, pattern, blocks, block, n, rounds, witness, err);
    if (len0 == 3u && len1 == 4u) return launch_short<3u, 4u>(in, out, pattern, blocks, block, n, rounds, witness, err);
    dv_seterr(err, "scenario_launch_short: no kernel for sides of %u and %u FMAs (1|2, 3|4)", len0, len1);
    return DV_ERR;
}

extern "C" int scenario_kernel_compiled(unsigned unit_fmas, unsigned iterations) {
    return unit_fmas / SCENARIO_CHUNK == SCENARIO_COMPILED_CHUNKS && iterations / 32u == SCENARIO_COMPILED_ROUNDS;
}
