/* listing.c -- an instruction profile: combining the parts of a grid,
 * the regions, the runs, the comparison of two collections and the cache key
 * (listing.h, which states the region rules).
 *
 * Instructions are kept in pc order in one growing array: a collector
 * delivers them in any order (CUPTI gives one record per instruction and
 * metric), and every later step walks them in program order.
 */
#include "kernels/model/listing/listing.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[LISTING_KINDS] = {
    [LISTING_BEFORE] = "before",       [LISTING_PATH_A] = "path_a",
    [LISTING_PATH_B] = "path_b",       [LISTING_RECONVERGE] = "reconverge",
    [LISTING_AFTER] = "after",         [LISTING_LOOP] = "loop",
    [LISTING_TAIL] = "tail",           [LISTING_PATH_0 + 0] = "path_0",
    [LISTING_PATH_0 + 1] = "path_1",   [LISTING_PATH_0 + 2] = "path_2",
    [LISTING_PATH_0 + 3] = "path_3",   [LISTING_PATH_0 + 4] = "path_4",
    [LISTING_PATH_0 + 5] = "path_5",   [LISTING_PATH_0 + 6] = "path_6",
    [LISTING_PATH_0 + 7] = "path_7",   [LISTING_PATH_0 + 8] = "path_8",
    [LISTING_PATH_0 + 9] = "path_9",   [LISTING_PATH_0 + 10] = "path_10",
    [LISTING_PATH_0 + 11] = "path_11", [LISTING_PATH_0 + 12] = "path_12",
    [LISTING_PATH_0 + 13] = "path_13", [LISTING_PATH_0 + 14] = "path_14",
    [LISTING_PATH_0 + 15] = "path_15", [LISTING_PATH_0 + 16] = "path_16",
    [LISTING_PATH_0 + 17] = "path_17", [LISTING_PATH_0 + 18] = "path_18",
    [LISTING_PATH_0 + 19] = "path_19", [LISTING_PATH_0 + 20] = "path_20",
    [LISTING_PATH_0 + 21] = "path_21", [LISTING_PATH_0 + 22] = "path_22",
    [LISTING_PATH_0 + 23] = "path_23", [LISTING_PATH_0 + 24] = "path_24",
    [LISTING_PATH_0 + 25] = "path_25", [LISTING_PATH_0 + 26] = "path_26",
    [LISTING_PATH_0 + 27] = "path_27", [LISTING_PATH_0 + 28] = "path_28",
    [LISTING_PATH_0 + 29] = "path_29", [LISTING_PATH_0 + 30] = "path_30",
    [LISTING_PATH_0 + 31] = "path_31",
};

const char *listing_kind_name(enum listing_kind k) {
    return (unsigned)k < LISTING_KINDS ? kind_names[k] : "before";
}

int listing_kind_parse(const char *name) {
    for (int k = 0; name && k < LISTING_KINDS; k++)
        if (strcmp(kind_names[k], name) == 0) return k;
    return -1;
}

int listing_kind_is_path(enum listing_kind k) {
    return k == LISTING_PATH_A || k == LISTING_PATH_B || k == LISTING_LOOP ||
           ((unsigned)k >= LISTING_PATH_0 && (unsigned)k <= LISTING_PATH_LAST);
}

int listing_paths_add(struct listing_paths *p, unsigned line, enum listing_kind kind) {
    if (kind == LISTING_PATH_A && p->na < LISTING_MAX_PATH_LINES) {
        p->a[p->na++] = line;
        return 0;
    }
    if (kind == LISTING_PATH_B && p->nb < LISTING_MAX_PATH_LINES) {
        p->b[p->nb++] = line;
        return 0;
    }
    if (kind == LISTING_PATH_A || kind == LISTING_PATH_B || p->nother >= LISTING_MAX_OTHER_LINES ||
        !(listing_kind_is_path(kind) || kind == LISTING_TAIL))
        return -1;
    p->other_line[p->nother] = line;
    p->other_kind[p->nother++] = (unsigned char)kind;
    return 0;
}

/* ---- the instructions of a function ------------------------------------ */

void listing_insns_init(struct listing_insns *f) { memset(f, 0, sizeof *f); }

void listing_insns_cleanup(struct listing_insns *f) {
    if (!f) return;
    free(f->v);
    memset(f, 0, sizeof *f);
}

