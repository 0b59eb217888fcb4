/* intensity_kernels.cu -- the arithmetic-intensity kernels and their
 * launchers (intensity_kernels.h; the paths' constants, data and CPU
 * reference are model/model/intensity.h's).
 *
 * One kernel template: thread i reads in[i], takes path work[i] (0: A,
 * 1: B) of the lesson's branch, writes out[i]. A path is S = 64 / L steps
 * of L loads and F FMAs (intensity.h), F and L template constants (the
 * tables' points) or, for another point and the witness, read at run time.
 * Path A reads through `data_a` / `chase_a`, path B through `data_b` /
 * `chase_b`: the launcher passes the same buffer twice, but the compiler
 * cannot know it, so it can neither hoist the paths' identical loads above
 * the branch nor merge them; the paths' different constants keep their
 * FMAs apart. A step loop of at most 1024 FMAs is unrolled, so the loads of
 * later steps can be issued before the FMAs of earlier ones (a streaming
 * path keeps many loads in flight); a longer one four steps deep. A
 * streaming path's lanes read the words of a line in their order among
 * that path's lanes (intensity_lane_word), so a lane-split warp's half-warps
 * each read two whole sectors, as the warp-aligned rows' warps read four.
 * The two ridge rows (ridge-bandwidth: 64 coalesced loads and one FMA a
 * thread; ridge-fma: INTENSITY_RIDGE_FMAS FMAs and no load) run one path on
 * every lane. Launchers check cudaGetLastError() after every launch.
 *
 * The paths' two statements carry a `region:` comment (path_a, path_b),
 * which the build reads into the instruction profile's table (instr_paths.h,
 * kernels/gpu/CMakeLists.txt). A path is a macro (INTENSITY_PATH), so that
 * all of its instructions are on its statement's line (an inlined
 * function's would be on the callee's lines, which both paths share: the
 * H200's profile of an earlier form named 18 of a row's instructions, the
 * rest "before").
 */
#include <cuda_runtime.h>

#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/intensity_kernels.h"
#include "kernels/gpu/witness_device.cuh"
#include "kernels/model/model/intensity.h"
#include "kernels/model/model/witness_record.h"

static_assert(INTENSITY_WORDS % INTENSITY_MAX_L == 0, "every L divides a thread's words");

/* The points with a compile-time instantiation: every table's. */
#define INTENSITY_POINTS(X)                                                                                            \
    X(1, 16) X(1, 8) X(1, 4) X(1, 2) X(1, 1) X(2, 1) X(4, 1) X(8, 1) X(16, 1) X(32, 1) X(64, 1) X(128, 1) X(256, 1)

/* ---- kernels ----------------------------------------------------------- */

/* A path, written as macros so that every instruction of it is on the line
 * that invokes INTENSITY_PATH (the line table names an inlined function's
 * instructions by the callee's lines, which both paths would share; a
 * macro's by the line it is used on, as scenario_kernels.cu's chains).
 * INTENSITY_STEP: step S_ of a path: L_ loads summed into u, then F_ FMAs
 * (the first takes u in). INTENSITY_PATH: the path's steps, unrolled where
 * the path is short (F and L template constants, at most 1024 FMAs), else
 * four steps deep. X_ is the path's value, IDX_ its chase position. */
#define INTENSITY_STEP(V_, X_, A_, B_, D_, TPB_, CHASE_, IDX_, S_, F_, L_)                                             \
    do {                                                                                                               \
        uint32_t u_ = 0;                                                                                               \
        if constexpr ((V_) == INTENSITY_CHASE) {                                                                       \
            _Pragma("unroll") for (unsigned j_ = 0; j_ < (L_); ++j_) {                                                 \
                const uint32_t w_ = (CHASE_)[IDX_];                                                                    \
                u_ += w_ & 63u;                                                                                        \
                (IDX_) = w_ >> 6;                                                                                      \
            }                                                                                                          \
        } else {                                                                                                       \
            _Pragma("unroll") for (unsigned j_ = 0; j_ < (L_); ++j_) u_ += (D_)[(size_t)((S_) * (L_) + j_) * (TPB_)]; \
        }                                                                                                              \
        (X_) = fmaf((X_), (A_), intensity_inject(u_));                                                                 \
        _Pragma("unroll") for (unsigned k_ = 1; k_ < (F_); ++k_)(X_) = fmaf((X_), (A_), (B_));                         \
    } while (0)

