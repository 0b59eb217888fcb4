/* scenario_kernels.cu -- the scenario suite's kernels and their launchers.
 *
 * Four kernels, each reading one float per thread and writing one:
 *   k-way  a switch over 32 paths; path P is an FMA chain with its own
 *          constants (scenario_kway_a/b(P)), run in chunks of 32 unrolled
 *          FMAs under `#pragma unroll 1`, so every path stays a separate
 *          loop behind its own branch target (distinct constants keep the
 *          compiler from merging paths; `cuobjdump -sass` shows 32 FFMA
 *          chains with distinct immediates). Each case is written on a line
 *          of its own, so the line table tells the paths apart;
 *   loop   a per-thread trip count over a one-unit body: a warp keeps
 *          looping until its longest thread is done;
 *   short  a tiny if/else per iteration, the side picked by a bit of a
 *          per-thread pattern word (so the compiler cannot hoist it), its
 *          sides' lengths template constants: the worked case C7's 2|1
 *          (which ptxas predicates) and 4|3 (which it branches), and every
 *          LA x LB of 1..8 for the predication map;
 *   pair   one if/else of two equal chains as a branch or as
 *          compute-both-then-select, and the reconvergence shapes (if/else,
 *          loop with break, early return, each with and without
 *          __syncwarp() at the join) followed by a tail (scenario.h).
 * Each kernel's path statements carry a `region:` comment: the build reads
 * them (kernels/gpu/CMakeLists.txt) into the table the instruction profile
 * groups the SASS by (instr_paths.h), so a line moved moves its region.
 * The k-way and loop kernels are instantiated with the suites' unit (the
 * lesson's 4096 iterations / 8 = 512 FMAs = 16 chunks) as a compile-time
 * constant, with a runtime fallback for other sizes; the short kernel with
 * the worked cases' 128 rounds of 32 iterations and with runtime rounds;
 * every kernel also as an untimed witness (model/model/witness_record.h),
 * and the reconvergence shapes as a join record (model/model/join_record.h).
 * The constants come from scenario.h, which the CPU reference shares.
 * Launchers check cudaGetLastError() after every launch and classify errors
 * with cuda_call.h.
 */
#include <cuda_runtime.h>

#include "kernels/gpu/cuda_call.h"
#include "kernels/model/model/scenario.h"
#include "kernels/gpu/scenario_kernels.h"
#include "kernels/gpu/witness_device.cuh"
#include "kernels/model/model/join_record.h"
#include "kernels/model/model/witness_record.h"

static_assert(SCENARIO_MAX_PATHS == 32, "the k-way switch has 32 cases");
static_assert(SCENARIO_SHORT_MAX == 8, "the short kernel's table holds sides of 1..8 FMAs");

/* ---- kernels ----------------------------------------------------------- */

/* CHUNKS: the unit in SCENARIO_CHUNK-FMA chunks as a compile-time constant
 * (the suites' unit at the lesson's 4096 iterations), 0 = read at run time. */
template <unsigned CHUNKS>
__device__ __forceinline__ unsigned unit_chunks(unsigned chunks_per_unit) {
    return CHUNKS ? CHUNKS : chunks_per_unit;
}

/* `chunks` chunks of SCENARIO_CHUNK FMAs x = fma(x, A, B) on the line it is
 * written on (a macro, not a function: the line table gives every
 * instruction of it that line). */
#define SCENARIO_CHAIN(x, A, B, chunks)                                                                                \
    do {                                                                                                               \
        const float a_ = (A), b_ = (B);                                                                                \
        const unsigned n_ = (chunks);                                                                                  \
        _Pragma("unroll 1") for (unsigned c_ = 0; c_ < n_; ++c_) {                                                     \
            _Pragma("unroll") for (unsigned k_ = 0; k_ < SCENARIO_CHUNK; ++k_) x = fmaf(x, a_, b_);                   \
        }                                                                                                              \
    } while (0)
#define SCENARIO_KWAY(P, units) SCENARIO_CHAIN(x, scenario_kway_a(P), scenario_kway_b(P), (units) * chunks)

__device__ __forceinline__ unsigned long long thread_index(unsigned *tid_out) {
    unsigned tid = threadIdx.x + threadIdx.y * blockDim.x;
    *tid_out = tid;
    return (unsigned long long)blockIdx.x * (blockDim.x * blockDim.y) + tid;
}

