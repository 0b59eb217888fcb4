/* scenario.c -- the scenarios' arrangements over a grid, the path-run
 * model and the CPU reference (no GPU; see scenario.h for the model; the
 * scenarios themselves are scenario_table.c's).
 *
 * Each worked case is a 32-lane pattern taken from a worked case of
 * "Worked examples — Warp divergence penalties". The divergent row replicates it in every warp; the baseline row holds the very
 * same multiset of per-thread work, grouped so each warp holds one value
 * (sorted over the grid, or (idx / 32) % 2 for the re-alignment case); the
 * ideal row puts every lane on its warp's longest path, which is what the
 * worked examples' efficiency max/sum is measured against. An experiment's
 * rows vary one thing each (scenario_row(): k, the sides, the variant, the
 * lane pattern). scenario_plan() turns each scenario into a dv_table whose
 * rows carry the model; gpu/scenario_measure.c adds the timings.
 */
#include "kernels/model/model/scenario.h"
#include "kernels/base/hostfma.h"
#include "kernels/model/model/intensity.h"


#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct dv_geometry scenario_grid(const struct dv_options *o) {
    const struct dv_geometry g = {o->blocks ? o->blocks : DV_DEFAULT_BLOCKS,
                                  o->block_x ? o->block_x : DV_DEFAULT_BLOCK_X, o->block_y ? o->block_y : 1u};
    return g;
}

unsigned scenario_unit_fmas(const struct dv_options *o) {
    unsigned it = o && o->iterations ? o->iterations : DV_DEFAULT_ITERATIONS;
    unsigned u = it / SCENARIO_UNIT_DIVISOR / SCENARIO_CHUNK * SCENARIO_CHUNK;
    return u < SCENARIO_CHUNK ? SCENARIO_CHUNK : u;
}

unsigned scenario_short_iterations(const struct scenario *s, const struct dv_options *o) {
    unsigned it = o && o->iterations ? o->iterations : DV_DEFAULT_ITERATIONS;
    if (s && s->short_divisor > 1) it /= s->short_divisor;
    return it < 32u ? 32u : (it + 31u) / 32u * 32u;
}

unsigned scenario_evaluations(const struct scenario *s, const struct dv_options *o) {
    return s->kind == SCENARIO_SHORT ? scenario_short_iterations(s, o) : 1u;
}

void scenario_row(const struct scenario *s, unsigned row, struct scenario *out) {
    *out = *s;
    if (row >= s->nrows) return;
    const struct scenario_row_def *d = &s->rows[row];
    out->k = d->k;
    out->variant = d->variant;
    if (d->lanes) memcpy(out->lane_work, d->lanes, sizeof out->lane_work);
    if (s->kind == SCENARIO_SHORT && d->la && d->lb) {
        out->lengths[1] = d->la;
        out->lengths[0] = d->lb;
    }
    if (s->kind == SCENARIO_MEM) { /* arithmetic intensity: F per L */
        out->lengths[0] = d->la;
        out->lengths[1] = d->lb;
    }
}

unsigned long long scenario_thread_fmas(const struct scenario *s, unsigned w, unsigned unit_fmas,
                                        unsigned short_iters) {
    const unsigned long long u = unit_fmas;
    switch (s->kind) {
    case SCENARIO_KWAY: return (unsigned long long)s->lengths[w % SCENARIO_MAX_PATHS] * u;
    case SCENARIO_LOOP: return (unsigned long long)w * u;
    case SCENARIO_SHORT: {
        /* Pattern w's sides, iteration by iteration. */
        const uint32_t pat = scenario_short_pattern(w);
        unsigned long long per32 = 0;
        for (unsigned j = 0; j < 32u; j++) per32 += s->lengths[(pat >> j) & 1u];
        return per32 * (short_iters / 32u);
    }
    case SCENARIO_MEM: return intensity_thread_fmas(s->variant, s->lengths[0], s->lengths[1]);
    default: break;
    }
    const unsigned v = s->variant;
    const unsigned long long tail = scenario_pair_has_tail(v) ? s->lengths[2] * u : 0;
    if (scenario_pair_loops(v)) return (unsigned long long)w * s->lengths[3] * u + tail;
    if (scenario_pair_returns(v) && w == 0) return s->lengths[0] * u; /* returns before the join */
    return (unsigned long long)s->lengths[w ? 1 : 0] * u + tail;
}

/* ---- arrangements ------------------------------------------------------ */

/* The longest path (k-way) present in a warp's lanes, lowest id on a tie. */
static unsigned longest_path(const struct scenario *s, const uint8_t *lanes, unsigned n) {
    unsigned best = lanes[0];
    for (unsigned i = 1; i < n; i++)
        if (s->lengths[lanes[i]] > s->lengths[best] ||
            (s->lengths[lanes[i]] == s->lengths[best] && lanes[i] < best))
            best = lanes[i];
    return best;
}

