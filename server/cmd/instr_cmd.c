/* instr_cmd.c -- `divergence-gpu instructions` (instr_cmd.h): the options,
 * the instruction subsystem's parts in order, and one answer line per row.
 *
 * The request (stdin, or --request FILE) is parsed with api/request.h and
 * its rows planned by gpu/instr_plan.h, exactly as the worker planned them;
 * with --compare ncu, Nsight Compute's Source page of the row comes first
 * (jobs/ncu.h: other processes, before this one touches CUDA); then the
 * passes (gpu/instr_run.h), whose listings get their text from the
 * disassembler (jobs/disasm.h); then the lines (jobs/instrline.h). CUDA's
 * modules are loaded lazily (this process sets CUDA_MODULE_LOADING=LAZY for
 * itself), so CUPTI, set up after the device and the buffers and before the
 * first launch, sees the kernel's module load. Every failure becomes
 * {"ok": false, "reason"} on stdout: the worker files it as the row's
 * reason.
 */
#define _GNU_SOURCE
#include "server/cmd/instr_cmd.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/options.h"
#include "api/request.h"
#include "kernels/base/timeutil.h"
#include "kernels/gpu/instr_plan.h"
#include "kernels/gpu/instr_run.h"
#include "server/jobs/disasm.h"
#include "server/jobs/fileio.h"
#include "server/jobs/instrline.h"
#include "server/jobs/ncu.h"
#include "server/jobs/wire.h"

#include <jansson.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

struct args {
    int table, row, device;
    const char *request, *disassembler, *sass_cache, *ncu;
    int stalls, whole_grid, launch_only, part, compare;
    int serve; /* --serve: request after request, framed (instr_cmd.h) */
    /* --rows T:R,...: the rows of one process, one answer line each */
    int many;
    unsigned nrows;
    int tables[INSTR_MAX_ROWS], rows[INSTR_MAX_ROWS];
};

/* ---- arguments ------------------------------------------------------------ */

static int number(const char *v, int lo, int hi, int *out) {
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || n < lo || n > hi) return -1;
    *out = (int)n;
    return 0;
}

/* "T:R,T:R,..." into a->tables / a->rows. */
static int parse_rows(const char *v, struct args *a) {
    a->many = 1;
    a->nrows = 0;
    for (const char *p = v; *p;) {
        char *end = NULL;
        long t = strtol(p, &end, 10);
        if (end == p || *end != ':' || t < 0 || t >= DV_MAX_TABLES) return -1;
        p = end + 1;
        long r = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || r < 0 || r >= DV_MAX_ROWS || a->nrows == INSTR_MAX_ROWS) return -1;
        a->tables[a->nrows] = (int)t;
        a->rows[a->nrows++] = (int)r;
        p = *end ? end + 1 : end;
    }
    return a->nrows ? 0 : -1;
}

