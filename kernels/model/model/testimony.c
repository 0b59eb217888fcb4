/* testimony.c -- the witness against the model, and the counters derived
 * (testimony.h).
 *
 * The model's record is built in exactly the shape the witness kernel writes
 * (one dv_witness_block per block), so agreement is a plain block-by-block
 * comparison and a disagreement can name its block.
 *
 * The period of a grid's per-thread values (which blocks the counter pass
 * may leave out) is found on a 64-bit digest per block: the smallest period
 * of the digest sequence (Knuth-Morris-Pratt's failure function, linear in
 * the blocks), then confirmed value by value, so a digest collision can only
 * cost a shorter grid, never give a wrong one.
 */
#include "kernels/model/model/testimony.h"
#include "kernels/model/model/analysis.h"
#include "kernels/model/model/experiment.h"

#include "kernels/base/fnv.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_run(struct dv_witness_block *b, unsigned path, unsigned active, unsigned width,
                    unsigned long long times) {
    if (active == 0) return;
    b->runs[path] += times;
    if (active < width) b->split[path] += times;
    b->lanes[path] += times * active;
    b->hist[path][active] += (unsigned)times;
}

void testimony_expect_mask(const uint32_t *mask, const struct dv_geometry *g, unsigned long long times,
                           struct dv_witness_block *exp) {
    const unsigned tpb = g->block_x * g->block_y;
    const unsigned wpb = (tpb + 31u) / 32u;
    for (unsigned b = 0; b < g->blocks; b++) {
        for (unsigned w = 0; w < wpb; w++) {
            const unsigned width = dv_warp_lanes(tpb, w);
            const unsigned long long first = (unsigned long long)b * tpb + w * 32ull;
            unsigned on_a = 0;
            if (width == 32u && (first & 31u) == 0) { /* the warp is one word of the mask */
                on_a = (unsigned)__builtin_popcount(mask[first >> 5]);
            } else {
                for (unsigned l = 0; l < width; l++) {
                    const unsigned long long i = first + l;
                    on_a += (mask[i >> 5] >> (i & 31u)) & 1u;
                }
            }
            add_run(&exp[b], 0, on_a, width, times);
            add_run(&exp[b], 1, width - on_a, width, times);
        }
    }
}

int testimony_expect_lesson(const struct dv_row *row, const struct dv_geometry *g, unsigned iterations,
                            const uint32_t *mask0, struct dv_witness_block *exp, char *err) {
    struct predicate p;
    if (experiment_row_predicate(row, &p, err) != 0) return -1;
    memset(exp, 0, sizeof(*exp) * g->blocks);
    /* A row evaluating its branch every iteration: the built-in modes repeat
     * every 32 phases, so phase k's mask is phase (k % 32)'s, counted once
     * per iteration that has it. A one-branch row is phase 0, once. */
    const unsigned evaluations = experiment_row_evaluations(row, iterations);
    const unsigned phases = evaluations < 32u ? evaluations : 32u;
    /* A predicate that does not read blockIdx.x gives every block block 0's
     * record: build one and copy it. */
    const int per_block = predicate_reads_block(&p);
    const struct dv_geometry one = {1, g->block_x, g->block_y};
    const struct dv_geometry *eg = per_block ? g : &one;
    int rc = 0;
    if (per_block && phases == 1 && mask0) { /* the caller's mask of the whole grid: nothing to build */
        testimony_expect_mask(mask0, g, evaluations, exp);
        predicate_cleanup(&p);
        return 0;
    }
    for (unsigned ph = 0; ph < phases && rc == 0; ph++) {
        const unsigned long long times = evaluations / 32u + (ph < evaluations % 32u);
        uint32_t *mask = analysis_mask_build(&p, eg, ph, err);
        if (!mask) {
            rc = -1;
            break;
        }
        testimony_expect_mask(mask, eg, times, exp);
        free(mask);
    }
    predicate_cleanup(&p);
    for (unsigned b = 1; rc == 0 && !per_block && b < g->blocks; b++) exp[b] = exp[0];
    return rc;
}