/* clang-format off */
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
        switch (p) {
        case 0: rec.hit(0u); SCENARIO_KWAY(0, L.len[0]); break; /* region: path_0 */
        case 1: rec.hit(0u); SCENARIO_KWAY(1, L.len[1]); break; /* region: path_1 */
        case 2: rec.hit(0u); SCENARIO_KWAY(2, L.len[2]); break; /* region: path_2 */
        case 3: rec.hit(0u); SCENARIO_KWAY(3, L.len[3]); break; /* region: path_3 */
        case 4: rec.hit(0u); SCENARIO_KWAY(4, L.len[4]); break; /* region: path_4 */
        case 5: rec.hit(0u); SCENARIO_KWAY(5, L.len[5]); break; /* region: path_5 */
        case 6: rec.hit(0u); SCENARIO_KWAY(6, L.len[6]); break; /* region: path_6 */
        case 7: rec.hit(0u); SCENARIO_KWAY(7, L.len[7]); break; /* region: path_7 */
        case 8: rec.hit(0u); SCENARIO_KWAY(8, L.len[8]); break; /* region: path_8 */
        case 9: rec.hit(0u); SCENARIO_KWAY(9, L.len[9]); break; /* region: path_9 */
        case 10: rec.hit(0u); SCENARIO_KWAY(10, L.len[10]); break; /* region: path_10 */
        case 11: rec.hit(0u); SCENARIO_KWAY(11, L.len[11]); break; /* region: path_11 */
        case 12: rec.hit(0u); SCENARIO_KWAY(12, L.len[12]); break; /* region: path_12 */
        case 13: rec.hit(0u); SCENARIO_KWAY(13, L.len[13]); break; /* region: path_13 */
        case 14: rec.hit(0u); SCENARIO_KWAY(14, L.len[14]); break; /* region: path_14 */
        case 15: rec.hit(0u); SCENARIO_KWAY(15, L.len[15]); break; /* region: path_15 */
        case 16: rec.hit(0u); SCENARIO_KWAY(16, L.len[16]); break; /* region: path_16 */
        case 17: rec.hit(0u); SCENARIO_KWAY(17, L.len[17]); break; /* region: path_17 */
        case 18: rec.hit(0u); SCENARIO_KWAY(18, L.len[18]); break; /* region: path_18 */
        case 19: rec.hit(0u); SCENARIO_KWAY(19, L.len[19]); break; /* region: path_19 */
        case 20: rec.hit(0u); SCENARIO_KWAY(20, L.len[20]); break; /* region: path_20 */
        case 21: rec.hit(0u); SCENARIO_KWAY(21, L.len[21]); break; /* region: path_21 */
        case 22: rec.hit(0u); SCENARIO_KWAY(22, L.len[22]); break; /* region: path_22 */
        case 23: rec.hit(0u); SCENARIO_KWAY(23, L.len[23]); break; /* region: path_23 */
        case 24: rec.hit(0u); SCENARIO_KWAY(24, L.len[24]); break; /* region: path_24 */
        case 25: rec.hit(0u); SCENARIO_KWAY(25, L.len[25]); break; /* region: path_25 */
        case 26: rec.hit(0u); SCENARIO_KWAY(26, L.len[26]); break; /* region: path_26 */
        case 27: rec.hit(0u); SCENARIO_KWAY(27, L.len[27]); break; /* region: path_27 */
        case 28: rec.hit(0u); SCENARIO_KWAY(28, L.len[28]); break; /* region: path_28 */
        case 29: rec.hit(0u); SCENARIO_KWAY(29, L.len[29]); break; /* region: path_29 */
        case 30: rec.hit(0u); SCENARIO_KWAY(30, L.len[30]); break; /* region: path_30 */
        case 31: rec.hit(0u); SCENARIO_KWAY(31, L.len[31]); break; /* region: path_31 */
        default: break;
        }
        out[g] = x;
    }
    rec.end(witness);
}
/* clang-format on */

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
            SCENARIO_CHAIN(x, SCENARIO_LOOP_A, SCENARIO_LOOP_B, chunks); /* region: loop */
        }
        out[g] = x;
    }
    rec.end(witness);
}

/* `len` steps of side `side` (scenario_short_side()), unrolled, on the line
 * it is written on. */
