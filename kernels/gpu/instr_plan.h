/* instr_plan.h -- the rows one instruction-profiling process profiles
 * (`divergence-gpu instructions`, server/cmd/instr_cmd.h), planned exactly
 * as the worker planned them: the request's plan (model/model/plan.h), then
 * per row the blocks that stand for its grid (model/model/profile.h), under
 * the cost cap the caller gives.
 *
 * struct instr_job is what the rows of the process share (the request as
 * planned, and once the passes have set them up, the device, its input and
 * its output); struct instr_row is one row, its plan, and what the passes
 * (gpu/instr_run.h) find for it: its samples, each part's counts, the
 * combined listing, or why it has none. A row that fails keeps its first
 * reason; the other rows go on.
 *
 * Planning touches no CUDA: a process that finds its request refused says
 * so before any device is opened.
 */
#ifndef DV_INSTR_PLAN_H
#define DV_INSTR_PLAN_H

#include <stdint.h>

#include "kernels/base/status.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rows one process takes at most: every row of a plan. */
#define INSTR_MAX_ROWS (DV_MAX_TABLES * DV_MAX_ROWS)

struct session; /* gpu/session.h */

/* What every row of the process shares. */
struct instr_job {
    struct dv_options o;
    struct dv_report *r; /* the request's plan                        */
    struct dv_geometry g;
    struct session *s; /* set up by the passes (gpu/instr_run.h) */
    struct dv_device dev;
    struct dv_launch base; /* the row's mode and mask left out */
};

struct scenario_rows; /* gpu/scenario_rows.h */
struct sort_rows;     /* gpu/sort_rows.h */

/* One row of the process, and what came of it. */
struct instr_row {
    struct instr_job *j;
    int table, index;
    const struct dv_row *row;
    char identity[96]; /* the kernel instantiation (profile_kernel_identity()) */
    struct profile_plan plan;
    struct scenario_rows *scenario; /* a scenario row's launch state (instr_run.c) */
    struct sort_rows *sort;         /* a data-sort row's cell on the device        */
    const uint32_t *dmask;
    unsigned sample_blocks;
    int sampling;      /* the launch callback launches the sampling grid */
    int failed;        /* err says why                                    */
    char err[ERR_LEN]; /* stall_reason: why it has no stall samples      */
    char stall_reason[ERR_LEN];
    struct listing_insns samples, parts[TESTIMONY_GRID_PARTS], combined;
    unsigned nparts; /* of parts[] initialised */
    struct listing *l;
};

/* The plan of request `o` (its blocks a number, the grid the rows ran on,
 * not auto) into `j`. Returns 0, or -1 with `err`; instr_job_cleanup()
 * either way. */
int instr_job_plan(struct instr_job *j, const struct dv_options *o, char *err);

/* Frees what `j` holds (its plan, its session) and zeroes it. */
void instr_job_cleanup(struct instr_job *j);

/* Row `index` of table `table` of job `j` (planned or not), its listings
 * empty: instr_row_cleanup() after, whatever comes of it. */
void instr_row_init(struct instr_row *rr, struct instr_job *j, int table, int index);

/* The row's profile plan over its job's grid (with `whole_grid`, the whole
 * grid as one part), refused when it would run more than `cost_cap`
 * thread-iterations patched. Returns 0, or -1 with `err` (no such row, a
 * row that cannot be profiled, over the cap). */
int instr_row_plan(struct instr_row *rr, int whole_grid, double cost_cap, char *err);

/* Marks the row failed with `why` ("instructions: failed" when empty); its
 * first reason is the one kept. `why` may be rr->err. */
void instr_row_fail(struct instr_row *rr, const char *why);

/* Frees the row's listings. */
void instr_row_cleanup(struct instr_row *rr);

#ifdef __cplusplus
}
#endif

#endif /* DV_INSTR_PLAN_H */