int scenario_assign(const struct scenario *s, enum scenario_layout layout, unsigned blocks,
                    unsigned threads_per_block, uint8_t *work, char *err) {
    unsigned long long n = (unsigned long long)blocks * threads_per_block;
    unsigned wpb = (threads_per_block + 31u) / 32u;
    if ((layout == SCENARIO_LAYOUT_LANE_MOD || layout == SCENARIO_LAYOUT_WARP_MOD) &&
        (s->kind != SCENARIO_KWAY || s->k < 1 || s->k > SCENARIO_MAX_PATHS)) {
        dv_seterr(err, "scenario %s: lane %% k and warp %% k rows need k-way paths and k in 1..%u (k %u)", s->name,
                  SCENARIO_MAX_PATHS, s->k);
        return -1;
    }
    switch (layout) {
    case SCENARIO_LAYOUT_LANE_MOD:
        for (unsigned long long i = 0; i < n; i++) work[i] = (uint8_t)((i % threads_per_block) % 32u % s->k);
        return 0;
    case SCENARIO_LAYOUT_WARP_MOD:
        for (unsigned long long i = 0; i < n; i++) {
            const unsigned long long warp = (i / threads_per_block) * wpb + (i % threads_per_block) / 32u;
            work[i] = (uint8_t)(warp % s->k);
        }
        return 0;
    case SCENARIO_LAYOUT_LANES:
    case SCENARIO_LAYOUT_IDEAL:
        for (unsigned long long i = 0; i < n; i++)
            work[i] = s->lane_work[(i % threads_per_block) % 32u];
        if (layout == SCENARIO_LAYOUT_LANES) return 0;
        for (unsigned long long b = 0; b < blocks; b++)
            for (unsigned w = 0; w < wpb; w++) {
                unsigned long long first = b * threads_per_block + w * 32ull;
                const unsigned lanes = dv_warp_lanes(threads_per_block, w);
                uint8_t *p = work + first;
                unsigned v;
                int split = 0;
                for (unsigned l = 1; l < lanes; l++) split |= p[l] != p[0];
                if (!split) continue;
                if (s->kind != SCENARIO_KWAY) {
                    dv_seterr(err, "scenario %s: ideal rows are for k-way scenarios", s->name);
                    return -1;
                }
                v = longest_path(s, p, lanes);
                memset(p, (int)v, lanes);
            }
        return 0;
    case SCENARIO_LAYOUT_SORTED: {
        unsigned long long hist[256] = {0};
        for (unsigned long long i = 0; i < n; i++) hist[s->lane_work[(i % threads_per_block) % 32u]]++;
        unsigned long long i = 0;
        for (unsigned v = 0; v < 256; v++)
            for (unsigned long long k = 0; k < hist[v]; k++) work[i++] = (uint8_t)v;
        return 0;
    }
    case SCENARIO_LAYOUT_WARPS:
        for (unsigned long long i = 0; i < n; i++) {
            unsigned long long warp = (i / threads_per_block) * wpb + (i % threads_per_block) / 32u;
            work[i] = s->lane_work[warp % 32u];
        }
        return 0;
    default:
        dv_seterr(err, "scenario %s: unknown layout %d", s->name, (int)layout);
        return -1;
    }
}

/* ---- model ------------------------------------------------------------- */

/* One warp of `lanes` lanes: issued work, ideal (longest present), useful
 * lane-work (each lane's own), lane FMAs, whether it is split. */
struct warp_cost {
    unsigned long long issued, ideal, useful, fmas;
    int split;
};

/* One warp of the pair kernel, in units: a branch issues each side present
 * (the path-run model), compute-both-then-select both sides whatever its
 * lanes take, a loop its longest trip count of bodies; the tail after the
 * join once (a warp that meets again there), wherever a lane reaches it. */
static void pair_cost(const struct scenario *s, const uint8_t *p, unsigned lanes, struct warp_cost *c) {
    const unsigned v = s->variant, tail = scenario_pair_has_tail(v) ? s->lengths[2] : 0;
    if (scenario_pair_loops(v)) {
        unsigned most = 0;
        for (unsigned l = 0; l < lanes; l++) {
            c->useful += (unsigned long long)p[l] * s->lengths[3] + tail;
            if (p[l] > most) most = p[l];
        }
        c->issued = c->ideal = (unsigned long long)most * s->lengths[3] + tail;
        return;
    }
    int has[2] = {0, 0};
    for (unsigned l = 0; l < lanes; l++) {
        const unsigned side = p[l] ? 1u : 0u;
        has[side] = 1;
        const int returns = scenario_pair_returns(v) && side == 0;
        c->useful += s->lengths[side] + (returns ? 0 : tail);
        const unsigned long long own = s->lengths[side] + (returns ? 0 : tail);
        if (own > c->ideal) c->ideal = own;
    }
    if (v == SCENARIO_PAIR_SELECT) has[0] = has[1] = 1;
    c->issued = (has[0] ? s->lengths[0] : 0) + (has[1] ? s->lengths[1] : 0);
    if (tail && (!scenario_pair_returns(v) || has[1])) c->issued += tail;
}

