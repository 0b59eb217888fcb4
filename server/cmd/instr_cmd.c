/* instr_cmd.c -- `divergence-gpu instructions` (instr_cmd.h).
 *
 * Arguments, then the row: the request parsed and planned exactly as the
 * worker planned it, the row's launch set up with the session's own input,
 * output and mask builders (gpu/session.h), so the profiled launch is the
 * timed one. CUDA's modules are loaded lazily (the process sets
 * CUDA_MODULE_LOADING=LAZY for itself), so CUPTI, set up after the device
 * and the buffers and before the first launch, sees the kernel's module
 * load. Every failure becomes {"ok": false, "reason"} on
 * stdout: the worker files it as the row's reason.
 */
#define _GNU_SOURCE
#include "server/cmd/instr_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "api/options.h"
#include "api/report.h"
#include "api/request.h"
#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/instr.h"
#include "kernels/gpu/instr_paths.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/gpu/session.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/listing/listing_read.h"
#include "kernels/model/model/profile.h"
#include "kernels/model/model/plan.h"
#include "server/core/subproc.h"

#define DISASSEMBLER_DEADLINE_MS 60000.0
#define NCU_DEADLINE_MS 120000.0

#define INSTR_CMD_MAX_ROWS (DV_MAX_TABLES * DV_MAX_ROWS)

struct args {
    int table, row, device;
    const char *request, *disassembler, *sass_cache, *ncu;
    int stalls, whole_grid, launch_only, part, compare;
    /* --rows T:R,...: the rows of one process, one answer line each */
    int many;
    unsigned nrows;
    int tables[INSTR_CMD_MAX_ROWS], rows[INSTR_CMD_MAX_ROWS];
};

/* ---- the output line ---------------------------------------------------- */

static int print_failure(const char *reason) {
    json_t *o = json_object();
    int bad = 0;
    jsonout_put(o, "ok", json_false(), &bad);
    jsonout_put(o, "reason", jsonout_str(reason), &bad);
    char *s = bad ? NULL : jsonout_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (s) printf("%s\n", s);
    else printf("{\"ok\":false,\"reason\":\"instructions: out of memory\"}\n");
    free(s);
    fflush(stdout);
    return 1;
}

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
        if (end == p || (*end && *end != ',') || r < 0 || r >= DV_MAX_ROWS || a->nrows == INSTR_CMD_MAX_ROWS) return -1;
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
        if (strcmp(k, "--launch-only") == 0) {
            a->launch_only = 1;
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
    if (a->many) return 0;
    if (a->table < 0 || a->row < 0) {
        dv_seterr(err, "instructions: --table T and --row R (or --rows T:R,...) are needed");
        return -1;
    }
    a->nrows = 1;
    a->tables[0] = a->table;
    a->rows[0] = a->row;
    return 0;
}

/* ---- the row --------------------------------------------------------------- */

static char *read_all(FILE *f, size_t *len) {
    size_t cap = 4096, n = 0, r;
    char *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                return NULL;
            }
            buf = b;
            cap *= 2;
        }
    }
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

/* What every row of the process shares: the request as planned, the
 * device, its input and its output. */
struct job_run {
    struct dv_options o;
    struct dv_report *r;
    struct dv_geometry g;
    struct session *s;
    struct dv_device dev;
    struct dv_launch base; /* the row's mode and mask left out */
};

