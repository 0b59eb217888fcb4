/* sort_kernels.h -- the data-sort experiment's kernels and CUB's radix sort
 * (sort_kernels.cu), for sort_measure.c. Plain C; every launcher checks
 * cudaGetLastError() and returns 0 or a DV_* code with `err`. */
#ifndef DV_SORT_KERNELS_H
#define DV_SORT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The shading orders (the rows' kernels). */
enum sort_shade_mode {
    SORT_SHADE_NAIVE = 0, /* item g: mat[g], in[g]                                   */
    SORT_SHADE_PAIRS,     /* place g: key[g], item = pair[g] >> 32, payload its low half */
    SORT_SHADE_INDEX      /* place g: item = idx[g]; mat[item], in[item]                */
};

/* The buffers a shade reads (those its mode does not read may be NULL). */
struct sort_shade_args {
    const uint8_t *mat;
    const float *in;
    const uint8_t *key;
    const uint64_t *pair;
    const uint32_t *idx;
    float *out;
    unsigned long long n;
};

/* Per-warp witness record (sortexp_warp's device twin). */
struct sort_warp_rec {
    unsigned k;
    unsigned hist[33];
};

/* Shades n items of `a` in mode `mode`, C = `c` FMAs (a multiple of
 * SORTEXP_CHUNK) a material, on blocks of `tpb` threads; `rec` NULL for
 * the timed kernel, else the witness instantiation, which adds one run per
 * material group met into rec[warp] (zeroed by the caller). */
int sort_shade(enum sort_shade_mode mode, const struct sort_shade_args *a, unsigned c, unsigned tpb,
               struct sort_warp_rec *rec, char *err);

/* Pairs (item << 32 | payload bits) of n items into `pair`. */
int sort_make_pairs(const float *in, uint64_t *pair, unsigned long long n, char *err);

/* CUB's DeviceRadixSort::SortPairs over the low `bits` key bits: the
 * temporary storage's size for n items into *bytes (temp NULL), or the
 * sort with `temp` of `bytes` (allocated once by the caller). */
int sort_radix(void *temp, size_t *bytes, const uint8_t *key_in, uint8_t *key_out, const uint64_t *pair_in,
               uint64_t *pair_out, unsigned long long n, unsigned bits, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_SORT_KERNELS_H */