/* An arithmetic-intensity warp: paths A and B of equal FMAs (a ridge row's
 * one path whatever its lanes hold), issued one after the other where the
 * warp holds both; its work in FMAs. */
static void mem_cost(const struct scenario *s, const uint8_t *p, unsigned lanes, struct warp_cost *c) {
    const unsigned long long f = intensity_thread_fmas(s->variant, s->lengths[0], s->lengths[1]);
    const int one = s->variant == INTENSITY_RIDGE_BANDWIDTH || s->variant == INTENSITY_RIDGE_FMA;
    int has[2] = {0, 0};
    for (unsigned l = 0; l < lanes; l++) has[one ? 0 : p[l] ? 1 : 0] = 1;
    if (one) c->split = 0;
    c->issued = (unsigned long long)(has[0] + has[1]) * f;
    c->ideal = f;
    c->useful = c->fmas = (unsigned long long)lanes * f;
}

static void warp_cost(const struct scenario *s, const uint8_t *p, unsigned lanes, unsigned unit_fmas,
                      unsigned short_iters, struct warp_cost *c) {
    memset(c, 0, sizeof *c);
    for (unsigned l = 1; l < lanes; l++) c->split |= p[l] != p[0];
    switch (s->kind) {
    case SCENARIO_KWAY: {
        uint32_t present = 0;
        for (unsigned l = 0; l < lanes; l++) {
            present |= 1u << p[l];
            c->useful += s->lengths[p[l]];
        }
        for (unsigned q = 0; q < SCENARIO_MAX_PATHS; q++)
            if (present & (1u << q)) {
                c->issued += s->lengths[q];
                if (s->lengths[q] > c->ideal) c->ideal = s->lengths[q];
            }
        c->fmas = c->useful * unit_fmas;
        break;
    }
    case SCENARIO_LOOP:
        for (unsigned l = 0; l < lanes; l++) {
            c->useful += p[l];
            if (p[l] > c->issued) c->issued = p[l];
        }
        c->ideal = c->issued;
        c->fmas = c->useful * unit_fmas;
        break;
    case SCENARIO_SHORT: {
        unsigned long long per32 = 0, ideal32 = 0, useful32 = 0;
        for (unsigned j = 0; j < 32u; j++) {
            int has[2] = {s->predicated, s->predicated};
            for (unsigned l = 0; l < lanes; l++) {
                unsigned side = (scenario_short_pattern(p[l]) >> j) & 1u;
                has[side] = 1;
                useful32 += s->lengths[side];
            }
            unsigned long long sum = 0, mx = 0;
            for (unsigned side = 0; side < 2; side++)
                if (has[side]) {
                    sum += s->lengths[side];
                    if (s->lengths[side] > mx) mx = s->lengths[side];
                }
            per32 += sum;
            ideal32 += mx;
        }
        unsigned long long rounds = short_iters / 32u;
        c->issued = per32 * rounds;
        c->ideal = ideal32 * rounds;
        c->useful = useful32 * rounds;
        c->fmas = c->useful;
        for (unsigned l = 1; l < lanes && !c->split; l++)
            c->split = scenario_short_pattern(p[l]) != scenario_short_pattern(p[0]);
        break;
    }
    case SCENARIO_PAIR:
        pair_cost(s, p, lanes, c);
        c->fmas = c->useful * unit_fmas;
        break;
    case SCENARIO_MEM: mem_cost(s, p, lanes, c); break;
    }
}

static unsigned heaviest_value(const struct scenario *s) {
    const int by_length = s->kind == SCENARIO_KWAY || (s->kind == SCENARIO_PAIR && !scenario_pair_loops(s->variant));
    unsigned best = s->lane_work[0];
    for (unsigned l = 1; l < 32; l++) {
        unsigned v = s->lane_work[l];
        unsigned lv = by_length ? s->lengths[v % SCENARIO_MAX_PATHS] : v;
        unsigned lb = by_length ? s->lengths[best % SCENARIO_MAX_PATHS] : best;
        if (lv > lb) best = v;
    }
    return best;
}

