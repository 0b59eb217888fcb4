/* witness.c -- the witness pass of a table (witness.h).
 *
 * Everything goes on the default stream, one batch of rows at a time: per
 * row a zeroing of its records (a block that never wrote its record reads
 * as one that saw nothing, not as the previous row's), the launch and the
 * copy back, so the GPU runs the batch's witness kernels back to back
 * while the CPU builds the model's records; one synchronisation per batch.
 * A row's records are those of the blocks its kernel runs (the blocks that
 * stand for its grid), back to back with the other rows' in the buffers, so
 * the buffers, the copies, the model and the comparison all cost what those
 * blocks cost, not what the grid does.
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
#include "kernels/model/model/testimony.h"

/* The blocks row `row`'s witness kernel runs: the blocks that stand for
 * its grid, or the whole grid. */
static unsigned launched(const struct witness_rows *w, unsigned row) {
    return w->row_blocks && w->row_blocks[row] > 0 && w->row_blocks[row] < w->blocks ? w->row_blocks[row] : w->blocks;
}

/* Queues row `row`'s zeroing, launch and copy into `host`. */
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

/* The rows from `first` whose records fit `room` together (one at least),
 * and their records. */
static unsigned batch_rows(const struct witness_rows *w, unsigned first, size_t room, size_t *records) {
    unsigned n = 0;
    *records = 0;
    while (first + n < w->nrows && (n == 0 || *records + launched(w, first + n) <= room)) *records += launched(w, first + n++);
    return n;
}

/* Queues rows first..first+n-1 into the buffers, one after the other, and
 * builds their models (of the blocks each runs). */
static int batch_queue(struct witness_pass *p, unsigned first, unsigned n, char *err) {
    const struct witness_rows *w = p->w;
    size_t off = 0;
    for (unsigned k = 0; k < n; k++) {
        int rc = enqueue(w, first + k, p->d_rec + off, p->seen + off, err);
        if (rc != 0) return drain(rc);
        off += launched(w, first + k);
    }
    off = 0;
    for (unsigned k = 0; k < n; k++) {
        const unsigned b = launched(w, first + k);
        if (w->expect(w->ctx, first + k, b, p->exp + off, err) != 0) return drain(DV_ERR);
        off += b;
    }
    return 0;
}

static void batch_observe(const struct witness_pass *p, unsigned first, unsigned n) {
    size_t off = 0;
    for (unsigned k = 0; k < n; k++) {
        const unsigned b = launched(p->w, first + k);
        p->w->observe(p->w->ctx, first + k, b, p->seen + off, p->exp + off);
        off += b;
    }
}

int witness_start(struct session *s, const struct witness_rows *w, struct witness_pass *p, char *err) {
    memset(p, 0, sizeof *p);
    p->w = w;
    p->s = s;
    if (w->nrows == 0 || w->blocks == 0) return 0;
    /* Room for every row's records when they fit one batch, else for the
     * biggest batch. */
    const size_t room = WITNESS_BATCH_BYTES / sizeof(struct dv_witness_block);
    size_t need = 0, records = 0;
    for (unsigned first = 0, n; first < w->nrows; first += n) {
        n = batch_rows(w, first, room, &records);
        if (first == 0) p->all = n == w->nrows;
        if (records > need) need = records;
    }
    int rc = session_witness(s, (unsigned)need, &p->d_rec, &p->seen, &p->exp, err);
    if (rc != 0 || !p->all) return rc;
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
    const size_t room = WITNESS_BATCH_BYTES / sizeof(struct dv_witness_block);
    size_t records = 0;
    for (unsigned first = 0, n; first < w->nrows; first += n) {
        n = batch_rows(w, first, room, &records);
        if ((rc = batch_queue(p, first, n, err)) != 0) return rc;
        if ((rc = DV_CUDA_CALL(cudaStreamSynchronize(0), err)) != 0) return rc;
        batch_observe(p, first, n);
    }
    return 0;
}