#define SCENARIO_SIDE(side, len)                                                                                       \
    _Pragma("unroll") for (unsigned s_ = 1; s_ <= (len); ++s_) x =                                                     \
        fmaf(x, scenario_short_a(side, s_), scenario_short_b(side, s_))

/* L0 / L1: side 0's and side 1's FMAs (0: l0_rt / l1_rt, read at run time:
 * the predication map's witness, one instantiation for every side pair,
 * since what it records is the source's branch, which the sides' lengths do
 * not change); ROUNDS: rounds of 32 iterations as a compile-time constant,
 * 0 = runtime. */
template <unsigned L0, unsigned L1, unsigned ROUNDS, bool WITNESS>
__global__ void scenario_short_kernel(const float *__restrict__ in, float *__restrict__ out,
                                      const uint32_t *__restrict__ pattern, unsigned long long n,
                                      unsigned rounds_rt, unsigned l0_rt, unsigned l1_rt,
                                      struct dv_witness_block *witness) {
    __shared__ struct dv_witness_block ws;
    unsigned tid;
    const unsigned long long g = thread_index(&tid);
    const unsigned rounds = ROUNDS ? ROUNDS : rounds_rt;
    const unsigned l0 = L0 ? L0 : l0_rt, l1 = L1 ? L1 : l1_rt;
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
                    SCENARIO_SIDE(1u, l1); /* region: path_a */
                } else {
                    rec.hit(1u);
                    SCENARIO_SIDE(0u, l0); /* region: path_b */
                }
            }
        }
        out[g] = x;
    }
    rec.end(witness);
}

/* The pair kernel (scenario.h, enum scenario_pair_variant). `work` is the
 * side (0: A, 1: B) or, for the loop, the trip count; A, B and the tail are
 * chains of `ca`, `cb` and `ct` chunks, the loop body `cl`. JOIN writes the
 * join record (model/model/join_record.h) of every lane that reaches the
 * join; the witness records A and B at their tops (both, with every lane,
 * for SELECT, which has no branch) and the loop's trips. The witness
 * instantiation has its block record to finish, so an early-returning lane
 * goes on to the end instead of returning, as the timed kernel's does. */