void scenario_model(const struct scenario *s, const uint8_t *work, unsigned blocks,
                    unsigned threads_per_block, unsigned unit_fmas, unsigned short_iters,
                    struct scenario_model *m, struct dv_row *row) {
    unsigned wpb = (threads_per_block + 31u) / 32u;
    unsigned heavy = heaviest_value(s);
    memset(m, 0, sizeof *m);
    row->warps_per_block = wpb;
    row->threads_per_block = threads_per_block;
    memset(&row->warps_split, 0, sizeof row->warps_split);
    memset(&row->threads_on_a, 0, sizeof row->threads_on_a);
    memset(&row->path_runs, 0, sizeof row->path_runs);
    for (unsigned b = 0; b < blocks; b++) {
        unsigned long long issued_b = 0;
        unsigned split_b = 0, on_a = 0;
        for (unsigned w = 0; w < wpb; w++) {
            unsigned long long first = (unsigned long long)b * threads_per_block + w * 32ull;
            const unsigned lanes = dv_warp_lanes(threads_per_block, w);
            const uint8_t *p = work + first;
            struct warp_cost c;
            warp_cost(s, p, lanes, unit_fmas, short_iters, &c);
            m->issued += c.issued;
            m->ideal += c.ideal;
            m->useful_lanes += c.useful;
            m->issued_lanes += (unsigned long long)lanes * c.issued;
            m->thread_fmas += c.fmas;
            issued_b += c.issued;
            split_b += c.split ? 1u : 0u;
            for (unsigned l = 0; l < lanes; l++) {
                m->hist[p[l]]++;
                on_a += p[l] == heavy;
            }
        }
        dv_count_add(&row->warps_split, split_b, b == 0);
        dv_count_add(&row->threads_on_a, on_a, b == 0);
        dv_count_add(&row->path_runs, issued_b, b == 0);
    }
    dv_count_finish(&row->warps_split, blocks);
    dv_count_finish(&row->threads_on_a, blocks);
    dv_count_finish(&row->path_runs, blocks);
    if (s->kind == SCENARIO_LOOP || (s->kind == SCENARIO_PAIR && scenario_pair_loops(s->variant)))
        m->efficiency = m->issued_lanes ? (double)m->useful_lanes / (double)m->issued_lanes : NAN;
    else
        m->efficiency = m->issued ? (double)m->ideal / (double)m->issued : NAN;
}

double scenario_warp_efficiency(const struct scenario *s, const uint8_t lanes[32]) {
    struct warp_cost c;
    warp_cost(s, lanes, 32u, SCENARIO_DEFAULT_UNIT, 32u, &c);
    if (s->kind == SCENARIO_LOOP || (s->kind == SCENARIO_PAIR && scenario_pair_loops(s->variant)))
        return c.issued ? (double)c.useful / (32.0 * (double)c.issued) : NAN;
    return c.issued ? (double)c.ideal / (double)c.issued : NAN;
}

/* ---- CPU reference ----------------------------------------------------- */

/* `n` FMAs x = fma(x, a, b). */
DV_FMA_CLONES static float chain(float x, float a, float b, unsigned long long n) {
    for (unsigned long long i = 0; i < n; i++) x = fmaf(x, a, b);
    return x;
}

/* The pair kernel's thread of work value `w`: its side's chain (A, k-way
 * path 0's constants, or B, path 1's; compute-both-then-select keeps the
 * same one) or its trips of the loop's body, then the tail (path 2's) where
 * the variant has one and the thread reaches the join. */
DV_FMA_CLONES static float pair_reference(const struct scenario *s, float x, unsigned w, unsigned unit_fmas) {
    const unsigned v = s->variant;
    const unsigned long long u = unit_fmas;
    if (scenario_pair_loops(v)) {
        x = chain(x, SCENARIO_LOOP_A, SCENARIO_LOOP_B, (unsigned long long)(w ? w : 1u) * s->lengths[3] * u);
    } else {
        const unsigned side = w ? 1u : 0u;
        x = chain(x, scenario_kway_a(side), scenario_kway_b(side), s->lengths[side] * u);
        if (scenario_pair_returns(v) && side == 0) return x;
    }
    if (scenario_pair_has_tail(v)) x = chain(x, scenario_kway_a(2), scenario_kway_b(2), s->lengths[2] * u);
    return x;
}

DV_FMA_CLONES
float scenario_reference(const struct scenario *s, float x, unsigned w, unsigned unit_fmas,
                         unsigned short_iters) {
    switch (s->kind) {
    case SCENARIO_KWAY: {
        const float a = scenario_kway_a(w), b = scenario_kway_b(w);
        unsigned long long n = (unsigned long long)s->lengths[w] * unit_fmas;
        for (unsigned long long i = 0; i < n; i++) x = fmaf(x, a, b);
        return x;
    }
    case SCENARIO_LOOP: {
        unsigned long long n = (unsigned long long)w * unit_fmas;
        for (unsigned long long i = 0; i < n; i++) x = fmaf(x, SCENARIO_LOOP_A, SCENARIO_LOOP_B);
        return x;
    }
    case SCENARIO_SHORT: {
        uint32_t pat = scenario_short_pattern(w);
        for (unsigned r = 0; r < short_iters / 32u; r++)
            for (unsigned k = 0; k < 32u; k++) {
                unsigned side = (pat >> k) & 1u;
                x = scenario_short_side(x, side, s->lengths[side]);
            }
        return x;
    }
    case SCENARIO_MEM: return intensity_reference(s->variant, s->lengths[0], s->lengths[1], x, w);
    default: return pair_reference(s, x, w, unit_fmas);
    }
}

