/* sortexp.c -- the data-dependent divergence experiment's model: the
 * materials' distributions, the CPU per-warp count, the grids, the tables'
 * plan and the crossover rule (sortexp.h says what each is).
 *
 * The plan builds one table a cell. Its rows' analysis is the model of
 * their shading order: a warp that meets k materials runs k paths of C
 * FMAs, so the issued path runs of a row are the sum of its warps' k, and
 * the predicted ratio of a shading row over the sorted shade is the ratio
 * of those sums (the sort's own time is not in the model).
 */
#include "kernels/model/model/sortexp.h"
#include "kernels/model/model/testimony.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dist_names[SORTEXP_NDIST] = {"uniform", "zipf", "tiles", "presorted"};
static const char *const row_names[SORTEXP_NROWS] = {"sort+shade", "naive", "index", "shade-sorted", "sort"};
static const char *const row_labels[SORTEXP_NROWS] = {
    "CUB radix sort of (material, item) pairs, then shade the sorted pairs",
    "shade the items as given (a warp runs each material it meets)",
    "shade through the sorted index, data in place (divergence removed, locality not)",
    "the shade of sort+shade alone, on pairs sorted before the rounds",
    "the sort alone (CUB DeviceRadixSort::SortPairs)",
};

const char *sortexp_dist_name(enum sortexp_dist d) { return (unsigned)d < SORTEXP_NDIST ? dist_names[d] : NULL; }
const char *sortexp_row_name(enum sortexp_row r) { return (unsigned)r < SORTEXP_NROWS ? row_names[r] : NULL; }

/* Zipf (s = 1) over m materials: material r drawn when the draw's high 32
 * bits fall below thr[r] (the cumulative weight scaled to 2^32). */
static void zipf_thresholds(unsigned m, uint64_t *thr) {
    double total = 0, cum = 0;
    for (unsigned r = 0; r < m; r++) total += 1.0 / (r + 1);
    for (unsigned r = 0; r < m; r++) {
        cum += 1.0 / (r + 1);
        thr[r] = r + 1 == m ? (1ull << 32) : (uint64_t)(cum / total * 4294967296.0);
    }
}

static void counting_order(const uint8_t *mat, unsigned long long n, unsigned m, uint32_t *order) {
    unsigned long long start[SORTEXP_MAX_M + 1] = {0};
    for (unsigned long long i = 0; i < n; i++) start[mat[i] + 1u]++;
    for (unsigned r = 0; r < m && r < SORTEXP_MAX_M; r++) start[r + 1] += start[r];
    for (unsigned long long i = 0; i < n; i++) order[start[mat[i]]++] = (uint32_t)i;
}

void sortexp_order(const uint8_t *mat, unsigned long long n, unsigned m, uint32_t *order) {
    counting_order(mat, n, m, order);
}

int sortexp_materials(enum sortexp_dist d, unsigned m, unsigned long long n, uint8_t *mat, char *err) {
    if (m < 1 || m > SORTEXP_MAX_M) {
        dv_seterr(err, "materials: %u out of range 1..%u", m, SORTEXP_MAX_M);
        return -1;
    }
    switch (d) {
    case SORTEXP_UNIFORM:
    case SORTEXP_PRESORTED:
        for (unsigned long long i = 0; i < n; i++) mat[i] = (uint8_t)sortexp_uniform(sortexp_hash(SORTEXP_SEED, i), m);
        break;
    case SORTEXP_ZIPF: {
        uint64_t thr[SORTEXP_MAX_M];
        zipf_thresholds(m, thr);
        for (unsigned long long i = 0; i < n; i++) {
            const uint64_t u = sortexp_hash(SORTEXP_SEED, i) >> 32;
            unsigned r = 0;
            while (r + 1 < m && u >= thr[r]) r++;
            mat[i] = (uint8_t)r;
        }
        break;
    }
    case SORTEXP_TILES: {
        const unsigned long long per_row = SORTEXP_IMAGE_W / SORTEXP_TILE;
        for (unsigned long long i = 0; i < n; i++) {
            const unsigned long long x = i % SORTEXP_IMAGE_W, y = i / SORTEXP_IMAGE_W;
            const unsigned long long tile = (y / SORTEXP_TILE) * per_row + x / SORTEXP_TILE;
            mat[i] = (uint8_t)sortexp_uniform(sortexp_hash(SORTEXP_SEED ^ 0x7115ull, tile), m);
        }
        break;
    }
    default: dv_seterr(err, "distribution: unknown (%d)", (int)d); return -1;
    }
    if (d == SORTEXP_PRESORTED) {
        /* Counting sort in place: the uniform multiset, in material order. */
        unsigned long long count[SORTEXP_MAX_M] = {0};
        for (unsigned long long i = 0; i < n; i++) count[mat[i]]++;
        unsigned long long at = 0;
        for (unsigned r = 0; r < m; r++)
            for (unsigned long long j = 0; j < count[r]; j++) mat[at++] = (uint8_t)r;
    }
    return 0;
}

