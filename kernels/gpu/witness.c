/* witness.c -- the witness pass of a table (witness.h).
 *
 * Everything goes on the default stream, one batch of rows at a time: per
 * row a zeroing of its records (a block that never wrote its record reads
 * as one that saw nothing, not as the previous row's), the launch and the
 * copy back, so the GPU runs the batch's witness kernels back to back
 * while the CPU builds the model's records; one synchronisation per batch.
 * Only a table whose rows fit one batch is queued by witness_start(), so
 * that the caller's work between start and finish never has to wait for a
 * second batch (nor, after a sticky error of its own, leave one unread).
 */
#include "kernels/gpu/witness.h"

#include <string.h>

#include <cuda_runtime_api.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/session.h"
#include "kernels/model/testimony.h"

/* Queues row `row`'s zeroing, launch and copy into `host`. */
static unsigned launched(const struct witness_rows *w, unsigned row) {
    return w->row_blocks && w->row_blocks[row] > 0 && w->row_blocks[row] < w->blocks ? w->row_blocks[row] : w->blocks;
}

static int enqueue(const struct witness_rows *w, unsigned row, struct dv_witness_block *d_rec,
                   struct dv_witness_block *host, char *err) {
    const size_t bytes = sizeof(struct dv_witness_block) * launched(w, row);
    int rc;
    if ((rc = DV_CUDA_CALL(cudaMemsetAsync(d_rec, 0, bytes, 0), err)) != 0) return rc;
    if ((rc = w->launch(w->ctx, row, d_rec, err)) != 0) return rc;
    return DV_CUDA_CALL(cudaMemcpyAsync(host, d_rec, bytes, cudaMemcpyDeviceToHost, 0), err);
}

/* After a failure: what was queued is waited for (the buffers are reused),
 * and a sticky error found there outranks `rc`. */
static int drain(int rc) {
    char ignored[ERR_LEN];
    return DV_CUDA_CALL(cudaStreamSynchronize(0), ignored) == DV_ESTICKY ? DV_ESTICKY : rc;
}

/* Queues rows first..first+n-1 into the buffers and builds their models. */
static int batch_queue(struct witness_pass *p, unsigned first, unsigned n, char *err) {
    const struct witness_rows *w = p->w;
    for (unsigned k = 0; k < n; k++) {
        const size_t off = (size_t)k * w->blocks;
        int rc = enqueue(w, first + k, p->d_rec + off, p->seen + off, err);
        if (rc != 0) return drain(rc);
    }
    for (unsigned k = 0; k < n; k++)
        if (w->expect(w->ctx, first + k, p->exp + (size_t)k * w->blocks, err) != 0) return drain(DV_ERR);
    return 0;
}

static void batch_observe(const struct witness_pass *p, unsigned first, unsigned n) {
    for (unsigned k = 0; k < n; k++) {
        const size_t off = (size_t)k * p->w->blocks;
        /* The blocks not run take the records of the ones that stand for them. */
        testimony_repeat(p->seen + off, p->w->blocks, launched(p->w, first + k));
        p->w->observe(p->w->ctx, first + k, p->seen + off, p->exp + off);
    }
}

int witness_start(struct session *s, const struct witness_rows *w, struct witness_pass *p, char *err) {
    memset(p, 0, sizeof *p);
    p->w = w;
    p->s = s;
    if (w->nrows == 0 || w->blocks == 0) return 0;
    const size_t row_bytes = sizeof(struct dv_witness_block) * w->blocks;
    p->per = (unsigned)(WITNESS_BATCH_BYTES / row_bytes);
    if (p->per < 1) p->per = 1;
    if (p->per > w->nrows) p->per = w->nrows;
    int rc = session_witness(s, w->blocks * p->per, &p->d_rec, &p->seen, &p->exp, err);
    if (rc != 0 || p->per < w->nrows) return rc;
    if ((rc = batch_queue(p, 0, w->nrows, err)) != 0) return rc;
    p->queued = 1;
    return 0;
}

int witness_settle(struct witness_pass *p, char *err) {
    if (p->queued && !p->settled) {
        const double t0 = timeutil_now_ms();
        p->rc = DV_CUDA_CALL(cudaStreamSynchronize(0), p->err);
        p->settle_ms += timeutil_now_ms() - t0;
        p->settled = 1;
    }
    if (p->rc != 0) dv_seterr(err, "%s", p->err);
    return p->rc;
}

int witness_finish(struct witness_pass *p, char *err) {
    const struct witness_rows *w = p->w;
    if (!w || w->nrows == 0 || w->blocks == 0) return 0;
    int rc;
    if (p->queued) {
        if ((rc = witness_settle(p, err)) != 0) return rc;
        batch_observe(p, 0, w->nrows);
        return 0;
    }
    for (unsigned first = 0; first < w->nrows; first += p->per) {
        const unsigned n = w->nrows - first < p->per ? w->nrows - first : p->per;
        if ((rc = batch_queue(p, first, n, err)) != 0) return rc;
        if ((rc = DV_CUDA_CALL(cudaStreamSynchronize(0), err)) != 0) return rc;
        batch_observe(p, first, n);
    }
    return 0;
}