static int parse_args(int argc, char **argv, struct args *a, char *err) {
    memset(a, 0, sizeof *a);
    a->table = a->row = -1;
    a->stalls = 1;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(k, "--launch-only") == 0 || strcmp(k, "--serve") == 0) {
            if (k[2] == 'l') a->launch_only = 1;
            else a->serve = 1;
            continue;
        }
        if (!v) {
            dv_seterr(err, "instructions: %s needs a value", k);
            return -1;
        }
        i++;
        int bad = 0;
        if (strcmp(k, "--table") == 0) bad = number(v, 0, DV_MAX_TABLES - 1, &a->table);
        else if (strcmp(k, "--row") == 0) bad = number(v, 0, DV_MAX_ROWS - 1, &a->row);
        else if (strcmp(k, "--device") == 0) bad = number(v, 0, OPTIONS_MAX_DEVICE, &a->device);
        else if (strcmp(k, "--part") == 0) bad = number(v, 0, TESTIMONY_GRID_PARTS - 1, &a->part);
        else if (strcmp(k, "--rows") == 0) bad = parse_rows(v, a);
        else if (strcmp(k, "--request") == 0) a->request = v;
        else if (strcmp(k, "--disassembler") == 0) a->disassembler = v;
        else if (strcmp(k, "--sass-cache") == 0) a->sass_cache = v;
        else if (strcmp(k, "--ncu") == 0) a->ncu = v;
        else if (strcmp(k, "--stalls") == 0 && (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) a->stalls = v[1] == 'n';
        else if (strcmp(k, "--grid") == 0 && (strcmp(v, "reduced") == 0 || strcmp(v, "whole") == 0))
            a->whole_grid = v[0] == 'w';
        else if (strcmp(k, "--compare") == 0 && strcmp(v, "ncu") == 0) a->compare = 1;
        else bad = -1;
        if (bad) {
            dv_seterr(err, "instructions: %s %s: not understood (see divergence-gpu instructions --help)", k, v);
            return -1;
        }
    }
    if (a->many && (a->table >= 0 || a->row >= 0 || a->launch_only || a->compare)) {
        dv_seterr(err, "instructions: --rows takes the place of --table and --row, and goes without --launch-only and "
                       "--compare");
        return -1;
    }
    if (a->serve && (a->many || a->table >= 0 || a->row >= 0 || a->launch_only || a->compare || a->request)) {
        dv_seterr(err, "instructions: --serve takes its rows and requests on stdin: no --rows, --table, --row, "
                       "--request, --launch-only or --compare");
        return -1;
    }
    if (a->many || a->serve) return 0;
    if (a->table < 0 || a->row < 0) {
        dv_seterr(err, "instructions: --table T and --row R (or --rows T:R,...) are needed");
        return -1;
    }
    a->nrows = 1;
    a->tables[0] = a->table;
    a->rows[0] = a->row;
    return 0;
}

static void usage(void) {
    fputs("usage: divergence-gpu instructions (--table T --row R | --rows T:R,T:R,...) [--device N]\n"
          "         [--request FILE] [--disassembler PATH|none] [--sass-cache DIR] [--stalls on|off]\n"
          "         [--grid reduced|whole] [--compare ncu] [--ncu PATH]\n"
          "       divergence-gpu instructions --launch-only --part K --table T --row R ...\n"
          "       divergence-gpu instructions --serve [--device N] [--disassembler PATH|none] [--sass-cache DIR]\n"
          "The instruction profiles of rows of the request on stdin (started by the GPU worker): one JSON\n"
          "line per row; with --rows, every row in one process and a last line with the process's phases.\n",
          stdout);
}

/* ---- the rows --------------------------------------------------------------- */

/* Request `text` (`len` bytes) parsed and planned into `j`. Returns 0, or
 * -1 with `err`. */
static int job_plan_text(const struct args *a, const char *text, size_t len, struct instr_job *j, char *err) {
    struct dv_options o;
    struct request_error re;
    if (request_parse(text, len, &o, &re) != 0) {
        dv_seterr(err, "instructions: the request: %s%s%s", re.field, re.field[0] ? ": " : "", re.reason);
        return -1;
    }
    o.device = a->device;
    return instr_job_plan(j, &o, err);
}

/* The request (--request FILE, else stdin) parsed and planned into `j`.
 * Returns 0, or -1 with `err`. */
static int job_plan(const struct args *a, struct instr_job *j, char *err) {
    size_t len = 0;
    char *text = NULL;
    if (a->request) {
        FILE *f = fopen(a->request, "rb");
        if (!f) {
            dv_seterr(err, "instructions: %s: %s", a->request, strerror(errno));
            return -1;
        }
        text = fileio_read(f, &len);
        fclose(f);
    } else {
        text = fileio_read(stdin, &len);
    }
    if (!text) {
        dv_seterr(err, "instructions: cannot read the request");
        return -1;
    }
    const int rc = job_plan_text(a, text, len, j, err);
    free(text);
    return rc;
}

/* Each row of the arguments planned, or failed with why (`why`, the job's
 * reason, when it was not planned). */
