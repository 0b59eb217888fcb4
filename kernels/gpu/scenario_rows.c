/* scenario_rows.c -- a scenario table's rows on the device (scenario_rows.h). */
#include "kernels/gpu/scenario_rows.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/devmem.h"
#include "kernels/gpu/intensity_kernels.h"
#include "kernels/model/model/intensity.h"
#include "kernels/model/model/chain.h"

/* The bytes per thread row `r`'s kernel reads from its assignment. */
static size_t work_elem(const struct scenario *rs) {
    return rs->kind == SCENARIO_LOOP || rs->kind == SCENARIO_SHORT ? sizeof(uint32_t) : 1u;
}

/* Uploads assignment `w` (n threads) of row scenario `rs` in the element
 * type its kernel reads. */
static int upload_work(const struct scenario *rs, const uint8_t *w, unsigned long long n, void **dev, char *err) {
    const size_t elem = work_elem(rs);
    uint32_t *wide = NULL;
    int rc = devmem_alloc(dev, (size_t)n * elem, err);
    if (rc != 0) return rc;
    if (elem == 1) return devmem_upload(*dev, w, (size_t)n, err);
    wide = malloc((size_t)n * sizeof *wide);
    if (!wide) {
        dv_seterr(err, "scenario %s: out of memory", rs->name);
        return DV_ERR;
    }
    for (unsigned long long i = 0; i < n; i++)
        wide[i] = rs->kind == SCENARIO_LOOP ? w[i] : scenario_short_pattern(w[i]);
    rc = devmem_upload(*dev, wide, (size_t)n * sizeof *wide, err);
    free(wide);
    return rc;
}

/* An arithmetic-intensity table's buffers: the stream buffer for the grid's
 * `n` threads, the chase buffer where one of `rows` chases; filled. */
static int mem_setup(struct scenario_rows *c, const struct scenario *s, unsigned long long n, uint32_t rows,
                     char *err) {
    int chase = 0, rc;
    for (unsigned r = 0; r < s->nrows && r < SCENARIO_MAX_ROWS; r++)
        chase |= (rows & (1u << r)) && s->rows[r].variant == INTENSITY_CHASE;
    void *data = NULL, *ch = NULL;
    rc = devmem_alloc(&data, (size_t)n * INTENSITY_WORDS * sizeof(uint32_t), err);
    c->mem_data = data;
    if (rc == 0 && chase) {
        rc = devmem_alloc(&ch, (size_t)INTENSITY_CHASE_WORDS * sizeof(uint32_t), err);
        c->mem_chase = ch;
    }
    if (rc != 0) return rc;
    return intensity_fill(c->mem_data, n * INTENSITY_WORDS, c->block_x * c->block_y, c->mem_chase, err);
}

int scenario_rows_setup(struct scenario_rows *c, const struct scenario *s, const struct dv_options *o,
                        const float *in_dev, uint32_t rows, char *err) {
    int rc;
    memset(c, 0, sizeof *c);
    const struct dv_geometry g = scenario_grid(o);
    c->s = s;
    c->blocks = g.blocks;
    c->block_x = g.block_x;
    c->block_y = g.block_y;
    c->unit = scenario_unit_fmas(o);
    c->iters = scenario_short_iterations(s, o);
    c->in = in_dev;
    const unsigned tpb = c->block_x * c->block_y;
    const unsigned long long n = (unsigned long long)c->blocks * tpb;
    if (s->kind == SCENARIO_MEM && (rc = mem_setup(c, s, n, rows, err)) != 0) return rc;
    for (unsigned r = 0; r < s->nrows && r < SCENARIO_MAX_ROWS; r++) {
        if (!(rows & (1u << r))) continue;
        scenario_row(s, r, &c->row[r]);
        uint8_t *work = c->host_work[r] = malloc((size_t)n);
        if (!work) {
            dv_seterr(err, "scenario %s: out of memory for %llu threads", s->name, n);
            return DV_ERR;
        }
        if (scenario_assign(&c->row[r], s->rows[r].layout, c->blocks, tpb, work, err) != 0) return DV_ERR;
        if ((rc = upload_work(&c->row[r], work, n, &c->work[r], err)) != 0) return rc;
        void *out = NULL;
        rc = devmem_alloc(&out, (size_t)n * sizeof(float), err);
        c->out[r] = out;
        if (rc != 0) return rc;
        c->ready[r] = 1;
    }
    return 0;
}