#define INTENSITY_PATH(V_, F_, L_, X_, A_, B_, D_, TPB_, CHASE_, START_, FRT_, LRT_)                                   \
    do {                                                                                                               \
        uint32_t idx_ = (START_);                                                                                      \
        const unsigned f_ = (F_) ? (F_) : (FRT_), l_ = (L_) ? (L_) : (LRT_);                                           \
        const float a_ = (A_), b_ = (B_);                                                                              \
        if constexpr ((F_) != 0 && (L_) != 0 && (INTENSITY_WORDS / ((L_) ? (L_) : 1u)) * (F_) <= 1024u) {              \
            _Pragma("unroll") for (unsigned s_ = 0; s_ < INTENSITY_WORDS / ((L_) ? (L_) : 1u); ++s_)                  \
                INTENSITY_STEP(V_, X_, a_, b_, D_, TPB_, CHASE_, idx_, s_, f_, l_);                                    \
        } else {                                                                                                       \
            const unsigned steps_ = INTENSITY_WORDS / l_;                                                              \
            _Pragma("unroll 4") for (unsigned s_ = 0; s_ < steps_; ++s_)                                              \
                INTENSITY_STEP(V_, X_, a_, b_, D_, TPB_, CHASE_, idx_, s_, f_, l_);                                    \
        }                                                                                                              \
    } while (0)

template <unsigned V, unsigned F, unsigned L, bool WITNESS>
__global__ void intensity_kernel(const float *__restrict__ in, float *__restrict__ out,
                                 const uint8_t *__restrict__ work, unsigned long long n,
                                 const uint32_t *__restrict__ data_a, const uint32_t *__restrict__ data_b,
                                 const uint32_t *__restrict__ chase_a, const uint32_t *__restrict__ chase_b,
                                 unsigned f_rt, unsigned l_rt, struct dv_witness_block *witness) {
    __shared__ struct dv_witness_block ws;
    const unsigned tpb = blockDim.x * blockDim.y;
    const unsigned tid = threadIdx.x + threadIdx.y * blockDim.x;
    const unsigned long long g = (unsigned long long)blockIdx.x * tpb + tid;
    if (!WITNESS && g >= n) return;
    witness_recorder<WITNESS> rec(&ws, tid, tpb);
    if (g < n) {
        float x = in[g];
        size_t slice = (size_t)blockIdx.x * tpb * INTENSITY_WORDS + tid;
        if (V == INTENSITY_STREAM) {
            /* Each path's lanes read whole sectors (intensity_lane_word);
             * every lane of the warp is here (the grid is whole blocks). */
            const unsigned base = tid & ~31u, lanes = tpb - base < 32u ? tpb - base : 32u;
            const uint32_t live = lanes == 32u ? 0xFFFFFFFFu : (1u << lanes) - 1u;
            const uint32_t on_b = __ballot_sync(live, work[g] != 0u);
            slice = (size_t)blockIdx.x * tpb * INTENSITY_WORDS + base + intensity_lane_word(tid & 31u, on_b, live);
        }
        const uint32_t start = intensity_chase_start(g);
        if (V == INTENSITY_RIDGE_BANDWIDTH) {
            rec.hit(0u);
            uint32_t u = 0;
#pragma unroll
            for (unsigned k = 0; k < INTENSITY_WORDS; ++k) u += data_a[slice + (size_t)k * tpb];
            x = fmaf(x, intensity_a(3), intensity_inject(u));
        } else if (V == INTENSITY_RIDGE_FMA) {
            rec.hit(0u);
            const float a = intensity_a(2), b = intensity_b(2);
#pragma unroll 1
            for (unsigned c = 0; c < INTENSITY_RIDGE_FMAS / 32u; ++c) {
#pragma unroll
                for (unsigned k = 0; k < 32u; ++k) x = fmaf(x, a, b);
            }
        } else if (work[g] == 0u) {
            rec.hit(0u);
            /* clang-format off */
            INTENSITY_PATH(V, F, L, x, intensity_a(0), intensity_b(0), data_a + slice, tpb, chase_a, start, f_rt, l_rt); /* region: path_a */
        } else {
            rec.hit(1u);
            INTENSITY_PATH(V, F, L, x, intensity_a(1), intensity_b(1), data_b + slice, tpb, chase_b, start, f_rt, l_rt); /* region: path_b */
            /* clang-format on */
        }
        out[g] = x;
    }
    rec.end(witness);
}