/* Work values of one fill: those of `work` not yet computed, ascending. */
static unsigned refs_wanted(const struct scenario_refs *r, const uint8_t *work, unsigned long long threads,
                            unsigned char *list) {
    unsigned char seen[256] = {0};
    for (unsigned long long i = 0; i < threads; i++) seen[work[i]] = 1;
    unsigned n = 0;
    for (unsigned w = 0; w < 256; w++)
        if (seen[w] && !r->have[w]) list[n++] = (unsigned char)w;
    return n;
}

/* One thread's share of a fill: input values [x0, x1) for the `n` work
 * values `list` (ascending). Each value is scenario_reference()'s chain for
 * its input, step for step; the inputs' chains run side by side (one step
 * of every input, then the next), so the host's multiply-add units have
 * independent work instead of waiting for one chain's last result. A loop's
 * trip counts share one chain per input: w trips are the first w x unit
 * multiply-adds of every longer count, so the chain is carried from one
 * count to the next. */
struct refs_part {
    struct scenario_refs *r;
    const unsigned char *list;
    unsigned n, x0, x1;
};

DV_FMA_CLONES static void *refs_part_main(void *p) {
    const struct refs_part *t = p;
    const struct scenario_refs *r = t->r;
    const struct scenario *s = &r->s;
    const unsigned nv = t->x1 - t->x0;
    float y[DV_INPUT_DISTINCT];
    for (unsigned v = 0; v < nv; v++) y[v] = dv_input_value(t->x0 + v);
    unsigned long long done = 0; /* a loop's trips run so far */
    for (unsigned k = 0; k < t->n; k++) {
        const unsigned w = t->list[k];
        if (s->kind == SCENARIO_PAIR || s->kind == SCENARIO_MEM) { /* one input after the other */
            for (unsigned v = 0; v < nv; v++)
                y[v] = scenario_reference(s, dv_input_value(t->x0 + v), w, r->unit_fmas, r->short_iters);
        } else if (s->kind == SCENARIO_LOOP) {
            for (const unsigned long long upto = (unsigned long long)w * r->unit_fmas; done < upto; done++)
                for (unsigned v = 0; v < nv; v++) y[v] = fmaf(y[v], SCENARIO_LOOP_A, SCENARIO_LOOP_B);
        } else {
            for (unsigned v = 0; v < nv; v++) y[v] = dv_input_value(t->x0 + v);
            if (s->kind == SCENARIO_KWAY) {
                const float a = scenario_kway_a(w), b = scenario_kway_b(w);
                const unsigned long long steps = (unsigned long long)s->lengths[w] * r->unit_fmas;
                for (unsigned long long i = 0; i < steps; i++)
                    for (unsigned v = 0; v < nv; v++) y[v] = fmaf(y[v], a, b);
            } else {
                const uint32_t pat = scenario_short_pattern(w);
                for (unsigned it = 0; it < r->short_iters / 32u; it++)
                    for (unsigned b = 0; b < 32u; b++) {
                        const unsigned side = (pat >> b) & 1u, len = s->lengths[side];
                        for (unsigned v = 0; v < nv; v++) y[v] = scenario_short_side(y[v], side, len);
                    }
            }
        }
        for (unsigned v = 0; v < nv; v++) r->values[(size_t)(t->x0 + v) * 256u + w] = y[v];
    }
    return NULL;
}

int scenario_refs_init(struct scenario_refs *r, const struct scenario *s, unsigned unit_fmas, unsigned short_iters,
                       char *err) {
    memset(r, 0, sizeof *r);
    if (!(r->values = malloc(sizeof(float) * DV_INPUT_DISTINCT * 256u))) {
        dv_seterr(err, "scenario check: out of memory");
        return -1;
    }
    r->s = *s;
    r->unit_fmas = unit_fmas;
    r->short_iters = short_iters;
    return 0;
}

void scenario_refs_free(struct scenario_refs *r) {
    free(r->values);
    r->values = NULL;
}

void scenario_refs_fill(struct scenario_refs *r, const uint8_t *work, unsigned long long threads, unsigned nthreads) {
    unsigned char list[256];
    const unsigned n = refs_wanted(r, work, threads, list);
    if (n == 0) return;
    if (nthreads < 1) nthreads = 1;
    if (nthreads > SCENARIO_REFS_MAX_THREADS) nthreads = SCENARIO_REFS_MAX_THREADS;
    struct refs_part parts[SCENARIO_REFS_MAX_THREADS];
    pthread_t tid[SCENARIO_REFS_MAX_THREADS];
    int started[SCENARIO_REFS_MAX_THREADS] = {0};
    for (unsigned k = 0; k < nthreads; k++) {
        parts[k] = (struct refs_part){r, list, n, (unsigned)((unsigned long long)DV_INPUT_DISTINCT * k / nthreads),
                                      (unsigned)((unsigned long long)DV_INPUT_DISTINCT * (k + 1) / nthreads)};
        /* The first share runs here; a thread that does not start runs here too. */
        started[k] = k > 0 && pthread_create(&tid[k], NULL, refs_part_main, &parts[k]) == 0;
    }
    for (unsigned k = 0; k < nthreads; k++)
        if (!started[k]) refs_part_main(&parts[k]);
    for (unsigned k = 0; k < nthreads; k++)
        if (started[k]) pthread_join(tid[k], NULL);
    for (unsigned k = 0; k < n; k++) r->have[list[k]] = 1;
}