void testimony_expect_scenario(const struct scenario *s, const uint8_t *work, unsigned blocks,
                               unsigned threads_per_block, unsigned short_iters, struct dv_witness_block *exp) {
    const unsigned tpb = threads_per_block;
    const unsigned wpb = (tpb + 31u) / 32u;
    memset(exp, 0, sizeof(*exp) * blocks);
    for (unsigned b = 0; b < blocks; b++) {
        for (unsigned w = 0; w < wpb; w++) {
            const unsigned width = dv_warp_lanes(tpb, w);
            const uint8_t *p = work + (unsigned long long)b * tpb + w * 32ull;
            if (s->kind == SCENARIO_KWAY) {
                unsigned count[SCENARIO_MAX_PATHS] = {0};
                for (unsigned l = 0; l < width; l++) count[p[l] % SCENARIO_MAX_PATHS]++;
                for (unsigned q = 0; q < SCENARIO_MAX_PATHS; q++) add_run(&exp[b], 0, count[q], width, 1);
            } else if ((s->kind == SCENARIO_PAIR && !scenario_pair_loops(s->variant)) || s->kind == SCENARIO_MEM) {
                /* Side 0 on path A, side 1 on B; compute-both-then-select
                 * records both, with every lane, in every warp. An
                 * arithmetic-intensity row the same (a ridge row's lanes
                 * all hold 0: one path). */
                unsigned ones = 0;
                for (unsigned l = 0; l < width; l++) ones += p[l] != 0;
                const int both = s->kind == SCENARIO_PAIR && s->variant == SCENARIO_PAIR_SELECT;
                add_run(&exp[b], 0, both ? width : width - ones, width, 1);
                add_run(&exp[b], 1, both ? width : ones, width, 1);
            } else if (s->kind == SCENARIO_LOOP || s->kind == SCENARIO_PAIR) {
                unsigned most = 0;
                for (unsigned l = 0; l < width; l++)
                    if (p[l] > most) most = p[l];
                for (unsigned j = 0; j < most; j++) {
                    unsigned active = 0;
                    for (unsigned l = 0; l < width; l++) active += p[l] > j;
                    add_run(&exp[b], 0, active, width, 1);
                }
            } else {
                const unsigned long long rounds = short_iters / 32u;
                for (unsigned j = 0; j < 32u; j++) {
                    unsigned ones = 0;
                    for (unsigned l = 0; l < width; l++) ones += (scenario_short_pattern(p[l]) >> j) & 1u;
                    add_run(&exp[b], 0, ones, width, rounds);
                    add_run(&exp[b], 1, width - ones, width, rounds);
                }
            }
        }
    }
}

/* The blocks of a grid of `blocks` that block b < `launched` stands for
 * (b, b + launched, ...): block b' takes the records of b' mod launched. */
static unsigned long long stands_for(unsigned b, unsigned launched, unsigned blocks) {
    return (unsigned long long)(blocks / launched) + (b < blocks % launched);
}

/* How the launched blocks stand for the grid: by period (block b for the
 * blocks b mod launched), or by a stand-in's weights and sources. */
struct standing {
    unsigned launched, blocks;
    const struct testimony_grid *g; /* NULL: by period */
    const unsigned *src;
};

static unsigned long long standing_weight(const struct standing *st, unsigned b) {
    return st->g ? (unsigned long long)testimony_grid_weight_of(st->g, b) : stands_for(b, st->launched, st->blocks);
}

