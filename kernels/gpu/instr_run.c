/* instr_run.c -- the passes of an instruction-profiling process
 * (instr_run.h), in the order CUPTI needs them (gpu/instr.h says why):
 * the device and the buffers first, then CUPTI subscribed before any
 * module loads, each row's sampled wave, every part of every row under the
 * SASS metrics in one enable, and last each row's listing.
 *
 * The launch callback the CUPTI passes call is launch(): a row's part, or
 * its sampling wave, with the session's buffers and the row's mask. Rows
 * share the process's buffers; each has its own mask.
 */
#define _GNU_SOURCE
#include "kernels/gpu/instr_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/instr.h"
#include "kernels/gpu/instr_paths.h"
#include "kernels/gpu/scenario_rows.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/sort_rows.h"
#include "kernels/model/listing/listing_read.h"
#include "kernels/model/listing/listing_text.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/sortexp.h"

const char *const instr_phase_names[INSTR_PH_N] = {"plan", "cuda", "cupti", "sampling", "patched", "lines", "text"};

void instr_phases_start(struct instr_phases *ph) {
    memset(ph, 0, sizeof *ph);
    ph->mark = timeutil_now_ms();
}

void instr_phase_end(struct instr_phases *ph, enum instr_phase k) {
    const double now = timeutil_now_ms();
    ph->ms[k] += now - ph->mark;
    ph->mark = now;
}

/* ---- the device, the buffers, the launch ---------------------------------------- */

/* The device and the buffers every row reads and writes, as the
 * measurement makes them; *device_failed (may be NULL) when the failure
 * is the device's, not the buffers'. */
static int job_buffers(struct instr_job *j, int *device_failed, char *err) {
    int rc;
    if (device_failed) *device_failed = 1;
    if (!(j->s = session_create())) {
        dv_seterr(err, "instructions: out of memory");
        return DV_ERR;
    }
    if ((rc = session_device(j->s, j->o.device, &j->dev, err)) != 0) return rc;
    if (device_failed) *device_failed = 0;
    const unsigned long long n = dv_grid_threads(&j->g);
    const float *in = session_input(j->s, n, &rc, err);
    if (!in) return rc;
    float *host = NULL;
    float *out = session_output(j->s, 0, n, &host, &rc, err);
    if (!out) return rc;
    j->base = (struct dv_launch){.in = in,
                                 .out = out,
                                 .n = n,
                                 .blocks = j->g.blocks,
                                 .block_x = j->g.block_x,
                                 .block_y = j->g.block_y,
                                 .iterations = j->r->config.iterations};
    return 0;
}

/* A scenario row's launch state: its assignment and output, and where its
 * plan stands on a stand-in grid, that stand-in, which must be the plan's
 * (the same function of the same assignment: testimony_scenario_grid()). */
static int scenario_buffers(struct instr_row *rr, char *err) {
    const struct instr_job *j = rr->j;
    const struct dv_table *t = &j->r->tables[rr->table];
    const struct scenario *s = scenario_find(t->id + strlen("scenario:"));
    if (!s || !(rr->scenario = calloc(1, sizeof *rr->scenario))) {
        dv_seterr(err, "instructions: %s", s ? "out of memory" : "the row's table has no scenario");
        return DV_ERR;
    }
    const unsigned r = (unsigned)rr->index;
    int rc = scenario_rows_setup(rr->scenario, s, &j->o, j->base.in, 1u << r, err);
    if (rc != 0 || !rr->plan.grid.standin) return rc;
    if ((rc = scenario_rows_standing(rr->scenario, r, PROFILE_STANDIN_WAVE, err)) != 0) return rc;
    const struct testimony_grid *a = &rr->scenario->grids[r], *b = &rr->plan.grid;
    int same = a->standin && a->nparts == b->nparts;
    for (unsigned k = 0; same && k < b->nparts; k++)
        same = a->part_blocks[k] == b->part_blocks[k] && a->weight[k] == b->weight[k] && a->first[k] == b->first[k];
    if (!same) {
        dv_seterr(err, "instructions: the row's stand-in grid is not the one its plan named");
        return DV_ERR;
    }
    return 0;
}