void scenario_refs_check(const struct scenario_refs *r, const uint8_t *work, unsigned long long threads,
                         const float *got, struct dv_check *c) {
    dv_check_init(c);
    unsigned v = 0; /* i % DV_INPUT_DISTINCT */
    for (unsigned long long i = 0; i < threads; i++) {
        dv_check_add(c, i, r->values[(size_t)v * 256u + work[i]], got[i]);
        if (++v == DV_INPUT_DISTINCT) v = 0;
    }
    c->ok = c->mismatches == 0 && c->checked == threads;
}

int scenario_check(const struct scenario *s, const uint8_t *work, unsigned long long threads,
                   unsigned unit_fmas, unsigned short_iters, const float *got,
                   struct dv_check *c, char *err) {
    struct scenario_refs r;
    if (scenario_refs_init(&r, s, unit_fmas, short_iters, err) != 0) return -1;
    scenario_refs_fill(&r, work, threads, 1);
    scenario_refs_check(&r, work, threads, got, c);
    scenario_refs_free(&r);
    return 0;
}

/* ---- planning ---------------------------------------------------------- */

static const char *kind_name(enum scenario_kind kind) {
    switch (kind) {
    case SCENARIO_KWAY: return "kway";
    case SCENARIO_LOOP: return "loop";
    case SCENARIO_SHORT: return "short-ifelse";
    case SCENARIO_MEM: return "memory";
    default: return "pair";
    }
}

const char *scenario_kernel_name(const struct scenario *s) {
    return kind_name(s->kind);
}

/* The row of `s` named `name`, or -1. */
static int row_named(const struct scenario *s, const char *name) {
    for (unsigned r = 0; name && r < s->nrows; r++)
        if (strcmp(s->rows[r].name, name) == 0) return (int)r;
    return -1;
}

/* Whether rows a and b (their scenario_row()s and models) give their
 * threads the same multiset of FMAs: the per-thread work by work value,
 * regrouped by what each value costs a thread. */
static int same_work(const struct scenario *ra, const struct scenario_model *ma, const struct scenario *rb,
                     const struct scenario_model *mb, unsigned unit, unsigned iters) {
    struct cost {
        unsigned long long fmas, threads;
    } ca[256], cb[256];
    unsigned na = 0, nb = 0;
    for (unsigned w = 0; w < 256; w++) {
        if (ma->hist[w]) ca[na++] = (struct cost){scenario_thread_fmas(ra, w, unit, iters), ma->hist[w]};
        if (mb->hist[w]) cb[nb++] = (struct cost){scenario_thread_fmas(rb, w, unit, iters), mb->hist[w]};
    }
    /* Each side's threads by their FMAs, as a sum of threads per distinct value. */
    for (unsigned i = 0; i < na; i++) {
        unsigned long long want = 0, got = 0;
        for (unsigned j = 0; j < na; j++) want += ca[j].fmas == ca[i].fmas ? ca[j].threads : 0;
        for (unsigned j = 0; j < nb; j++) got += cb[j].fmas == ca[i].fmas ? cb[j].threads : 0;
        if (want != got) return 0;
    }
    unsigned long long ta = 0, tb = 0;
    for (unsigned i = 0; i < na; i++) ta += ca[i].threads;
    for (unsigned i = 0; i < nb; i++) tb += cb[i].threads;
    return ta == tb;
}

/* Row `r`'s reference: the row its `versus` names, else the baseline. */
static unsigned reference_of(const struct scenario *s, unsigned r) {
    const int v = row_named(s, s->rows[r].versus);
    return v >= 0 ? (unsigned)v : s->baseline;
}

/* Why row `r` is or is not comparable with its reference `ref`. */
static void comparable_text(const struct scenario *s, unsigned r, unsigned ref, struct dv_row *row) {
    char *why = row->comparable_reason;
    const size_t len = sizeof row->comparable_reason;
    if (r == ref) snprintf(why, len, r == s->baseline ? "the baseline" : "its own reference: compared with no row");
    else if (row->comparable) snprintf(why, len, "same multiset of per-thread work as %s", s->rows[ref].name);
    else if (s->rows[r].layout == SCENARIO_LAYOUT_IDEAL)
        snprintf(why, len, "more work: every lane runs its warp's longest path");
    else if (s->experiment) snprintf(why, len, "different work per thread from %s", s->rows[ref].name);
    else snprintf(why, len, "different work: this grid does not split into whole warps the same way");
}

