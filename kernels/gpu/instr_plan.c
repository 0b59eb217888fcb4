/* instr_plan.c -- the rows of an instruction-profiling process, planned
 * (instr_plan.h). The job's plan is plan_report()'s, the one the worker
 * measured; each row's is profile_plan_row()'s, the one the worker looked
 * the row's profile up by, so the blocks launched here are the blocks the
 * cache key names.
 */
#include "kernels/gpu/instr_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/scenario_rows.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/sort_rows.h"
#include "kernels/model/model/plan.h"

int instr_job_plan(struct instr_job *j, const struct dv_options *o, char *err) {
    memset(j, 0, sizeof *j);
    j->o = *o;
    if (j->o.blocks == 0) {
        dv_seterr(err, "instructions: the request's blocks must be the grid the row ran on, not auto");
        return -1;
    }
    if (!(j->r = experiment_report_create())) {
        dv_seterr(err, "instructions: out of memory");
        return -1;
    }
    if (plan_report(&j->o, j->r, NULL, err) != 0) return -1;
    j->g = (struct dv_geometry){j->r->config.blocks, j->r->config.block_x, j->r->config.block_y};
    return 0;
}

void instr_job_cleanup(struct instr_job *j) {
    session_free(j->s);
    experiment_report_free(j->r);
    memset(j, 0, sizeof *j);
}

void instr_row_init(struct instr_row *rr, struct instr_job *j, int table, int index) {
    memset(rr, 0, sizeof *rr);
    rr->j = j;
    rr->table = table;
    rr->index = index;
    listing_insns_init(&rr->samples);
    listing_insns_init(&rr->combined);
}

int instr_row_plan(struct instr_row *rr, int whole_grid, double cost_cap, char *err) {
    const struct instr_job *j = rr->j;
    if (!j->r || (unsigned)rr->table >= j->r->ntables || (unsigned)rr->index >= j->r->tables[rr->table].nrows) {
        dv_seterr(err, "instructions: the plan has no row %d in table %d", rr->index, rr->table);
        return -1;
    }
    const struct dv_table *t = &j->r->tables[rr->table];
    rr->row = &t->rows[rr->index];
    if (profile_kernel_identity(&j->o, t, (unsigned)rr->index, j->r->config.iterations, rr->identity,
                                sizeof rr->identity) != 0) {
        dv_seterr(err, "instructions: row %d:%d names no kernel", rr->table, rr->index);
        return -1;
    }
    if (profile_plan_table_row(&j->o, t, (unsigned)rr->index, &j->g, j->r->config.iterations, whole_grid, &rr->plan,
                               err) != 0)
        return -1;
    if (rr->plan.cost > cost_cap) {
        dv_seterr(err, "instructions: over the cost cap: %.3g thread-iterations patched (%u blocks), the cap %.3g",
                  rr->plan.cost, rr->plan.grid.part_blocks[0], cost_cap);
        return -1;
    }
    return 0;
}

void instr_row_fail(struct instr_row *rr, const char *why) {
    if (rr->failed) return;
    rr->failed = 1;
    if (why == rr->err && why[0]) return; /* the reason is in place */
    snprintf(rr->err, sizeof rr->err, "%s", why && why[0] ? why : "instructions: failed");
}

void instr_row_cleanup(struct instr_row *rr) {
    if (rr->scenario) scenario_rows_cleanup(rr->scenario);
    free(rr->scenario);
    rr->scenario = NULL;
    if (rr->sort) sort_rows_cleanup(rr->sort);
    free(rr->sort);
    rr->sort = NULL;
    listing_insns_cleanup(&rr->samples);
    for (unsigned k = 0; k < rr->nparts; k++) listing_insns_cleanup(&rr->parts[k]);
    listing_insns_cleanup(&rr->combined);
    listing_free(rr->l);
    rr->l = NULL;
    rr->nparts = 0;
}