/* One row of the process, and what came of it. */
struct row_run {
    struct job_run *j;
    int table, index;
    const struct dv_row *row;
    struct profile_plan plan;
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

static void row_fail(struct row_run *rr, const char *why) {
    if (rr->failed) return;
    rr->failed = 1;
    if (why == rr->err && why[0]) return; /* the reason is in place */
    snprintf(rr->err, sizeof rr->err, "%s", why && why[0] ? why : "instructions: failed");
}

static void row_cleanup(struct row_run *rr) {
    listing_insns_cleanup(&rr->samples);
    for (unsigned k = 0; k < rr->nparts; k++) listing_insns_cleanup(&rr->parts[k]);
    listing_insns_cleanup(&rr->combined);
    listing_free(rr->l);
    rr->l = NULL;
    rr->nparts = 0;
}

/* The request and its plan, shared by the rows. Returns 0, or -1 with
 * `err`. */
static int job_plan(const struct args *a, struct job_run *j, char *err) {
    size_t len = 0;
    char *text = NULL;
    if (a->request) {
        FILE *f = fopen(a->request, "rb");
        if (!f) {
            dv_seterr(err, "instructions: %s: %s", a->request, strerror(errno));
            return -1;
        }
        text = read_all(f, &len);
        fclose(f);
    } else {
        text = read_all(stdin, &len);
    }
    if (!text) {
        dv_seterr(err, "instructions: cannot read the request");
        return -1;
    }
    struct request_error re;
    int rc = request_parse(text, len, &j->o, &re);
    free(text);
    if (rc != 0) {
        dv_seterr(err, "instructions: the request: %s%s%s", re.field, re.field[0] ? ": " : "", re.reason);
        return -1;
    }
    j->o.device = a->device;
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

/* Row (table, index)'s profile plan. Returns 0, or -1 with `err`. */
static int row_plan(const struct args *a, struct row_run *rr, char *err) {
    const struct job_run *j = rr->j;
    if ((unsigned)rr->table >= j->r->ntables || (unsigned)rr->index >= j->r->tables[rr->table].nrows) {
        dv_seterr(err, "instructions: the plan has no row %d in table %d", rr->index, rr->table);
        return -1;
    }
    rr->row = &j->r->tables[rr->table].rows[rr->index];
    if (profile_plan_row(rr->row, &j->g, j->r->config.iterations, a->whole_grid, &rr->plan, err) != 0) return -1;
    if (rr->plan.cost > OPTIONS_MAX_INSTRUCTIONS_COST) {
        dv_seterr(err, "instructions: over the cost cap: %.3g thread-iterations patched (%u blocks), the cap %.3g",
                  rr->plan.cost, rr->plan.grid.part_blocks[0], OPTIONS_MAX_INSTRUCTIONS_COST);
        return -1;
    }
    if (a->launch_only && (unsigned)a->part >= rr->plan.grid.nparts) {
        dv_seterr(err, "instructions: the grid has %u parts", rr->plan.grid.nparts);
        return -1;
    }
    return 0;
}

/* The device and the buffers every row reads and writes, as the
 * measurement makes them. */
static int job_buffers(struct job_run *j, char *err) {
    int rc;
    if (!(j->s = session_create())) {
        dv_seterr(err, "instructions: out of memory");
        return DV_ERR;
    }
    if ((rc = session_device(j->s, j->o.device, &j->dev, err)) != 0) return rc;
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

/* The row's path mask on the device, when its kernel reads one. */
static int row_buffers(struct row_run *rr, char *err) {
    int rc = 0;
    rr->dmask = NULL;
    if (!session_mask(rr->j->s, rr->row, &rr->j->g, plan_row_mask,
                      experiment_row_reads_mask(rr->row) ? &rr->dmask : NULL, &rc, err))
        return rc ? rc : DV_ERR;
    return 0;
}

/* One wave of the row's kernel (at most its grid): the sampled launch. The
 * occupancy query loads the kernel's module, so it comes after CUPTI is
 * set up, never before (instr.h). */
static int row_wave(struct row_run *rr, char *err) {
    const struct job_run *j = rr->j;
    int per_sm = 0, rc;
    if ((rc = dv_occupancy(rr->row->kernel, j->base.iterations, j->g.block_x * j->g.block_y, &per_sm, err)) != 0)
        return rc;
    unsigned long long wave = (unsigned long long)(per_sm > 0 ? per_sm : 1) * (unsigned)j->dev.sm_count;
    rr->sample_blocks = (unsigned)(wave < j->g.blocks ? wave : j->g.blocks);
    if (!rr->sample_blocks) rr->sample_blocks = 1;
    return 0;
}

/* Part `part` of the row's profile plan, or its sampling wave. */
static int launch(void *ctx, unsigned part, char *err) {
    struct row_run *rr = ctx;
    struct dv_launch l = rr->j->base;
    l.mode = rr->row->mode;
    l.mask = rr->dmask;
    l.blocks = rr->sampling ? rr->sample_blocks : rr->plan.grid.part_blocks[part];
    return dv_run_kernel(rr->row->kernel, &l, err);
}

/* ---- tools ------------------------------------------------------------------ */

static int executable(const char *path) { return path && path[0] && access(path, X_OK) == 0; }

/* `name` in the toolkit found at build time, /usr/local/cuda/bin, then
 * PATH, into out[PATH_MAX]. */
static int find_tool(const char *name, char *out) {
    const char *dirs[] = {
#ifdef DV_CUDA_BIN_DIR
        DV_CUDA_BIN_DIR,
#endif
        "/usr/local/cuda/bin"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(out, PATH_MAX, "%s/%s", dirs[i], name);
        if (executable(out)) return 0;
    }
    const char *path = getenv("PATH");
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", path ? path : "");
    char *save = NULL;
    for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, PATH_MAX, "%s/%s", d, name);
        if (executable(out)) return 0;
    }
    out[0] = '\0';
    return -1;
}

/* The disassembler to use into out[PATH_MAX]; -1 with `why` when none. */
static int find_disassembler(const struct args *a, char *out, char *why) {
    const char *exact = a->disassembler ? a->disassembler : getenv("DV_DISASSEMBLER");
    if (exact && strcmp(exact, "none") == 0) {
        dv_seterr(why, "the disassembler was turned off (--disassembler none)");
        return -1;
    }
    if (exact && exact[0]) {
        if (!executable(exact)) {
            dv_seterr(why, "the disassembler %s named is not an executable file", exact);
            return -1;
        }
        snprintf(out, PATH_MAX, "%s", exact);
        return 0;
    }
    if (find_tool("nvdisasm", out) == 0 || find_tool("cuobjdump", out) == 0) return 0;
    dv_seterr(why, "no disassembler: neither nvdisasm nor cuobjdump is in the CUDA toolkit's bin folder, in "
                   "/usr/local/cuda/bin or on PATH (--disassembler PATH or DV_DISASSEMBLER names one)");
    return -1;
}

static int is_cuobjdump(const char *tool) {
    const char *base = strrchr(tool, '/');
    return strstr(base ? base + 1 : tool, "cuobjdump") != NULL;
}

/* "nvdisasm V13.0.88 (path)" from the tool's --version. */
static void tool_label(const char *tool, char *label, size_t size) {
    const char *argv[] = {tool, "--version", NULL};
    struct subproc_result res;
    char err[ERR_LEN], version[64] = "";
    if (subproc_run(argv, NULL, 0, 10000, &res, err) == 0) {
        const char *v = NULL;
        for (const char *p = strstr(res.out, " V"); p; p = strstr(p + 1, " V")) v = p + 1;
        if (v) snprintf(version, sizeof version, "%.*s ", (int)strcspn(v, " \r\n,"), v);
        subproc_result_cleanup(&res);
    }
    const char *base = strrchr(tool, '/');
    /* A long install path is cut: the label says which tool, the path is a hint. */
    snprintf(label, size, "%.32s %.24s(%.64s)", base ? base + 1 : tool, version, tool);
}

static int write_file(const char *path, const void *data, size_t n, char *err) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        dv_seterr(err, "instructions: %s: %s", path, strerror(errno));
        return -1;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            dv_seterr(err, "instructions: writing %s: %s", path, strerror(errno));
            close(fd);
            unlink(path);
            return -1;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0) {
        dv_seterr(err, "instructions: closing %s: %s", path, strerror(errno));
        unlink(path);
        return -1;
    }
    return 0;
}