unsigned long long sortexp_warps(unsigned long long n, unsigned tpb) {
    if (tpb == 0) return 0;
    const unsigned per_block = (tpb + 31u) / 32u;
    const unsigned long long full = n / tpb, rest = n % tpb;
    return full * per_block + (rest + 31u) / 32u;
}

void sortexp_warp_count(const uint8_t *mat, const uint32_t *order, unsigned long long n, unsigned tpb,
                        unsigned long long w, struct sortexp_warp *out) {
    memset(out, 0, sizeof *out);
    if (tpb == 0) return;
    const unsigned per_block = (tpb + 31u) / 32u;
    const unsigned long long block = w / per_block, first = block * tpb + (w % per_block) * 32u;
    unsigned long long end = block * tpb + tpb;
    if (end > first + 32u) end = first + 32u;
    if (end > n) end = n;
    unsigned lanes[SORTEXP_MAX_M + 1] = {0};
    for (unsigned long long p = first; p < end; p++) {
        const unsigned m = mat[order ? order[p] : p];
        lanes[m < SORTEXP_MAX_M ? m : SORTEXP_MAX_M]++;
    }
    for (unsigned m = 0; m <= SORTEXP_MAX_M; m++)
        if (lanes[m]) {
            out->k++;
            out->hist[lanes[m]]++;
        }
}

void sortexp_witness_add(struct dv_sort_witness *s, const struct sortexp_warp *w) {
    s->warps++;
    s->k_hist[w->k <= 32 ? w->k : 32]++;
    for (unsigned l = 0; l <= 32; l++) s->lane_hist[l] += w->hist[l];
    unsigned long long ks = 0;
    for (unsigned k = 0; k <= 32; k++) ks += k * s->k_hist[k];
    s->k_mean = s->warps ? (double)ks / (double)s->warps : NAN;
}

int sortexp_verdict(double lo, double hi) {
    if (isnan(lo) || isnan(hi)) return 0;
    if (lo > 1.0) return 1;
    if (hi < 1.0) return -1;
    return 0;
}

unsigned sortexp_crossover(const unsigned *c, const int *verdict, unsigned n) {
    unsigned at = 0;
    for (unsigned i = n; i-- > 0;) {
        if (verdict[i] != 1) break;
        at = c[i];
    }
    return at;
}

/* ---- grids ----------------------------------------------------------------- */

int sortexp_grid_named(const char *name, struct sortexp_grid *g) {
    struct sortexp_grid x;
    memset(&x, 0, sizeof x);
    if (!name) return 0;
    if (strcmp(name, "data-sort") == 0) {
        /* The nightly set: the divergent draw and the coherent one, a few
         * materials and many, cheap to dear shading (12 cells). */
        x.ndist = 2, x.dist[0] = SORTEXP_UNIFORM, x.dist[1] = SORTEXP_TILES;
        x.nm = 2, x.m[0] = 4, x.m[1] = 32;
        x.nc = 3, x.c[0] = 16, x.c[1] = 128, x.c[2] = 512;
    } else if (strncmp(name, "data-sort-", 10) == 0) {
        int d = -1;
        for (unsigned i = 0; i < SORTEXP_NDIST; i++)
            if (strcmp(name + 10, dist_names[i]) == 0) d = (int)i;
        if (d < 0) return 0;
        /* One distribution's full grid: M 1..32, C 8..512 (16 cells, a report's tables). */
        x.ndist = 1, x.dist[0] = (enum sortexp_dist)d;
        x.nm = 4, x.m[0] = 1, x.m[1] = 4, x.m[2] = 16, x.m[3] = 32;
        x.nc = 4, x.c[0] = 8, x.c[1] = 32, x.c[2] = 128, x.c[3] = 512;
    } else return 0;
    if (g) *g = x;
    return 1;
}