static void observe(const struct dv_witness_block *seen, const struct dv_witness_block *exp,
                    const struct standing *st, unsigned warps_per_block, unsigned per, struct dv_observed *o) {
    const unsigned launched = st->launched, blocks = st->blocks;
    memset(o, 0, sizeof *o);
    o->present = 1;
    o->per = per ? per : 1u;
    o->first_difference = -1;
    int every_warp_both_full = blocks > 0;
    unsigned long long exp_runs = 0;
    unsigned differs = 0; /* the launched block of the first difference */
    for (unsigned b = 0; b < launched; b++) {
        const struct dv_witness_block *s = &seen[b];
        const unsigned long long w = standing_weight(st, b);
        for (unsigned p = 0; p < DV_WITNESS_PATHS; p++) {
            o->runs[p] += w * s->runs[p];
            o->split[p] += w * s->split[p];
            o->lanes[p] += w * s->lanes[p];
            for (unsigned k = 0; k < DV_WITNESS_BINS; k++) o->hist[p][k] += w * s->hist[p][k];
            exp_runs += exp ? w * exp[b].runs[p] : 0;
        }
        const unsigned long long runs = (s->runs[0] + s->runs[1]) / o->per;
        const unsigned long long split = (s->split[0] > s->split[1] ? s->split[0] : s->split[1]) / o->per;
        dv_count_add(&o->path_runs, runs, b == 0);
        dv_count_add(&o->split_warps, split, b == 0);
        /* The blocks it stands for count as many times in the totals. */
        o->path_runs.total += (w - 1) * (runs > 0xFFFFFFFFull ? 0xFFFFFFFFull : runs);
        o->split_warps.total += (w - 1) * (split > 0xFFFFFFFFull ? 0xFFFFFFFFull : split);
        if (s->split[0] || s->split[1] || s->runs[0] != s->runs[1] ||
            s->runs[0] != (unsigned long long)warps_per_block * o->per)
            every_warp_both_full = 0;
        /* The first grid block that differs: a stand-in lists its blocks'
         * copies out of grid order, so the least of their sources. */
        const long long at = st->src ? (long long)st->src[b] : (long long)b;
        if (exp && (o->first_difference < 0 || at < o->first_difference) && memcmp(s, &exp[b], sizeof *s) != 0) {
            o->first_difference = at;
            differs = b;
        }
    }
    dv_count_finish(&o->path_runs, blocks);
    dv_count_finish(&o->split_warps, blocks);
    for (unsigned p = 0; p < DV_WITNESS_PATHS; p++)
        o->lanes_per_run[p] = o->runs[p] ? (double)o->lanes[p] / (double)o->runs[p] : NAN;
    o->agrees = exp != NULL && o->first_difference < 0;
    unsigned long long seen_runs = o->runs[0] + o->runs[1];
    o->predicated = !o->agrees && every_warp_both_full && exp && seen_runs > exp_runs;
    if (!exp) snprintf(o->verdict, sizeof o->verdict, "no model record to compare with");
    else if (o->agrees)
        snprintf(o->verdict, sizeof o->verdict,
                 "agrees with the model in every block: %.4g split warps and %.4g path-runs per block%s",
                 o->split_warps.per_block, o->path_runs.per_block, o->per > 1 ? " per iteration" : "");
    else if (o->predicated)
        snprintf(o->verdict, sizeof o->verdict,
                 "predicated: every warp ran both sides with all its lanes (%.4g path-runs per block%s, the "
                 "model expected %.4g); the compiler turned the branch into predicated instructions",
                 o->path_runs.per_block, o->per > 1 ? " per iteration" : "",
                 (double)exp_runs / o->per / (blocks ? blocks : 1));
    else {
        const struct dv_witness_block *s = &seen[differs], *e = &exp[differs];
        snprintf(o->verdict, sizeof o->verdict,
                 "differs from the model at block %lld: path A %llu runs (%llu partial), model %llu (%llu); "
                 "path B %llu runs (%llu partial), model %llu (%llu)",
                 o->first_difference, s->runs[0], s->split[0], e->runs[0], e->split[0], s->runs[1], s->split[1],
                 e->runs[1], e->split[1]);
    }
}

void testimony_observe_standing(const struct dv_witness_block *seen, const struct dv_witness_block *exp,
                                unsigned launched, unsigned blocks, unsigned warps_per_block, unsigned per,
                                struct dv_observed *o) {
    if (launched == 0 || launched > blocks) launched = blocks;
    const struct standing st = {launched, blocks, NULL, NULL};
    observe(seen, exp, &st, warps_per_block, per, o);
}

void testimony_observe_standin(const struct dv_witness_block *seen, const struct dv_witness_block *exp,
                               const struct testimony_grid *g, const unsigned *src, unsigned warps_per_block,
                               unsigned per, struct dv_observed *o) {
    const struct standing st = {testimony_grid_launched(g), g->blocks, g, src};
    observe(seen, exp, &st, warps_per_block, per, o);
}

void testimony_observe(const struct dv_witness_block *seen, const struct dv_witness_block *exp, unsigned blocks,
                       unsigned warps_per_block, unsigned per, struct dv_observed *o) {
    testimony_observe_standing(seen, exp, blocks, blocks, warps_per_block, per, o);
}

/* The model's split warps in words: per block, and per evaluation when a
 * thread evaluates the branch `per` times (2 warps at each of 4096
 * evaluations, never "8192 warps per block"). */
static void split_words(char *buf, size_t len, double split, unsigned per) {
    if (per > 1)
        snprintf(buf, len, "%.4g warps per block at each of %u evaluations (%.4g per block in all)", split, per,
                 split * per);
    else snprintf(buf, len, "%.4g warps per block", split);
}

