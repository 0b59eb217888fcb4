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
 * The constants come from scenario.h, which the CPU reference shares.
 * Launchers check cudaGetLastError() after every launch and classify errors
 * with cuda_call.h.
 */
#include <cuda_runtime.h>

#include "gpu/cuda_call.h"
#include "model/scenario.h"
#include "gpu/scenario_kernels.h"

static_assert(SCENARIO_MAX_PATHS == 32, "the k-way switch has 32 cases");

/* ---- kernels ----------------------------------------------------------- */

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

__device__ __forceinline__ unsigned long long thread_index(void) {
    unsigned tid = threadIdx.x + threadIdx.y * blockDim.x;
    return (unsigned long long)blockIdx.x * (blockDim.x * blockDim.y) + tid;
}

__global__ void scenario_kway_kernel(const float *__restrict__ in, float *__restrict__ out,
                                     const uint8_t *__restrict__ path, unsigned long long n,
                                     struct scenario_lengths L, unsigned chunks_per_unit) {
    unsigned long long g = thread_index();
    if (g >= n) return;
    float x = in[g];
    unsigned p = path[g];
#define SCENARIO_CASE(P) \
    case P: x = kway_path<P>(x, L.len[P] * chunks_per_unit); break;
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

__global__ void scenario_loop_kernel(const float *__restrict__ in, float *__restrict__ out,
                                     const uint32_t *__restrict__ trips, unsigned long long n,
                                     unsigned chunks_per_unit) {
    unsigned long long g = thread_index();
    if (g >= n) return;
    float x = in[g];
    unsigned t = trips[g];
#pragma unroll 1
    for (unsigned i = 0; i < t; ++i) {
#pragma unroll 1
        for (unsigned c = 0; c < chunks_per_unit; ++c) {
#pragma unroll
            for (unsigned k = 0; k < SCENARIO_CHUNK; ++k)
                x = fmaf(x, SCENARIO_LOOP_A, SCENARIO_LOOP_B);
        }
    }
    out[g] = x;
}

template <unsigned L0, unsigned L1>
__global__ void scenario_short_kernel(const float *__restrict__ in, float *__restrict__ out,
                                      const uint32_t *__restrict__ pattern, unsigned long long n,
                                      unsigned rounds) {
    unsigned long long g = thread_index();
    if (g >= n) return;
    float x = in[g];
    uint32_t pat = pattern[g];
#pragma unroll 1
    for (unsigned r = 0; r < rounds; ++r) {
#pragma unroll
        for (unsigned k = 0; k < 32u; ++k) {
            if ((pat >> k) & 1u)
                x = scenario_short_side(x, 1u, L1);
            else
                x = scenario_short_side(x, 0u, L0);
        }
    }
    out[g] = x;
}

/* ---- launchers --------------------------------------------------------- */

static int check_geometry(unsigned blocks, unsigned bx, unsigned by, const char *what, char *err) {
    if (blocks == 0 || bx == 0 || by == 0 || bx * by > 1024u) {
        dv_seterr(err, "%s: bad geometry %u blocks of %u x %u", what, blocks, bx, by);
        return DV_ERR;
    }
    return 0;
}

static int after_launch(const char *what, char *err) { return cuda_launched(what, err); }

extern "C" int scenario_launch_kway(const float *in, float *out, const uint8_t *path,
                                    unsigned blocks, unsigned block_x, unsigned block_y,
                                    const struct scenario_lengths *lengths, unsigned unit_fmas,
                                    char *err) {
    if (check_geometry(blocks, block_x, block_y, "scenario_launch_kway", err)) return DV_ERR;
    if (unit_fmas == 0 || unit_fmas % SCENARIO_CHUNK) {
        dv_seterr(err, "scenario_launch_kway: unit %u is not a multiple of %u", unit_fmas,
                  SCENARIO_CHUNK);
        return DV_ERR;
    }
    unsigned long long n = (unsigned long long)blocks * block_x * block_y;
    scenario_kway_kernel<<<blocks, dim3(block_x, block_y)>>>(in, out, path, n, *lengths,
                                                             unit_fmas / SCENARIO_CHUNK);
    return after_launch("scenario_kway_kernel", err);
}

extern "C" int scenario_launch_loop(const float *in, float *out, const uint32_t *trips,
                                    unsigned blocks, unsigned block_x, unsigned block_y,
                                    unsigned unit_fmas, char *err) {
    if (check_geometry(blocks, block_x, block_y, "scenario_launch_loop", err)) return DV_ERR;
    if (unit_fmas == 0 || unit_fmas % SCENARIO_CHUNK) {
        dv_seterr(err, "scenario_launch_loop: unit %u is not a multiple of %u", unit_fmas,
                  SCENARIO_CHUNK);
        return DV_ERR;
    }
    unsigned long long n = (unsigned long long)blocks * block_x * block_y;
    scenario_loop_kernel<<<blocks, dim3(block_x, block_y)>>>(in, out, trips, n,
                                                             unit_fmas / SCENARIO_CHUNK);
    return after_launch("scenario_loop_kernel", err);
}

extern "C" int scenario_launch_short(const float *in, float *out, const uint32_t *pattern,
                                     unsigned blocks, unsigned block_x, unsigned block_y,
                                     unsigned len0, unsigned len1, unsigned iterations, char *err) {
    if (check_geometry(blocks, block_x, block_y, "scenario_launch_short", err)) return DV_ERR;
    if (iterations % 32u) {
        dv_seterr(err, "scenario_launch_short: %u iterations is not a multiple of 32", iterations);
        return DV_ERR;
    }
    unsigned long long n = (unsigned long long)blocks * block_x * block_y;
    dim3 block(block_x, block_y);
    if (len0 == 1u && len1 == 2u)
        scenario_short_kernel<1u, 2u><<<blocks, block>>>(in, out, pattern, n, iterations / 32u);
    else if (len0 == 3u && len1 == 4u)
        scenario_short_kernel<3u, 4u><<<blocks, block>>>(in, out, pattern, n, iterations / 32u);
    else {
        dv_seterr(err, "scenario_launch_short: no kernel for sides of %u and %u FMAs (1|2, 3|4)",
                  len0, len1);
        return DV_ERR;
    }
    return after_launch("scenario_short_kernel", err);
}