/* Stand-in `x` of `nsrc` blocks copied from `host_work` (tpb bytes a
 * block) by x->src: its assignment and input uploaded, its output. */
static int standin_upload(const struct scenario *rs, struct scenario_standin *x, const uint8_t *host_work, unsigned tpb,
                          char *err) {
    const size_t threads = (size_t)x->n * tpb;
    float *hin = malloc(threads * sizeof *hin);
    x->host_work = malloc(threads);
    if (!x->host_work || !hin) {
        free(hin);
        dv_seterr(err, "scenario %s: out of memory for the stand-in of %u blocks", rs->name, x->n);
        return DV_ERR;
    }
    for (unsigned k = 0; k < x->n; k++) {
        const unsigned long long from = (unsigned long long)x->src[k] * tpb;
        memcpy(x->host_work + (size_t)k * tpb, host_work + from, tpb);
        for (unsigned t = 0; t < tpb; t++) hin[(size_t)k * tpb + t] = dv_input_value(from + t);
    }
    void *in = NULL, *out = NULL;
    int rc;
    if ((rc = upload_work(rs, x->host_work, threads, &x->work, err)) == 0 &&
        (rc = devmem_alloc(&in, threads * sizeof(float), err)) == 0 &&
        (rc = devmem_upload(in, hin, threads * sizeof(float), err)) == 0)
        rc = devmem_alloc(&out, threads * sizeof(float), err);
    x->in = in;
    x->out = out;
    free(hin);
    return rc;
}

int scenario_rows_standing(struct scenario_rows *c, unsigned row, unsigned wave, char *err) {
    if (row >= SCENARIO_MAX_ROWS || !c->ready[row]) {
        dv_seterr(err, "scenario %s: row %u is not set up", c->s->name, row);
        return DV_ERR;
    }
    const unsigned tpb = c->block_x * c->block_y;
    struct scenario_standin *x = &c->sub[row];
    if (x->n) return 0; /* laid out already */
    if (!x->src && !(x->src = malloc((size_t)c->blocks * sizeof *x->src))) {
        dv_seterr(err, "scenario %s: out of memory for the stand-in of %u blocks", c->s->name, c->blocks);
        return DV_ERR;
    }
    struct testimony_grid g;
    const unsigned n = testimony_scenario_grid(c->host_work[row], tpb, c->blocks, wave, &g, x->src);
    c->grids[row] = g;
    if (n == 0) return 0;
    x->n = n;
    const int rc = standin_upload(&c->row[row], x, c->host_work[row], tpb, err);
    if (rc != 0) x->n = 0;
    return rc;
}