void testimony_counters_derive(struct dv_counters *c, unsigned blocks, double model_split_per_block, unsigned per,
                               double warp_lanes) {
    if (per == 0) per = 1;
    if (!(warp_lanes > 0 && warp_lanes <= 32)) warp_lanes = 32;
    const double split = model_split_per_block * per;
    c->warp_efficiency = c->threads_per_inst >= 0 ? c->threads_per_inst / 32.0 : NAN;
    c->divergent_per_block = blocks ? c->branch_targets_divergent / blocks : NAN;
    c->model_split_per_block = split;
    c->inst_per_fma = c->ffma_threads > 0 ? c->inst_executed / (c->ffma_threads / 32.0) : NAN;
    const double d = c->divergent_per_block;
    /* Every warp's instructions ran with all of the threads it has: 32 in a
     * full warp, fewer on average where the block ends in a partial one (a
     * 48-thread block: 32 and 16, 24 a warp), so the test is against the
     * row's own warps, not against 32. */
    const int full = c->threads_per_inst >= 0.999 * warp_lanes;
    c->predicated = split > 0 && d == 0 && full;
    char model[160];
    split_words(model, sizeof model, model_split_per_block, per);
    if (!isfinite(d)) snprintf(c->verdict, sizeof c->verdict, "no blocks to count over");
    else if (c->predicated)
        snprintf(c->verdict, sizeof c->verdict,
                 "predicated: no divergent branch and %.1f lanes per instruction (all of the %.1f threads a warp "
                 "has) while the model splits %s; the compiler turned the branch into predicated instructions "
                 "(%.3f instructions per FMA)",
                 c->threads_per_inst, warp_lanes, model, c->inst_per_fma);
    else if (fabs(d - split) <= 0.01 * (split > 1 ? split : 1))
        snprintf(c->verdict, sizeof c->verdict, "agrees: %.4g divergent branches per block where the model splits %s",
                 d, model);
    else if (split > 0 && d > split)
        snprintf(c->verdict, sizeof c->verdict,
                 "%.4g divergent branches per block where the model splits %s: more than one per split warp (a "
                 "switch over several "
                 "paths, or a loop exit per trip count)",
                 d, model);
    else
        snprintf(c->verdict, sizeof c->verdict, "differs: %.4g divergent branches per block where the model splits %s",
                 d, model);
}

void testimony_counters_compare(struct dv_table *t) {
    const struct dv_counters *base =
        t->baseline_row >= 0 && (unsigned)t->baseline_row < t->nrows ? &t->rows[t->baseline_row].counters : NULL;
    for (unsigned i = 0; i < t->nrows; i++) {
        struct dv_counters *c = &t->rows[i].counters;
        c->inst_vs_baseline = c->present && base && base->present && base->inst_executed > 0
                                  ? c->inst_executed / base->inst_executed
                                  : NAN;
    }
}

void testimony_counter_grid(unsigned blocks, unsigned period, struct testimony_grid *out) {
    memset(out, 0, sizeof *out);
    out->blocks = blocks;
    out->nparts = 1;
    out->part_blocks[0] = blocks;
    out->weight[0] = 1.0;
    if (period == 0 || period >= blocks) return;
    const unsigned q = blocks / period, rest = blocks % period;
    if ((unsigned long long)period + rest >= blocks) return; /* as many blocks as the grid: no saving */
    out->part_blocks[0] = period;
    out->weight[0] = (double)q;
    if (rest) {
        out->nparts = 2;
        out->part_blocks[1] = rest;
        out->weight[1] = 1.0;
    }
}

unsigned testimony_grid_launched(const struct testimony_grid *g) {
    unsigned n = 0;
    for (unsigned k = 0; k < g->nparts && k < TESTIMONY_GRID_PARTS; k++) n += g->part_blocks[k];
    return n;
}

double testimony_grid_weight_of(const struct testimony_grid *g, unsigned b) {
    for (unsigned k = 0; k < g->nparts && k < TESTIMONY_GRID_PARTS; k++)
        if (b >= g->first[k] && b - g->first[k] < g->part_blocks[k]) return g->weight[k];
    return 0;
}

/* A block by its bytes, for grouping identical blocks. */
struct block_key {
    uint64_t hash;
    unsigned block;
};

