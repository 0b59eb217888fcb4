/* batchplan.c -- readers' tables measured one after another in one session
 * (batchplan.h).
 *
 * The union is built once: the rows of every reader in reader order, each
 * distinct row once. A reader's samples live in its own struct sampling;
 * the rounds launched for it are its own table's rows, so nothing its rule
 * reads comes from a row it did not ask for. */
#include "kernels/model/stats/batchplan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/model/model/experiment.h"

/* The union row that runs what `row` runs, or -1. */
static int union_find(const struct dv_table *u, const struct dv_row *row) {
    for (unsigned i = 0; i < u->nrows; i++)
        if (experiment_row_same_run(&u->rows[i], row)) return (int)i;
    return -1;
}

/* The union's rows: the first reader's in its order, then every other
 * reader's not yet in, each once. Returns 0, or -1 with `err` past
 * DV_MAX_ROWS. */
static int union_rows(struct dv_table *const *tables, unsigned n, struct dv_table *u, char *err) {
    u->nrows = 0;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < tables[i]->nrows; j++) {
            const struct dv_row *row = &tables[i]->rows[j];
            if (union_find(u, row) >= 0) continue;
            if (u->nrows == DV_MAX_ROWS) {
                dv_seterr(err, "batch: the readers' tables have more than %u distinct rows", DV_MAX_ROWS);
                return DV_ERR;
            }
            u->rows[u->nrows] = *row;
            u->rows[u->nrows++].instructions = NULL; /* the reader's to own, never the union's */
        }
    }
    u->baseline_row = union_find(u, &tables[0]->rows[tables[0]->baseline_row]);
    return 0;
}

int batchplan_init(struct batchplan *b, struct dv_table *const *tables, const struct dv_options *const *opts,
                   unsigned n, double rated_mhz, struct dv_table *u, char *err) {
    memset(b, 0, sizeof(*b));
    if (n == 0 || n > BATCHPLAN_MAX_READERS) {
        dv_seterr(err, "batch: readers: %u is outside 1..%u", n, BATCHPLAN_MAX_READERS);
        return DV_ERR;
    }
    for (unsigned i = 0; i < n; i++) {
        const struct dv_table *t = tables[i];
        if (t->nrows == 0 || t->nrows > DV_MAX_ROWS || t->baseline_row < 0 || (unsigned)t->baseline_row >= t->nrows) {
            dv_seterr(err, "batch: reader %u: a table of %u rows with baseline row %d", i, t->nrows, t->baseline_row);
            return DV_ERR;
        }
    }
    memset(u, 0, sizeof(*u));
    snprintf(u->id, sizeof(u->id), "%s", tables[0]->id);
    snprintf(u->title, sizeof(u->title), "%s", tables[0]->title);
    snprintf(u->kernel, sizeof(u->kernel), "%s", tables[0]->kernel);
    snprintf(u->baseline, sizeof(u->baseline), "%s", tables[0]->baseline);
    if (union_rows(tables, n, u, err) != 0) return DV_ERR;
    b->u = u;
    b->last_mhz = NAN;
    b->nreaders = n;
    for (unsigned i = 0; i < n; i++) {
        struct batchplan_reader *rd = &b->readers[i];
        rd->t = tables[i];
        for (unsigned j = 0; j < rd->t->nrows; j++) rd->row[j] = (unsigned)union_find(u, &rd->t->rows[j]);
        if (rd->row[rd->t->baseline_row] != (unsigned)u->baseline_row) {
            dv_seterr(err, "batch: reader %u's baseline is not the first reader's (%s)", i, u->baseline);
            return DV_ERR;
        }
        if (sampling_init(&rd->s, rd->t->nrows, (unsigned)rd->t->baseline_row, opts[i], rated_mhz, err) != 0)
            return DV_ERR;
        /* Each row's ratio over the row its own table compares it with. */
        unsigned ref[DV_MAX_ROWS];
        for (unsigned j = 0; j < rd->t->nrows && j < DV_MAX_ROWS; j++) ref[j] = dv_row_reference(rd->t, j);
        if (sampling_references(&rd->s, ref, err) != 0) return DV_ERR;
    }
    return 0;
}

void batchplan_cleanup(struct batchplan *b) {
    for (unsigned i = 0; i < b->nreaders && i < BATCHPLAN_MAX_READERS; i++) sampling_cleanup(&b->readers[i].s);
    b->nreaders = 0;
}

/* Whether reader `rd`'s rows, in its table's order, are the launches
 * rows[0..n). */
static int reader_launches(const struct batchplan_reader *rd, unsigned n, const unsigned *rows) {
    if (rd->t->nrows != n) return 0;
    for (unsigned j = 0; j < n; j++)
        if (rd->row[j] != rows[j]) return 0;
    return 1;
}