/* The index of the first instruction at or after `pc`. */
static size_t lower_bound(const struct listing_insns *f, uint32_t pc) {
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->v[mid].pc < pc) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

const struct listing_insn *listing_insns_find(const struct listing_insns *f, uint32_t pc) {
    size_t i = lower_bound(f, pc);
    return i < f->n && f->v[i].pc == pc ? &f->v[i] : NULL;
}

struct listing_insn *listing_insns_at(struct listing_insns *f, uint32_t pc) {
    size_t i = lower_bound(f, pc);
    if (i < f->n && f->v[i].pc == pc) return &f->v[i];
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 256;
        struct listing_insn *v = realloc(f->v, cap * sizeof *v);
        if (!v) return NULL;
        f->v = v;
        f->cap = cap;
    }
    memmove(&f->v[i + 1], &f->v[i], (f->n - i) * sizeof *f->v);
    f->n++;
    memset(&f->v[i], 0, sizeof f->v[i]);
    f->v[i].pc = pc;
    return &f->v[i];
}

int listing_insns_reason(struct listing_insns *f, const char *name) {
    for (unsigned k = 0; k < f->nreasons; k++)
        if (strcmp(f->reasons[k], name) == 0) return (int)k;
    if (f->nreasons >= LISTING_MAX_REASONS) return -1;
    snprintf(f->reasons[f->nreasons], LISTING_REASON_LEN, "%s", name);
    return (int)f->nreasons++;
}

void listing_decode(struct listing_insn *i) {
    const char *s = i->sass;
    i->opcode[0] = '\0';
    i->guarded = 0;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '@') {
        /* @PT is "always": no guard. */
        const char *g = s + 1;
        if (*g == '!') g++;
        i->guarded = !(g[0] == 'P' && g[1] == 'T' && (g[2] == ' ' || g[2] == '\t'));
        while (*s && *s != ' ' && *s != '\t') s++;
        while (*s == ' ' || *s == '\t') s++;
    }
    size_t n = 0;
    while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != ';' && n + 1 < sizeof i->opcode) n++;
    memcpy(i->opcode, s, n);
    i->opcode[n] = '\0';
}

int listing_combine(const struct listing_insns *parts, const unsigned long long *weight, unsigned nparts,
                    struct listing_insns *out, char *err) {
    listing_insns_init(out);
    if (nparts == 0) {
        dv_seterr(err, "listing: no parts to combine");
        return -1;
    }
    snprintf(out->function, sizeof out->function, "%s", parts[0].function);
    out->nreasons = parts[0].nreasons;
    out->sampled = parts[0].sampled;
    out->record_crc = parts[0].record_crc;
    out->have_record_crc = parts[0].have_record_crc;
    memcpy(out->reasons, parts[0].reasons, sizeof out->reasons);
    for (unsigned k = 0; k < nparts; k++) {
        if (weight[k] == 0) {
            dv_seterr(err, "listing: part %u has weight 0", k);
            listing_insns_cleanup(out);
            return -1;
        }
        for (size_t j = 0; j < parts[k].n; j++) {
            const struct listing_insn *src = &parts[k].v[j];
            const int fresh = listing_insns_find(out, src->pc) == NULL;
            struct listing_insn *dst = listing_insns_at(out, src->pc);
            if (!dst) {
                dv_seterr(err, "listing: out of memory combining %zu instructions", parts[k].n);
                listing_insns_cleanup(out);
                return -1;
            }
            if (fresh) {
                *dst = *src;
                dst->warp = dst->thread = dst->pred_on = dst->divergent = 0;
            }
            dst->warp += weight[k] * src->warp;
            dst->thread += weight[k] * src->thread;
            dst->pred_on += weight[k] * src->pred_on;
            dst->divergent += weight[k] * src->divergent;
        }
    }
    return 0;
}

/* ---- regions ----------------------------------------------------------- */

int listing_file_is(const char *file, const char *suffix) {
    size_t n = strlen(file), m = strlen(suffix);
    if (m == 0 || n < m || strcmp(file + n - m, suffix) != 0) return 0;
    return n == m || file[n - m - 1] == '/';
}

