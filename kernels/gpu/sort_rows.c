/* sort_rows.c -- one data-sort cell's rows on the device (sort_rows.h). */
#include "kernels/gpu/sort_rows.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/devmem.h"

void sort_rows_cleanup(struct sort_rows *d) {
    devmem_free(d->mat), devmem_free(d->key_a), devmem_free(d->key_b), devmem_free(d->pre_key);
    devmem_free(d->pair), devmem_free(d->pair_a), devmem_free(d->pair_b), devmem_free(d->pre_pair);
    devmem_free(d->idx), devmem_free(d->temp);
    for (unsigned r = 0; r + 1 < SORTEXP_NROWS; r++) devmem_free(d->out[r]);
    free(d->host_mat);
    free(d->host_order);
    memset(d, 0, sizeof *d);
}

/* Key bits the radix sort reads for m materials. */
static unsigned key_bits(unsigned m) {
    unsigned b = 1;
    while ((1u << b) < m) b++;
    return b;
}

int sort_rows_radix(const struct sort_rows *d, uint8_t *key_out, uint64_t *pair_out, char *err) {
    size_t bytes = d->temp_bytes;
    return sort_radix(d->temp, &bytes, d->mat, key_out, d->pair, pair_out, d->n, d->bits, err);
}

int sort_rows_shade(const struct sort_rows *d, enum sort_shade_mode mode, const uint8_t *key, const uint64_t *pair,
                    float *out, struct sort_warp_rec *rec, char *err) {
    const struct sort_shade_args a = {d->mat, d->in, key, pair, d->idx, out, d->n};
    return sort_shade(mode, &a, d->c, d->tpb, rec, err);
}

int sort_rows_launch(const struct sort_rows *d, unsigned row, char *err) {
    int rc;
    switch (row) {
    case SORTEXP_ROW_SORT_SHADE:
        if ((rc = sort_rows_radix(d, d->key_a, d->pair_a, err)) != 0) return rc;
        return sort_rows_shade(d, SORT_SHADE_PAIRS, d->key_a, d->pair_a, d->out[row], NULL, err);
    case SORTEXP_ROW_NAIVE: return sort_rows_shade(d, SORT_SHADE_NAIVE, NULL, NULL, d->out[row], NULL, err);
    case SORTEXP_ROW_INDEX: return sort_rows_shade(d, SORT_SHADE_INDEX, NULL, NULL, d->out[row], NULL, err);
    case SORTEXP_ROW_SHADE_SORTED:
        return sort_rows_shade(d, SORT_SHADE_PAIRS, d->pre_key, d->pre_pair, d->out[row], NULL, err);
    case SORTEXP_ROW_SORT: return sort_rows_radix(d, d->key_b, d->pair_b, err);
    default: dv_seterr(err, "data-sort: no row %u", row); return DV_ERR;
    }
}

/* The host's side of a cell: its materials and their order. */
static int host_setup(struct sort_rows *d, enum sortexp_dist dist, char *err) {
    const unsigned long long n = d->n;
    d->host_mat = malloc(n ? n : 1);
    d->host_order = malloc((n ? n : 1) * sizeof *d->host_order);
    if (!d->host_mat || !d->host_order) {
        dv_seterr(err, "data-sort: out of memory for %llu items", n);
        return DV_ERR;
    }
    if (sortexp_materials(dist, d->m, n, d->host_mat, err) != 0) return DV_ERR;
    sortexp_order(d->host_mat, n, d->m, d->host_order);
    return 0;
}

/* The device's buffers of the cell, from the host's materials and order. */
static int device_setup(struct sort_rows *d, char *err) {
    const size_t n = (size_t)d->n;
    int rc = 0;
    rc = rc ? rc : devmem_alloc((void **)&d->mat, n, err);
    rc = rc ? rc : devmem_alloc((void **)&d->key_a, n, err);
    rc = rc ? rc : devmem_alloc((void **)&d->key_b, n, err);
    rc = rc ? rc : devmem_alloc((void **)&d->pre_key, n, err);
    rc = rc ? rc : devmem_alloc((void **)&d->pair, n * 8, err);
    rc = rc ? rc : devmem_alloc((void **)&d->pair_a, n * 8, err);
    rc = rc ? rc : devmem_alloc((void **)&d->pair_b, n * 8, err);
    rc = rc ? rc : devmem_alloc((void **)&d->pre_pair, n * 8, err);
    rc = rc ? rc : devmem_alloc((void **)&d->idx, n * 4, err);
    for (unsigned r = 0; r + 1 < SORTEXP_NROWS && rc == 0; r++) {
        rc = devmem_alloc((void **)&d->out[r], n * 4, err);
        if (rc == 0) rc = DV_CUDA_CALL(cudaMemset(d->out[r], 0xff, n * 4), err); /* NaN: unwritten */
    }
    rc = rc ? rc : devmem_upload(d->mat, d->host_mat, n, err);
    rc = rc ? rc : devmem_upload(d->idx, d->host_order, n * 4, err);
    rc = rc ? rc : sort_make_pairs(d->in, d->pair, d->n, err);
    /* The temporary storage: sized and allocated once, outside the rounds. */
    rc = rc ? rc : sort_radix(NULL, &d->temp_bytes, d->mat, d->pre_key, d->pair, d->pre_pair, d->n, d->bits, err);
    rc = rc ? rc : devmem_alloc(&d->temp, d->temp_bytes ? d->temp_bytes : 1, err);
    rc = rc ? rc : sort_rows_radix(d, d->pre_key, d->pre_pair, err);
    return rc;
}

int sort_rows_setup(struct sort_rows *d, enum sortexp_dist dist, unsigned m, unsigned c, unsigned long long n,
                    unsigned tpb, const float *in_dev, char *err) {
    memset(d, 0, sizeof *d);
    d->n = n, d->tpb = tpb, d->c = c, d->m = m, d->bits = key_bits(m), d->in = in_dev;
    if (n == 0 || tpb == 0 || !in_dev) {
        dv_seterr(err, "data-sort: a cell of %llu items in blocks of %u threads%s", n, tpb,
                  in_dev ? "" : " without an input");
        return DV_ERR;
    }
    const int rc = host_setup(d, dist, err);
    return rc ? rc : device_setup(d, err);
}