unsigned sortexp_grid_cells(const struct sortexp_grid *g) { return g->ndist * g->nm * g->nc; }

int sortexp_table_is(const struct dv_table *t) { return strncmp(t->id, "sort:", 5) == 0; }

int sortexp_table_cell(const char *id, enum sortexp_dist *d, unsigned *m, unsigned *c) {
    char name[16];
    unsigned mm, cc;
    if (strncmp(id, "sort:", 5) != 0 || sscanf(id + 5, "%15[a-z]:m%u:c%u", name, &mm, &cc) != 3) return -1;
    for (unsigned i = 0; i < SORTEXP_NDIST; i++)
        if (strcmp(name, dist_names[i]) == 0) {
            *d = (enum sortexp_dist)i;
            *m = mm;
            *c = cc;
            return 0;
        }
    return -1;
}

/* ---- the plan ---------------------------------------------------------------- */

/* Issued path runs of a shading order, per block, into `runs` (and the
 * grid's total warps' k into *sum). */
static void order_runs(const uint8_t *mat, const uint32_t *order, unsigned long long n, unsigned blocks, unsigned tpb,
                       struct dv_count *runs, struct dv_count *split, unsigned long long *sum) {
    const unsigned per_block = (tpb + 31u) / 32u;
    memset(runs, 0, sizeof *runs);
    memset(split, 0, sizeof *split);
    *sum = 0;
    for (unsigned b = 0; b < blocks; b++) {
        unsigned long long k = 0, s = 0;
        for (unsigned w = 0; w < per_block; w++) {
            struct sortexp_warp rec;
            sortexp_warp_count(mat, order, n, tpb, (unsigned long long)b * per_block + w, &rec);
            k += rec.k;
            s += rec.k > 1;
        }
        dv_count_add(runs, k, b == 0);
        dv_count_add(split, s, b == 0);
        *sum += k;
    }
    dv_count_finish(runs, blocks);
    dv_count_finish(split, blocks);
}

static void cell_row(struct dv_table *t, enum sortexp_row r, unsigned tpb, unsigned long long n, unsigned c,
                     const struct dv_count *runs, const struct dv_count *split, double predicted) {
    struct dv_row *row = &t->rows[r];
    snprintf(row->name, sizeof row->name, "%s", row_names[r]);
    snprintf(row->label, sizeof row->label, "%s", row_labels[r]);
    row->kernel = DV_KERNEL_SCENARIO;
    row->mode = DV_MODE_NONE;
    row->warps_per_block = (tpb + 31u) / 32u;
    row->threads_per_block = tpb;
    if (runs) row->path_runs = *runs;
    if (split) row->warps_split = *split;
    row->predicted_ratio = predicted;
    row->thread_fmas = r == SORTEXP_ROW_SORT ? 0 : n * c;
    row->comparable = r != SORTEXP_ROW_SORT;
    if (r == SORTEXP_ROW_SORT)
        snprintf(row->comparable_reason, sizeof row->comparable_reason,
                 "the sort alone: no shading (the extra work sort+shade pays)");
    else
        snprintf(row->comparable_reason, sizeof row->comparable_reason,
                 "the same shading multiset: %llu items x %u FMAs%s", n, c,
                 r == SORTEXP_ROW_SORT_SHADE ? ", plus the sort (extra work)" : "");
    row->predicted_efficiency = row->measured_efficiency = row->agreement = NAN;
    row->ratio = row->floor_fraction = NAN;
    snprintf(row->point.arrangement, sizeof row->point.arrangement, "%s",
             r == SORTEXP_ROW_NAIVE ? "as-given" : "sorted");
}

