/* reference.c -- the CPU reference for every Part 1 and Part 2 row.
 *
 * Part 1 and the no-branch row need only two chain results per distinct
 * input (reference_chains). The per-iteration rows choose a side every
 * iteration, so a thread's result depends on its sequence of choices: for
 * the built-ins that sequence is periodic in the phase with a period dividing
 * 64, so a thread's class is the 64-bit pattern of its first 64 choices, and
 * the chain is computed once per (class, distinct input). The period claim is
 * checked for each class before it is used, not assumed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/chain.h"
#include "kernels/base/hostfma.h"
#include "kernels/model/model/reference.h"
#include "kernels/model/model/experiment.h"

void reference_input(float *in, unsigned long long n) {
    for (unsigned long long i = 0; i < n; i++) in[i] = dv_input_value(i);
}

DV_FMA_CLONES int reference_chains(unsigned iterations, float *a, float *b, char *err) {
    for (unsigned v = 0; v < DV_INPUT_DISTINCT; v++) {
        float xa = dv_input_value(v), xb = xa;
        for (unsigned k = 0; k < iterations; k++) {
            xa = fmaf(xa, DV_MUL_A, DV_ADD_A);
            xb = fmaf(xb, DV_MUL_B, DV_ADD_B);
        }
        a[v] = xa;
        b[v] = xb;
        if (xa == xb) {
            dv_seterr(err, "reference: input %.9g gives %.9g on both paths after %u iterations", dv_input_value(v),
                      xa, iterations);
            return -1;
        }
    }
    return 0;
}

/* A row that evaluates its branch once (phase 0): the path mask says which
 * chain each thread ran (all of path A for the no-branch kernel, whose
 * predicate is always-a). A word of the mask at a time: its 32 threads'
 * expected bits against the output's, and only a word with a difference
 * goes through dv_check_add() element by element, so the first mismatch and
 * the count are what the element-by-element check gives. */
static void check_by_mask(const struct dv_geometry *g, const uint32_t *mask, const float *a, const float *b,
                          const float *out, struct dv_check *check) {
    const unsigned long long n = dv_grid_threads(g);
    unsigned v = 0; /* i % DV_INPUT_DISTINCT */
    for (unsigned long long base = 0; base < n; base += 32) {
        const unsigned count = n - base < 32 ? (unsigned)(n - base) : 32u;
        const uint32_t bits = mask[base >> 5];
        const unsigned v0 = v;
        uint32_t differ = 0;
        for (unsigned k = 0; k < count; k++) {
            const float want = ((bits >> k) & 1u) ? a[v] : b[v];
            uint32_t ew, gw;
            memcpy(&ew, &want, sizeof ew);
            memcpy(&gw, &out[base + k], sizeof gw);
            differ |= ew ^ gw;
            if (++v == DV_INPUT_DISTINCT) v = 0;
        }
        if (!differ) {
            check->checked += count;
            continue;
        }
        v = v0;
        for (unsigned k = 0; k < count; k++) {
            dv_check_add(check, base + k, ((bits >> k) & 1u) ? a[v] : b[v], out[base + k]);
            if (++v == DV_INPUT_DISTINCT) v = 0;
        }
    }
}

/* Per-iteration rows: classes of choice sequences. */
struct periter_class {
    uint64_t pattern;
    float *values; /* DV_INPUT_DISTINCT results, computed on first use */
};

/* The first 64 choices of thread `t` as bits (bit k set: path A at phase k). */
static int choice_pattern(const struct predicate *p, const struct predicate_thread *t, uint64_t *pattern, char *err) {
    uint64_t bits = 0;
    for (unsigned k = 0; k < 64; k++) {
        int a = predicate_eval(p, t, k, NULL, err);
        if (a < 0) return -1;
        if (a) bits |= 1ull << k;
    }
    *pattern = bits;
    return 0;
}

