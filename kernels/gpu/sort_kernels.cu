/* sort_kernels.cu -- the data-sort experiment's shade kernel, its witness
 * instantiation, and CUB's radix sort (sort_kernels.h).
 *
 * The shade is a switch over 32 materials; material m's path is C FMAs
 * x = fma(x, a_m, b_m) with the k-way paths' constants (sortexp.h), in
 * chunks of SORTEXP_CHUNK unrolled FMAs under `#pragma unroll 1`: the
 * constants are immediates of each case, so the compiler cannot fold the
 * paths into one loop over looked-up constants (which would remove the
 * divergence the experiment measures). A warp that holds k materials runs
 * k paths.
 *
 * The witness instantiation records, at the top of each path, the run the
 * warp is in: its lowest active lane adds one to the warp's k and one to
 * the bin of the run's active lanes (global atomics on the warp's own
 * record: runs of one warp may interleave under independent scheduling).
 * The CPU count (sortexp_warp_count()) over the same array must equal it.
 *
 * The sort is cub::DeviceRadixSort::SortPairs from the toolkit's CUB
 * (header-only), on the low `bits` bits of the 8-bit material keys.
 */
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/sort_kernels.h"
#include "kernels/model/model/sortexp.h"

static_assert(SORTEXP_MAX_M == 32, "the shade's switch has 32 cases");
static_assert(sizeof(struct sort_warp_rec) == 34 * sizeof(unsigned), "the record is 34 words");

/* ---- kernels ----------------------------------------------------------- */

#define SORT_CHAIN(x, A, B, chunks)                                                                                    \
    do {                                                                                                               \
        const float a_ = (A), b_ = (B);                                                                                \
        _Pragma("unroll 1") for (unsigned c_ = 0; c_ < (chunks); ++c_) {                                               \
            _Pragma("unroll") for (unsigned k_ = 0; k_ < SORTEXP_CHUNK; ++k_) x = fmaf(x, a_, b_);                     \
        }                                                                                                              \
    } while (0)
#define SORT_PATH(M) SORT_CHAIN(x, scenario_kway_a(M), scenario_kway_b(M), chunks)

template <bool WITNESS> struct sort_recorder {
    __device__ __forceinline__ sort_recorder(struct sort_warp_rec *) {}
    __device__ __forceinline__ void hit(unsigned long long) {}
};
template <> struct sort_recorder<true> {
    struct sort_warp_rec *rec;
    __device__ __forceinline__ sort_recorder(struct sort_warp_rec *r) : rec(r) {}
    /* The warp's record: its block's warps in order (place = block * tpb + 32 w + lane). */
    __device__ __forceinline__ void hit(unsigned long long) {
        const unsigned act = __activemask();
        const unsigned lane = threadIdx.x & 31u;
        if (lane != (unsigned)(__ffs(act) - 1)) return;
        const unsigned per_block = (blockDim.x + 31u) / 32u;
        struct sort_warp_rec *w = &rec[(unsigned long long)blockIdx.x * per_block + threadIdx.x / 32u];
        atomicAdd(&w->k, 1u);
        atomicAdd(&w->hist[__popc(act)], 1u);
    }
};

/* clang-format off */
template <int MODE, bool WITNESS>
__global__ void sort_shade_kernel(struct sort_shade_args a, unsigned chunks, struct sort_warp_rec *wrec) {
    const unsigned long long g = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    sort_recorder<WITNESS> rec(wrec);
    if (g >= a.n) return;
    unsigned m;
    unsigned long long item;
    float x;
    if (MODE == SORT_SHADE_PAIRS) {
        const unsigned long long p = a.pair[g];
        m = a.key[g];
        item = p >> 32;
        x = __uint_as_float((unsigned)p);
    } else {
        item = MODE == SORT_SHADE_INDEX ? a.idx[g] : g;
        m = a.mat[item];
        x = a.in[item];
    }
    switch (m) {
        case 0: rec.hit(g); SORT_PATH(0); break; /* region: material_0 */
        case 1: rec.hit(g); SORT_PATH(1); break; /* region: material_1 */
        case 2: rec.hit(g); SORT_PATH(2); break; /* region: material_2 */
        case 3: rec.hit(g); SORT_PATH(3); break; /* region: material_3 */
        case 4: rec.hit(g); SORT_PATH(4); break; /* region: material_4 */
        case 5: rec.hit(g); SORT_PATH(5); break; /* region: material_5 */
        case 6: rec.hit(g); SORT_PATH(6); break; /* region: material_6 */
        case 7: rec.hit(g); SORT_PATH(7); break; /* region: material_7 */
        case 8: rec.hit(g); SORT_PATH(8); break; /* region: material_8 */
        case 9: rec.hit(g); SORT_PATH(9); break; /* region: material_9 */
        case 10: rec.hit(g); SORT_PATH(10); break; /* region: material_10 */
        case 11: rec.hit(g); SORT_PATH(11); break; /* region: material_11 */
        case 12: rec.hit(g); SORT_PATH(12); break; /* region: material_12 */
        case 13: rec.hit(g); SORT_PATH(13); break; /* region: material_13 */
        case 14: rec.hit(g); SORT_PATH(14); break; /* region: material_14 */
        case 15: rec.hit(g); SORT_PATH(15); break; /* region: material_15 */
        case 16: rec.hit(g); SORT_PATH(16); break; /* region: material_16 */
        case 17: rec.hit(g); SORT_PATH(17); break; /* region: material_17 */
        case 18: rec.hit(g); SORT_PATH(18); break; /* region: material_18 */
        case 19: rec.hit(g); SORT_PATH(19); break; /* region: material_19 */
        case 20: rec.hit(g); SORT_PATH(20); break; /* region: material_20 */
        case 21: rec.hit(g); SORT_PATH(21); break; /* region: material_21 */
        case 22: rec.hit(g); SORT_PATH(22); break; /* region: material_22 */
        case 23: rec.hit(g); SORT_PATH(23); break; /* region: material_23 */
        case 24: rec.hit(g); SORT_PATH(24); break; /* region: material_24 */
        case 25: rec.hit(g); SORT_PATH(25); break; /* region: material_25 */
        case 26: rec.hit(g); SORT_PATH(26); break; /* region: material_26 */
        case 27: rec.hit(g); SORT_PATH(27); break; /* region: material_27 */
        case 28: rec.hit(g); SORT_PATH(28); break; /* region: material_28 */
        case 29: rec.hit(g); SORT_PATH(29); break; /* region: material_29 */
        case 30: rec.hit(g); SORT_PATH(30); break; /* region: material_30 */
        case 31: rec.hit(g); SORT_PATH(31); break; /* region: material_31 */
    default: break;
    }
    a.out[item] = x;
}
/* clang-format on */