/* Table `t` of cell (d, m, c) on `blocks` x `tpb`, and its cell. */
static int cell_table(enum sortexp_dist d, unsigned m, unsigned c, const struct dv_options *o, unsigned blocks,
                      unsigned tpb, struct dv_table *t, struct dv_sort_cell *cell, char *err) {
    const unsigned long long n = (unsigned long long)blocks * tpb;
    uint8_t *mat = malloc(n ? n : 1);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    int rc = -1;
    if (!mat || !order) {
        dv_seterr(err, "data-sort: out of memory for %llu items", n);
        goto cleanup;
    }
    if (sortexp_materials(d, m, n, mat, err) != 0) goto cleanup;
    sortexp_order(mat, n, m, order);
    memset(t, 0, sizeof *t);
    snprintf(t->id, sizeof t->id, "sort:%s:m%u:c%u", dist_names[d], m, c);
    snprintf(t->title, sizeof t->title, "Data-dependent divergence and the sort: %s materials, M = %u, C = %u FMAs",
             dist_names[d], m, c);
    snprintf(t->kernel, sizeof t->kernel, "sort-shade");
    snprintf(t->kernel_iterations, sizeof t->kernel_iterations, "runtime");
    snprintf(t->baseline, sizeof t->baseline, "%s", row_names[SORTEXP_ROW_SORT_SHADE]);
    snprintf(t->experiment, sizeof t->experiment, "data-sort");
    t->baseline_row = SORTEXP_ROW_SORT_SHADE;
    t->nrows = SORTEXP_NROWS;
    t->noise_limit = t->halfwidth_target = o->max_noise;
    t->worst_row = -1;
    t->cost_witness_ms = t->cost_counters_ms = NAN;
    struct dv_count naive, sorted, naive_split, sorted_split;
    unsigned long long kn, ks;
    order_runs(mat, NULL, n, blocks, tpb, &naive, &naive_split, &kn);
    order_runs(mat, order, n, blocks, tpb, &sorted, &sorted_split, &ks);
    const double pred = ks ? (double)kn / (double)ks : NAN;
    cell_row(t, SORTEXP_ROW_SORT_SHADE, tpb, n, c, &sorted, &sorted_split, 1.0);
    cell_row(t, SORTEXP_ROW_NAIVE, tpb, n, c, &naive, &naive_split, pred);
    cell_row(t, SORTEXP_ROW_INDEX, tpb, n, c, &sorted, &sorted_split, 1.0);
    cell_row(t, SORTEXP_ROW_SHADE_SORTED, tpb, n, c, &sorted, &sorted_split, 1.0);
    cell_row(t, SORTEXP_ROW_SORT, tpb, n, c, NULL, NULL, NAN);
    snprintf(t->note, sizeof t->note,
             "ratio = row / sort+shade in the same round; naive's ratio is naive / (sort+shade): above 1 sorting "
             "pays. The sort is extra work; the shading rows do the same multiset of work.");
    memset(cell, 0, sizeof *cell);
    snprintf(cell->distribution, sizeof cell->distribution, "%s", dist_names[d]);
    cell->m = m;
    cell->c = c;
    cell->ratio = cell->index_ratio = cell->ratio_level = NAN;
    cell->ratio_ci.lo = cell->ratio_ci.hi = NAN;
    cell->sort_ms = cell->sort_inside_ms = NAN;
    cell->sort_ci.lo = cell->sort_ci.hi = cell->sort_inside_ci.lo = cell->sort_inside_ci.hi = NAN;
    const unsigned long long warps = sortexp_warps(n, tpb);
    cell->k_naive = warps ? (double)kn / (double)warps : NAN;
    cell->k_sorted = warps ? (double)ks / (double)warps : NAN;
    cell->naive.first_difference = cell->sorted.first_difference = -1;
    rc = 0;
cleanup:
    free(mat);
    free(order);
    return rc;
}

static void plan_config(const struct dv_options *o, const struct dv_geometry *g, struct dv_config *c) {
    snprintf(c->experiment, sizeof c->experiment, "scenario");
    c->blocks = g->blocks;
    c->blocks_auto = o->blocks == 0;
    if (c->blocks_auto)
        snprintf(c->blocks_reason, sizeof c->blocks_reason, "scenarios run the lesson's %u blocks", DV_DEFAULT_BLOCKS);
    c->block_x = g->block_x;
    c->block_y = g->block_y;
    c->threads_per_block = g->block_x * g->block_y;
    c->threads = dv_grid_threads(g);
    c->iterations = o->iterations;
    c->fmas_per_launch = 0; /* differs per cell: see each row's thread_fmas */
    c->bytes_per_launch = c->threads * (2u * sizeof(float) + 1u);
    c->max_noise = o->max_noise;
    c->budget_ms = o->budget_ms;
    c->min_samples = o->min_samples;
    c->max_samples = o->max_samples;
}