/* The disassembly of `cubin` (CRC `crc`) as text (malloc()ed, first line
 * "# <label>"), from the cache folder or by running `tool`. NULL with
 * `why`. */
static char *disassemble_uncached(const char *tool, const char *cache, uint64_t crc, const void *cubin, size_t size,
                                  size_t *len, char *why);

/* As disassemble_uncached(), once per cubin in this process: the rows of
 * one process share their kernels' cubin, --sass-cache or not. */
static char *disassemble(const char *tool, const char *cache, uint64_t crc, const void *cubin, size_t size,
                         size_t *len, char *why) {
    static struct {
        uint64_t crc;
        char *text;
        size_t len;
    } memo;
    if (!memo.text || memo.crc != crc) {
        size_t n = 0;
        char *text = disassemble_uncached(tool, cache, crc, cubin, size, &n, why);
        if (!text) return NULL;
        free(memo.text);
        memo.text = text;
        memo.len = n;
        memo.crc = crc;
    }
    char *copy = malloc(memo.len + 1);
    if (!copy) {
        dv_seterr(why, "instructions: out of memory for the disassembly");
        return NULL;
    }
    memcpy(copy, memo.text, memo.len + 1);
    *len = memo.len;
    return copy;
}

static char *disassemble_uncached(const char *tool, const char *cache, uint64_t crc, const void *cubin, size_t size,
                                  size_t *len, char *why) {
    char cached[PATH_MAX] = "";
    if (cache) {
        snprintf(cached, sizeof cached, "%s/%016llx.sass", cache, (unsigned long long)crc);
        FILE *f = fopen(cached, "rb");
        if (f) {
            char *text = read_all(f, len);
            fclose(f);
            if (text) return text;
        }
    }
    const char *tmp = cache ? cache : getenv("TMPDIR");
    char cubin_path[PATH_MAX];
    snprintf(cubin_path, sizeof cubin_path, "%s/cubin-%ld-%016llx.cubin", tmp && tmp[0] ? tmp : "/tmp", (long)getpid(),
             (unsigned long long)crc);
    if (write_file(cubin_path, cubin, size, why) != 0) return NULL;
    const char *argv[4] = {tool, is_cuobjdump(tool) ? "-sass" : "-c", cubin_path, NULL};
    struct subproc_result res;
    char err[ERR_LEN];
    int rc = subproc_run(argv, NULL, 0, DISASSEMBLER_DEADLINE_MS, &res, err);
    unlink(cubin_path);
    if (rc != 0) {
        dv_seterr(why, "%s", err);
        return NULL;
    }
    if (res.how != SUBPROC_EXITED || res.status != 0 || res.len == 0) {
        char what[128];
        subproc_describe(&res, DISASSEMBLER_DEADLINE_MS, what, sizeof what);
        dv_seterr(why, "the disassembler %s on the cubin: %s", tool, what);
        subproc_result_cleanup(&res);
        return NULL;
    }
    char label[LISTING_TOOL_LEN];
    tool_label(tool, label, sizeof label);
    size_t head = strlen(label) + 3;
    char *text = malloc(head + res.len + 1);
    if (!text) {
        dv_seterr(why, "instructions: out of memory for the disassembly");
        subproc_result_cleanup(&res);
        return NULL;
    }
    snprintf(text, head + 1, "# %s\n", label);
    memcpy(text + head, res.out, res.len + 1);
    *len = head + res.len;
    subproc_result_cleanup(&res);
    if (cache) {
        /* Written whole under another name, then renamed: a reader sees all of it or none. */
        char part[PATH_MAX + 16];
        snprintf(part, sizeof part, "%s.%ld", cached, (long)getpid());
        char ignored[ERR_LEN];
        if (write_file(part, text, *len, ignored) == 0 && rename(part, cached) != 0) unlink(part);
    }
    return text;
}