/* Whether the row is a data-sort cell's. */
static int row_is_sort(const struct instr_row *rr) { return sortexp_table_is(&rr->j->r->tables[rr->table]); }

/* A data-sort row's cell on the device over the job's input, set up as the
 * timed rows' (sort_rows_setup()). The set-up launches kernels of the
 * shade's module (the pairs, CUB's sort), so it comes after CUPTI is set
 * up (row_wave()), as an occupancy query does. */
static int sort_buffers(struct instr_row *rr, char *err) {
    const struct instr_job *j = rr->j;
    enum sortexp_dist d;
    unsigned m, c;
    if (rr->sort) return 0;
    if (sortexp_table_cell(j->r->tables[rr->table].id, &d, &m, &c) != 0 || !(rr->sort = calloc(1, sizeof *rr->sort))) {
        dv_seterr(err, "instructions: %s", rr->sort ? "the row's table is no data-sort cell" : "out of memory");
        return DV_ERR;
    }
    return sort_rows_setup(rr->sort, d, m, c, j->base.n, j->g.block_x * j->g.block_y, j->base.in, err);
}

/* Whether the row's set-up launches a kernel of its own module: a
 * data-sort cell's (the pairs, CUB's sort), an arithmetic-intensity
 * table's (the chase's chain is filled by a kernel of intensity_kernels.cu).
 * Such a row's buffers are made after CUPTI is ready (late_buffers()):
 * a module loaded before misses the subscription, and none of its cubin
 * reaches the profile ("none of the 0 cubins loaded has the records' CRC"
 * for every row of the nightly arithmetic-intensity suite on the H200). */
static int row_sets_up_late(const struct instr_row *rr) {
    if (row_is_sort(rr)) return 1;
    const char *id = rr->j->r->tables[rr->table].id;
    const struct scenario *s = strncmp(id, "scenario:", 9) == 0 ? scenario_find(id + 9) : NULL;
    return s && s->kind == SCENARIO_MEM;
}

/* A late row's buffers (row_sets_up_late()), once. */
static int late_buffers(struct instr_row *rr, char *err) {
    if (row_is_sort(rr)) return sort_buffers(rr, err);
    return rr->scenario ? 0 : scenario_buffers(rr, err);
}

/* The row's path mask on the device, when its kernel reads one; a scenario
 * row's buffers (a late row's come after CUPTI: late_buffers()). */
static int row_buffers(struct instr_row *rr, char *err) {
    int rc = 0;
    rr->dmask = NULL;
    if (row_sets_up_late(rr)) return 0;
    if (rr->row->kernel == DV_KERNEL_SCENARIO) return scenario_buffers(rr, err);
    if (!session_mask(rr->j->s, rr->row, &rr->j->g, plan_row_mask,
                      experiment_row_reads_mask(rr->row) ? &rr->dmask : NULL, &rc, err))
        return rc ? rc : DV_ERR;
    return 0;
}

/* One wave of the row's kernel (at most its grid): the sampled launch. The
 * occupancy query loads the kernel's module, so it comes after CUPTI is
 * set up, never before (instr.h); so do a late row's buffers. A data-sort
 * row's sampled launch is its whole grid, its cell set up here. */
static int row_wave(struct instr_row *rr, char *err) {
    const struct instr_job *j = rr->j;
    int per_sm = 0, rc;
    if (row_is_sort(rr)) { /* the materials decide the divergence: the whole grid, sampled as counted */
        rr->sample_blocks = rr->plan.grid.part_blocks[0];
        return sort_buffers(rr, err);
    }
    if (row_sets_up_late(rr) && (rc = late_buffers(rr, err)) != 0) return rc;
    if (rr->scenario) rc = scenario_rows_occupancy(rr->scenario, (unsigned)rr->index, &per_sm, err);
    else rc = dv_occupancy(rr->row->kernel, j->base.iterations, j->g.block_x * j->g.block_y, &per_sm, err);
    if (rc != 0) return rc;
    unsigned long long wave = (unsigned long long)(per_sm > 0 ? per_sm : 1) * (unsigned)j->dev.sm_count;
    rr->sample_blocks = (unsigned)(wave < j->g.blocks ? wave : j->g.blocks);
    if (!rr->sample_blocks) rr->sample_blocks = 1;
    return 0;
}

