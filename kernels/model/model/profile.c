/* profile.c -- the blocks a row's instruction profile is collected on
 * (profile.h). */
#include "kernels/model/model/profile.h"
#include "kernels/model/model/analysis.h"
#include "kernels/model/model/experiment.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/fnv.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/sortexp.h"

int profile_row_supported(const struct dv_row *row, char *reason) {
    if (row->kernel >= 0 && row->kernel < DV_NUM_KERNELS) return 1;
    dv_seterr(reason, "instructions: kernel %d is not one of the service's", (int)row->kernel);
    return 0;
}

/* The grid's parts' weights as whole numbers, and the cost of launching
 * them: the parts' blocks x `per_block` thread-iterations. */
static int plan_weights(struct profile_plan *out, double per_block, char *err) {
    for (unsigned k = 0; k < out->grid.nparts; k++) {
        const double w = out->grid.weight[k];
        if (!(w >= 1 && w == floor(w))) {
            dv_seterr(err, "instructions: part %u of the grid has weight %g, not a whole number", k, w);
            return -1;
        }
        out->weight[k] = (unsigned long long)w;
        out->cost += (double)out->grid.part_blocks[k] * per_block;
    }
    return 0;
}

int profile_plan_row(const struct dv_row *row, const struct dv_geometry *g, unsigned iterations, int whole_grid,
                     struct profile_plan *out, char *err) {
    memset(out, 0, sizeof *out);
    if (!profile_row_supported(row, err)) return -1;
    if (row->kernel == DV_KERNEL_SCENARIO) {
        dv_seterr(err, "instructions: a scenario row is planned with its table (profile_plan_table_row())");
        return -1;
    }
    struct predicate p;
    if (experiment_row_predicate(row, &p, err) != 0) return -1;
    uint32_t *mask = analysis_mask_build(&p, g, 0, err);
    predicate_cleanup(&p);
    if (!mask) return -1;
    int rc = 0;
    if (whole_grid) testimony_counter_grid(g->blocks, g->blocks, &out->grid);
    else rc = testimony_lesson_grid(row, g, iterations, mask, &out->grid, err);
    if (rc == 0) {
        const unsigned long long tpb = (unsigned long long)g->block_x * g->block_y;
        rc = plan_weights(out, (double)tpb * iterations, err);
        if (rc == 0) out->mask_hash = listing_mask_hash(mask, out->grid.part_blocks[0] * tpb);
    }
    free(mask);
    return rc;
}

/* The scenario of table `t` ("scenario:<name>"), or NULL with `err`. */
static const struct scenario *table_scenario(const struct dv_table *t, unsigned r, char *err) {
    const struct scenario *s = strncmp(t->id, "scenario:", 9) == 0 ? scenario_find(t->id + 9) : NULL;
    if (!s || r >= s->nrows) {
        dv_seterr(err, "instructions: table %s has no scenario row %u", t->id, r);
        return NULL;
    }
    return s;
}

/* FNV-1a over the bytes of the blocks a scenario row's profile launches
 * (its stand-in's, in order, or the first part's) and the parts' sizes and
 * weights: what its counts follow from, beside the kernel. */
static uint64_t scenario_hash(const uint8_t *work, unsigned tpb, const struct profile_plan *p, const unsigned *src,
                              unsigned nsrc) {
    uint64_t h = fnv1a_64(FNV1A_64_OFFSET, "", 0);
    if (nsrc)
        for (unsigned k = 0; k < nsrc; k++) h = fnv1a_64(h, work + (size_t)src[k] * tpb, tpb);
    else h = fnv1a_64(h, work, (size_t)p->grid.part_blocks[0] * tpb);
    for (unsigned k = 0; k < p->grid.nparts; k++) {
        const unsigned long long v[2] = {p->grid.part_blocks[k], p->weight[k]};
        h = fnv1a_64(h, v, sizeof v);
    }
    return h;
}

static int plan_scenario(const struct dv_options *o, const struct dv_table *t, unsigned r, int whole_grid,
                         struct profile_plan *out, char *err) {
    const struct scenario *s = table_scenario(t, r, err);
    if (!s) return -1;
    struct scenario rs;
    scenario_row(s, r, &rs);
    const struct dv_geometry g = scenario_grid(o);
    const unsigned tpb = g.block_x * g.block_y;
    const unsigned long long n = dv_grid_threads(&g);
    uint8_t *work = malloc(n ? n : 1);
    unsigned *src = malloc(sizeof *src * (g.blocks ? g.blocks : 1));
    int rc = -1;
    if (!work || !src) dv_seterr(err, "instructions: out of memory for %llu threads", n);
    else if (scenario_assign(&rs, s->rows[r].layout, g.blocks, tpb, work, err) == 0) {
        unsigned nsrc = 0;
        if (whole_grid) testimony_counter_grid(g.blocks, g.blocks, &out->grid);
        else nsrc = testimony_scenario_grid(work, tpb, g.blocks, PROFILE_STANDIN_WAVE, &out->grid, src);
        const unsigned unit = scenario_unit_fmas(o), iters = scenario_short_iterations(s, o);
        unsigned long long most = 0;
        for (unsigned w = 0; w < 256; w++) {
            const unsigned long long f = scenario_thread_fmas(&rs, w, unit, iters);
            for (unsigned long long i = 0; i < n && f > most; i += tpb) /* a value some thread has */
                if (memchr(work + i, (int)w, tpb)) {
                    most = f;
                    break;
                }
        }
        rc = plan_weights(out, (double)tpb * (double)most, err);
        if (rc == 0) out->mask_hash = scenario_hash(work, tpb, out, src, nsrc);
    }
    free(work);
    free(src);
    return rc;
}