static void plan_rows(const struct args *a, struct instr_job *j, int planned, const char *why, struct instr_row *rows) {
    for (unsigned i = 0; i < a->nrows; i++) {
        struct instr_row *rr = &rows[i];
        instr_row_init(rr, j, a->tables[i], a->rows[i]);
        if (!planned) instr_row_fail(rr, why);
        else if (instr_row_plan(rr, a->whole_grid, OPTIONS_MAX_INSTRUCTIONS_COST, rr->err) != 0)
            instr_row_fail(rr, rr->err);
    }
}

/* The disassembler's text for the passes (instr_run.h's instr_disasm_fn;
 * `ctx` the struct disasm_config). */
static char *disassemble(void *ctx, uint64_t crc, const void *cubin, size_t size, size_t *len, char *why) {
    return disasm_cubin(ctx, crc, cubin, size, len, why);
}

/* --compare ncu: Nsight Compute's Source page of row `rr` into `out`; a
 * failure is the row's. */
static void compare_ncu(const struct args *a, const struct instr_job *j, struct instr_row *rr,
                        struct listing_insns *out) {
    char err[ERR_LEN] = "";
    const struct ncu_row row = {.table = a->table,
                                .row = a->row,
                                .device = a->device,
                                .whole_grid = a->whole_grid,
                                .nparts = rr->plan.grid.nparts,
                                .weight = rr->plan.weight};
    char *request = request_dump(&j->o);
    int rc = request ? ncu_collect(a->ncu, &row, request, out, err) : -1;
    if (!request) dv_seterr(err, "instructions: out of memory");
    free(request);
    if (rc != 0) instr_row_fail(rr, err);
}

/* ---- the answer --------------------------------------------------------------- */

/* Where --serve writes its answers' frames; -1: lines on stdout. */
static int frame_fd = -1;

/* Prints line `s` (freed), or `fallback` when it could not be built; a
 * served process writes it as one frame (wire.h). */
static void put_line(char *s, const char *fallback) {
    char err[ERR_LEN];
    const char *line = s ? s : fallback;
    if (frame_fd >= 0) {
        if (wire_write(frame_fd, line, strlen(line), err) != 0) {
            fprintf(stderr, "instructions: %s\n", err);
            _exit(1); /* the worker is gone or its pipe broke: nobody to answer */
        }
    } else {
        printf("%s\n", line);
        fflush(stdout);
    }
    free(s);
}

/* One row's answer line (instrline.h), or where it cannot be built, a
 * failure line. Returns 1 for a row without a profile, else 0. */
static int print_row(const struct instr_row *rr, const struct instrline_phases *ph, const struct listing_diff *cmp) {
    const int failed = rr->failed || !rr->l;
    char *s = instrline_row(rr->table, rr->index, failed ? NULL : rr->l, rr->err, rr->stall_reason, ph, cmp);
    if (s) {
        put_line(s, NULL);
        return failed;
    }
    put_line(instrline_failure("instructions: out of memory writing the profile"),
             "{\"ok\":false,\"reason\":\"instructions: out of memory\"}");
    return 1;
}

/* What a run gave, for its last line: its rows, those profiled, its
 * total time, and whether its passes failed as a whole (why). */
struct run_end {
    unsigned rows, profiled;
    double total;
    int whole_failed;
    char why[ERR_LEN];
};

/* Collects and prints every row of the process (a served request's, on
 * runner `ir`; NULL: a runner of its own): --compare's Source page first,
 * the passes, each row's share of the process's time, the lines; the
 * "done" line of --rows (a served request's is its caller's, after the
 * rest). *end says what the run gave. Returns the exit status: 0 when a
 * row (the row) was profiled, else 1. */