static int block_key_cmp(const void *a, const void *b) {
    const struct block_key *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return x->block < y->block ? -1 : x->block > y->block;
}

/* Launch waves of `n` blocks, `wave` at a time. */
static unsigned long long waves_of(unsigned long long n, unsigned wave) { return (n + wave - 1) / wave; }

static int class_cmp(const void *a, const void *b) {
    const unsigned *x = a, *y = b; /* {representative, count} pairs by representative */
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The distinct blocks of `values` (`tpb` bytes a block, `blocks` blocks)
 * into cls[] as {least block of those bytes, how many blocks have them},
 * sorted by block; `keys` and `len` are scratch of `blocks` entries and cls
 * has 2 x `blocks`. Returns how many distinct blocks. Runs of equal
 * neighbours first (a sorted layout is a few long runs), then one hash per
 * run, and runs of one hash compared byte for byte with the distinct blocks
 * of that hash found so far (a hash shared by different bytes is
 * vanishingly rare, and then costs a comparison, not a wrong count). */
static unsigned distinct_blocks(const uint8_t *values, unsigned tpb, unsigned blocks, struct block_key *keys,
                                unsigned *len, unsigned *cls) {
    unsigned nruns = 0, ncls = 0;
    for (unsigned b = 0; b < blocks; b++) {
        const uint8_t *v = values + (size_t)b * tpb;
        if (b > 0 && memcmp(v - tpb, v, tpb) == 0) {
            len[nruns - 1]++;
            continue;
        }
        keys[nruns] = (struct block_key){fnv1a_64(FNV1A_64_OFFSET, v, tpb), b};
        len[nruns++] = 1;
    }
    /* A run's length goes with it through the sort: keep it by its block. */
    for (unsigned i = 0; i < nruns; i++) cls[keys[i].block] = len[i];
    qsort(keys, nruns, sizeof *keys, block_key_cmp);
    for (unsigned i = 0; i < nruns; i++) len[i] = cls[keys[i].block];
    for (unsigned i = 0; i < nruns;) {
        unsigned j = i;
        while (j < nruns && keys[j].hash == keys[i].hash) j++;
        const unsigned first = ncls;
        for (unsigned k = i; k < j; k++) {
            const uint8_t *v = values + (size_t)keys[k].block * tpb;
            unsigned c = first;
            while (c < ncls && memcmp(values + (size_t)cls[2 * c] * tpb, v, tpb) != 0) c++;
            if (c == ncls) {
                cls[2 * ncls] = keys[k].block; /* the least block of its bytes: keys are sorted by block */
                cls[2 * ncls + 1] = 0;
                ncls++;
            }
            cls[2 * c + 1] += len[k];
        }
        i = j;
    }
    qsort(cls, ncls, 2 * sizeof *cls, class_cmp);
    return ncls;
}

/* The base s for the `ncls` distinct blocks of cls[] (as distinct_blocks()
 * gives them) with the fewest launch waves of `wave` blocks, then the
 * fewest blocks, in at most `max_src` blocks: among 1 .. 64, each count and
 * their greatest common divisor. 0 when none fits; else s, with its waves
 * in *cost and its blocks in *n. */
static unsigned best_base(const unsigned *cls, unsigned ncls, unsigned wave, unsigned max_src,
                          unsigned long long *cost, unsigned long long *n) {
    unsigned best_s = 0, most = 0, g = 0;
    for (unsigned c = 0; c < ncls; c++) {
        const unsigned w = cls[2 * c + 1];
        most = w > most ? w : most;
        unsigned a = g, b = w;
        while (b) {
            const unsigned t = a % b;
            a = b;
            b = t;
        }
        g = a;
    }
    for (unsigned cand = 0; cand < 64u + 1u + ncls; cand++) {
        const unsigned s = cand < 64u ? cand + 1u : cand == 64u ? g : cls[2 * (cand - 65u) + 1];
        if (s == 0 || s > most) continue;
        unsigned long long n0 = 0, n1 = 0;
        for (unsigned c = 0; c < ncls; c++) {
            n0 += cls[2 * c + 1] / s;
            n1 += cls[2 * c + 1] % s;
        }
        if (n0 + n1 > max_src) continue;
        const unsigned long long waves = waves_of(n0, wave) + waves_of(n1, wave);
        if (!best_s || waves < *cost || (waves == *cost && n0 + n1 < *n)) {
            *cost = waves;
            *n = n0 + n1;
            best_s = s;
        }
    }
    return best_s;
}

/* The stand-in of base `s` over the distinct blocks of cls[]: w / s copies
 * of each (part 0, weight s), then the w % s left (part 1, weight 1), the
 * grid block each copies into src[]; the grid into *out. Returns its
 * blocks. */
static unsigned standin_layout(const unsigned *cls, unsigned ncls, unsigned s, unsigned blocks, unsigned *src,
                               struct testimony_grid *out) {
    unsigned n = 0;
    for (unsigned c = 0; c < ncls; c++)
        for (unsigned q = cls[2 * c + 1] / s; q-- > 0;) src[n++] = cls[2 * c];
    const unsigned n0 = n;
    for (unsigned c = 0; c < ncls; c++)
        for (unsigned r = cls[2 * c + 1] % s; r-- > 0;) src[n++] = cls[2 * c];
    memset(out, 0, sizeof *out);
    out->blocks = blocks;
    out->standin = 1;
    out->nparts = 0;
    if (n0) {
        out->part_blocks[out->nparts] = n0;
        out->weight[out->nparts] = s;
        out->first[out->nparts++] = 0;
    }
    if (n > n0) {
        out->part_blocks[out->nparts] = n - n0;
        out->weight[out->nparts] = 1.0;
        out->first[out->nparts++] = n0;
    }
    return n;
}

unsigned testimony_standin_bytes(const uint8_t *values, unsigned tpb, unsigned blocks, unsigned wave,
                                 const struct testimony_grid *plain, struct testimony_grid *out, unsigned *src,
                                 unsigned max_src) {
    if (!values || tpb == 0 || blocks < 2 || max_src == 0) return 0;
    if (wave == 0) wave = 1;
    unsigned long long plain_cost = 0, plain_n = 0;
    for (unsigned k = 0; k < plain->nparts && k < TESTIMONY_GRID_PARTS; k++) {
        plain_cost += waves_of(plain->part_blocks[k], wave);
        plain_n += plain->part_blocks[k];
    }
    if (plain_cost <= 1) return 0; /* one wave already: nothing to save */
    struct block_key *keys = malloc((size_t)blocks * sizeof *keys);
    unsigned *len = malloc((size_t)blocks * sizeof *len);       /* per run of equal blocks: its length */
    unsigned *cls = malloc((size_t)2 * blocks * sizeof *cls); /* {representative, count} per distinct block */
    unsigned made = 0;
    if (keys && len && cls) {
        const unsigned ncls = distinct_blocks(values, tpb, blocks, keys, len, cls);
        unsigned long long cost = 0, n = 0;
        const unsigned s = ncls <= max_src ? best_base(cls, ncls, wave, max_src, &cost, &n) : 0;
        if (s && (cost < plain_cost || (cost == plain_cost && n < plain_n)))
            made = standin_layout(cls, ncls, s, blocks, src, out);
    }
    free(keys);
    free(len);
    free(cls);
    return made;
}

/* The per-thread values of a grid, read 64 bits at a time per block: a
 * path mask (one bit a thread) or an assignment (one byte a thread). */
struct period_reader {
    const uint32_t *mask; /* bits, or NULL */
    size_t words;         /* of mask */
    const uint8_t *bytes; /* bytes, or NULL */
    unsigned tpb;
};

static unsigned period_chunks(const struct period_reader *r) {
    return r->mask ? (r->tpb + 63u) / 64u : (r->tpb + 7u) / 8u;
}

/* Chunk `k` of block `b`: 64 threads of a mask, 8 of an assignment. */
static uint64_t period_chunk(const struct period_reader *r, unsigned b, unsigned k) {
    uint64_t v = 0;
    if (r->bytes) {
        const unsigned first = k * 8u, n = r->tpb - first < 8u ? r->tpb - first : 8u;
        memcpy(&v, r->bytes + (unsigned long long)b * r->tpb + first, n);
        return v;
    }
    const unsigned long long off = (unsigned long long)b * r->tpb + 64ull * k;
    const unsigned n = r->tpb - 64u * k < 64u ? r->tpb - 64u * k : 64u;
    const size_t w = (size_t)(off >> 5);
    const unsigned sh = (unsigned)(off & 31u);
    uint64_t lo = w < r->words ? r->mask[w] : 0;
    if (w + 1 < r->words) lo |= (uint64_t)r->mask[w + 1] << 32;
    v = lo >> sh;
    if (sh && w + 2 < r->words) v |= (uint64_t)r->mask[w + 2] << (64u - sh);
    return n < 64u ? v & ((1ull << n) - 1ull) : v;
}

static unsigned period_find(const struct period_reader *r, unsigned blocks) {
    if (blocks < 2) return blocks;
    const unsigned nchunks = period_chunks(r);
    uint64_t *digest = malloc(sizeof *digest * blocks);
    unsigned *fail = malloc(sizeof *fail * blocks);
    if (!digest || !fail) {
        free(digest);
        free(fail);
        return blocks;
    }
    for (unsigned b = 0; b < blocks; b++) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (unsigned k = 0; k < nchunks; k++) {
            h ^= period_chunk(r, b, k);
            h *= 0x100000001b3ull;
            h ^= h >> 29;
        }
        digest[b] = h;
    }
    fail[0] = 0;
    for (unsigned i = 1; i < blocks; i++) {
        unsigned k = fail[i - 1];
        while (k > 0 && digest[i] != digest[k]) k = fail[k - 1];
        fail[i] = k + (digest[i] == digest[k]);
    }
    unsigned period = blocks - fail[blocks - 1];
    for (unsigned b = period; b < blocks && period < blocks; b++)
        for (unsigned k = 0; k < nchunks; k++)
            if (period_chunk(r, b, k) != period_chunk(r, b - period, k)) {
                period = blocks;
                break;
            }
    free(digest);
    free(fail);
    return period;
}