int sortexp_plan(const struct dv_options *o, struct dv_report *r, const char **field, char *err) {
    struct sortexp_grid grid;
    const struct dv_geometry g = scenario_grid(o);
    const unsigned tpb = g.block_x * g.block_y;
    if (field) *field = "scenario";
    if (!sortexp_grid_named(o->scenario, &grid)) {
        dv_seterr(err, "scenario: unknown name '%.40s'", o->scenario);
        return -1;
    }
    const unsigned cells = sortexp_grid_cells(&grid);
    if (r->ntables + cells > DV_MAX_TABLES) {
        dv_seterr(err, "scenario: %u tables do not fit (%u of %d used)", cells, r->ntables, DV_MAX_TABLES);
        return -1;
    }
    if (tpb == 0 || tpb > DV_MAX_THREADS_PER_BLOCK || g.blocks > DV_MAX_BLOCKS) {
        dv_seterr(err, "data-sort: bad geometry %u blocks of %u x %u", g.blocks, g.block_x, g.block_y);
        if (field) *field = g.blocks > DV_MAX_BLOCKS ? "blocks" : "threads_per_block";
        return -1;
    }
    if (field) *field = "";
    struct dv_sort *s = &r->sort;
    memset(s, 0, sizeof *s);
    s->present = 1;
    for (unsigned di = 0; di < grid.ndist; di++)
        for (unsigned mi = 0; mi < grid.nm; mi++)
            for (unsigned ci = 0; ci < grid.nc; ci++) {
                struct dv_sort_cell *cell = &s->cells[s->ncells];
                if (cell_table(grid.dist[di], grid.m[mi], grid.c[ci], o, g.blocks, tpb, &r->tables[r->ntables], cell,
                               err) != 0)
                    return -1;
                cell->table = (int)r->ntables;
                s->ncells++;
                r->ntables++;
            }
    if (!r->config.experiment[0] || strcmp(r->config.experiment, "scenario") == 0) plan_config(o, &g, &r->config);
    sortexp_summarise(s);
    return 0;
}

/* ---- the result ------------------------------------------------------------- */

void sortexp_cell_from_table(const struct dv_table *t, struct dv_sort_cell *cell) {
    const struct dv_row *naive = &t->rows[SORTEXP_ROW_NAIVE], *so = &t->rows[SORTEXP_ROW_SORT];
    if (t->nrows != SORTEXP_NROWS || !naive->measured) return;
    cell->measured = 1;
    cell->ratio = naive->ratio;
    cell->ratio_ci = naive->ratio_ci;
    cell->ratio_level = naive->ratio_level;
    cell->verdict = sortexp_verdict(naive->ratio_ci.lo, naive->ratio_ci.hi);
    cell->index_ratio = t->rows[SORTEXP_ROW_INDEX].ratio;
    cell->sort_ms = so->time_ms.median;
    cell->sort_ci = so->median_ci_ms;
    cell->sort_inside_ms = cell->sort_inside_ci.lo = cell->sort_inside_ci.hi = NAN;
    cell->sort_inside_ratio = cell->sort_inside_ratio_ci.lo = cell->sort_inside_ratio_ci.hi = NAN;
    cell->sort_agrees = 0;
}

void sortexp_cell_inside(struct dv_sort_cell *cell, double median, double lo, double hi, double ratio, double rlo,
                         double rhi, double target) {
    cell->sort_inside_ms = median;
    cell->sort_inside_ci.lo = lo;
    cell->sort_inside_ci.hi = hi;
    cell->sort_inside_ratio = ratio;
    cell->sort_inside_ratio_ci.lo = rlo;
    cell->sort_inside_ratio_ci.hi = rhi;
    cell->sort_agrees =
        isfinite(rlo) && isfinite(rhi) && isfinite(target) && target >= 0 && rlo <= 1.0 + target && rhi >= 1.0 - target;
}