/* Part `part` of the row's profile plan, or its sampling wave. */
static int launch(void *ctx, unsigned part, char *err) {
    struct instr_row *rr = ctx;
    if (rr->sort) return sort_rows_launch(rr->sort, (unsigned)rr->index, err); /* one part: the whole grid */
    if (rr->scenario) {
        const struct testimony_grid *g = &rr->plan.grid;
        if (rr->sampling)
            return scenario_rows_launch(rr->scenario, (unsigned)rr->index, 0, 0, rr->sample_blocks, NULL, NULL, err);
        return scenario_rows_launch(rr->scenario, (unsigned)rr->index, g->standin, g->first[part], g->part_blocks[part],
                                    NULL, NULL, err);
    }
    struct dv_launch l = rr->j->base;
    l.mode = rr->row->mode;
    l.mask = rr->dmask;
    l.blocks = rr->sampling ? rr->sample_blocks : rr->plan.grid.part_blocks[part];
    return dv_run_kernel(rr->row->kernel, &l, err);
}

/* ---- the CUPTI passes ------------------------------------------------------------ */

/* The launches of instr_count(): every part of every row still going. */
struct count_map {
    struct instr_row *rr[INSTR_MAX_ROWS * TESTIMONY_GRID_PARTS];
    unsigned part[INSTR_MAX_ROWS * TESTIMONY_GRID_PARTS];
    unsigned n;
};

static int count_launch(void *ctx, unsigned k, char *err) {
    const struct count_map *m = ctx;
    return launch(m->rr[k], m->part[k], err);
}

/* PC sampling of each row still going, one sampled wave each, before
 * anything is patched; a row whose sampling failed says why, and so do the
 * rows after it (sampling is off from there). Returns 0, or DV_ESTICKY. */
static int sample_rows(struct instr *p, struct instr_row *rows, unsigned n) {
    char off[ERR_LEN] = "";
    for (unsigned i = 0; i < n; i++) {
        struct instr_row *rr = &rows[i];
        if (rr->failed) continue;
        if (off[0]) {
            if (!rr->stall_reason[0]) dv_seterr(rr->stall_reason, "PC sampling stopped at an earlier row: %s", off);
            continue;
        }
        rr->sampling = 1;
        int rc = instr_sample(p, launch, rr, 0, &rr->samples, rr->stall_reason);
        rr->sampling = 0;
        if (rc == DV_ESTICKY) return rc;
        if (rc != 0) { /* no stall reasons, the counts still: the reason says why */
            listing_insns_init(&rr->samples);
            snprintf(off, sizeof off, "%s", rr->stall_reason);
        }
    }
    instr_sampling_end(p);
    return 0;
}

/* The SASS metrics of every part of every row still going, under one
 * enable; a row whose launch gave no record fails on its own. Returns 0,
 * or a DV_* code / -1 with `err` for the process. */
static int count_rows(struct instr *p, struct instr_row *rows, unsigned n, char *err) {
    static struct count_map m;
    static struct listing_insns flat[INSTR_MAX_ROWS * TESTIMONY_GRID_PARTS];
    static int ok[INSTR_MAX_ROWS * TESTIMONY_GRID_PARTS];
    m.n = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; !rows[i].failed && k < rows[i].plan.grid.nparts; k++) {
            m.rr[m.n] = &rows[i];
            m.part[m.n++] = k;
        }
    if (m.n == 0) return 0;
    int rc = instr_count(p, m.n, count_launch, &m, flat, ok, err);
    for (unsigned k = 0; k < m.n; k++) {
        struct instr_row *rr = m.rr[k];
        rr->parts[m.part[k]] = flat[k]; /* the row owns it now */
        rr->nparts = m.part[k] + 1;
        if (rc == 0 && !ok[k]) {
            char why[ERR_LEN];
            dv_seterr(why, "CUPTI: the SASS metrics gave no record for this row's launch %u (%u blocks)", m.part[k],
                      rr->plan.grid.part_blocks[m.part[k]]);
            instr_row_fail(rr, why);
        }
    }
    return rc;
}