unsigned testimony_period_bits(const uint32_t *mask, unsigned threads_per_block, unsigned blocks) {
    const struct dv_geometry g = {blocks, threads_per_block, 1};
    const struct period_reader r = {.mask = mask, .words = analysis_mask_words(&g), .tpb = threads_per_block};
    return threads_per_block ? period_find(&r, blocks) : blocks;
}

unsigned testimony_period_bytes(const uint8_t *values, unsigned threads_per_block, unsigned blocks) {
    if (threads_per_block == 0 || blocks < 2) return blocks;
    /* Every block as the first (most rows): one comparison a block. */
    unsigned same = 1;
    const size_t tpb = threads_per_block;
    while (same < blocks && memcmp(values, values + (size_t)same * tpb, tpb) == 0) same++;
    if (same == blocks) return 1;
    const struct period_reader r = {.bytes = values, .tpb = threads_per_block};
    return threads_per_block ? period_find(&r, blocks) : blocks;
}

int testimony_lesson_grid(const struct dv_row *row, const struct dv_geometry *g, unsigned iterations,
                          const uint32_t *mask, struct testimony_grid *out, char *err) {
    struct predicate p;
    if (experiment_row_predicate(row, &p, err) != 0) return -1;
    const int per_block = predicate_reads_block(&p);
    predicate_cleanup(&p);
    unsigned period = 1;
    if (per_block && experiment_row_evaluations(row, iterations) > 1) period = g->blocks;
    else if (per_block) period = testimony_period_bits(mask, g->block_x * g->block_y, g->blocks);
    testimony_counter_grid(g->blocks, period, out);
    return 0;
}