/* The chain an instruction's line belongs to, or -1. */
static int line_kind(const struct listing_insn *i, const struct listing_paths *p) {
    if (!i->line || !listing_file_is(i->file, p->file)) return -1;
    for (unsigned k = 0; k < p->na; k++)
        if (p->a[k] == i->line) return LISTING_PATH_A;
    for (unsigned k = 0; k < p->nb; k++)
        if (p->b[k] == i->line) return LISTING_PATH_B;
    for (unsigned k = 0; k < p->nother; k++)
        if (p->other_line[k] == i->line) return p->other_kind[k];
    return -1;
}

static int is_reconvergence(const struct listing_insn *i) {
    return strcmp(i->opcode, "BSYNC") == 0 || strcmp(i->opcode, "WARPSYNC") == 0;
}

/* Rule 2: the sides of the divergent branch. `lo` and `hi` index the first
 * and last chain instruction. Returns 1 with every instruction of the two
 * sides given its side's path and *end the index past the second side. */
static int chain_kind(const struct listing_insn *i, const struct listing_paths *p);

static int classify_sides(struct listing_insns *f, const struct listing_paths *p, size_t lo, size_t hi, size_t *end) {
    size_t d = lo;
    while (d > 0) {
        const struct listing_insn *i = &f->v[--d];
        if (strcmp(i->opcode, "BRA") == 0 && i->guarded) goto found;
    }
    return 0;
found:;
    const struct listing_insn *br = &f->v[d];
    if (!br->has_target || br->target <= f->v[lo].pc || br->target > f->v[hi].pc) return 0;
    size_t t = lower_bound(f, br->target);
    if (t >= f->n || f->v[t].pc != br->target) return 0;
    size_t stop = hi + 1;
    for (size_t i = hi + 1; i < f->n; i++)
        if (is_reconvergence(&f->v[i])) {
            stop = i;
            break;
        }
    /* Each side's path: the one at least nine in ten of its chain
     * instructions are on (an instruction the line table misplaces is what
     * this rule corrects, so one side may hold a few of the other's). */
    int side[2] = {-1, -1};
    const size_t from[2] = {lo, t}, to[2] = {t, stop};
    for (int s = 0; s < 2; s++) {
        size_t on[2] = {0, 0};
        for (size_t i = from[s]; i < to[s]; i++) {
            int k = chain_kind(&f->v[i], p);
            if (k >= 0) on[k == LISTING_PATH_B]++;
        }
        if (on[0] >= 9 * on[1] && on[0] > 0) side[s] = LISTING_PATH_A;
        else if (on[1] >= 9 * on[0] && on[1] > 0) side[s] = LISTING_PATH_B;
        else return 0; /* both chains on one side: no two sides */
    }
    if (side[0] == side[1]) return 0;
    for (int s = 0; s < 2; s++)
        for (size_t i = from[s]; i < to[s]; i++) f->v[i].kind = (enum listing_kind)side[s];
    *end = stop;
    return 1;
}

/* A chain instruction: on a path's line and not a reconvergence (the line
 * table puts a BSYNC on the line of the loop before it). A tail's line is
 * no path's. */
static int chain_kind(const struct listing_insn *i, const struct listing_paths *p) {
    if (is_reconvergence(i)) return -1;
    const int k = line_kind(i, p);
    return k >= 0 && listing_kind_is_path((enum listing_kind)k) ? k : -1;
}

/* 1 when every path instruction of f->v[lo..hi] is on path A or path B:
 * the two sides rule 2 looks for. */
static int two_paths(const struct listing_insns *f, const struct listing_paths *p, size_t lo, size_t hi) {
    for (size_t i = lo; i <= hi; i++) {
        const int k = chain_kind(&f->v[i], p);
        if (k >= 0 && k != LISTING_PATH_A && k != LISTING_PATH_B) return 0;
    }
    return 1;
}