__global__ void intensity_fill_kernel(uint32_t *__restrict__ data, unsigned long long words, unsigned tpb,
                                      uint32_t *__restrict__ chase) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long per_block = (unsigned long long)tpb * INTENSITY_WORDS;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride)
        data[i] = intensity_stream_word((unsigned)((i % per_block) / tpb));
    if (chase)
        for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
             i < INTENSITY_CHASE_WORDS; i += stride)
            chase[i] = intensity_chase_word((uint32_t)i);
}

/* ---- launchers --------------------------------------------------------- */

struct launch_args {
    const float *in;
    float *out;
    const uint8_t *work;
    unsigned long long n;
    const uint32_t *data, *chase;
    unsigned blocks;
    dim3 block;
    unsigned f, l;
    struct dv_witness_block *witness;
};

template <unsigned V, unsigned F, unsigned L, bool W> static int launch_one(const struct launch_args *a, char *err) {
    return DV_CUDA_LAUNCH((intensity_kernel<V, F, L, W>), a->blocks, a->block, err, a->in, a->out, a->work, a->n,
                          a->data, a->data, a->chase, a->chase, a->f, a->l, a->witness);
}

typedef int (*launcher)(const struct launch_args *, char *);
struct point_entry {
    unsigned f, l;
    launcher stream, chase;
    const void *stream_fn, *chase_fn;
};
#define POINT_ENTRY(F, L)                                                                                              \
    {F,                                                                                                                \
     L,                                                                                                                \
     launch_one<INTENSITY_STREAM, F, L, false>,                                                                        \
     launch_one<INTENSITY_CHASE, F, L, false>,                                                                         \
     (const void *)intensity_kernel<INTENSITY_STREAM, F, L, false>,                                                    \
     (const void *)intensity_kernel<INTENSITY_CHASE, F, L, false>},
static const struct point_entry points[] = {INTENSITY_POINTS(POINT_ENTRY)};
#undef POINT_ENTRY

static const struct point_entry *point_of(unsigned F, unsigned L) {
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
        if (points[i].f == F && points[i].l == L) return &points[i];
    return NULL;
}

extern "C" int intensity_compiled(unsigned F, unsigned L) { return point_of(F, L) != NULL; }

/* The timed kernel of (variant, F, L) as a launcher and as a function. */
static int timed_kernel(unsigned variant, unsigned F, unsigned L, launcher *run, const void **fn) {
    const struct point_entry *p = point_of(F, L);
    switch (variant) {
    case INTENSITY_RIDGE_BANDWIDTH:
        *run = launch_one<INTENSITY_RIDGE_BANDWIDTH, 0, 0, false>;
        *fn = (const void *)intensity_kernel<INTENSITY_RIDGE_BANDWIDTH, 0, 0, false>;
        return 0;
    case INTENSITY_RIDGE_FMA:
        *run = launch_one<INTENSITY_RIDGE_FMA, 0, 0, false>;
        *fn = (const void *)intensity_kernel<INTENSITY_RIDGE_FMA, 0, 0, false>;
        return 0;
    case INTENSITY_STREAM:
        *run = p ? p->stream : launch_one<INTENSITY_STREAM, 0, 0, false>;
        *fn = p ? p->stream_fn : (const void *)intensity_kernel<INTENSITY_STREAM, 0, 0, false>;
        return 0;
    case INTENSITY_CHASE:
        *run = p ? p->chase : launch_one<INTENSITY_CHASE, 0, 0, false>;
        *fn = p ? p->chase_fn : (const void *)intensity_kernel<INTENSITY_CHASE, 0, 0, false>;
        return 0;
    default: return -1;
    }
}