template <unsigned V, bool WITNESS, bool JOIN>
__global__ void scenario_pair_kernel(const float *__restrict__ in, float *__restrict__ out,
                                     const uint8_t *__restrict__ work, unsigned long long n, unsigned ca, unsigned cb,
                                     unsigned ct, unsigned cl, struct dv_witness_block *witness,
                                     struct dv_join_lane *join) {
    __shared__ struct dv_witness_block ws;
    unsigned tid;
    const unsigned long long g = thread_index(&tid);
    if (!WITNESS && g >= n) return;
    witness_recorder<WITNESS> rec(&ws, tid, blockDim.x * blockDim.y);
    if (g < n) {
        const unsigned live = __activemask();
        float x = in[g];
        const unsigned w = work[g];
        bool stays = true;
        unsigned meet = live; /* the lanes that reach the join */
        if (V == SCENARIO_PAIR_SELECT) {
            rec.hit(0u);
            rec.hit(1u);
            float xa = x, xb = x;
            const float a0 = scenario_kway_a(0), b0 = scenario_kway_b(0);
            const float a1 = scenario_kway_a(1), b1 = scenario_kway_b(1);
#pragma unroll 1
            for (unsigned c = 0; c < ca; ++c) {
#pragma unroll
                for (unsigned k = 0; k < SCENARIO_CHUNK; ++k) {
                    xa = fmaf(xa, a0, b0); /* region: path_a */
                    xb = fmaf(xb, a1, b1); /* region: path_b */
                }
            }
            x = w ? xb : xa;
        } else if (scenario_pair_loops(V)) {
#pragma unroll 1
            for (unsigned i = 0;; ++i) {
                rec.hit(0u);
                SCENARIO_CHAIN(x, SCENARIO_LOOP_A, SCENARIO_LOOP_B, cl); /* region: loop */
                if (i + 1u >= w) break;
            }
        } else if (scenario_pair_returns(V)) {
            meet = __ballot_sync(live, w != 0u);
            if (w == 0u) {
                rec.hit(0u);
                SCENARIO_CHAIN(x, scenario_kway_a(0), scenario_kway_b(0), ca); /* region: path_a */
                out[g] = x;
                if (!WITNESS) return;
                stays = false;
            } else {
                rec.hit(1u);
                SCENARIO_CHAIN(x, scenario_kway_a(1), scenario_kway_b(1), cb); /* region: path_b */
            }
        } else if (w == 0u) {
            rec.hit(0u);
            SCENARIO_CHAIN(x, scenario_kway_a(0), scenario_kway_b(0), ca); /* region: path_a */
        } else {
            rec.hit(1u);
            SCENARIO_CHAIN(x, scenario_kway_a(1), scenario_kway_b(1), cb); /* region: path_b */
        }
        if (stays) {
            if (scenario_pair_syncs(V)) __syncwarp(meet);
            if (JOIN) {
                const unsigned m = __activemask();
                const long long t = clock64();
                join[g].mask = m;
                join[g].reached = 1u;
                join[g].clock = (unsigned long long)t;
            }
            if (scenario_pair_has_tail(V))
                SCENARIO_CHAIN(x, scenario_kway_a(2), scenario_kway_b(2), ct); /* region: tail */
            out[g] = x;
        }
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
 * predicates them), on `rounds` rounds: the worked cases' compile-time
 * rounds where COMPILED (2|1 and 4|3 only, with their own witnesses), else
 * the runtime ones, whose witness is the runtime-length one. */
template <unsigned L0, unsigned L1, bool COMPILED>
static int launch_short(const float *in, float *out, const uint32_t *pattern, unsigned blocks, dim3 block,
                        unsigned long long n, unsigned rounds, struct dv_witness_block *witness, char *err) {
    if constexpr (COMPILED) {
        if (witness)
            return DV_CUDA_LAUNCH((scenario_short_kernel<L0, L1, SCENARIO_COMPILED_ROUNDS, true>), blocks, block, err,
                                  in, out, pattern, n, rounds, L0, L1, witness);
        return DV_CUDA_LAUNCH((scenario_short_kernel<L0, L1, SCENARIO_COMPILED_ROUNDS, false>), blocks, block, err, in,
                              out, pattern, n, rounds, L0, L1, NULL);
    }
    if (witness)
        return DV_CUDA_LAUNCH((scenario_short_kernel<0, 0, 0, true>), blocks, block, err, in, out, pattern, n, rounds,
                              L0, L1, witness);
    return DV_CUDA_LAUNCH((scenario_short_kernel<L0, L1, 0, false>), blocks, block, err, in, out, pattern, n, rounds,
                          L0, L1, NULL);
}

typedef int (*short_launcher)(const float *, float *, const uint32_t *, unsigned, dim3, unsigned long long, unsigned,
                              struct dv_witness_block *, char *);
/* [L0 - 1][L1 - 1]: the runtime-rounds instantiation of every side pair. */
#define SHORT_ROW(l0)                                                                                                  \
    {launch_short<l0, 1, false>, launch_short<l0, 2, false>, launch_short<l0, 3, false>, launch_short<l0, 4, false>,   \
     launch_short<l0, 5, false>, launch_short<l0, 6, false>, launch_short<l0, 7, false>, launch_short<l0, 8, false>}
static const short_launcher short_table[SCENARIO_SHORT_MAX][SCENARIO_SHORT_MAX] = {
    SHORT_ROW(1), SHORT_ROW(2), SHORT_ROW(3), SHORT_ROW(4), SHORT_ROW(5), SHORT_ROW(6), SHORT_ROW(7), SHORT_ROW(8)};
#undef SHORT_ROW

/* 1 when sides len0 | len1 on `iterations` have a compile-time instantiation. */
static bool short_compiled(unsigned len0, unsigned len1, unsigned iterations) {
    return iterations / 32u == SCENARIO_COMPILED_ROUNDS && ((len0 == 1u && len1 == 2u) || (len0 == 3u && len1 == 4u));
}

extern "C" int scenario_launch_short(const float *in, float *out, const uint32_t *pattern,
                                     unsigned blocks, unsigned block_x, unsigned block_y,
                                     unsigned len0, unsigned len1, unsigned iterations, struct dv_witness_block *witness, char *err) {
    if (check_geometry(blocks, block_x, block_y, "scenario_launch_short", err)) return DV_ERR;
    if (iterations % 32u || iterations == 0) {
        dv_seterr(err, "scenario_launch_short: %u iterations is not a positive multiple of 32", iterations);
        return DV_ERR;
    }
    if (len0 < 1u || len0 > SCENARIO_SHORT_MAX || len1 < 1u || len1 > SCENARIO_SHORT_MAX) {
        dv_seterr(err, "scenario_launch_short: no kernel for sides of %u and %u FMAs (1..%u each)", len0, len1,
                  SCENARIO_SHORT_MAX);
        return DV_ERR;
    }
    unsigned long long n = (unsigned long long)blocks * block_x * block_y;
    dim3 block(block_x, block_y);
    const unsigned rounds = iterations / 32u;
    if (short_compiled(len0, len1, iterations))
        return len0 == 1u ? launch_short<1u, 2u, true>(in, out, pattern, blocks, block, n, rounds, witness, err)
                          : launch_short<3u, 4u, true>(in, out, pattern, blocks, block, n, rounds, witness, err);
    return short_table[len0 - 1u][len1 - 1u](in, out, pattern, blocks, block, n, rounds, witness, err);
}

/* The pair kernel of variant V: timed, witness or join instantiation (the
 * join only where V has one). */
template <unsigned V>
static int launch_pair(const float *in, float *out, const uint8_t *work, unsigned blocks, dim3 block,
                       unsigned long long n, const unsigned c[4], struct dv_witness_block *witness,
                       struct dv_join_lane *join, char *err) {
    if (witness)
        return DV_CUDA_LAUNCH((scenario_pair_kernel<V, true, false>), blocks, block, err, in, out, work, n, c[0], c[1],
                              c[2], c[3], witness, NULL);
    if constexpr (V >= SCENARIO_PAIR_IFELSE) {
        if (join)
            return DV_CUDA_LAUNCH((scenario_pair_kernel<V, false, true>), blocks, block, err, in, out, work, n, c[0],
                                  c[1], c[2], c[3], NULL, join);
    } else if (join) {
        dv_seterr(err, "scenario_launch_pair: variant %u has no join to record", V);
        return DV_ERR;
    }
    return DV_CUDA_LAUNCH((scenario_pair_kernel<V, false, false>), blocks, block, err, in, out, work, n, c[0], c[1],
                          c[2], c[3], NULL, NULL);
}

typedef int (*pair_launcher)(const float *, float *, const uint8_t *, unsigned, dim3, unsigned long long,
                             const unsigned *, struct dv_witness_block *, struct dv_join_lane *, char *);
static const pair_launcher pair_table[SCENARIO_PAIR_VARIANTS] = {
    launch_pair<SCENARIO_PAIR_BRANCH>,       launch_pair<SCENARIO_PAIR_SELECT>,
    launch_pair<SCENARIO_PAIR_IFELSE>,       launch_pair<SCENARIO_PAIR_IFELSE_SYNC>,
    launch_pair<SCENARIO_PAIR_LOOP_BREAK>,   launch_pair<SCENARIO_PAIR_LOOP_BREAK_SYNC>,
    launch_pair<SCENARIO_PAIR_EARLY_RETURN>, launch_pair<SCENARIO_PAIR_EARLY_RETURN_SYNC>};

extern "C" int scenario_launch_pair(const float *in, float *out, const uint8_t *work, unsigned blocks,
                                    unsigned block_x, unsigned block_y, unsigned variant,
                                    const struct scenario_lengths *lengths, unsigned unit_fmas,
                                    struct dv_witness_block *witness, struct dv_join_lane *join, char *err) {
    if (check_geometry(blocks, block_x, block_y, "scenario_launch_pair", err)) return DV_ERR;
    if (check_unit(unit_fmas, "scenario_launch_pair", err)) return DV_ERR;
    if (variant >= SCENARIO_PAIR_VARIANTS) {
        dv_seterr(err, "scenario_launch_pair: no variant %u", variant);
        return DV_ERR;
    }
    if (variant == SCENARIO_PAIR_SELECT && lengths->len[0] != lengths->len[1]) {
        dv_seterr(err,
                  "scenario_launch_pair: compute-both-then-select runs its sides side by side: %u and %u units "
                  "must be equal",
                  lengths->len[0], lengths->len[1]);
        return DV_ERR;
    }
    const unsigned chunks = unit_fmas / SCENARIO_CHUNK;
    const unsigned c[4] = {lengths->len[0] * chunks, lengths->len[1] * chunks, lengths->len[2] * chunks,
                           lengths->len[3] * chunks};
    const unsigned long long n = (unsigned long long)blocks * block_x * block_y;
    return pair_table[variant](in, out, work, blocks, dim3(block_x, block_y), n, c, witness, join, err);
}

/* The timed instantiations, as functions for the occupancy query. */
#define SHORT_FN(l0, l1) (const void *)scenario_short_kernel<l0, l1, 0, false>
#define SHORT_FN_ROW(l0)                                                                                               \
    {SHORT_FN(l0, 1), SHORT_FN(l0, 2), SHORT_FN(l0, 3), SHORT_FN(l0, 4),                                               \
     SHORT_FN(l0, 5), SHORT_FN(l0, 6), SHORT_FN(l0, 7), SHORT_FN(l0, 8)}
static const void *const short_functions[SCENARIO_SHORT_MAX][SCENARIO_SHORT_MAX] = {
    SHORT_FN_ROW(1), SHORT_FN_ROW(2), SHORT_FN_ROW(3), SHORT_FN_ROW(4),
    SHORT_FN_ROW(5), SHORT_FN_ROW(6), SHORT_FN_ROW(7), SHORT_FN_ROW(8)};
#undef SHORT_FN_ROW
#undef SHORT_FN
static const void *const pair_functions[SCENARIO_PAIR_VARIANTS] = {
    (const void *)scenario_pair_kernel<SCENARIO_PAIR_BRANCH, false, false>,
    (const void *)scenario_pair_kernel<SCENARIO_PAIR_SELECT, false, false>,
    (const void *)scenario_pair_kernel<SCENARIO_PAIR_IFELSE, false, false>,
    (const void *)scenario_pair_kernel<SCENARIO_PAIR_IFELSE_SYNC, false, false>,
    (const void *)scenario_pair_kernel<SCENARIO_PAIR_LOOP_BREAK, false, false>,
    (const void *)scenario_pair_kernel<SCENARIO_PAIR_LOOP_BREAK_SYNC, false, false>,
    (const void *)scenario_pair_kernel<SCENARIO_PAIR_EARLY_RETURN, false, false>,
    (const void *)scenario_pair_kernel<SCENARIO_PAIR_EARLY_RETURN_SYNC, false, false>};

/* The timed instantiation kernel `k` names, or NULL. */
static const void *timed_function(const struct scenario_kernel_ref *k) {
    const bool compiled = k->compiled != 0;
    switch (k->kind) {
    case SCENARIO_KERNEL_KWAY:
        return compiled ? (const void *)scenario_kway_kernel<SCENARIO_COMPILED_CHUNKS, false>
                        : (const void *)scenario_kway_kernel<0, false>;
    case SCENARIO_KERNEL_LOOP:
        return compiled ? (const void *)scenario_loop_kernel<SCENARIO_COMPILED_CHUNKS, false>
                        : (const void *)scenario_loop_kernel<0, false>;
    case SCENARIO_KERNEL_SHORT:
        if (compiled && k->len0 == 1u && k->len1 == 2u)
            return (const void *)scenario_short_kernel<1, 2, SCENARIO_COMPILED_ROUNDS, false>;
        if (compiled && k->len0 == 3u && k->len1 == 4u)
            return (const void *)scenario_short_kernel<3, 4, SCENARIO_COMPILED_ROUNDS, false>;
        if (k->len0 < 1u || k->len0 > SCENARIO_SHORT_MAX || k->len1 < 1u || k->len1 > SCENARIO_SHORT_MAX) return NULL;
        return short_functions[k->len0 - 1u][k->len1 - 1u];
    case SCENARIO_KERNEL_PAIR: return k->variant < SCENARIO_PAIR_VARIANTS ? pair_functions[k->variant] : NULL;
    default: return NULL;
    }
}

extern "C" int scenario_kernel_occupancy(const struct scenario_kernel_ref *k, unsigned threads_per_block, int *per_sm,
                                         char *err) {
    *per_sm = 0;
    const void *f = timed_function(k);
    if (!f) {
        dv_seterr(err, "scenario_kernel_occupancy: no kernel of kind %u (sides %u|%u, variant %u)", k->kind, k->len0,
                  k->len1, k->variant);
        return DV_ERR;
    }
    return DV_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, f, (int)threads_per_block, 0), err);
}