/* The text, branch targets and the tool's label onto `f`; the reason for
 * none into l->disassembly_reason. */
static void add_text(const struct args *a, struct listing_insns *f, uint64_t crc, const void *cubin, size_t size,
                     struct listing *l) {
    char tool[PATH_MAX], why[ERR_LEN] = "";
    size_t len = 0;
    char *text = NULL;
    struct listing_insns t;
    if (find_disassembler(a, tool, why) != 0 || !(text = disassemble(tool, a->sass_cache, crc, cubin, size, &len, why)) ||
        listing_read_sass(text, len, f->function, &t, why) != 0) {
        snprintf(l->disassembly_reason, sizeof l->disassembly_reason, "%s", why);
        free(text);
        return;
    }
    listing_join_text(f, &t);
    listing_insns_cleanup(&t);
    const char *nl = strchr(text, '\n');
    snprintf(l->disassembler, sizeof l->disassembler, "%.*s", nl ? (int)(nl - text - 2) : 0, text + 2);
    free(text);
}

/* ---- Nsight Compute ---------------------------------------------------------- */

static int find_ncu(const struct args *a, char *out) {
    const char *exact = a->ncu ? a->ncu : getenv("DV_NCU");
    if (exact && exact[0]) {
        snprintf(out, PATH_MAX, "%s", exact);
        return executable(out) ? 0 : -1;
    }
    if (find_tool("ncu", out) == 0) return 0;
    glob_t g;
    if (glob("/opt/nvidia/nsight-compute/*/ncu", 0, NULL, &g) == 0 && g.gl_pathc) {
        snprintf(out, PATH_MAX, "%s", g.gl_pathv[g.gl_pathc - 1]);
        globfree(&g);
        return 0;
    }
    return -1;
}

/* Runs `argv` under the deadline; its stdout on success, NULL with `err`. */
static char *run_tool(const char *const *argv, struct subproc_result *res, char *err) {
    if (subproc_run(argv, NULL, 0, NCU_DEADLINE_MS, res, err) != 0) return NULL;
    if (res->how != SUBPROC_EXITED || res->status != 0) {
        char what[128];
        subproc_describe(res, NCU_DEADLINE_MS, what, sizeof what);
        dv_seterr(err, "%s: %s", argv[0], what);
        subproc_result_cleanup(res);
        return NULL;
    }
    return res->out;
}