static int profile(const struct args *a, struct instr_runner *ir, struct instr_job *j, struct instr_row *rows,
                   struct instr_phases *ph, double t0, struct run_end *end) {
    struct listing_insns ncu;
    struct listing_diff diff;
    char err[ERR_LEN] = "";
    listing_insns_init(&ncu);
    if (a->compare && !rows[0].failed) compare_ncu(a, j, &rows[0], &ncu);
    unsigned live = 0, profiled = 0;
    for (unsigned i = 0; i < a->nrows; i++) live += !rows[i].failed;
    const struct disasm_config dc = {.tool = a->disassembler, .cache_dir = a->sass_cache};
    const struct instr_run_opts opts = {.stalls = a->stalls, .disasm = disassemble, .disasm_ctx = (void *)&dc};
    const int run = !live ? 0 : ir ? instr_runner_run(ir, j, rows, a->nrows, &opts, ph, err)
                                   : instr_run(j, rows, a->nrows, &opts, ph, err);
    memset(end, 0, sizeof *end);
    end->whole_failed = run != 0;
    if (run != 0) snprintf(end->why, sizeof end->why, "%s", err);
    if (run != 0)
        for (unsigned i = 0; i < a->nrows; i++) instr_row_fail(&rows[i], err);
    const double total = timeutil_now_ms() - t0;
    for (unsigned i = 0; i < a->nrows; i++) profiled += !rows[i].failed && rows[i].l;
    /* The cold cost of a row: its share of the process, start to answer. */
    for (unsigned i = 0; i < a->nrows; i++)
        if (!rows[i].failed && rows[i].l) rows[i].l->collect_ms = total / profiled;
    const int compared = a->compare && !rows[0].failed;
    if (compared) listing_compare(&rows[0].combined, &ncu, &diff);
    listing_insns_cleanup(&ncu);
    const struct instrline_phases lines = {instr_phase_names, ph->ms, INSTR_PH_N, total};
    int status = 0;
    for (unsigned i = 0; i < a->nrows; i++)
        status |= print_row(&rows[i], a->many ? NULL : &lines, compared ? &diff : NULL);
    end->rows = a->nrows;
    end->profiled = profiled;
    end->total = total;
    if (!a->many) return status;
    if (!ir) put_line(instrline_done(a->nrows, profiled, &lines, NULL), "{\"done\":true}");
    return profiled ? 0 : 1;
}

/* --launch-only: part `part` of the row, launched once. Returns 0, or 1
 * with why on stderr. */
static int launch_only(struct instr_job *j, struct instr_row *rr, unsigned part) {
    char err[ERR_LEN] = "";
    const int rc = rr->failed ? -1 : instr_run_launch_only(j, rr, part, err);
    if (rc != 0) fprintf(stderr, "%s\n", rr->failed ? rr->err : err);
    return rc != 0;
}

/* ---- --serve ------------------------------------------------------------------ */

/* Row `rr`'s answer frame with its part `part` first ({"part": K,
 * "table", ...}); a failure frame where it cannot be built. */
static void print_part_row(unsigned part, const struct instr_row *rr) {
    const int failed = rr->failed || !rr->l;
    char *s = instrline_row(rr->table, rr->index, failed ? NULL : rr->l, rr->err, rr->stall_reason, NULL, NULL);
    char *t = s && s[0] == '{' ? malloc(strlen(s) + 24) : NULL;
    if (t) snprintf(t, strlen(s) + 24, "{\"part\":%u,%s", part, s + 1);
    free(s);
    put_line(t, "{\"ok\":false,\"reason\":\"instructions: out of memory writing the profile\"}");
}

/* Part `p` of a frame ({"rows", "request"}) read: its rows into `a`, its
 * request as text (returned, free() it), or NULL when it is not a part. */
static char *part_read(const json_t *p, struct args *a) {
    const char *list = json_string_value(json_object_get(p, "rows"));
    const json_t *req = json_object_get(p, "request");
    if (!list || !json_is_object(req) || parse_rows(list, a) != 0) return NULL;
    return json_dumps(req, 0);
}

/* A frame of parts (instr_cmd.h), `parts` already checked: each part's
 * rows planned on a job of its own, all run in one context, each row's
 * frame with its part; *end says what the run gave (the caller writes the
 * "done"). */
