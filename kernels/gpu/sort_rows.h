/* sort_rows.h -- one data-sort cell's rows on the device, for every launch
 * of them: the timed rounds, the sort inside, the counters and the witness
 * (sort_measure.c) and the instruction profile (instr_run.c), so each of
 * them launches a row exactly as it was timed.
 *
 * A cell (distribution, M, C) on n items in blocks of tpb threads: the
 * materials drawn on the host (sortexp_materials(), the one generator) and
 * their stable order by material (sortexp_order(), what the radix sort
 * gives); on the device the materials, the pairs (item << 32 | payload
 * bits, from the caller's input), the pairs sorted once by CUB (for
 * shade-sorted), the sorted item index (for index), an output per shading
 * row and the sort's outputs. CUB's temporary storage is sized once and
 * allocated once at set-up, and every sort is given that size.
 */
#ifndef DV_SORT_ROWS_H
#define DV_SORT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/gpu/sort_kernels.h"
#include "kernels/model/model/sortexp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sort_rows {
    unsigned long long n;
    unsigned tpb, c, m, bits;
    uint8_t *host_mat;    /* the materials, on the host            */
    uint32_t *host_order; /* their stable order by material        */
    uint8_t *mat, *key_a, *key_b, *pre_key;
    uint64_t *pair, *pair_a, *pair_b, *pre_pair;
    uint32_t *idx;
    float *out[SORTEXP_NROWS - 1]; /* one per row but the sort alone */
    const float *in;               /* the caller's                    */
    void *temp;
    size_t temp_bytes;
};

/* Cell (dist, m, c) of n items in blocks of tpb threads over device input
 * `in_dev` (at least n floats, dv_input_value(i) at i; the caller's, which
 * must outlive the rows) into `d`: the host's materials and order, the
 * device's buffers, the pairs sorted once (pre_key, pre_pair: not checked
 * here). Every CUDA call and allocation checked. Returns 0 or a DV_* code
 * with `err`; sort_rows_cleanup() either way. */
int sort_rows_setup(struct sort_rows *d, enum sortexp_dist dist, unsigned m, unsigned c, unsigned long long n,
                    unsigned tpb, const float *in_dev, char *err);

/* One radix sort of the materials and pairs into key_out / pair_out, with
 * the storage sized at set-up. Returns 0 or a DV_* code. */
int sort_rows_radix(const struct sort_rows *d, uint8_t *key_out, uint64_t *pair_out, char *err);

/* The shade in `mode` over `key` / `pair` (PAIRS) into `out`; `rec` the
 * witness records or NULL for the timed kernel. Returns 0 or a DV_* code. */
int sort_rows_shade(const struct sort_rows *d, enum sort_shade_mode mode, const uint8_t *key, const uint64_t *pair,
                    float *out, struct sort_warp_rec *rec, char *err);

/* Row `row` (enum sortexp_row) as timed: sort+shade its sort then the
 * shade of the sorted pairs, naive and index their shade, shade-sorted the
 * shade of the pairs sorted at set-up, sort the sort alone. Returns 0 or a
 * DV_* code. */
int sort_rows_launch(const struct sort_rows *d, unsigned row, char *err);

/* Frees what `d` holds (device and host) and zeroes it; a zeroed `d` is fine. */
void sort_rows_cleanup(struct sort_rows *d);

#ifdef __cplusplus
}
#endif

#endif /* DV_SORT_ROWS_H */