/* The function each row's records name must be its own kernel's: the one
 * its sampled launch ran, when it was sampled, and one no other kernel of
 * the process named (records left over from another row's launch would
 * otherwise pass for this row's). A row that fails this fails on its own
 * (the worker asks again for it alone). A process of one row has no other
 * row's launch to take records from: it is not checked. */
static void check_functions(struct instr_row *rows, unsigned n) {
    for (unsigned i = 0; n > 1 && i < n; i++) {
        struct instr_row *rr = &rows[i];
        if (rr->failed || rr->nparts == 0) continue;
        const char *fn = rr->parts[0].function;
        char why[ERR_LEN] = "";
        for (unsigned k = 1; k < rr->nparts && !why[0]; k++)
            if (strcmp(rr->parts[k].function, fn) != 0)
                dv_seterr(why, "instructions: the parts of this row's grid named two functions (%.80s, %.80s)", fn,
                          rr->parts[k].function);
        if (!why[0] && rr->samples.function[0] && strcmp(rr->samples.function, fn) != 0)
            dv_seterr(why, "instructions: the SASS records named %.100s, the sampled launch ran %.100s", fn,
                      rr->samples.function);
        for (unsigned j = 0; j < n && !why[0]; j++) {
            const struct instr_row *o = &rows[j];
            if (j == i || o->failed || o->nparts == 0) continue;
            const int same_kernel = strcmp(o->identity, rr->identity) == 0;
            const int same_function = strcmp(o->parts[0].function, fn) == 0;
            if (same_kernel && !same_function)
                dv_seterr(why,
                          "instructions: this row's SASS records named %.100s, row %d:%d of the same kernel %.100s", fn,
                          o->table, o->index, o->parts[0].function);
            else if (!same_kernel && same_function)
                dv_seterr(why, "instructions: this row's SASS records named %.100s, as did row %d:%d of another kernel",
                          fn, o->table, o->index);
        }
        if (why[0]) instr_row_fail(rr, why);
    }
}

/* ---- each row's listing ------------------------------------------------------------ */

/* Each instruction's source file as the tree names it (cuda_call.h). */
static void relative_files(struct listing_insns *f) {
    for (size_t k = 0; k < f->n; k++) {
        const char *rel = cuda_source_path(f->v[k].file);
        if (rel != f->v[k].file) memmove(f->v[k].file, rel, strlen(rel) + 1);
    }
}

/* Stall samples of `samples` onto the same pcs of `f`. */
static void add_stalls(struct listing_insns *f, const struct listing_insns *samples) {
    f->sampled = samples->sampled;
    f->nreasons = samples->nreasons;
    memcpy(f->reasons, samples->reasons, sizeof f->reasons);
    for (size_t k = 0; k < f->n; k++) {
        const struct listing_insn *s = listing_insns_find(samples, f->v[k].pc);
        memcpy(f->v[k].stalls, s ? s->stalls : (const uint32_t[LISTING_MAX_REASONS]){0}, sizeof f->v[k].stalls);
    }
}

/* The text, branch targets and the tool's label onto `f`, read once per
 * cubin and function for the whole process (`texts`); the reason for none
 * into l->disassembly_reason. */
static void add_text(const struct instr_run_opts *opts, struct listing_texts *texts, struct listing_insns *f,
                     uint64_t crc, const void *cubin, size_t size, struct listing *l) {
    char why[ERR_LEN] = "";
    const struct listing_text *t = listing_texts_get(texts, opts->disasm, opts->disasm_ctx, crc, cubin, size,
                                                     f->function, why);
    if (!t || !t->ok) {
        snprintf(l->disassembly_reason, sizeof l->disassembly_reason, "%s", t ? t->why : why);
        return;
    }
    listing_join_text(f, &t->insns);
    snprintf(l->disassembler, sizeof l->disassembler, "%s", t->tool);
}