/* Nsight Compute's Source page of every part of the row's grid, combined
 * with the parts' weights, into `out`. Runs before this process touches
 * CUDA: ncu profiles another process, this binary's --launch-only. */
static int ncu_collect(const struct args *a, const struct row_run *rr, const char *request, struct listing_insns *out,
                       char *err) {
    char ncu[PATH_MAX], self[PATH_MAX], tdir[PATH_MAX];
    const char *tmp = getenv("TMPDIR");
    snprintf(tdir, sizeof tdir, "%s/dv-ncu-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (find_ncu(a, ncu) != 0) {
        dv_seterr(err, "compare: no ncu (the toolkit's bin folder, /usr/local/cuda/bin, /opt/nvidia/nsight-compute, "
                       "PATH; --ncu PATH names one)");
        return -1;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || !mkdtemp(tdir)) {
        dv_seterr(err, "compare: %s", n <= 0 ? "cannot name this binary" : strerror(errno));
        return -1;
    }
    self[n] = '\0';
    char req[PATH_MAX + 16], rep[PATH_MAX + 16], tb[16], rw[16], dv[16], pt[16];
    snprintf(req, sizeof req, "%s/request.json", tdir);
    snprintf(tb, sizeof tb, "%d", a->table);
    snprintf(rw, sizeof rw, "%d", a->row);
    snprintf(dv, sizeof dv, "%d", a->device);
    struct listing_insns parts[TESTIMONY_GRID_PARTS];
    unsigned got = 0;
    int rc = write_file(req, request, strlen(request), err);
    for (unsigned k = 0; rc == 0 && k < rr->plan.grid.nparts; k++) {
        snprintf(rep, sizeof rep, "%s/part%u", tdir, k);
        snprintf(pt, sizeof pt, "%u", k);
        /* -k: the lesson kernels alone (the session's memsets are no kernel
         * of ours). */
        const char *profile[] = {ncu,   "--section", "SourceCounters", "--clock-control", "none", "-k", "regex:^mix",
                                 "--launch-count", "1", "-f", "-o", rep, self, "instructions", "--launch-only",
                                 "--part", pt, "--table", tb, "--row", rw, "--device", dv, "--request", req, "--grid",
                                 a->whole_grid ? "whole" : "reduced", NULL};
        struct subproc_result res;
        if (!run_tool(profile, &res, err)) {
            rc = -1;
            break;
        }
        subproc_result_cleanup(&res);
        char file[PATH_MAX + 32];
        snprintf(file, sizeof file, "%s.ncu-rep", rep);
        const char *print[] = {ncu, "-i", file, "--page", "source", "--print-source", "sass", "--csv", NULL};
        const char *csv = run_tool(print, &res, err);
        unlink(file);
        if (!csv) {
            rc = -1;
            break;
        }
        const char *start = strstr(csv, "\"Kernel Name\"");
        if (!start || listing_read_ncu(start, strlen(start), 0, &parts[got], err) != 0) {
            if (!start) dv_seterr(err, "compare: ncu printed no Source page for part %u", k);
            subproc_result_cleanup(&res);
            rc = -1;
            break;
        }
        got++;
        subproc_result_cleanup(&res);
    }
    unlink(req);
    rmdir(tdir);
    if (rc == 0) rc = listing_combine(parts, rr->plan.weight, got, out, err);
    for (unsigned k = 0; k < got; k++) listing_insns_cleanup(&parts[k]);
    return rc;
}

/* ---- the collection ------------------------------------------------------------ */

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

/* Where the process's time went, for its answer: the phases in order. */
enum { PH_PLAN, PH_CUDA, PH_CUPTI, PH_SAMPLING, PH_PATCHED, PH_LINES, PH_TEXT, PH_N };
static const char *const phase_names[PH_N] = {"plan", "cuda", "cupti", "sampling", "patched", "lines", "text"};

struct phases {
    double ms[PH_N];
    double mark;
};

static void phase_end(struct phases *ph, int k) {
    const double now = timeutil_now_ms();
    ph->ms[k] += now - ph->mark;
    ph->mark = now;
}

/* The launches of instr_count(): every part of every row still going. */
struct count_map {
    struct row_run *rr[INSTR_CMD_MAX_ROWS * TESTIMONY_GRID_PARTS];
    unsigned part[INSTR_CMD_MAX_ROWS * TESTIMONY_GRID_PARTS];
    unsigned n;
};

