/* batchplan.c -- readers' tables on shared rounds (batchplan.h).
 *
 * The union is built once: the rows of every reader in reader order, each
 * distinct row once, the first reader's baseline moved to the middle. A
 * reader's samples live in its own struct sampling; each filing copies its
 * rows' times out of the union's round, so nothing a reader's rule reads
 * comes from a row it did not ask for. */
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

/* The union's rows: every reader's, each once, the first reader's baseline
 * in the middle of the round. Returns 0, or -1 with `err` past DV_MAX_ROWS. */
static int union_rows(struct dv_table *const *tables, unsigned n, struct dv_table *u, char *err) {
    const struct dv_row *base = &tables[0]->rows[tables[0]->baseline_row];
    const struct dv_row *list[DV_MAX_ROWS];
    unsigned count = 0, distinct = 1; /* the baseline */
    u->nrows = 0;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < tables[i]->nrows; j++) {
            const struct dv_row *row = &tables[i]->rows[j];
            int seen = experiment_row_same_run(row, base);
            for (unsigned k = 0; k < count && !seen; k++) seen = experiment_row_same_run(list[k], row);
            if (seen) continue;
            if (++distinct > DV_MAX_ROWS) {
                dv_seterr(err, "batch: the readers' tables have more than %u distinct rows", DV_MAX_ROWS);
                return DV_ERR;
            }
            list[count++] = row;
        }
    }
    const unsigned middle = count / 2;
    for (unsigned k = 0; k <= count; k++) {
        const struct dv_row *src = k < middle ? list[k] : k == middle ? base : list[k - 1];
        u->rows[u->nrows++] = *src;
        u->rows[u->nrows - 1].instructions = NULL; /* the reader's to own, never the union's */
    }
    u->baseline_row = (int)middle;
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

unsigned batchplan_next(const struct batchplan *b, unsigned batch, unsigned *rows, unsigned *rounds) {
    unsigned char wanted[DV_MAX_ROWS] = {0};
    unsigned room = batch;
    for (unsigned i = 0; i < b->nreaders; i++) {
        const struct batchplan_reader *rd = &b->readers[i];
        if (rd->done) continue;
        for (unsigned j = 0; j < rd->t->nrows; j++) wanted[rd->row[j]] = 1;
        const unsigned r = sampling_room(&rd->s, batch);
        if (r < room) room = r;
    }
    /* Each wanted row, then the baseline: every row is timed right after a
     * baseline launch and followed by one, as alone (where a table of a
     * row and its baseline alternates them), so no row is timed in another
     * launch order than the one it has alone. */
    const unsigned base = (unsigned)b->u->baseline_row;
    unsigned n = 0;
    for (unsigned k = 0; k < b->u->nrows; k++)
        if (wanted[k] && k != base) {
            rows[n++] = k;
            rows[n++] = base;
        }
    if (n == 0 && wanted[base]) rows[n++] = base;
    *rounds = n ? room : 0;
    return n;
}

/* Where a round's launches are: for union row k (not the baseline) at[k]
 * its launch and pair[k] the baseline launch right after it (-1: not
 * launched), and first_base the round's first baseline launch. */
struct slots {
    int at[DV_MAX_ROWS], pair[DV_MAX_ROWS], first_base;
};

/* The place of reader `rd`'s row j in the round: its own launch, or for its
 * baseline the baseline launch right after its last row launched (the one
 * it is timed beside), -1 when not launched. */
static int reader_slot(const struct batchplan *b, const struct batchplan_reader *rd, const struct slots *sl,
                       unsigned j) {
    const unsigned base = (unsigned)b->u->baseline_row, k = rd->row[j];
    if (k != base) return sl->at[k];
    int last = -1, pair = sl->first_base;
    for (unsigned q = 0; q < rd->t->nrows; q++) {
        const unsigned kq = rd->row[q];
        if (kq != base && sl->at[kq] > last) {
            last = sl->at[kq];
            pair = sl->pair[kq];
        }
    }
    return pair;
}

/* Files the rounds into reader `rd`: its rows' times out of the union's. */
static int reader_file(const struct batchplan *b, struct batchplan_reader *rd, unsigned n, const struct slots *sl,
                       unsigned rounds, const double *ms, double mhz, char *err) {
    double own_ms = 0;
    for (unsigned j = 0; j < rd->t->nrows; j++) {
        const int at = reader_slot(b, rd, sl, j);
        if (at < 0) {
            dv_seterr(err, "batch: row %s of a reader still sampling was not in the rounds", rd->t->rows[j].name);
            return DV_ERR;
        }
        double *dst = sampling_row(&rd->s, j) + rd->s.taken;
        for (unsigned k = 0; k < rounds; k++) {
            dst[k] = ms[(size_t)k * n + (unsigned)at];
            own_ms += dst[k];
        }
    }
    enum stoprule_reason why = STOPRULE_CONTINUE;
    if (sampling_file(&rd->s, rounds, mhz, own_ms, &why, err) != 0) return DV_ERR;
    rd->done = why != STOPRULE_CONTINUE;
    return 0;
}

int batchplan_file(struct batchplan *b, unsigned n, const unsigned *rows, unsigned rounds, const double *ms,
                   double mhz, char *err) {
    struct slots sl;
    const unsigned base = (unsigned)b->u->baseline_row;
    sl.first_base = -1;
    for (unsigned k = 0; k < DV_MAX_ROWS; k++) sl.at[k] = sl.pair[k] = -1;
    if (n > BATCHPLAN_MAX_LAUNCHES) {
        dv_seterr(err, "batch: %u launches in a round, at most %u", n, BATCHPLAN_MAX_LAUNCHES);
        return DV_ERR;
    }
    for (unsigned i = 0; i < n; i++) {
        if (rows[i] >= b->u->nrows) {
            dv_seterr(err, "batch: union row %u of %u", rows[i], b->u->nrows);
            return DV_ERR;
        }
        if (rows[i] == base) {
            if (sl.first_base < 0) sl.first_base = (int)i;
            if (i > 0 && rows[i - 1] != base) sl.pair[rows[i - 1]] = (int)i;
        } else {
            sl.at[rows[i]] = (int)i;
        }
    }
    for (unsigned i = 0; i < b->nreaders; i++) {
        struct batchplan_reader *rd = &b->readers[i];
        if (!rd->done && reader_file(b, rd, n, &sl, rounds, ms, mhz, err) != 0) return DV_ERR;
    }
    for (size_t k = 0; k < (size_t)rounds * n; k++) b->gpu_ms += ms[k];
    b->rounds += rounds;
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