/* One counted row into its listing: parts combined, lines, stalls, text. */
static void finish_row(const struct instr_run_opts *opts, struct listing_texts *texts, struct instr *p,
                       struct instr_row *rr, struct instr_phases *ph) {
    uint64_t crc = 0;
    const void *cubin = NULL;
    size_t size = 0;
    char err[ERR_LEN] = "";
    if (listing_combine(rr->parts, rr->plan.weight, rr->plan.grid.nparts, &rr->combined, err) != 0 ||
        instr_correlate(p, &rr->combined, &crc, &cubin, &size, err) != 0) {
        instr_row_fail(rr, err);
        return;
    }
    relative_files(&rr->combined);
    add_stalls(&rr->combined, &rr->samples);
    instr_phase_end(ph, INSTR_PH_LINES);
    if (!(rr->l = listing_create())) {
        instr_row_fail(rr, "instructions: out of memory");
        return;
    }
    add_text(opts, texts, &rr->combined, crc, cubin, size, rr->l);
    rr->l->cubin_crc = crc;
    instr_phase_end(ph, INSTR_PH_TEXT);
    struct listing_paths paths;
    instr_row_paths(&rr->j->r->tables[rr->table], rr->row, &paths);
    listing_classify(&rr->combined, &paths);
    if (listing_build(&rr->combined, rr->l, err) != 0) {
        instr_row_fail(rr, err);
        return;
    }
    struct listing *l = rr->l;
    snprintf(l->source, sizeof l->source, "cupti-sass");
    snprintf(l->kernel, sizeof l->kernel, "%s", rr->combined.function);
    l->mask_hash = rr->plan.mask_hash;
    l->grid_blocks = rr->plan.grid.standin ? testimony_grid_launched(&rr->plan.grid) : rr->plan.grid.part_blocks[0];
    l->block_x = rr->j->g.block_x;
    l->block_y = rr->j->g.block_y;
    l->scale = (double)rr->j->g.blocks / (double)l->grid_blocks;
    timeutil_utc(time(NULL), l->collected_utc, sizeof l->collected_utc);
}

/* ---- the process ---------------------------------------------------------------- */

/* ---- the runner ------------------------------------------------------------------ */

struct instr_runner {
    struct instr *p;            /* CUPTI, made at the first run's device     */
    struct listing_texts texts; /* each function's text, read once          */
    unsigned runs;
    int touched; /* a run since the last rest made a context */
};

struct instr_runner *instr_runner_create(char *err) {
    struct instr_runner *ir = calloc(1, sizeof *ir);
    if (!ir) {
        dv_seterr(err, "instructions: out of memory");
        return NULL;
    }
    listing_texts_init(&ir->texts);
    return ir;
}

void instr_runner_free(struct instr_runner *ir) {
    if (!ir) return;
    instr_free(ir->p);
    listing_texts_cleanup(&ir->texts);
    free(ir);
}

/* CUPTI readied on the job's device and context: made at the first run
 * (with lazy loading, the caller makes sure, no module has loaded yet, so
 * the subscription sees the kernels' cubin arrive), the context's part
 * each run. The rows' waves after it (their occupancy loads the module). */
static int runner_prepare(struct instr_runner *ir, struct instr_job *j, struct instr_row *rows, unsigned n, int stalls,
                          char *err) {
    char stall_reason[ERR_LEN] = "";
    if (!ir->p && !(ir->p = instr_create(err))) return -1;
    if (instr_prepare(ir->p, j->dev.ordinal, j->dev.cc_major, stalls, stall_reason, err) != 0) return -1;
    for (unsigned i = 0; i < n; i++) {
        if (stall_reason[0]) snprintf(rows[i].stall_reason, sizeof rows[i].stall_reason, "%s", stall_reason);
        if (!rows[i].failed && row_wave(&rows[i], rows[i].err) != 0) instr_row_fail(&rows[i], rows[i].err);
    }
    return 0;
}