int listing_classify(struct listing_insns *f, const struct listing_paths *p) {
    size_t lo = f->n, hi = 0;
    for (size_t i = 0; i < f->n; i++) {
        listing_decode(&f->v[i]);
        f->v[i].kind = LISTING_BEFORE;
        if (chain_kind(&f->v[i], p) >= 0) {
            if (lo == f->n) lo = i;
            hi = i;
        }
    }
    int sides = 0;
    if (lo < f->n) {
        for (size_t i = lo; i <= hi; i++) {
            int k = chain_kind(&f->v[i], p);
            f->v[i].kind = k >= 0                       ? (enum listing_kind)k
                           : is_reconvergence(&f->v[i]) ? LISTING_RECONVERGE
                                                        : LISTING_BEFORE;
        }
        size_t next = hi + 1;
        sides = two_paths(f, p, lo, hi) && classify_sides(f, p, lo, hi, &next);
        if (!sides) next = hi + 1;
        while (next < f->n && is_reconvergence(&f->v[next])) f->v[next++].kind = LISTING_RECONVERGE;
        for (size_t i = next; i < f->n; i++) f->v[i].kind = LISTING_AFTER;
    }
    /* The tail's lines wherever they are (after the join, as a rule). */
    for (size_t i = 0; i < f->n; i++)
        if (!is_reconvergence(&f->v[i]) && line_kind(&f->v[i], p) == LISTING_TAIL) f->v[i].kind = LISTING_TAIL;
    return sides;
}

/* ---- the listing -------------------------------------------------------- */

struct listing *listing_create(void) {
    struct listing *l = calloc(1, sizeof *l);
    if (l) l->scale = 1;
    return l;
}

void listing_free(struct listing *l) {
    if (!l) return;
    free(l->runs);
    free(l);
}

struct listing *listing_copy(const struct listing *l) {
    struct listing *c = malloc(sizeof *c);
    if (!c) return NULL;
    *c = *l;
    c->runs = NULL;
    c->runs_cap = l->nruns;
    if (l->nruns) {
        if (!(c->runs = malloc(l->nruns * sizeof *c->runs))) {
            free(c);
            return NULL;
        }
        memcpy(c->runs, l->runs, l->nruns * sizeof *c->runs);
    }
    return c;
}

int listing_add_run(struct listing *l, const struct listing_run *run) {
    if (l->nruns == l->runs_cap) {
        unsigned cap = l->runs_cap ? 2 * l->runs_cap : 64;
        struct listing_run *v = realloc(l->runs, (size_t)cap * sizeof *v);
        if (!v) return -1;
        l->runs = v;
        l->runs_cap = cap;
    }
    l->runs[l->nruns++] = *run;
    return 0;
}

/* A stall reason's short name, or NULL for what is not a reason of its own:
 * CUPTI's sample and drop counts, and the _not_issued reasons, which are
 * the part of a reason's samples in which no instruction issued (counted
 * in the reason already). ncu's columns are "stall_<name>". */
static const char *reason_short(const char *name) {
    static const char cupti[] = "smsp__pcsamp_warps_issue_stalled_", ncu[] = "stall_";
    const char *s;
    if (strncmp(name, cupti, sizeof cupti - 1) == 0) s = name + sizeof cupti - 1;
    else if (strncmp(name, ncu, sizeof ncu - 1) == 0) s = name + sizeof ncu - 1;
    else return NULL;
    size_t n = strlen(s);
    static const char tail[] = "_not_issued";
    if (n >= sizeof tail - 1 && strcmp(s + n - (sizeof tail - 1), tail) == 0) return NULL;
    return s;
}

static void region_stalls(const struct listing_insns *f, struct listing_region *r) {
    unsigned long long sum[LISTING_MAX_REASONS] = {0}, total = 0;
    r->has_stalls = f->sampled;
    r->nstalls = 0;
    if (!f->sampled) return;
    for (size_t i = 0; i < f->n; i++) {
        if (f->v[i].kind != r->kind) continue;
        for (unsigned k = 0; k < f->nreasons; k++) {
            if (!reason_short(f->reasons[k])) continue;
            sum[k] += f->v[i].stalls[k];
            total += f->v[i].stalls[k];
        }
    }
    for (unsigned t = 0; t < LISTING_TOP_STALLS && total; t++) {
        int best = -1;
        for (unsigned k = 0; k < f->nreasons; k++)
            if (sum[k] && reason_short(f->reasons[k]) && (best < 0 || sum[k] > sum[best])) best = (int)k;
        if (best < 0) break;
        struct listing_stall *s = &r->stalls[r->nstalls++];
        snprintf(s->reason, sizeof s->reason, "%s", reason_short(f->reasons[best]));
        s->share = (double)sum[best] / (double)total;
        sum[best] = 0;
    }
}