/* Each row of `t` against its reference row's model (`m`, one per row;
 * `rs` the rows' scenario_row()s): the predicted ratio, whether it does the
 * same work and why, and its note. */
static void compare_rows(const struct scenario *s, const struct scenario *rs, const struct scenario_model *m,
                         unsigned blocks, unsigned unit, unsigned iters, struct dv_table *t) {
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_row *row = &t->rows[r];
        const unsigned ref = reference_of(s, r);
        const struct scenario_model *b = &m[ref];
        row->versus = ref != s->baseline ? ref + 1 : 0;
        row->predicted_ratio = b->issued ? (double)m[r].issued / (double)b->issued : NAN;
        /* The ideal row is the worked examples' reference time, never a
         * same-work comparison (with equal paths it does the same FMAs). */
        row->comparable =
            s->rows[r].layout != SCENARIO_LAYOUT_IDEAL && same_work(&rs[r], &m[r], &rs[ref], b, unit, iters);
        if (s->kind == SCENARIO_SHORT)
            row->predicted_efficiency = m[r].issued ? (double)b->issued / (double)m[r].issued : NAN;
        comparable_text(s, r, ref, row);
        if (r == 0 && !s->experiment)
            snprintf(row->note, sizeof row->note,
                     "%s; issued %.4g vs %.4g per block (%s): model ratio %.3f, lane use %.1f%%",
                     s->note, (double)m[r].issued / blocks, (double)b->issued / blocks,
                     s->kind == SCENARIO_KWAY ? "units"
                     : s->kind == SCENARIO_LOOP ? "warp-iterations" : "side FMAs",
                     row->predicted_ratio,
                     m[r].issued_lanes ? 100.0 * m[r].useful_lanes / m[r].issued_lanes : 0.0);
        else if (r == ref && r == s->baseline && !s->experiment)
            snprintf(row->note, sizeof row->note,
                     "the warp-uniform version of the same work (unit = %u FMAs)", unit);
        else if (r == ref)
            snprintf(row->note, sizeof row->note, "issues %.4g %s per block, %.1f%% of its lanes' issue slots used",
                     (double)m[r].issued / blocks, s->kind == SCENARIO_SHORT ? "side FMAs" : "units",
                     m[r].issued_lanes ? 100.0 * m[r].useful_lanes / m[r].issued_lanes : 0.0);
        else
            snprintf(row->note, sizeof row->note, "model ratio %.3f against %s", row->predicted_ratio,
                     s->rows[ref].name);
    }
}

/* An arithmetic-intensity row's point (row->thread_fmas already set; the
 * grid's `threads`): its variant, F and L, its intensity, the FLOPs and
 * bytes of one launch; the measured figures NaN until intensity_derive(). */
static void intensity_point(const struct scenario *rs, unsigned long long threads, struct dv_row *row) {
    struct dv_intensity *m = &row->intensity;
    const int ridge = rs->variant == INTENSITY_RIDGE_BANDWIDTH || rs->variant == INTENSITY_RIDGE_FMA;
    memset(m, 0, sizeof *m);
    m->present = 1;
    snprintf(m->variant, sizeof m->variant, "%s", intensity_variant_name(rs->variant));
    snprintf(row->point.variant, sizeof row->point.variant, "%s", m->variant);
    m->fmas = ridge ? 0 : rs->lengths[0];
    m->loads = ridge ? 0 : rs->lengths[1];
    m->intensity = ridge ? NAN : intensity_nominal(rs->lengths[0], rs->lengths[1]);
    m->flops = 2.0 * (double)row->thread_fmas;
    m->bytes = (double)threads * intensity_thread_bytes(rs->variant);
    m->flop_rate = m->bandwidth_gbs = m->dram_gbs = m->dram_intensity = m->roofline = m->roofline_fraction = NAN;
}

/* Row `r`'s point: what it varies (an experiment's row), and its place in
 * the table's fit. */