/* Each job's device and buffers (job_buffers()). A job whose buffers
 * fail, not for its device nor a sticky error, fails its own rows; the
 * rest is the run's failure, and so is every job failing. Returns 0, or -1
 * with `err`. */
static int jobs_buffers(struct instr_job *const *jobs, unsigned njobs, struct instr_row *rows, unsigned n, char *err) {
    unsigned made = 0;
    for (unsigned k = 0; k < njobs; k++) {
        char why[ERR_LEN] = "";
        int device_failed = 0;
        const int rc = job_buffers(jobs[k], &device_failed, why);
        made += rc == 0;
        if (rc == 0) continue;
        if (rc == DV_ESTICKY || rc == DV_ENOGPU || device_failed || made + (njobs - k - 1) == 0) {
            snprintf(err, ERR_LEN, "%s", why);
            return -1;
        }
        for (unsigned i = 0; i < n; i++)
            if (rows[i].j == jobs[k]) instr_row_fail(&rows[i], why);
    }
    return 0;
}

int instr_runner_run(struct instr_runner *ir, struct instr_job *j, struct instr_row *rows, unsigned n,
                     const struct instr_run_opts *opts, struct instr_phases *ph, char *err) {
    return instr_runner_run_jobs(ir, &j, 1, rows, n, opts, ph, err);
}

int instr_runner_run_jobs(struct instr_runner *ir, struct instr_job *const *jobs, unsigned njobs,
                          struct instr_row *rows, unsigned n, const struct instr_run_opts *opts,
                          struct instr_phases *ph, char *err) {
    ir->runs++;
    ir->touched = 1;
    if (njobs == 0) {
        dv_seterr(err, "instructions: a run of no request");
        return -1;
    }
    /* The device first (its reason is the one to give without one), then
     * CUPTI; each request's buffers in the one context. */
    if (jobs_buffers(jobs, njobs, rows, n, err) != 0) return -1;
    struct instr_job *j = jobs[0];
    for (unsigned i = 0; i < n; i++)
        if (!rows[i].failed && row_buffers(&rows[i], rows[i].err) != 0) instr_row_fail(&rows[i], rows[i].err);
    instr_phase_end(ph, INSTR_PH_CUDA);
    if (runner_prepare(ir, j, rows, n, opts->stalls, err) != 0) return -1;
    instr_phase_end(ph, INSTR_PH_CUPTI);
    if (sample_rows(ir->p, rows, n) == DV_ESTICKY) {
        dv_seterr(err, "instructions: a sticky CUDA error while sampling");
        return -1;
    }
    instr_phase_end(ph, INSTR_PH_SAMPLING);
    if (count_rows(ir->p, rows, n, err) != 0) return -1;
    check_functions(rows, n);
    instr_phase_end(ph, INSTR_PH_PATCHED);
    for (unsigned i = 0; i < n; i++)
        if (!rows[i].failed) finish_row(opts, &ir->texts, ir->p, &rows[i], ph);
    return 0;
}

/* The warm-up's text part (instr_runner_warm()): the lesson's module
 * loaded on the current context, after CUPTI's subscription (the
 * occupancy query of its timed mask kernel loads it, as row_wave()'s
 * loads a row's; nothing is launched), and each
 * cubin its load handed over disassembled, the text dropped (the
 * disassembler keeps it). Says in *tw what it did; fails nothing. */