unsigned testimony_scenario_grid(const uint8_t *work, unsigned tpb, unsigned blocks, unsigned wave,
                                 struct testimony_grid *out, unsigned *src) {
    struct testimony_grid g;
    testimony_counter_grid(blocks, testimony_period_bytes(work, tpb, blocks), out);
    const unsigned n = testimony_standin_bytes(work, tpb, blocks, wave, out, &g, src, blocks);
    if (n) *out = g;
    return n;
}

/* Groups of one warp at the join: distinct masks, each's clock. */
struct join_warp {
    unsigned groups;
    uint32_t mask[32];
    unsigned long long clock[32];
};

static void join_warp_read(const struct dv_join_lane *rec, unsigned lanes, struct join_warp *w) {
    w->groups = 0;
    for (unsigned l = 0; l < lanes; l++) {
        if (!rec[l].reached) continue;
        unsigned g = 0;
        while (g < w->groups && w->mask[g] != rec[l].mask) g++;
        if (g == w->groups) {
            w->mask[g] = rec[l].mask;
            w->clock[g] = rec[l].clock;
            w->groups++;
        } else if (rec[l].clock < w->clock[g]) {
            w->clock[g] = rec[l].clock;
        }
    }
}

/* Tallies `mask` among the kept masks (the most seen first at the end). */
static void join_tally(struct dv_join *j, uint32_t mask) {
    for (unsigned k = 0; k < j->nmasks; k++)
        if (j->mask[k] == mask) {
            j->mask_groups[k]++;
            return;
        }
    if (j->nmasks < DV_JOIN_MASKS) {
        j->mask[j->nmasks] = mask;
        j->mask_groups[j->nmasks++] = 1;
    }
}