static void serve_parts(struct args *a, struct instr_runner *ir, const json_t *parts, struct instr_phases *ph,
                        double t0, struct run_end *end) {
    static struct instr_row rows[INSTR_MAX_ROWS];
    static struct instr_job jobs[INSTR_CMD_MAX_PARTS];
    static unsigned part_of[INSTR_MAX_ROWS];
    struct instr_job *live[INSTR_CMD_MAX_PARTS];
    const unsigned np = (unsigned)json_array_size(parts);
    unsigned n = 0, nlive = 0, profiled = 0;
    char err[ERR_LEN] = "";
    for (unsigned k = 0; k < np; k++) {
        char *request = part_read(json_array_get(parts, k), a);
        memset(&jobs[k], 0, sizeof jobs[k]);
        const int planned = request && job_plan_text(a, request, strlen(request), &jobs[k], err) == 0;
        free(request);
        plan_rows(a, &jobs[k], planned, planned ? "" : err, rows + n);
        unsigned alive = 0;
        for (unsigned i = 0; i < a->nrows; i++) alive += !rows[n + i].failed, part_of[n + i] = k;
        if (alive) live[nlive++] = &jobs[k];
        n += a->nrows;
    }
    instr_phase_end(ph, INSTR_PH_PLAN);
    const struct disasm_config dc = {.tool = a->disassembler, .cache_dir = a->sass_cache};
    const struct instr_run_opts opts = {.stalls = a->stalls, .disasm = disassemble, .disasm_ctx = (void *)&dc};
    const int run = nlive ? instr_runner_run_jobs(ir, live, nlive, rows, n, &opts, ph, err) : 0;
    for (unsigned i = 0; run != 0 && i < n; i++) instr_row_fail(&rows[i], err);
    const double total = timeutil_now_ms() - t0;
    for (unsigned i = 0; i < n; i++) profiled += !rows[i].failed && rows[i].l;
    for (unsigned i = 0; i < n; i++)
        if (!rows[i].failed && rows[i].l) rows[i].l->collect_ms = total / profiled;
    for (unsigned i = 0; i < n; i++) print_part_row(part_of[i], &rows[i]);
    for (unsigned i = 0; i < n; i++) instr_row_cleanup(&rows[i]);
    for (unsigned k = 0; k < np; k++) instr_job_cleanup(&jobs[k]);
    *end = (struct run_end){.rows = n, .profiled = profiled, .total = total, .whole_failed = run != 0};
    if (run != 0) snprintf(end->why, sizeof end->why, "%s", err);
}

/* 1 when `parts` is a frame's parts that fit one run: 1..INSTR_CMD_MAX_PARTS
 * well-formed parts of INSTR_MAX_ROWS rows together at most. */
static int parts_fit(struct args *a, const json_t *parts) {
    const size_t np = json_array_size(parts);
    unsigned n = 0;
    if (!json_is_array(parts) || np == 0 || np > INSTR_CMD_MAX_PARTS) return 0;
    for (size_t k = 0; k < np; k++) {
        char *request = part_read(json_array_get(parts, k), a);
        free(request);
        if (!request || (n += a->nrows) > INSTR_MAX_ROWS) return 0;
    }
    return 1;
}

/* A served request's last frame: what the run gave (`e`, `ph`), where
 * its texts came from (the disassembler's counts now against `before`),
 * and whether the process ends after it. */
static void put_served_done(const struct run_end *e, const struct instr_phases *ph,
                            const struct disasm_counts *before, int ending) {
    struct disasm_counts now;
    disasm_counts(&now);
    const struct instrline_served sv = {.text_memory = now.memory - before->memory,
                                        .text_folder = now.folder - before->folder,
                                        .text_tool = now.tool - before->tool,
                                        .ending = ending};
    const struct instrline_phases lines = {instr_phase_names, ph->ms, INSTR_PH_N, e->total};
    put_line(instrline_done(e->rows, e->profiled, &lines, &sv),
             ending ? "{\"done\":true,\"ending\":true}" : "{\"done\":true,\"ending\":false}");
}

/* The rows of one served request ({"rows": "T:R,...", "request": {...}},
 * `m` parsed) planned, run and answered into *end. Returns 0, or -1 when
 * `m` is not such a request (nothing answered). */