int scenario_rows_launch(const struct scenario_rows *c, unsigned row, int standin, unsigned first, unsigned blocks,
                         struct dv_witness_block *witness, struct dv_join_lane *join, char *err) {
    if (row >= SCENARIO_MAX_ROWS || !c->ready[row] || (standin && !c->sub[row].n)) {
        dv_seterr(err, "scenario %s: row %u has no %s to launch", c->s->name, row,
                  standin ? "stand-in grid" : "set-up");
        return DV_ERR;
    }
    const struct scenario *rs = &c->row[row];
    const size_t at = (size_t)first * c->block_x * c->block_y;
    const struct scenario_standin *x = &c->sub[row];
    const float *in = (standin ? x->in : c->in) + at;
    float *out = (standin ? x->out : c->out[row]) + at;
    const void *work = (const char *)(standin ? x->work : c->work[row]) + at * work_elem(rs);
    struct scenario_lengths L;
    for (unsigned p = 0; p < SCENARIO_MAX_PATHS; p++) L.len[p] = rs->lengths[p];
    if (join && rs->kind != SCENARIO_PAIR) {
        dv_seterr(err, "scenario %s: row %u has no join to record", c->s->name, row);
        return DV_ERR;
    }
    switch (rs->kind) {
    case SCENARIO_KWAY:
        return scenario_launch_kway(in, out, work, blocks, c->block_x, c->block_y, &L, c->unit, witness, err);
    case SCENARIO_LOOP:
        return scenario_launch_loop(in, out, work, blocks, c->block_x, c->block_y, c->unit, witness, err);
    case SCENARIO_SHORT:
        return scenario_launch_short(in, out, work, blocks, c->block_x, c->block_y, rs->lengths[0], rs->lengths[1],
                                     c->iters, witness, err);
    case SCENARIO_MEM:
        return intensity_launch(in, out, work, c->mem_data ? c->mem_data + at * INTENSITY_WORDS : NULL, c->mem_chase,
                                blocks, c->block_x, c->block_y, rs->variant, rs->lengths[0], rs->lengths[1], witness,
                                err);
    default:
        return scenario_launch_pair(in, out, work, blocks, c->block_x, c->block_y, rs->variant, &L, c->unit, witness,
                                    join, err);
    }
}

int scenario_rows_compiled(const struct scenario_rows *c, unsigned row) {
    const struct scenario *rs = &c->row[row < SCENARIO_MAX_ROWS ? row : 0];
    switch (rs->kind) {
    case SCENARIO_KWAY:
    case SCENARIO_LOOP: return c->unit / SCENARIO_CHUNK == SCENARIO_COMPILED_CHUNKS;
    case SCENARIO_SHORT:
        return c->iters / 32u == SCENARIO_COMPILED_ROUNDS &&
               ((rs->lengths[0] == 1 && rs->lengths[1] == 2) || (rs->lengths[0] == 3 && rs->lengths[1] == 4));
    case SCENARIO_MEM: /* the ridge rows have one instantiation each */
        return rs->variant >= INTENSITY_RIDGE_BANDWIDTH || intensity_compiled(rs->lengths[0], rs->lengths[1]);
    default: return 0; /* the pair kernel reads its chains' lengths at run time */
    }
}

int scenario_rows_occupancy(const struct scenario_rows *c, unsigned row, int *per_sm, char *err) {
    const struct scenario *rs = &c->row[row < SCENARIO_MAX_ROWS ? row : 0];
    if (rs->kind == SCENARIO_MEM)
        return intensity_occupancy(rs->variant, rs->lengths[0], rs->lengths[1], c->block_x * c->block_y, per_sm, err);
    static const unsigned kinds[] = {[SCENARIO_KWAY] = SCENARIO_KERNEL_KWAY,
                                     [SCENARIO_LOOP] = SCENARIO_KERNEL_LOOP,
                                     [SCENARIO_SHORT] = SCENARIO_KERNEL_SHORT,
                                     [SCENARIO_PAIR] = SCENARIO_KERNEL_PAIR};
    const struct scenario_kernel_ref k = {.kind = kinds[rs->kind],
                                          .len0 = rs->lengths[0],
                                          .len1 = rs->lengths[1],
                                          .variant = rs->variant,
                                          .compiled = scenario_rows_compiled(c, row)};
    return scenario_kernel_occupancy(&k, c->block_x * c->block_y, per_sm, err);
}

void scenario_rows_cleanup(struct scenario_rows *c) {
    for (unsigned r = 0; r < SCENARIO_MAX_ROWS; r++) {
        devmem_free(c->work[r]);
        devmem_free(c->out[r]);
        free(c->host_work[r]);
        struct scenario_standin *x = &c->sub[r];
        devmem_free(x->work);
        devmem_free(x->in);
        devmem_free(x->out);
        free(x->src);
        free(x->host_work);
    }
    devmem_free(c->mem_data);
    devmem_free(c->mem_chase);
    memset(c, 0, sizeof *c);
}