static size_t put(char *buf, size_t len, size_t at, const char *fmt, unsigned a, unsigned b) {
    if (at >= len) return at;
    const int k = snprintf(buf + at, len - at, fmt, a, b);
    return k > 0 ? at + (size_t)k : at;
}

/* Crossover entries for every (distribution, M) of the cells, in their order. */
static void crossovers(struct dv_sort *s) {
    s->ncross = 0;
    for (unsigned i = 0; i < s->ncells; i++) {
        const struct dv_sort_cell *a = &s->cells[i];
        unsigned j = 0;
        while (j < s->ncross && !(s->cross[j].m == a->m && strcmp(s->cross[j].distribution, a->distribution) == 0)) j++;
        if (j < s->ncross || s->ncross >= DV_MAX_TABLES) continue;
        struct dv_sort_crossover *x = &s->cross[s->ncross++];
        memset(x, 0, sizeof *x);
        memcpy(x->distribution, a->distribution, sizeof x->distribution);
        x->m = a->m;
        unsigned c[DV_MAX_TABLES], n = 0;
        int v[DV_MAX_TABLES];
        for (unsigned k = i; k < s->ncells; k++) { /* cells of one (d, M) come in ascending C */
            const struct dv_sort_cell *b = &s->cells[k];
            if (b->m != a->m || strcmp(b->distribution, a->distribution) != 0 || !b->measured) continue;
            c[n] = b->c;
            v[n++] = b->verdict;
            x->ambiguous += b->verdict == 0;
        }
        x->c = sortexp_crossover(c, v, n);
    }
}

void sortexp_summarise(struct dv_sort *s) {
    unsigned measured = 0, ambiguous = 0;
    for (unsigned i = 0; i < s->ncells; i++) {
        measured += s->cells[i].measured;
        ambiguous += s->cells[i].measured && s->cells[i].verdict == 0;
    }
    crossovers(s);
    char *b = s->sentence;
    const size_t len = sizeof s->sentence;
    if (!measured) {
        snprintf(b, len, "Not measured: the crossover needs the GPU's times.");
        return;
    }
    size_t at = (size_t)snprintf(b, len,
                                 "Sorting by material pays where naive / (sort+shade) is above 1 with its "
                                 "interval. Smallest C from which it pays:");
    for (unsigned j = 0; j < s->ncross; j++) {
        const struct dv_sort_crossover *x = &s->cross[j];
        if (j == 0 || strcmp(x->distribution, s->cross[j - 1].distribution) != 0) {
            if (j && at > 0 && at < len && b[at - 1] == ',') b[--at] = '\0'; /* "...,;" reads as ";" */
            at = put(b, len, at, j ? ";" : "", 0, 0);
            if (at < len) at += (size_t)snprintf(b + at, len - at, " %s", x->distribution);
        }
        at = x->c ? put(b, len, at, " M=%u from C=%u,", x->m, x->c) : put(b, len, at, " M=%u never,", x->m, 0);
    }
    if (at > 0 && at < len && b[at - 1] == ',') b[--at] = '\0';
    put(b, len, at, ". %u of %u cells ambiguous (interval straddles 1).", ambiguous, measured);
}

void sortexp_counters_derive(unsigned row, unsigned blocks, double split_per_block, struct dv_counters *c) {
    testimony_counters_derive(c, blocks, split_per_block, 1, 32);
    if (row == SORTEXP_ROW_SORT)
        snprintf(c->verdict, sizeof c->verdict,
                 "CUB's radix sort alone: %.4g warp instructions at %.1f lanes each, %.4g divergent branch targets; "
                 "no shading, so no material splits a warp here",
                 c->inst_executed, c->threads_per_inst, c->branch_targets_divergent);
    else if (row == SORTEXP_ROW_SORT_SHADE) {
        char shade[sizeof c->verdict];
        snprintf(shade, sizeof shade, "%s", c->verdict);
        snprintf(c->verdict, sizeof c->verdict,
                 "CUB's sort kernels counted with the shade (%.1f lanes per instruction "
                 "over both): %.300s",
                 c->threads_per_inst, shade);
    }
}