/* Whether instruction `i` continues run `r`. */
static int same_run(const struct listing_run *r, const struct listing_insn *i) {
    return i->pc == r->pc + 16u * r->count && strcmp(r->opcode, i->opcode) == 0 && r->guarded == i->guarded &&
           r->region == i->kind && r->line == i->line && strcmp(r->file, i->file) == 0 && r->warp == i->warp &&
           r->thread == i->thread && r->pred_on == i->pred_on && r->divergent == i->divergent &&
           r->has_target == i->has_target && (!r->has_target || r->target == i->target);
}

static double lanes_of(unsigned long long thread, unsigned long long warp) {
    return warp ? (double)thread / (double)warp : NAN;
}

/* A region is code the launch ran: a kind whose instructions no warp
 * executed (the k-way switch is one function for every k, so a row of
 * k = 2 carries 30 cases no lane takes) is left out of the regions, which
 * keep their order; its instructions stay in the runs under its name, with
 * their zero counts. */
static void drop_unexecuted(struct listing *l) {
    unsigned kept = 0;
    for (unsigned k = 0; k < l->nregions; k++)
        if (l->regions[k].warp) l->regions[kept++] = l->regions[k];
    l->nregions = kept;
}

int listing_build(const struct listing_insns *f, struct listing *l, char *err) {
    free(l->runs);
    l->runs = NULL;
    l->nruns = l->runs_cap = 0;
    l->nregions = 0;
    size_t mapped = 0;
    int seen[LISTING_KINDS] = {0};
    for (size_t i = 0; i < f->n; i++) {
        const struct listing_insn *in = &f->v[i];
        mapped += in->line > 0;
        /* seen[kind]: 1 + the kind's place among the regions */
        if (!seen[in->kind]) {
            memset(&l->regions[l->nregions], 0, sizeof l->regions[0]);
            l->regions[l->nregions].kind = in->kind;
            seen[in->kind] = (int)++l->nregions;
        }
        struct listing_region *r = &l->regions[seen[in->kind] - 1];
        r->instructions++;
        r->warp += in->warp;
        r->thread += in->thread;
        r->pred_on += in->pred_on;
        struct listing_run *last = l->nruns ? &l->runs[l->nruns - 1] : NULL;
        if (last && same_run(last, in)) {
            last->count++;
            snprintf(last->last_sass, sizeof last->last_sass, "%s", in->sass);
            continue;
        }
        struct listing_run run;
        memset(&run, 0, sizeof run);
        run.pc = in->pc;
        run.count = 1;
        snprintf(run.opcode, sizeof run.opcode, "%s", in->opcode);
        snprintf(run.sass, sizeof run.sass, "%s", in->sass);
        snprintf(run.last_sass, sizeof run.last_sass, "%s", in->sass);
        snprintf(run.file, sizeof run.file, "%s", in->file);
        run.line = in->line;
        run.region = in->kind;
        run.guarded = in->guarded;
        run.warp = in->warp;
        run.thread = in->thread;
        run.pred_on = in->pred_on;
        run.divergent = in->divergent;
        run.lanes = lanes_of(in->thread, in->warp);
        run.has_target = in->has_target;
        run.target = in->has_target ? in->target : 0;
        if (listing_add_run(l, &run) != 0) {
            dv_seterr(err, "listing: out of memory for %u runs", l->nruns + 1);
            return -1;
        }
    }
    drop_unexecuted(l);
    for (unsigned k = 0; k < l->nregions; k++) {
        struct listing_region *r = &l->regions[k];
        r->lanes = lanes_of(r->thread, r->warp);
        region_stalls(f, r);
    }
    l->mapped = f->n ? (double)mapped / (double)f->n : 0.0;
    return 0;
}

void listing_sum(const struct listing *l, enum listing_kind kind, const char *opcode, unsigned long long *thread,
                 unsigned long long *pred_on, unsigned long long *instructions) {
    unsigned long long t = 0, p = 0, n = 0;
    for (unsigned i = 0; i < l->nruns; i++) {
        const struct listing_run *r = &l->runs[i];
        if (r->region != kind || (opcode && strcmp(r->opcode, opcode) != 0)) continue;
        t += r->count * r->thread;
        p += r->count * r->pred_on;
        n += r->count;
    }
    if (thread) *thread = t;
    if (pred_on) *pred_on = p;
    if (instructions) *instructions = n;
}