static int count_launch(void *ctx, unsigned k, char *err) {
    const struct count_map *m = ctx;
    return launch(m->rr[k], m->part[k], err);
}

/* PC sampling of each row still going, one sampled wave each, before
 * anything is patched; a row whose sampling failed says why, and so do the
 * rows after it (sampling is off from there). Returns 0, or DV_ESTICKY. */
static int sample_rows(struct instr *p, struct row_run *rows, unsigned n) {
    char off[ERR_LEN] = "";
    for (unsigned i = 0; i < n; i++) {
        struct row_run *rr = &rows[i];
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
static int count_rows(struct instr *p, struct row_run *rows, unsigned n, char *err) {
    static struct count_map m;
    static struct listing_insns flat[INSTR_CMD_MAX_ROWS * TESTIMONY_GRID_PARTS];
    static int ok[INSTR_CMD_MAX_ROWS * TESTIMONY_GRID_PARTS];
    m.n = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; !rows[i].failed && k < rows[i].plan.grid.nparts; k++) {
            m.rr[m.n] = &rows[i];
            m.part[m.n++] = k;
        }
    if (m.n == 0) return 0;
    int rc = instr_count(p, m.n, count_launch, &m, flat, ok, err);
    for (unsigned k = 0; k < m.n; k++) {
        struct row_run *rr = m.rr[k];
        rr->parts[m.part[k]] = flat[k]; /* the row owns it now */
        rr->nparts = m.part[k] + 1;
        if (rc == 0 && !ok[k]) {
            char why[ERR_LEN];
            dv_seterr(why, "CUPTI: the SASS metrics gave no record for this row's launch %u (%u blocks)", m.part[k],
                      rr->plan.grid.part_blocks[m.part[k]]);
            row_fail(rr, why);
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
static void check_functions(struct row_run *rows, unsigned n) {
    for (unsigned i = 0; n > 1 && i < n; i++) {
        struct row_run *rr = &rows[i];
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
            const struct row_run *o = &rows[j];
            if (j == i || o->failed || o->nparts == 0) continue;
            const int same_kernel = o->row->kernel == rr->row->kernel;
            const int same_function = strcmp(o->parts[0].function, fn) == 0;
            if (same_kernel && !same_function)
                dv_seterr(why, "instructions: this row's SASS records named %.100s, row %d:%d of the same kernel %.100s",
                          fn, o->table, o->index, o->parts[0].function);
            else if (!same_kernel && same_function)
                dv_seterr(why, "instructions: this row's SASS records named %.100s, as did row %d:%d of another kernel",
                          fn, o->table, o->index);
        }
        if (why[0]) row_fail(rr, why);
    }
}

/* One counted row into its listing: parts combined, lines, stalls, text. */
static void finish_row(const struct args *a, struct instr *p, struct row_run *rr, struct phases *ph) {
    uint64_t crc = 0;
    const void *cubin = NULL;
    size_t size = 0;
    char err[ERR_LEN] = "";
    if (listing_combine(rr->parts, rr->plan.weight, rr->plan.grid.nparts, &rr->combined, err) != 0 ||
        instr_correlate(p, &rr->combined, &crc, &cubin, &size, err) != 0) {
        row_fail(rr, err);
        return;
    }
    relative_files(&rr->combined);
    add_stalls(&rr->combined, &rr->samples);
    phase_end(ph, PH_LINES);
    if (!(rr->l = listing_create())) {
        row_fail(rr, "instructions: out of memory");
        return;
    }
    add_text(a, &rr->combined, crc, cubin, size, rr->l);
    rr->l->cubin_crc = crc;
    phase_end(ph, PH_TEXT);
    struct listing_paths paths;
    instr_lesson_paths(&paths);
    listing_classify(&rr->combined, &paths);
    if (listing_build(&rr->combined, rr->l, err) != 0) {
        row_fail(rr, err);
        return;
    }
    struct listing *l = rr->l;
    snprintf(l->source, sizeof l->source, "cupti-sass");
    snprintf(l->kernel, sizeof l->kernel, "%s", rr->combined.function);
    l->mask_hash = rr->plan.mask_hash;
    l->grid_blocks = rr->plan.grid.part_blocks[0];
    l->block_x = rr->j->g.block_x;
    l->block_y = rr->j->g.block_y;
    l->scale = (double)rr->j->g.blocks / (double)l->grid_blocks;
    timeutil_utc(time(NULL), l->collected_utc, sizeof l->collected_utc);
}

/* Every row of the process, each into rr->l or failed with its reason.
 * Returns 0, or -1 with `err` for a failure of the whole process (the
 * device, CUPTI, a sticky error), which the caller gives every row left. */
static int collect(const struct args *a, struct job_run *j, struct row_run *rows, unsigned n, struct phases *ph,
                   char *err) {
    struct instr *p = NULL;
    char stall_reason[ERR_LEN] = "";
    int rc = -1;
    /* The device first (its reason is the one to give without one), then
     * CUPTI: with lazy loading (main() makes sure) no module has loaded yet,
     * so the subscription still sees the kernels' cubin arrive. */
    if (job_buffers(j, err) != 0) goto cleanup;
    for (unsigned i = 0; i < n; i++)
        if (!rows[i].failed && row_buffers(&rows[i], rows[i].err) != 0) row_fail(&rows[i], rows[i].err);
    phase_end(ph, PH_CUDA);
    if (!(p = instr_create(err))) goto cleanup;
    if (instr_prepare(p, j->dev.ordinal, j->dev.cc_major, a->stalls, stall_reason, err) != 0) goto cleanup;
    for (unsigned i = 0; i < n; i++) {
        if (stall_reason[0]) snprintf(rows[i].stall_reason, sizeof rows[i].stall_reason, "%s", stall_reason);
        if (!rows[i].failed && row_wave(&rows[i], rows[i].err) != 0) row_fail(&rows[i], rows[i].err);
    }
    phase_end(ph, PH_CUPTI);
    if (sample_rows(p, rows, n) == DV_ESTICKY) {
        dv_seterr(err, "instructions: a sticky CUDA error while sampling");
        goto cleanup;
    }
    phase_end(ph, PH_SAMPLING);
    if (count_rows(p, rows, n, err) != 0) goto cleanup;
    check_functions(rows, n);
    phase_end(ph, PH_PATCHED);
    for (unsigned i = 0; i < n; i++)
        if (!rows[i].failed) finish_row(a, p, &rows[i], ph);
    rc = 0;
cleanup:
    instr_free(p);
    return rc;
}

static int launch_only(struct job_run *j, struct row_run *rr, char *err, unsigned part) {
    int rc = job_buffers(j, err);
    if (rc == 0) rc = row_buffers(rr, err);
    if (rc == 0) rc = launch(rr, part, err);
    if (rc == 0) rc = DV_CUDA_CALL(cudaDeviceSynchronize(), err);
    return rc;
}

static json_t *phases_json(const struct phases *ph, double total_ms, int *bad) {
    json_t *o = json_object();
    for (int k = 0; k < PH_N; k++) jsonout_put(o, phase_names[k], json_real(ph->ms[k]), bad);
    jsonout_put(o, "total", json_real(total_ms), bad);
    return o;
}

/* One row's answer line: {"ok": true, "instructions", "stalls_reason"} or
 * {"ok": false, "reason"}, with "table" and "row"; a single row's also has
 * "phases_ms" (and "compare"). Returns 0, or 1 for a failed row. */
static int print_row(const struct row_run *rr, const struct phases *ph, double total_ms,
                     const struct listing_diff *cmp) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "table", json_integer(rr->table), &bad);
    jsonout_put(o, "row", json_integer(rr->index), &bad);
    if (rr->failed || !rr->l) {
        jsonout_put(o, "ok", json_false(), &bad);
        jsonout_put(o, "reason", jsonout_str(rr->err[0] ? rr->err : "instructions: failed"), &bad);
    } else {
        jsonout_put(o, "ok", json_true(), &bad);
        jsonout_put(o, "instructions", report_instructions_json(rr->l), &bad);
        jsonout_put(o, "stalls_reason", rr->stall_reason[0] ? jsonout_str(rr->stall_reason) : json_null(), &bad);
    }
    if (ph) jsonout_put(o, "phases_ms", phases_json(ph, total_ms, &bad), &bad);
    if (cmp) {
        json_t *c = json_object();
        jsonout_put(c, "cells", json_integer((json_int_t)cmp->cells), &bad);
        jsonout_put(c, "mismatches", json_integer((json_int_t)cmp->mismatches), &bad);
        jsonout_put(c, "instructions", json_integer(cmp->instructions), &bad);
        jsonout_put(c, "first", cmp->first[0] ? jsonout_str(cmp->first) : json_null(), &bad);
        jsonout_put(o, "compare", c, &bad);
    }
    char *s = bad ? NULL : jsonout_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!s) return print_failure("instructions: out of memory writing the profile");
    printf("%s\n", s);
    fflush(stdout);
    free(s);
    return rr->failed || !rr->l;
}