static void row_point(const struct scenario *s, const struct scenario *rs, unsigned r, struct dv_row *row) {
    static const char *const layouts[] = {
        [SCENARIO_LAYOUT_LANES] = "lanes",       [SCENARIO_LAYOUT_SORTED] = "sorted",
        [SCENARIO_LAYOUT_WARPS] = "warps",       [SCENARIO_LAYOUT_IDEAL] = "ideal",
        [SCENARIO_LAYOUT_LANE_MOD] = "lane-mod", [SCENARIO_LAYOUT_WARP_MOD] = "warp-mod"};
    static const char *const variants[SCENARIO_PAIR_VARIANTS] = {"branch",       "select",           "ifelse",
                                                                 "ifelse-sync",  "loop-break",       "loop-break-sync",
                                                                 "early-return", "early-return-sync"};
    const struct scenario_row_def *d = &s->rows[r];
    row->fit_x = NAN;
    if (!s->experiment) return;
    struct dv_point *p = &row->point;
    snprintf(p->arrangement, sizeof p->arrangement, "%s", layouts[d->layout]);
    p->k = d->k;
    if (s->kind == SCENARIO_SHORT) {
        p->la = rs->lengths[1];
        p->lb = rs->lengths[0];
    }
    if (s->kind == SCENARIO_PAIR && d->variant < SCENARIO_PAIR_VARIANTS)
        snprintf(p->variant, sizeof p->variant, "%s", variants[d->variant]);
    row->in_fit = d->fit;
    row->fit_x = d->fit ? (double)d->k : NAN;
}

/* The table's frame: its id, title, kernel, baseline, target. */
static void table_frame(const struct scenario *s, const struct dv_options *o, struct dv_table *t) {
    memset(t, 0, sizeof *t);
    snprintf(t->id, sizeof t->id, "scenario:%s", s->name);
    if (s->experiment) snprintf(t->title, sizeof t->title, "%s (experiment %s)", s->title, s->cell);
    else snprintf(t->title, sizeof t->title, "%s (worked case %s)", s->title, s->cell);
    snprintf(t->kernel, sizeof t->kernel, "%s", kind_name(s->kind));
    snprintf(t->baseline, sizeof t->baseline, "%s", s->rows[s->baseline].name);
    snprintf(t->experiment, sizeof t->experiment, "%s", s->experiment ? s->experiment : "");
    if (s->experiment && strcmp(s->experiment, "k-paths") == 0) snprintf(t->fit.x, sizeof t->fit.x, "k");
    t->baseline_row = (int)s->baseline;
    t->nrows = s->nrows;
    t->noise_limit = t->halfwidth_target = o->max_noise;
    t->worst_row = -1;
    t->cost_witness_ms = t->cost_counters_ms = NAN;
}

int scenario_build_table(const struct scenario *s, const struct dv_options *o, struct dv_table *t,
                         uint8_t **works, const char **field, char *err) {
    const struct dv_geometry g = scenario_grid(o);
    const unsigned blocks = g.blocks, bx = g.block_x, by = g.block_y;
    unsigned tpb = bx * by;
    unsigned unit = scenario_unit_fmas(o), iters = scenario_short_iterations(s, o);
    unsigned long long n = (unsigned long long)blocks * tpb;
    struct scenario_model *m = NULL;
    struct scenario *rs = NULL;
    uint8_t *work = NULL;
    int rc = -1;

    if (field) *field = "";
    if (tpb == 0 || tpb > DV_MAX_THREADS_PER_BLOCK || blocks > DV_MAX_BLOCKS) {
        dv_seterr(err, "scenario %s: bad geometry %u blocks of %u x %u", s->name, blocks, bx, by);
        if (field) *field = blocks > DV_MAX_BLOCKS ? "blocks" : "threads_per_block";
        return -1;
    }
    m = calloc(s->nrows, sizeof *m);
    rs = calloc(s->nrows, sizeof *rs);
    if (!m || !rs) {
        dv_seterr(err, "scenario %s: out of memory", s->name);
        goto cleanup;
    }
    table_frame(s, o, t);
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_row *row = &t->rows[r];
        scenario_row(s, r, &rs[r]);
        work = malloc(n ? n : 1);
        if (!work) {
            dv_seterr(err, "scenario %s: out of memory for %llu threads", s->name, n);
            goto cleanup;
        }
        if (scenario_assign(&rs[r], s->rows[r].layout, blocks, tpb, work, err) != 0) goto cleanup;
        snprintf(row->name, sizeof row->name, "%s", s->rows[r].name);
        snprintf(row->label, sizeof row->label, "%s", s->rows[r].label);
        row->kernel = DV_KERNEL_SCENARIO;
        row->mode = DV_MODE_NONE;
        scenario_model(&rs[r], work, blocks, tpb, unit, iters, &m[r], row);
        row->thread_fmas = m[r].thread_fmas;
        row->predicted_efficiency = m[r].efficiency;
        row->measured_efficiency = NAN;
        row->agreement = NAN;
        row->ratio = NAN;
        row->floor_fraction = NAN;
        row_point(s, &rs[r], r, row);
        if (s->kind == SCENARIO_MEM) intensity_point(&rs[r], n, row);
        if (works) works[r] = work;
        else free(work);
        work = NULL;
    }
    compare_rows(s, rs, m, blocks, unit, iters, t);
    rc = 0;
cleanup:
    free(work);
    free(m);
    free(rs);
    if (rc != 0 && works)
        for (unsigned r = 0; r < s->nrows; r++) {
            free(works[r]);
            works[r] = NULL;
        }
    return rc;
}
