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

#include "kernels/model/chain.h"
#include "kernels/model/reference.h"

void reference_input(float *in, unsigned long long n) {
    for (unsigned long long i = 0; i < n; i++) in[i] = dv_input_value(i);
}

int reference_chains(unsigned iterations, float *a, float *b, char *err) {
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

/* Per-iteration rows: classes of choice sequences. */
struct periter_class {
    uint64_t pattern;
    float *values; /* DV_INPUT_DISTINCT results, computed on first use */
};

static uint64_t choice_pattern(int mode, unsigned tid, unsigned block) {
    uint64_t p = 0;
    for (unsigned k = 0; k < 64; k++)
        if (dv_takes_path_a(mode, tid, block, k)) p |= 1ull << k;
    return p;
}

static float *periter_values(struct periter_class *c, int mode, unsigned tid, unsigned block, unsigned iterations,
                             char *err) {
    if (c->values) return c->values;
    /* Confirm the 64-phase pattern really repeats for this thread. */
    for (unsigned k = 64; k < iterations && k < 256; k++) {
        int want = (int)((c->pattern >> (k & 63)) & 1u);
        if ((int)dv_takes_path_a(mode, tid, block, k) != want) {
            dv_seterr(err, "reference: mode %d is not periodic in 64 phases", mode);
            return NULL;
        }
    }
    c->values = malloc(DV_INPUT_DISTINCT * sizeof(float));
    if (!c->values) {
        dv_seterr(err, "reference: out of memory");
        return NULL;
    }
    for (unsigned v = 0; v < DV_INPUT_DISTINCT; v++) {
        float x = dv_input_value(v);
        for (unsigned k = 0; k < iterations; k++)
            x = ((c->pattern >> (k & 63)) & 1u) ? fmaf(x, DV_MUL_A, DV_ADD_A) : fmaf(x, DV_MUL_B, DV_ADD_B);
        c->values[v] = x;
    }
    return c->values;
}

#define MAX_CLASSES 64

int reference_check(const struct dv_row *row, const struct dv_geometry *g, const uint32_t *mask, const float *a,
                    const float *b, unsigned iterations, const float *out, struct dv_check *check, char *err) {
    dv_check_init(check);
    const unsigned tpb = g->block_x * g->block_y;
    const unsigned long long n = analysis_threads(g);

    if (row->kernel == DV_KERNEL_BRANCH || row->kernel == DV_KERNEL_MASK) {
        for (unsigned long long i = 0; i < n; i++) {
            unsigned v = (unsigned)(i % DV_INPUT_DISTINCT);
            int on_a = (int)((mask[i >> 5] >> (i & 31)) & 1u);
            dv_check_add(check, i, on_a ? a[v] : b[v], out[i]);
        }
    } else if (row->kernel == DV_KERNEL_NOBRANCH) {
        for (unsigned long long i = 0; i < n; i++) dv_check_add(check, i, a[i % DV_INPUT_DISTINCT], out[i]);
    } else if (row->kernel == DV_KERNEL_PERITER) {
        struct periter_class classes[MAX_CLASSES];
        unsigned nclasses = 0;
        int rc = -1;
        /* Class of each thread of a block. Only block parity reads blockIdx.x:
         * for every other mode the classes of block 0 hold for all blocks. */
        const int per_block = row->mode == DV_BLOCK_PARITY;
        const float **cls = malloc(sizeof(*cls) * tpb);
        if (!cls) {
            dv_seterr(err, "reference: out of memory");
            return -1;
        }
        for (unsigned blk = 0; blk < g->blocks; blk++) {
            if (blk == 0 || per_block) {
                for (unsigned t = 0; t < tpb; t++) {
                    unsigned tx = t % g->block_x; /* the kernel passes threadIdx.x */
                    uint64_t p = choice_pattern(row->mode, tx, blk);
                    unsigned c = 0;
                    while (c < nclasses && classes[c].pattern != p) c++;
                    if (c == nclasses) {
                        if (nclasses == MAX_CLASSES) {
                            dv_seterr(err, "reference: more than %d choice patterns", MAX_CLASSES);
                            goto periter_done;
                        }
                        classes[nclasses].pattern = p;
                        classes[nclasses].values = NULL;
                        nclasses++;
                    }
                    if (!(cls[t] = periter_values(&classes[c], row->mode, tx, blk, iterations, err)))
                        goto periter_done;
                }
            }
            const unsigned long long base = (unsigned long long)blk * tpb;
            for (unsigned t = 0; t < tpb; t++) {
                unsigned long long i = base + t;
                dv_check_add(check, i, cls[t][i % DV_INPUT_DISTINCT], out[i]);
            }
        }
        rc = 0;
    periter_done:
        free(cls);
        for (unsigned c = 0; c < nclasses; c++) free(classes[c].values);
        if (rc != 0) return -1;
    } else {
        dv_seterr(err, "reference: kernel %d has no reference here", row->kernel);
        return -1;
    }
    check->ok = check->mismatches == 0 && check->checked == n;
    return 0;
}