__global__ void sort_pairs_kernel(const float *in, uint64_t *pair, unsigned long long n) {
    const unsigned long long g = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) pair[g] = (g << 32) | (unsigned long long)__float_as_uint(in[g]);
}

/* ---- launchers --------------------------------------------------------- */

template <int MODE>
static void launch_mode(unsigned grid, unsigned tpb, const struct sort_shade_args *a, unsigned chunks,
                        struct sort_warp_rec *rec) {
    if (rec) sort_shade_kernel<MODE, true><<<grid, tpb>>>(*a, chunks, rec);
    else sort_shade_kernel<MODE, false><<<grid, tpb>>>(*a, chunks, rec);
}

extern "C" int sort_shade(enum sort_shade_mode mode, const struct sort_shade_args *a, unsigned c, unsigned tpb,
                          struct sort_warp_rec *rec, char *err) {
    if (tpb == 0 || tpb > 1024 || c % SORTEXP_CHUNK != 0 || a->n == 0) {
        dv_seterr(err, "sort_shade: bad launch (%u threads a block, C = %u, %llu items)", tpb, c, a->n);
        return DV_ERR;
    }
    const unsigned long long blocks = (a->n + tpb - 1) / tpb;
    if (blocks > 0x7fffffffull) {
        dv_seterr(err, "sort_shade: %llu blocks", blocks);
        return DV_ERR;
    }
    const unsigned chunks = c / SORTEXP_CHUNK;
    switch (mode) {
    case SORT_SHADE_NAIVE: launch_mode<SORT_SHADE_NAIVE>((unsigned)blocks, tpb, a, chunks, rec); break;
    case SORT_SHADE_PAIRS: launch_mode<SORT_SHADE_PAIRS>((unsigned)blocks, tpb, a, chunks, rec); break;
    case SORT_SHADE_INDEX: launch_mode<SORT_SHADE_INDEX>((unsigned)blocks, tpb, a, chunks, rec); break;
    default: dv_seterr(err, "sort_shade: unknown mode %d", (int)mode); return DV_ERR;
    }
    return DV_CUDA_CALL(cudaGetLastError(), err);
}

extern "C" int sort_make_pairs(const float *in, uint64_t *pair, unsigned long long n, char *err) {
    const unsigned long long blocks = (n + 255) / 256;
    sort_pairs_kernel<<<(unsigned)blocks, 256>>>(in, pair, n);
    return DV_CUDA_CALL(cudaGetLastError(), err);
}

extern "C" int sort_radix(void *temp, size_t *bytes, const uint8_t *key_in, uint8_t *key_out, const uint64_t *pair_in,
                          uint64_t *pair_out, unsigned long long n, unsigned bits, char *err) {
    if (n > 0x7fffffffull || bits < 1 || bits > 8) {
        dv_seterr(err, "sort_radix: %llu items over %u bits", n, bits);
        return DV_ERR;
    }
    int rc = DV_CUDA_CALL(
        cub::DeviceRadixSort::SortPairs(temp, *bytes, key_in, key_out, pair_in, pair_out, (int)n, 0, (int)bits), err);
    if (rc == 0 && temp) rc = DV_CUDA_CALL(cudaGetLastError(), err);
    return rc;
}