/* ---- the shape of a profile --------------------------------------------- */

#define WARP_LANES 32

/* A fault: the field ("runs[3].count", or `name` alone when index < 0)
 * into `field`, `reason` into `why`; returns -1. */
static int check_fail(char *field, size_t fsize, char *why, const char *name, long index, const char *key,
                      const char *reason) {
    if (index >= 0) snprintf(field, fsize, "%s[%ld]%s%s", name, index, *key ? "." : "", key);
    else snprintf(field, fsize, "%s", name);
    dv_seterr(why, "%s", reason);
    return -1;
}

/* A lanes figure: NaN (never executed) or within a warp. */
static int lanes_ok(double lanes) { return isnan(lanes) || (lanes >= 0 && lanes <= WARP_LANES); }

/* The counts of one run, and its place after the run before it. */
static int check_run(const struct listing *l, unsigned i, char *field, size_t fsize, char *why) {
    const struct listing_run *r = &l->runs[i];
    char reason[160];
    if (r->count == 0) return check_fail(field, fsize, why, "runs", i, "count", "0: a run has instructions");
    if (i > 0 && r->pc <= l->runs[i - 1].pc)
        return check_fail(field, fsize, why, "runs", i, "pc", "not after the run before it");
    if ((unsigned)r->region >= LISTING_KINDS)
        return check_fail(field, fsize, why, "runs", i, "region", "no such region");
    if (r->thread / WARP_LANES + (r->thread % WARP_LANES != 0) > r->warp) { /* thread > 32 warp, unoverflowed */
        snprintf(reason, sizeof reason, "%llu for %llu warp executions: more than %d lanes each", r->thread, r->warp,
                 WARP_LANES);
        return check_fail(field, fsize, why, "runs", i, "thread_executions", reason);
    }
    if (r->pred_on > r->thread)
        return check_fail(field, fsize, why, "runs", i, "pred_on_thread_executions", "more than its thread executions");
    if (!lanes_ok(r->lanes)) return check_fail(field, fsize, why, "runs", i, "lanes", "not within 0 to 32");
    return 0;
}

/* The sums of region `k` against its runs': instructions, warp, thread and
 * predicated-on executions. */
static int check_region(const struct listing *l, unsigned k, char *field, size_t fsize, char *why) {
    const struct listing_region *g = &l->regions[k];
    unsigned long long n = 0, sum[3] = {0, 0, 0};
    for (unsigned i = 0; i < l->nruns; i++) {
        const struct listing_run *r = &l->runs[i];
        if (r->region != g->kind) continue;
        const unsigned long long per[3] = {r->warp, r->thread, r->pred_on};
        n += r->count;
        for (int c = 0; c < 3; c++) {
            unsigned long long x;
            if (__builtin_mul_overflow(per[c], (unsigned long long)r->count, &x) ||
                __builtin_add_overflow(sum[c], x, &sum[c]))
                return check_fail(field, fsize, why, "runs", i, "", "its counts overflow 64 bits");
        }
    }
    static const char *const keys[4] = {"instructions", "warp_executions", "thread_executions",
                                        "pred_on_thread_executions"};
    const unsigned long long want[4] = {n, sum[0], sum[1], sum[2]},
                             got[4] = {g->instructions, g->warp, g->thread, g->pred_on};
    char reason[160];
    for (int c = 0; c < 4; c++) {
        if (got[c] == want[c]) continue;
        snprintf(reason, sizeof reason, "%llu, but its runs add up to %llu", got[c], want[c]);
        return check_fail(field, fsize, why, "regions", k, keys[c], reason);
    }
    if (!lanes_ok(g->lanes))
        return check_fail(field, fsize, why, "regions", k, "lanes_per_execution", "not within 0 to 32");
    for (unsigned s = 0; g->has_stalls && s < g->nstalls; s++)
        if (!(g->stalls[s].share >= 0 && g->stalls[s].share <= 1))
            return check_fail(field, fsize, why, "regions", k, "stalls", "a share not within 0 to 1");
    return 0;
}