unsigned batchplan_next(struct batchplan *b, unsigned batch, unsigned *rows, unsigned *rounds) {
    const unsigned cap = BATCHPLAN_MAX_LAUNCHES * batch;
    unsigned char planned[BATCHPLAN_MAX_READERS] = {0};
    unsigned n = 0;
    b->nsegs = 0;
    for (unsigned i = 0; i < b->nreaders; i++) {
        const struct batchplan_reader *rd = &b->readers[i];
        if (rd->done || planned[i]) continue;
        const unsigned nr = rd->t->nrows;
        /* Readers with the very same launches read the same rounds: as
         * many as each of them has room for. */
        unsigned want = sampling_want(&rd->s, batch, cap / nr);
        for (unsigned k = i; k < b->nreaders; k++) {
            const struct batchplan_reader *q = &b->readers[k];
            if (q->done || !reader_launches(q, nr, rd->row)) continue;
            const unsigned r = sampling_room(&q->s, want);
            if (r < want) want = r;
        }
        if (want * nr > cap) want = cap / nr; /* never: sampling_want() bounds it */
        if (n + want * nr > cap) break;       /* the next batch's */
        for (unsigned k = i; k < b->nreaders; k++)
            if (!b->readers[k].done && reader_launches(&b->readers[k], nr, rd->row)) planned[k] = 1;
        b->segs[b->nsegs++] = (struct batchplan_seg){i, n, want};
        for (unsigned k = 0; k < want; k++)
            for (unsigned j = 0; j < nr; j++) rows[n++] = rd->row[j];
    }
    *rounds = n ? 1 : 0;
    return n;
}

/* Files `rounds` rounds of reader `rd`'s rows, row j of round k at
 * ms[k * nrows + j]. */
static int reader_file(struct batchplan_reader *rd, unsigned rounds, const double *ms, double mhz, char *err) {
    const unsigned n = rd->t->nrows;
    double own_ms = 0;
    for (unsigned j = 0; j < n; j++) {
        double *dst = sampling_row(&rd->s, j) + rd->s.taken;
        for (unsigned k = 0; k < rounds; k++) {
            dst[k] = ms[(size_t)k * n + j];
            own_ms += dst[k];
        }
    }
    enum stoprule_reason why = STOPRULE_CONTINUE;
    if (sampling_file(&rd->s, rounds, mhz, own_ms, &why, err) != 0) return DV_ERR;
    rd->done = why != STOPRULE_CONTINUE;
    return 0;
}

/* Whether rows[0..n) are the launches the last batchplan_next() planned. */
static int planned_launches(const struct batchplan *b, unsigned n, const unsigned *rows) {
    unsigned at = 0;
    for (unsigned g = 0; g < b->nsegs; g++) {
        const struct batchplan_seg *sg = &b->segs[g];
        const struct batchplan_reader *rd = &b->readers[sg->reader];
        if (sg->at != at || at + sg->rounds * rd->t->nrows > n) return 0;
        for (unsigned k = 0; k < sg->rounds; k++, at += rd->t->nrows)
            if (!reader_launches(rd, rd->t->nrows, rows + at)) return 0;
    }
    return at == n && n > 0;
}

int batchplan_file(struct batchplan *b, unsigned n, const unsigned *rows, unsigned rounds, const double *ms,
                   double mhz, char *err) {
    if (rounds != 1 || !planned_launches(b, n, rows)) {
        dv_seterr(err, "batch: %u rounds of %u launches that are not the batch planned last", rounds, n);
        return DV_ERR;
    }
    if (isfinite(mhz)) b->last_mhz = mhz;
    for (unsigned g = 0; g < b->nsegs; g++) {
        const struct batchplan_seg *sg = &b->segs[g];
        const struct batchplan_reader *first = &b->readers[sg->reader];
        for (unsigned i = sg->reader; i < b->nreaders; i++) {
            struct batchplan_reader *rd = &b->readers[i];
            if (rd->done || !reader_launches(rd, first->t->nrows, first->row)) continue;
            /* The clock read before the batch is the first segment's; a
             * reader's first rounds carry the last reading where none was
             * read just before them, as alone its first batch has one. */
            const double at = g == 0 && isfinite(mhz) ? mhz : rd->s.taken == 0 ? b->last_mhz : NAN;
            if (reader_file(rd, sg->rounds, ms + sg->at, at, err) != 0) return DV_ERR;
        }
        b->rounds += sg->rounds;
    }
    b->nsegs = 0;
    for (size_t k = 0; k < n; k++) b->gpu_ms += ms[k];
    return 0;
}

void batchplan_report(const struct batchplan *b) {
    for (unsigned i = 0; i < b->nreaders; i++) {
        const struct batchplan_reader *rd = &b->readers[i];
        sampling_report(&rd->s, rd->t);
        /* A batch of one is a table measured alone, and says nothing. */
        rd->t->batch_readers = b->nreaders > 1 ? b->nreaders : 0;
        rd->t->batch_rows = b->nreaders > 1 ? b->u->nrows : 0;
    }
}