static const launcher witness_launchers[INTENSITY_VARIANTS] = {
    launch_one<INTENSITY_STREAM, 0, 0, true>, launch_one<INTENSITY_CHASE, 0, 0, true>,
    launch_one<INTENSITY_RIDGE_BANDWIDTH, 0, 0, true>, launch_one<INTENSITY_RIDGE_FMA, 0, 0, true>};

extern "C" int intensity_launch(const float *in, float *out, const uint8_t *work, const uint32_t *data,
                                const uint32_t *chase, unsigned blocks, unsigned block_x, unsigned block_y,
                                unsigned variant, unsigned F, unsigned L, struct dv_witness_block *witness, char *err) {
    if (blocks == 0 || block_x == 0 || block_y == 0 || block_x * block_y > 1024u) {
        dv_seterr(err, "intensity_launch: bad geometry %u blocks of %u x %u", blocks, block_x, block_y);
        return DV_ERR;
    }
    const int paths = variant == INTENSITY_STREAM || variant == INTENSITY_CHASE;
    if (variant >= INTENSITY_VARIANTS || (paths && !intensity_point_ok(F, L))) {
        dv_seterr(err,
                  "intensity_launch: no kernel for variant %u with %u FMAs per %u loads (F 1..%u, L 1..%u, "
                  "powers of two)",
                  variant, F, L, INTENSITY_MAX_F, INTENSITY_MAX_L);
        return DV_ERR;
    }
    if (!data || (variant == INTENSITY_CHASE && !chase)) {
        dv_seterr(err, "intensity_launch: variant %u has no %s buffer", variant, data ? "chase" : "data");
        return DV_ERR;
    }
    const struct launch_args a = {in,   out,   work,   (unsigned long long)blocks * block_x * block_y,
                                  data, chase, blocks, dim3(block_x, block_y),
                                  F,    L,     witness};
    if (witness) return witness_launchers[variant](&a, err);
    launcher run = NULL;
    const void *fn = NULL;
    timed_kernel(variant, F, L, &run, &fn);
    return run(&a, err);
}

extern "C" int intensity_fill(uint32_t *data, unsigned long long words, unsigned threads_per_block, uint32_t *chase,
                              char *err) {
    if (!data || threads_per_block == 0 || words % ((unsigned long long)threads_per_block * INTENSITY_WORDS)) {
        dv_seterr(err, "intensity_fill: %llu words are not whole blocks of %u threads x %u words", words,
                  threads_per_block, INTENSITY_WORDS);
        return DV_ERR;
    }
    return DV_CUDA_LAUNCH((intensity_fill_kernel), 1024u, 256u, err, data, words, threads_per_block, chase);
}

extern "C" int intensity_flush(void *scratch, size_t bytes, char *err) {
    return DV_CUDA_CALL(cudaMemsetAsync(scratch, 0x5A, bytes), err);
}

extern "C" int intensity_occupancy(unsigned variant, unsigned F, unsigned L, unsigned threads_per_block, int *per_sm,
                                   char *err) {
    launcher run = NULL;
    const void *fn = NULL;
    *per_sm = 0;
    if (timed_kernel(variant, F, L, &run, &fn) != 0) {
        dv_seterr(err, "intensity_occupancy: no variant %u", variant);
        return DV_ERR;
    }
    return DV_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, fn, (int)threads_per_block, 0), err);
}