static int cmp_ull(const void *a, const void *b) {
    const unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

static void join_verdict(struct dv_join *j) {
    if (j->warps == 0) {
        snprintf(j->verdict, sizeof j->verdict, "no lane reached the join");
        return;
    }
    if (j->reconverged == j->warps)
        snprintf(j->verdict, sizeof j->verdict,
                 "reconverged at the join: all %u warps read it in one group holding every lane that reaches it "
                 "(mask 0x%08x), one clock",
                 j->warps, j->nmasks ? j->mask[0] : 0u);
    else
        snprintf(j->verdict, sizeof j->verdict,
                 "not reconverged at the join in %u of %u warps: %.2f groups a warp (at most %u), %.1f lanes a group, "
                 "the last group %.0f cycles after the first (median; %.0f at most)",
                 j->warps - j->reconverged, j->warps, j->groups_mean, j->groups_max, j->lanes_mean, j->spread_median,
                 j->spread_max);
}

void testimony_join(const struct scenario *rs, const uint8_t *work, const struct dv_join_lane *rec, unsigned blocks,
                    unsigned tpb, struct dv_join *j) {
    memset(j, 0, sizeof *j);
    j->present = 1;
    j->blocks = blocks;
    const unsigned wpb = (tpb + 31u) / 32u;
    unsigned long long *spread = malloc(sizeof *spread * ((size_t)blocks * wpb + 1));
    unsigned long long groups = 0, lanes = 0;
    unsigned nspread = 0;
    const int returns = rs->kind == SCENARIO_PAIR && scenario_pair_returns(rs->variant);
    for (unsigned b = 0; b < blocks; b++)
        for (unsigned w = 0; w < wpb; w++) {
            const unsigned width = dv_warp_lanes(tpb, w);
            const size_t first = (size_t)b * tpb + w * 32u;
            uint32_t expect = 0;
            for (unsigned l = 0; l < width; l++)
                if (!returns || work[first + l] != 0) expect |= 1u << l;
            if (b == 0 && w == 0) j->expected_mask = expect;
            struct join_warp jw;
            join_warp_read(rec + first, width, &jw);
            if (jw.groups == 0) continue;
            j->warps++;
            groups += jw.groups;
            for (unsigned l = 0; l < width; l++) lanes += rec[first + l].reached != 0;
            if (jw.groups > j->groups_max) j->groups_max = jw.groups;
            j->reconverged += jw.groups == 1 && jw.mask[0] == expect;
            unsigned long long lo = jw.clock[0], hi = jw.clock[0];
            for (unsigned g = 0; g < jw.groups; g++) {
                join_tally(j, jw.mask[g]);
                lo = jw.clock[g] < lo ? jw.clock[g] : lo;
                hi = jw.clock[g] > hi ? jw.clock[g] : hi;
            }
            if (spread) spread[nspread++] = hi - lo;
        }
    j->groups_mean = j->warps ? (double)groups / j->warps : NAN;
    j->lanes_mean = groups ? (double)lanes / (double)groups : NAN;
    j->spread_median = j->spread_max = NAN;
    if (spread && nspread) {
        qsort(spread, nspread, sizeof *spread, cmp_ull);
        j->spread_median = 0.5 * ((double)spread[(nspread - 1) / 2] + (double)spread[nspread / 2]);
        j->spread_max = (double)spread[nspread - 1];
    }
    free(spread);
    /* The masks, the most seen first. */
    for (unsigned a = 0; a < j->nmasks; a++)
        for (unsigned c = a + 1; c < j->nmasks; c++)
            if (j->mask_groups[c] > j->mask_groups[a]) {
                const uint32_t m = j->mask[a];
                const unsigned n = j->mask_groups[a];
                j->mask[a] = j->mask[c];
                j->mask_groups[a] = j->mask_groups[c];
                j->mask[c] = m;
                j->mask_groups[c] = n;
            }
    join_verdict(j);
}