int listing_check(const struct listing *l, char *field, size_t fsize, char *why) {
    if (l->nregions == 0) return check_fail(field, fsize, why, "regions", -1, "", "none: a profile has its regions");
    if (l->nruns == 0) return check_fail(field, fsize, why, "runs", -1, "", "none: a profile has its instructions");
    if (!(isnan(l->mapped) || (l->mapped >= 0 && l->mapped <= 1)))
        return check_fail(field, fsize, why, "mapped", -1, "", "not within 0 to 1");
    if (!(isnan(l->scale) || l->scale > 0)) return check_fail(field, fsize, why, "scale", -1, "", "not above 0");
    if (!(isnan(l->collect_ms) || l->collect_ms >= 0))
        return check_fail(field, fsize, why, "collect_ms", -1, "", "negative");
    int seen[LISTING_KINDS] = {0};
    for (unsigned k = 0; k < l->nregions; k++) {
        const unsigned kind = (unsigned)l->regions[k].kind;
        if (kind >= LISTING_KINDS || seen[kind]++)
            return check_fail(field, fsize, why, "regions", k, "kind",
                              kind >= LISTING_KINDS ? "no such region" : "listed twice");
    }
    for (unsigned i = 0; i < l->nruns; i++) {
        if (check_run(l, i, field, fsize, why) != 0) return -1;
        if (!seen[l->runs[i].region] && l->runs[i].warp)
            return check_fail(field, fsize, why, "runs", i, "region", "a region the profile's regions do not list");
    }
    for (unsigned k = 0; k < l->nregions; k++)
        if (check_region(l, k, field, fsize, why) != 0) return -1;
    return 0;
}

/* ---- comparison --------------------------------------------------------- */

static void compare_cells(const struct listing_insn *a, const struct listing_insn *b, struct listing_diff *d) {
    static const char *const names[4] = {"warp executions", "thread executions", "predicated-on thread executions",
                                         "divergent branch targets"};
    const unsigned long long va[4] = {a ? a->warp : 0, a ? a->thread : 0, a ? a->pred_on : 0, a ? a->divergent : 0};
    const unsigned long long vb[4] = {b ? b->warp : 0, b ? b->thread : 0, b ? b->pred_on : 0, b ? b->divergent : 0};
    d->instructions++;
    for (int c = 0; c < 4; c++) {
        d->cells++;
        if (va[c] == vb[c]) continue;
        if (d->mismatches++ == 0)
            snprintf(d->first, sizeof d->first, "pc 0x%04x: %s %llu against %llu%s", (unsigned)(a ? a->pc : b->pc),
                     names[c], va[c], vb[c], !a ? " (only the second lists it)" : !b ? " (only the first lists it)" : "");
    }
}

void listing_compare(const struct listing_insns *a, const struct listing_insns *b, struct listing_diff *d) {
    memset(d, 0, sizeof *d);
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        if (j >= b->n || (i < a->n && a->v[i].pc < b->v[j].pc)) compare_cells(&a->v[i++], NULL, d);
        else if (i >= a->n || b->v[j].pc < a->v[i].pc) compare_cells(NULL, &b->v[j++], d);
        else compare_cells(&a->v[i++], &b->v[j++], d);
    }
}

/* ---- the cache key ------------------------------------------------------ */

uint64_t listing_mask_hash(const uint32_t *mask, unsigned long long nbits) {
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned long long nbytes = (nbits + 7) / 8;
    for (unsigned long long j = 0; j < nbytes; j++) {
        unsigned byte = (mask[j / 4] >> (8 * (j % 4))) & 0xffu;
        if (j == nbytes - 1 && nbits % 8) byte &= (1u << (nbits % 8)) - 1u;
        h = (h ^ byte) * 0x100000001b3ull;
    }
    for (int k = 0; k < 8; k++) h = (h ^ ((nbits >> (8 * k)) & 0xffu)) * 0x100000001b3ull;
    return h;
}

int listing_key_format(const struct listing_key *k, char *buf, size_t len) {
    int n = snprintf(buf, len,
                     "cubin=%016llx driver=%d/%s device=%s kernel=%s mode=%d mask=%016llx grid=%u block=%ux%u "
                     "iterations=%u",
                     (unsigned long long)k->cubin_crc, k->driver_version, k->nvidia_driver, k->device, k->kernel,
                     k->mode, (unsigned long long)k->mask_hash, k->blocks, k->block_x, k->block_y, k->iterations);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
