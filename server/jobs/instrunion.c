/* instrunion.c -- see instrunion.h. */
#include "server/jobs/instrunion.h"

#include <stdio.h>
#include <string.h>

#include "kernels/base/status.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/plan.h"
#include "server/core/log.h"

/* The union of the batch's Part 1 tables as one request (`u`) and its
 * planned report (returned; NULL when the rows do not fit one table or out
 * of memory): every distinct row of the readers once, the first reader's
 * baseline among them, on the grid they ran. */
struct dv_report *instrunion_report(const struct dv_options *const *o, struct dv_report *const *r, unsigned n,
                                      struct dv_options *u) {
    *u = *o[0];
    u->part = DV_PART_1;
    u->npredicates = 0;
    u->blocks = r[0]->config.blocks;
    snprintf(u->baseline, sizeof u->baseline, "%s", r[0]->tables[0].baseline);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < r[i]->tables[0].nrows; j++) {
            const char *name = r[i]->tables[0].rows[j].name;
            int seen = 0;
            for (unsigned k = 0; k < u->npredicates && !seen; k++) seen = strcmp(u->predicates[k], name) == 0;
            if (seen) continue;
            if (u->npredicates >= DV_MAX_ROWS) return NULL;
            snprintf(u->predicates[u->npredicates++], PREDICATE_TEXT_LEN, "%s", name);
        }
    struct dv_report *ur = experiment_report_create();
    char err[ERR_LEN];
    if (!ur || plan_report(u, ur, NULL, err) != 0 || ur->ntables != 1) {
        if (ur) LOG(LOG_WARNING, "instructions: the batch's rows as one table: %s", err);
        experiment_report_free(ur);
        return NULL;
    }
    ur->device = r[0]->device;
    for (unsigned j = 0; j < ur->tables[0].nrows; j++) ur->tables[0].rows[j].measured = 1;
    return ur;
}

/* Reader `r`'s rows' profiles from the union's report `ur` (copies), and
 * its testimony: taken when each of its rows has one, else the reason of
 * its own first row without (why[k]: union row k's). */
void instrunion_hand_back(const struct dv_report *ur, char (*why)[ERR_LEN], struct dv_report *r) {
    struct dv_testimony *tm = &r->testimony;
    const struct dv_table *ut = &ur->tables[0];
    struct dv_table *t = &r->tables[0];
    tm->instructions_requested = 1;
    tm->instructions_taken = 1;
    tm->instructions_cached_rows = 0;
    tm->instructions_reason[0] = '\0';
    tm->instructions_ms = ur->testimony.instructions_ms;
    for (unsigned j = 0; j < t->nrows; j++) {
        struct dv_row *row = &t->rows[j];
        unsigned k = 0;
        while (k < ut->nrows && !experiment_row_same_run(&ut->rows[k], row)) k++;
        listing_free(row->instructions);
        row->instructions = k < ut->nrows && ut->rows[k].instructions ? listing_copy(ut->rows[k].instructions) : NULL;
        if (row->instructions) {
            tm->instructions_cached_rows += row->instructions->cached;
            continue;
        }
        tm->instructions_taken = 0;
        if (!tm->instructions_reason[0])
            dv_seterr(tm->instructions_reason, "%s row %s: %s", t->id, row->name,
                      k < ut->nrows && why[k][0] ? why[k] : "no profile was collected");
    }
}

/* 1 when report `r` (of request `o`) ran what reader 0 (`o0`, `r0`) ran
 * but for its rows: one Part 1 table each, of one kernel, on one grid. */
int instrunion_same_run(const struct dv_options *o0, const struct dv_report *r0, const struct dv_options *o,
                    const struct dv_report *r) {
    return r->ntables == 1 && r0->ntables == 1 && strcmp(r->tables[0].id, "part1") == 0 &&
           strcmp(r0->tables[0].id, "part1") == 0 && strcmp(r->tables[0].kernel, r0->tables[0].kernel) == 0 &&
           r->config.blocks == r0->config.blocks && r->config.block_x == r0->config.block_x &&
           r->config.block_y == r0->config.block_y && r->config.iterations == r0->config.iterations &&
           o->instructions == o0->instructions;
}