DV_FMA_CLONES static float *periter_values(struct periter_class *c, const struct predicate *p, const struct predicate_thread *t,
                             unsigned iterations, char *err) {
    if (c->values) return c->values;
    /* Confirm the 64-phase pattern really repeats for this thread. */
    for (unsigned k = 64; k < iterations && k < 256; k++) {
        int want = (int)((c->pattern >> (k & 63)) & 1u);
        int got = predicate_eval(p, t, k, NULL, err);
        if (got < 0) return NULL;
        if (got != want) {
            dv_seterr(err, "reference: predicate '%s' is not periodic in 64 phases", p->name);
            return NULL;
        }
    }
    float *x = c->values = malloc(DV_INPUT_DISTINCT * sizeof(float));
    if (!x) {
        dv_seterr(err, "reference: out of memory");
        return NULL;
    }
    /* Every input's chain, step by step side by side (one iteration of all
     * of them, then the next): the same operations per input, with
     * independent work for the multiply-add units. */
    for (unsigned v = 0; v < DV_INPUT_DISTINCT; v++) x[v] = dv_input_value(v);
    for (unsigned k = 0; k < iterations; k++) {
        if ((c->pattern >> (k & 63)) & 1u)
            for (unsigned v = 0; v < DV_INPUT_DISTINCT; v++) x[v] = fmaf(x[v], DV_MUL_A, DV_ADD_A);
        else
            for (unsigned v = 0; v < DV_INPUT_DISTINCT; v++) x[v] = fmaf(x[v], DV_MUL_B, DV_ADD_B);
    }
    return c->values;
}

#define MAX_CLASSES 64

/* A row that evaluates predicate `p` every iteration (phase k): each thread's
 * result is that of its class of choice sequences, computed once per class.
 * A predicate that does not read blockIdx.x gives every block block 0's
 * classes. */
static int check_per_iteration(const struct predicate *p, const struct dv_geometry *g, unsigned iterations,
                               const float *out, struct dv_check *check, char *err) {
    struct periter_class classes[MAX_CLASSES];
    unsigned nclasses = 0;
    int rc = -1;
    const unsigned tpb = g->block_x * g->block_y;
    const int per_block = predicate_reads_block(p);
    const float **cls = malloc(sizeof(*cls) * tpb);
    if (!cls) {
        dv_seterr(err, "reference: out of memory");
        return -1;
    }
    for (unsigned blk = 0; blk < g->blocks; blk++) {
        for (unsigned t = 0; (blk == 0 || per_block) && t < tpb; t++) {
            const struct predicate_thread th = {t % g->block_x, t / g->block_x, blk, g->block_x, g->block_y};
            uint64_t pattern;
            if (choice_pattern(p, &th, &pattern, err) != 0) goto cleanup;
            unsigned c = 0;
            while (c < nclasses && classes[c].pattern != pattern) c++;
            if (c == nclasses) {
                if (nclasses == MAX_CLASSES) {
                    dv_seterr(err, "reference: more than %d choice patterns", MAX_CLASSES);
                    goto cleanup;
                }
                classes[nclasses].pattern = pattern;
                classes[nclasses].values = NULL;
                nclasses++;
            }
            if (!(cls[t] = periter_values(&classes[c], p, &th, iterations, err))) goto cleanup;
        }
        const unsigned long long base = (unsigned long long)blk * tpb;
        for (unsigned t = 0; t < tpb; t++) {
            unsigned long long i = base + t;
            dv_check_add(check, i, cls[t][i % DV_INPUT_DISTINCT], out[i]);
        }
    }
    rc = 0;
cleanup:
    free(cls);
    for (unsigned c = 0; c < nclasses; c++) free(classes[c].values);
    return rc;
}

int reference_check(const struct dv_row *row, const struct dv_geometry *g, const uint32_t *mask, const float *a,
                    const float *b, unsigned iterations, const float *out, struct dv_check *check, char *err) {
    dv_check_init(check);
    int rc = 0;
    if (experiment_row_evaluations(row, iterations) == 1) {
        if (!mask) {
            dv_seterr(err, "reference: row '%s' needs its path mask", row->name);
            return -1;
        }
        check_by_mask(g, mask, a, b, out, check);
    } else {
        struct predicate p;
        if (experiment_row_predicate(row, &p, err) != 0) return -1;
        rc = check_per_iteration(&p, g, iterations, out, check, err);
        predicate_cleanup(&p);
        if (rc != 0) return -1;
    }
    check->ok = check->mismatches == 0 && check->checked == dv_grid_threads(g);
    return 0;
}