static void warm_text(struct instr_runner *ir, const struct instr_run_opts *text, struct instr_text_warm *tw) {
    const double t0 = timeutil_now_ms();
    const unsigned before = instr_cubin_count(ir->p);
    char why[ERR_LEN] = "";
    int per_sm = 0; /* the query's answer, unused: asking loads the module */
    if (!text->disasm) dv_seterr(why, "instructions: no disassembler was given");
    else if (dv_occupancy(DV_KERNEL_MASK, DV_COMPILED_ITERATIONS, 256, &per_sm, why) == 0 &&
             instr_cubin_count(ir->p) == before)
        dv_seterr(why, "instructions: the lesson's module load handed over no cubin (loaded before the warm-up?)");
    for (unsigned k = before; !why[0] && k < instr_cubin_count(ir->p); k++) {
        uint64_t crc = 0;
        const void *cubin = NULL;
        size_t size = 0, len = 0;
        if (instr_cubin(ir->p, k, &crc, &cubin, &size, why) != 0) break;
        tw->cubins++;
        char *t = text->disasm(text->disasm_ctx, crc, cubin, size, &len, why);
        tw->texts += t != NULL;
        free(t);
    }
    snprintf(tw->reason, sizeof tw->reason, "%s", why);
    tw->ms = timeutil_now_ms() - t0;
}

int instr_runner_warm(struct instr_runner *ir, int device, const struct instr_run_opts *text,
                      struct instr_text_warm *tw, char *err) {
    struct instr_text_warm ignored;
    if (!tw) tw = &ignored;
    memset(tw, 0, sizeof *tw);
    struct instr_job j;
    memset(&j, 0, sizeof j);
    if (!(j.s = session_create())) {
        dv_seterr(err, "instructions: out of memory");
        return -1;
    }
    int rc = session_device(j.s, device, &j.dev, err);
    if (rc == 0 && !ir->p && !(ir->p = instr_create(err))) rc = -1;
    char stall_reason[ERR_LEN];
    if (rc == 0) rc = instr_prepare(ir->p, j.dev.ordinal, j.dev.cc_major, 0, stall_reason, err);
    if (rc == 0 && text) warm_text(ir, text, tw);
    session_free(j.s);
    ir->touched = 1;
    if (rc == 0) rc = instr_runner_rest(ir, err);
    return rc;
}

int instr_runner_rest(struct instr_runner *ir, char *err) {
    if (!ir->touched) return 0; /* no context to end: making one to reset it would cost */
    ir->touched = 0;
    instr_sampling_end(ir->p);
    /* An error the context kept (a sticky one) is the process's end: the
     * reset would hide it. */
    if (DV_CUDA_CALL(cudaDeviceSynchronize(), err) != 0) return -1;
    /* DV_INSTR_SERVE_CONTEXT=kept: the context kept for the next run (an
     * experiment for a GPU: whether samples and counts stay the one-shot
     * command's when modules loaded, and patched, by an earlier run are run
     * again; test_gpu_instrserve.c says). */
    const char *keep = getenv("DV_INSTR_SERVE_CONTEXT");
    if (keep && strcmp(keep, "kept") == 0) return 0;
    return DV_CUDA_CALL(cudaDeviceReset(), err) != 0 ? -1 : 0;
}

/* One process, one run: the runner made, run and freed (the one-shot
 * command's way). */
int instr_run(struct instr_job *j, struct instr_row *rows, unsigned n, const struct instr_run_opts *opts,
              struct instr_phases *ph, char *err) {
    struct instr_runner *ir = instr_runner_create(err);
    if (!ir) return -1;
    const int rc = instr_runner_run(ir, j, rows, n, opts, ph, err);
    instr_runner_free(ir);
    return rc;
}

int instr_run_launch_only(struct instr_job *j, struct instr_row *rr, unsigned part, char *err) {
    if (part >= rr->plan.grid.nparts) {
        dv_seterr(err, "instructions: the grid has %u parts", rr->plan.grid.nparts);
        return -1;
    }
    int rc = job_buffers(j, NULL, err);
    if (rc == 0) rc = row_buffers(rr, err);
    if (rc == 0 && row_sets_up_late(rr)) rc = late_buffers(rr, err);
    if (rc == 0) rc = launch(rr, part, err);
    if (rc == 0) rc = DV_CUDA_CALL(cudaDeviceSynchronize(), err);
    return rc;
}