/* The last line of --rows: how many rows, and where the time went. */
static void print_summary(unsigned n, unsigned profiled, const struct phases *ph, double total_ms) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "done", json_true(), &bad);
    jsonout_put(o, "rows", json_integer(n), &bad);
    jsonout_put(o, "profiled", json_integer(profiled), &bad);
    jsonout_put(o, "phases_ms", phases_json(ph, total_ms, &bad), &bad);
    char *s = bad ? NULL : jsonout_dumps(o, JSON_COMPACT);
    json_decref(o);
    printf("%s\n", s ? s : "{\"done\":true}");
    fflush(stdout);
    free(s);
}

static void usage(void) {
    fputs("usage: divergence-gpu instructions (--table T --row R | --rows T:R,T:R,...) [--device N]\n"
          "         [--request FILE] [--disassembler PATH|none] [--sass-cache DIR] [--stalls on|off]\n"
          "         [--grid reduced|whole] [--compare ncu] [--ncu PATH]\n"
          "       divergence-gpu instructions --launch-only --part K --table T --row R ...\n"
          "The instruction profiles of rows of the request on stdin (started by the GPU worker): one JSON\n"
          "line per row; with --rows, every row in one process and a last line with the process's phases.\n",
          stdout);
}

int instr_cmd_main(int argc, char **argv) {
    static struct args a;
    static struct row_run rows[INSTR_CMD_MAX_ROWS];
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
    const double t0 = timeutil_now_ms();
    struct phases ph;
    memset(&ph, 0, sizeof ph);
    ph.mark = t0;
    struct job_run j;
    memset(&j, 0, sizeof j);
    memset(rows, 0, sizeof rows);
    struct listing_insns ncu;
    struct listing_diff diff;
    listing_insns_init(&ncu);
    int status = 1, planned = job_plan(&a, &j, err) == 0;
    for (unsigned i = 0; i < a.nrows; i++) {
        struct row_run *rr = &rows[i];
        rr->j = &j;
        rr->table = a.tables[i];
        rr->index = a.rows[i];
        listing_insns_init(&rr->samples);
        listing_insns_init(&rr->combined);
        if (!planned) row_fail(rr, err);
        else if (row_plan(&a, rr, rr->err) != 0) row_fail(rr, rr->err);
    }
    phase_end(&ph, PH_PLAN);
    if (a.launch_only) {
        status = !rows[0].failed && launch_only(&j, &rows[0], err, (unsigned)a.part) == 0 ? 0 : 1;
        if (status) fprintf(stderr, "%s\n", rows[0].failed ? rows[0].err : err);
        goto out;
    }
    if (a.compare && !rows[0].failed) {
        char *request = request_dump(&j.o);
        int rc = request ? ncu_collect(&a, &rows[0], request, &ncu, err) : -1;
        if (!request) dv_seterr(err, "instructions: out of memory");
        free(request);
        if (rc != 0) row_fail(&rows[0], err);
    }
    unsigned live = 0;
    for (unsigned i = 0; i < a.nrows; i++) live += !rows[i].failed;
    if (live && collect(&a, &j, rows, a.nrows, &ph, err) != 0)
        for (unsigned i = 0; i < a.nrows; i++) row_fail(&rows[i], err);
    const double total = timeutil_now_ms() - t0;
    unsigned profiled = 0;
    for (unsigned i = 0; i < a.nrows; i++) profiled += !rows[i].failed && rows[i].l;
    /* The cold cost of a row: its share of the process, start to answer. */
    for (unsigned i = 0; i < a.nrows; i++)
        if (!rows[i].failed && rows[i].l) rows[i].l->collect_ms = total / profiled;
    if (a.compare && !rows[0].failed) listing_compare(&rows[0].combined, &ncu, &diff);
    status = 0;
    for (unsigned i = 0; i < a.nrows; i++)
        status |= print_row(&rows[i], a.many ? NULL : &ph, total, a.compare && !rows[0].failed ? &diff : NULL);
    if (a.many) {
        print_summary(a.nrows, profiled, &ph, total);
        status = profiled ? 0 : 1;
    }
out:
    for (unsigned i = 0; i < a.nrows; i++) row_cleanup(&rows[i]);
    listing_insns_cleanup(&ncu);
    session_free(j.s);
    experiment_report_free(j.r);
    return status;
}