static int serve_rows(struct args *a, struct instr_runner *ir, const json_t *m, struct instr_phases *ph, double t0,
                      struct run_end *end) {
    static struct instr_row rows[INSTR_MAX_ROWS];
    static struct instr_job j;
    char err[ERR_LEN] = "";
    const char *list = json_string_value(json_object_get(m, "rows"));
    char *request = json_is_object(json_object_get(m, "request")) ? json_dumps(json_object_get(m, "request"), 0) : NULL;
    if (!list || !request || parse_rows(list, a) != 0) {
        free(request);
        return -1;
    }
    memset(&j, 0, sizeof j);
    plan_rows(a, &j, job_plan_text(a, request, strlen(request), &j, err) == 0, err, rows);
    free(request);
    instr_phase_end(ph, INSTR_PH_PLAN);
    profile(a, ir, &j, rows, ph, t0, end);
    for (unsigned i = 0; i < a->nrows; i++) instr_row_cleanup(&rows[i]);
    instr_job_cleanup(&j);
    return 0;
}

/* One served request, `msg` ({"rows": "T:R,...", "request": {...}}, or a
 * frame of parts): its rows' frames, the rest (instr_runner_rest()), then
 * the "done" frame, as --rows prints its lines. A request whose passes
 * failed as a whole, or whose device could not be reset, ends the process
 * (CUPTI's state cannot be vouched for after either): the reason goes to
 * stderr and the "done" frame says "ending". Returns 0, or -1 when the
 * process should end. */
static int serve_one(struct args *a, struct instr_runner *ir, const char *msg, size_t len) {
    char err[ERR_LEN] = "";
    struct instr_phases ph;
    struct disasm_counts before;
    struct run_end end;
    memset(&end, 0, sizeof end);
    disasm_counts(&before);
    instr_phases_start(&ph);
    const double t0 = ph.mark;
    json_error_t je;
    json_t *m = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
    const json_t *parts = json_object_get(m, "parts");
    int asked = 1;
    if (parts && parts_fit(a, parts)) serve_parts(a, ir, parts, &ph, t0, &end);
    else asked = serve_rows(a, ir, m, &ph, t0, &end) == 0;
    json_decref(m);
    if (!asked) {
        put_line(instrline_failure("instructions: the served request is not {\"rows\": \"T:R,...\", \"request\": "
                                   "{...}} nor {\"parts\": [{\"rows\", \"request\"}, ...]} (at most 8 parts)"),
                 "{\"ok\":false,\"reason\":\"instructions: out of memory\"}");
        end.total = timeutil_now_ms() - t0;
        put_served_done(&end, &ph, &before, 0);
        return 0;
    }
    int ending = end.whole_failed;
    if (ending)
        fprintf(stderr, "instructions: --serve: the request's passes failed as a whole, the server ends after it: %s\n",
                end.why);
    if (instr_runner_rest(ir, err) != 0) {
        fprintf(stderr, "instructions: --serve: ending the server: %s\n", err);
        ending = 1;
    }
    put_served_done(&end, &ph, &before, ending);
    return ending ? -1 : 0;
}

/* --serve's warm-up (instr_runner_warm()): CUPTI's set-up and, unless
 * DV_INSTR_SERVE_WARM_TEXT=off, the lesson cubin's disassembly, so the
 * first request's text phase is the disassembler's memory. A text part
 * that failed is logged and costs nothing else. The "ready" frame
 * (warm_ms counts both; "text_warm" says what the text part did).
 * Returns 0, or -1 (not ready: why logged). */
