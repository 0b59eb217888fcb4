/* intensity_measure.c -- the DRAM pass and the roofline of an
 * arithmetic-intensity table (intensity_measure.h).
 *
 * The counter pass of the testimony counts patched kernels on the blocks
 * that stand for a grid, which is exact for instruction counts but not for
 * DRAM traffic (one block does not miss in the L2 as a whole grid does).
 * So DRAM bytes come from a pass of their own: the row's timed kernel,
 * unpatched, on its whole grid, once, after a flush of the L2 (a memset of
 * a scratch buffer larger than any L2: it writes, and reads nothing from
 * DRAM), which is how Nsight Compute counts a launch by default
 * (--cache-control all).
 */
#include "kernels/gpu/intensity_measure.h"

#include <math.h>
#include <stdio.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/devmem.h"
#include "kernels/gpu/intensity_kernels.h"
#include "kernels/model/model/intensity.h"

/* Bytes the flush writes: four times the H200's 60 MB L2. */
#define INTENSITY_FLUSH_BYTES (256u << 20)

struct dram_ctx {
    struct scenario_rows *c;
    void *scratch;
};

static int dram_launch(void *p, unsigned row, const struct counters_span *span, char *err) {
    const struct dram_ctx *x = p;
    return scenario_rows_launch(x->c, row, 0, span->first, span->blocks, NULL, NULL, err);
}

static int dram_flush(void *p, unsigned row, char *err) {
    (void)row;
    return intensity_flush(((const struct dram_ctx *)p)->scratch, INTENSITY_FLUSH_BYTES, err);
}

/* The pass itself; 0, or a DV_* / COUNTERS_REFUSED code with `why`. */
static int dram_pass(struct scenario_rows *c, struct dv_table *t, struct counters *cnt, char *why) {
    struct dram_ctx x = {c, NULL};
    unsigned blocks[DV_MAX_ROWS];
    double bytes[DV_MAX_ROWS];
    int rc;
    if ((rc = DV_CUDA_CALL(cudaDeviceSynchronize(), why)) != 0) return rc;
    if ((rc = devmem_alloc(&x.scratch, INTENSITY_FLUSH_BYTES, why)) != 0) return rc;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) blocks[r] = c->blocks;
    const struct counters_launch l = {.launch = dram_launch, .wait = NULL, .ctx = &x, .before = dram_flush};
    rc = counters_dram(cnt, t->nrows, blocks, &l, bytes, why);
    devmem_free(x.scratch);
    for (unsigned r = 0; rc == 0 && r < t->nrows; r++) {
        t->rows[r].counters.dram_present = isfinite(bytes[r]);
        t->rows[r].counters.dram_bytes_read = bytes[r];
    }
    return rc;
}

int intensity_measure_dram(struct scenario_rows *c, struct dv_table *t, struct counters **cnt, struct dv_testimony *tm,
                           char *err) {
    char why[ERR_LEN] = "";
    int rc = 0;
    for (unsigned r = 0; r < t->nrows; r++) {
        t->rows[r].counters.dram_present = 0;
        t->rows[r].counters.dram_bytes_read = NAN;
    }
    t->dram_reason[0] = '\0';
    if (!*cnt) {
        snprintf(t->dram_reason, sizeof t->dram_reason, "%s",
                 tm->counters_reason[0] ? tm->counters_reason : "no counters were asked for");
    } else {
        const double t0 = timeutil_now_ms();
        rc = dram_pass(c, t, *cnt, why);
        tm->counters_ms += timeutil_now_ms() - t0;
        if (rc != 0) {
            dv_seterr(t->dram_reason, "DRAM pass of %s: %.400s", t->id, why);
            snprintf(tm->counters_reason, sizeof tm->counters_reason, "%s", t->dram_reason);
            counters_invalidate(*cnt);
            *cnt = NULL;
            for (unsigned r = 0; r < t->nrows; r++) t->rows[r].counters.dram_present = 0;
        }
    }
    intensity_derive(t);
    if (rc == DV_ESTICKY) {
        dv_seterr(err, "%s", t->dram_reason);
        return rc;
    }
    return 0;
}