int profile_row_unprofiled(const struct dv_table *t, unsigned r, char *reason) {
    if (!sortexp_table_is(t)) return 0;
    if (r == SORTEXP_ROW_SORT_SHADE)
        dv_seterr(reason,
                  "instructions: not profiled: sort+shade's launches are CUB's radix-sort kernels, then the "
                  "shade of the sorted pairs, the shade-sorted row's kernel on the same pairs (its profile is "
                  "that row's)");
    else if (r == SORTEXP_ROW_SORT)
        dv_seterr(reason,
                  "instructions: not profiled: the sort row's launches are CUB's radix-sort kernels alone "
                  "(no shade, no material to split a warp)");
    else return 0;
    return 1;
}

/* A data-sort row's plan: the whole grid, one part, weight 1 (the
 * materials decide each warp's paths: no block stands for another). */
static int plan_sort(const struct dv_options *o, const struct dv_table *t, unsigned r, struct profile_plan *out,
                     char *err) {
    enum sortexp_dist d;
    unsigned m, c;
    if (profile_row_unprofiled(t, r, err)) return -1;
    if (sortexp_table_cell(t->id, &d, &m, &c) != 0) {
        dv_seterr(err, "instructions: table %s is no data-sort cell", t->id);
        return -1;
    }
    const struct dv_geometry g = scenario_grid(o);
    const unsigned tpb = g.block_x * g.block_y;
    const unsigned long long n = dv_grid_threads(&g);
    uint8_t *mat = malloc(n ? n : 1);
    if (!mat) {
        dv_seterr(err, "instructions: out of memory for %llu items", n);
        return -1;
    }
    int rc = sortexp_materials(d, m, n, mat, err);
    if (rc == 0) {
        testimony_counter_grid(g.blocks, g.blocks, &out->grid);
        rc = plan_weights(out, (double)tpb * c, err);
    }
    if (rc == 0) {
        const unsigned v[2] = {r, c};
        out->mask_hash = fnv1a_64(fnv1a_64(FNV1A_64_OFFSET, mat, (size_t)n), v, sizeof v);
    }
    free(mat);
    return rc;
}

int profile_plan_table_row(const struct dv_options *o, const struct dv_table *t, unsigned r,
                           const struct dv_geometry *g, unsigned iterations, int whole_grid, struct profile_plan *out,
                           char *err) {
    memset(out, 0, sizeof *out);
    if (r >= t->nrows) {
        dv_seterr(err, "instructions: table %s has no row %u", t->id, r);
        return -1;
    }
    if (t->rows[r].kernel != DV_KERNEL_SCENARIO)
        return profile_plan_row(&t->rows[r], g, iterations, whole_grid, out, err);
    if (sortexp_table_is(t)) return plan_sort(o, t, r, out, err);
    return plan_scenario(o, t, r, whole_grid, out, err);
}

int profile_kernel_identity(const struct dv_options *o, const struct dv_table *t, unsigned r, unsigned iterations,
                            char *buf, size_t len) {
    int n;
    const struct dv_row *row = r < t->nrows ? &t->rows[r] : NULL;
    if (!row) return -1;
    if (row->kernel != DV_KERNEL_SCENARIO) {
        /* The compile-time instantiation runs the lesson's iteration count. */
        n = snprintf(buf, len, "%s/%d", experiment_kernel_name(row->kernel), iterations == DV_DEFAULT_ITERATIONS);
        return n < 0 || (size_t)n >= len ? -1 : 0;
    }
    if (sortexp_table_is(t)) {
        /* The shade kernel's instantiation is its shading order's (the
         * template's mode): naive, index, or pairs (shade-sorted, and the
         * shade inside sort+shade); the cell (distribution, M, C) is data
         * and a runtime argument, so it is in the plan's hash, not here. */
        static const char *const order[SORTEXP_NROWS] = {"pairs", "naive", "index", "pairs", "cub-radix"};
        n = r < SORTEXP_NROWS ? snprintf(buf, len, "sort/%s", order[r]) : -1;
        return n < 0 || (size_t)n >= len ? -1 : 0;
    }
    char err[ERR_LEN];
    const struct scenario *s = table_scenario(t, r, err);
    if (!s) return -1;
    struct scenario rs;
    scenario_row(s, r, &rs);
    const unsigned unit = scenario_unit_fmas(o), iters = scenario_short_iterations(s, o);
    /* The compile-time instantiations: the suites' unit (16 chunks of 32),
     * the worked cases' 2|1 and 4|3 sides on 4096 iterations; the rest run
     * the runtime one (scenario_kernels.cu). */
    const int unit_c = unit == SCENARIO_DEFAULT_UNIT;
    const int short_c = iters == DV_DEFAULT_ITERATIONS &&
                        ((rs.lengths[1] == 2 && rs.lengths[0] == 1) || (rs.lengths[1] == 4 && rs.lengths[0] == 3));
    switch (rs.kind) {
    case SCENARIO_SHORT:
        n = snprintf(buf, len, "scenario/short/%ux%u/%s", rs.lengths[1], rs.lengths[0], short_c ? "c" : "rt");
        break;
    case SCENARIO_PAIR: n = snprintf(buf, len, "scenario/pair/v%u", rs.variant); break;
    case SCENARIO_MEM: /* arithmetic intensity: one instantiation per variant and point */
        n = snprintf(buf, len, "scenario/memory/v%u/%ux%u", rs.variant, rs.lengths[0], rs.lengths[1]);
        break;
    default: n = snprintf(buf, len, "scenario/%s/%s", scenario_kernel_name(&rs), unit_c ? "c" : "rt"); break;
    }
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