static int serve_warm(const struct args *a, struct instr_runner *ir) {
    char err[ERR_LEN] = "";
    const double t0 = timeutil_now_ms();
    const char *off = getenv("DV_INSTR_SERVE_WARM_TEXT");
    const int text = !(off && strcmp(off, "off") == 0);
    const struct disasm_config dc = {.tool = a->disassembler, .cache_dir = a->sass_cache};
    const struct instr_run_opts opts = {.disasm = disassemble, .disasm_ctx = (void *)&dc};
    struct instr_text_warm tw;
    memset(&tw, 0, sizeof tw);
    const int warm = ir ? instr_runner_warm(ir, a->device, text ? &opts : NULL, &tw, err) : -1;
    if (warm != 0) fprintf(stderr, "instructions: --serve: the warm-up: %s\n", err[0] ? err : "out of memory");
    else if (text && tw.reason[0])
        fprintf(stderr, "instructions: --serve: the text warm-up (the first request disassembles): %s\n", tw.reason);
    else if (text)
        fprintf(stderr, "instructions: --serve: the text warm-up: %u cubin%s disassembled in %.1f ms\n", tw.texts,
                tw.texts == 1 ? "" : "s", tw.ms);
    json_t *o = json_pack("{s:b, s:I, s:f}", "ready", warm == 0, "pid", (json_int_t)getpid(), "warm_ms",
                          timeutil_now_ms() - t0);
    json_t *t = text && warm == 0
                    ? json_pack("{s:i, s:i, s:f, s:s?}", "cubins", (int)tw.cubins, "texts", (int)tw.texts, "ms",
                                tw.ms, "reason", tw.reason[0] ? tw.reason : NULL)
                    : json_null();
    if (o && t) json_object_set_new(o, "text_warm", t);
    char *ready = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    put_line(ready, warm == 0 ? "{\"ready\":true}" : "{\"ready\":false}");
    return warm;
}

/* --serve: the process's CUPTI set-up once, then one framed request after
 * another on stdin until its end (instr_cmd.h). Returns the exit status. */
static int serve(struct args *a) {
    char err[ERR_LEN] = "";
    /* The worker's death is this process's too; an orphan from before this
     * line has a parent that is not its worker. */
    const pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) return 1;
    /* The frames go to the stdout it was given; anything else that prints
     * (a library) lands in the log, never in the stream. */
    if ((frame_fd = dup(1)) < 0 || dup2(2, 1) < 0) {
        fprintf(stderr, "instructions: --serve: %s\n", strerror(errno));
        return 1;
    }
    struct instr_runner *ir = instr_runner_create(err);
    const int warm = serve_warm(a, ir);
    int status = warm == 0 ? 0 : 1;
    while (status == 0) {
        char *msg = NULL;
        size_t len = 0;
        const enum wire_status ws = wire_read(0, &msg, &len, -1, err);
        if (ws == WIRE_EOF) break;
        if (ws != WIRE_OK) {
            fprintf(stderr, "instructions: --serve: %s\n", err);
            status = 1;
            break;
        }
        if (serve_one(a, ir, msg, len) != 0) status = 1;
        free(msg);
    }
    instr_runner_free(ir);
    return status;
}

int instr_cmd_main(int argc, char **argv) {
    static struct args a;
    static struct instr_row rows[INSTR_MAX_ROWS];
    static struct instr_job j;
    char err[ERR_LEN] = "";
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage();
        return 0;
    }
    if (parse_args(argc, argv, &a, err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    /* Modules load when their first kernel launches, after CUPTI is set up
     * (instr.h: the cubin capture and PC sampling need that), whatever the
     * environment the worker was given says. */
    setenv("CUDA_MODULE_LOADING", "LAZY", 1);
    if (a.serve) return serve(&a);
    struct instr_phases ph;
    instr_phases_start(&ph);
    const double t0 = ph.mark;
    memset(&j, 0, sizeof j);
    plan_rows(&a, &j, job_plan(&a, &j, err) == 0, err, rows);
    instr_phase_end(&ph, INSTR_PH_PLAN);
    struct run_end end;
    const int status =
        a.launch_only ? launch_only(&j, &rows[0], (unsigned)a.part) : profile(&a, NULL, &j, rows, &ph, t0, &end);
    for (unsigned i = 0; i < a.nrows; i++) instr_row_cleanup(&rows[i]);
    instr_job_cleanup(&j);
    return status;
}
