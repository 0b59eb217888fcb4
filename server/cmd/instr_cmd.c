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
#include "kernels/model/listing.h"
#include "kernels/model/listing_read.h"
#include "kernels/model/profile.h"
#include "server/core/subproc.h"

#define DISASSEMBLER_DEADLINE_MS 60000.0
#define NCU_DEADLINE_MS 120000.0

struct args {
    int table, row, device;
    const char *request, *disassembler, *sass_cache, *ncu;
    int stalls, whole_grid, launch_only, part, compare;
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
    if (a->table < 0 || a->row < 0) {
        dv_seterr(err, "instructions: --table T and --row R are needed");
        return -1;
    }
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

struct row_run {
    struct dv_options o;
    struct dv_report *r;
    const struct dv_row *row;
    struct dv_geometry g;
    struct profile_plan plan;
    struct session *s;
    struct dv_launch base;
    unsigned sample_blocks;
    int sampling; /* the launch callback launches the sampling grid */
};

/* The request, its plan and the row's profile plan. Returns 0, or -1 with
 * `err`. */
static int row_plan(const struct args *a, struct row_run *rr, char *err) {
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
    int rc = request_parse(text, len, &rr->o, &re);
    free(text);
    if (rc != 0) {
        dv_seterr(err, "instructions: the request: %s%s%s", re.field, re.field[0] ? ": " : "", re.reason);
        return -1;
    }
    rr->o.device = a->device;
    if (rr->o.blocks == 0) {
        dv_seterr(err, "instructions: the request's blocks must be the grid the row ran on, not auto");
        return -1;
    }
    if (!(rr->r = experiment_report_create())) {
        dv_seterr(err, "instructions: out of memory");
        return -1;
    }
    if (experiment_plan(&rr->o, rr->r, NULL, err) != 0) return -1;
    if ((unsigned)a->table >= rr->r->ntables || (unsigned)a->row >= rr->r->tables[a->table].nrows) {
        dv_seterr(err, "instructions: the plan has no row %d in table %d", a->row, a->table);
        return -1;
    }
    rr->row = &rr->r->tables[a->table].rows[a->row];
    rr->g = (struct dv_geometry){rr->r->config.blocks, rr->r->config.block_x, rr->r->config.block_y};
    if (profile_plan_row(rr->row, &rr->g, rr->r->config.iterations, a->whole_grid, &rr->plan, err) != 0) return -1;
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

/* The device and the row's buffers, as the measurement makes them. */
static int row_buffers(struct row_run *rr, struct dv_device *dev, char *err) {
    int rc;
    if (!(rr->s = session_create())) {
        dv_seterr(err, "instructions: out of memory");
        return DV_ERR;
    }
    if ((rc = session_device(rr->s, rr->o.device, dev, err)) != 0) return rc;
    const unsigned long long n = analysis_threads(&rr->g);
    const float *in = session_input(rr->s, n, &rc, err);
    if (!in) return rc;
    float *host = NULL;
    float *out = session_output(rr->s, 0, n, &host, &rc, err);
    if (!out) return rc;
    const uint32_t *dmask = NULL;
    if (!session_mask(rr->s, rr->row, &rr->g, experiment_row_mask, experiment_row_reads_mask(rr->row) ? &dmask : NULL, &rc, err))
        return rc;
    rr->base = (struct dv_launch){.in = in,
                                  .out = out,
                                  .n = n,
                                  .blocks = rr->g.blocks,
                                  .block_x = rr->g.block_x,
                                  .block_y = rr->g.block_y,
                                  .iterations = rr->r->config.iterations,
                                  .mode = rr->row->mode,
                                  .mask = dmask};
    return 0;
}

/* One wave of the row's kernel (at most its grid): the sampled launch. The
 * occupancy query loads the kernel's module, so it comes after CUPTI is
 * set up, never before (instr.h). */
static int row_wave(struct row_run *rr, const struct dv_device *dev, char *err) {
    int per_sm = 0, rc;
    if ((rc = dv_occupancy(rr->row->kernel, rr->base.iterations, rr->g.block_x * rr->g.block_y, &per_sm, err)) != 0)
        return rc;
    unsigned long long wave = (unsigned long long)(per_sm > 0 ? per_sm : 1) * (unsigned)dev->sm_count;
    rr->sample_blocks = (unsigned)(wave < rr->g.blocks ? wave : rr->g.blocks);
    if (!rr->sample_blocks) rr->sample_blocks = 1;
    return 0;
}

/* Part `part` of the profile plan, or the sampling wave. */
static int launch(void *ctx, unsigned part, char *err) {
    struct row_run *rr = ctx;
    struct dv_launch l = rr->base;
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
static char *disassemble(const char *tool, const char *cache, uint64_t crc, const void *cubin, size_t size,
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

static int collect(const struct args *a, struct row_run *rr, struct listing *l, struct listing_insns *combined,
                   char *stall_reason, char *err) {
    struct dv_device dev;
    struct listing_insns samples, parts[TESTIMONY_GRID_PARTS];
    uint64_t crc = 0;
    const void *cubin = NULL;
    size_t size = 0;
    int rc = -1;
    unsigned nparts = 0;
    listing_insns_init(&samples);
    struct instr *p = NULL;
    /* The device first (its reason is the one to give without one), then
     * CUPTI: with lazy loading (main() makes sure) no module has loaded yet,
     * so the subscription still sees the kernel's cubin arrive. */
    if (row_buffers(rr, &dev, err) != 0) goto cleanup;
    if (!(p = instr_create(err))) goto cleanup;
    if (instr_prepare(p, dev.ordinal, dev.cc_major, a->stalls, stall_reason, err) != 0) goto cleanup;
    if (row_wave(rr, &dev, err) != 0) goto cleanup;
    rr->sampling = 1;
    if (instr_sample(p, launch, rr, &samples, stall_reason) != 0) {
        /* No stall reasons, the counts still: the reason says why. */
        listing_insns_init(&samples);
    }
    rr->sampling = 0;
    nparts = rr->plan.grid.nparts;
    if (instr_count(p, nparts, launch, rr, parts, err) != 0) goto cleanup;
    if (listing_combine(parts, rr->plan.weight, nparts, combined, err) != 0) goto cleanup;
    if (instr_correlate(p, combined, &crc, &cubin, &size, err) != 0) goto cleanup;
    relative_files(combined);
    add_stalls(combined, &samples);
    add_text(a, combined, crc, cubin, size, l);
    l->cubin_crc = crc;
    rc = 0;
cleanup:
    for (unsigned k = 0; k < nparts; k++) listing_insns_cleanup(&parts[k]);
    listing_insns_cleanup(&samples);
    instr_free(p);
    return rc;
}

static int launch_only(struct row_run *rr, char *err, unsigned part) {
    struct dv_device dev;
    int rc = row_buffers(rr, &dev, err);
    if (rc == 0) rc = launch(rr, part, err);
    if (rc == 0) rc = DV_CUDA_CALL(cudaDeviceSynchronize(), err);
    return rc;
}

static int print_success(const struct listing *l, const char *stall_reason, const struct listing_diff *cmp) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "ok", json_true(), &bad);
    jsonout_put(o, "instructions", report_instructions_json(l), &bad);
    jsonout_put(o, "stalls_reason", stall_reason && stall_reason[0] ? jsonout_str(stall_reason) : json_null(), &bad);
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
    return 0;
}

int instr_cmd_main(int argc, char **argv) {
    struct args a;
    char err[ERR_LEN] = "", stall_reason[ERR_LEN] = "";
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs("usage: divergence-gpu instructions --table T --row R [--device N] [--request FILE]\n"
              "         [--disassembler PATH|none] [--sass-cache DIR] [--stalls on|off] [--grid reduced|whole]\n"
              "         [--compare ncu] [--ncu PATH]\n"
              "       divergence-gpu instructions --launch-only --part K --table T --row R ...\n"
              "The instruction profile of one row of the request on stdin (started by the GPU worker).\n",
              stdout);
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
    struct row_run rr;
    memset(&rr, 0, sizeof rr);
    struct listing *l = NULL;
    struct listing_insns combined, ncu;
    struct listing_diff diff;
    listing_insns_init(&combined);
    listing_insns_init(&ncu);
    int status = 1;
    if (row_plan(&a, &rr, err) != 0) goto done;
    if (a.launch_only) {
        status = launch_only(&rr, err, (unsigned)a.part) == 0 ? 0 : 1;
        if (status) fprintf(stderr, "%s\n", err);
        goto out;
    }
    if (a.compare) {
        char *request = request_dump(&rr.o);
        int rc = request ? ncu_collect(&a, &rr, request, &ncu, err) : -1;
        if (!request) dv_seterr(err, "instructions: out of memory");
        free(request);
        if (rc != 0) goto done;
    }
    if (!(l = listing_create())) {
        dv_seterr(err, "instructions: out of memory");
        goto done;
    }
    if (collect(&a, &rr, l, &combined, stall_reason, err) != 0) goto done;
    struct listing_paths paths;
    instr_lesson_paths(&paths);
    listing_classify(&combined, &paths);
    if (listing_build(&combined, l, err) != 0) goto done;
    snprintf(l->source, sizeof l->source, "cupti-sass");
    snprintf(l->kernel, sizeof l->kernel, "%s", combined.function);
    l->mask_hash = rr.plan.mask_hash;
    l->grid_blocks = rr.plan.grid.part_blocks[0];
    l->block_x = rr.g.block_x;
    l->block_y = rr.g.block_y;
    l->scale = (double)rr.g.blocks / (double)l->grid_blocks;
    timeutil_utc(time(NULL), l->collected_utc, sizeof l->collected_utc);
    l->collect_ms = timeutil_now_ms() - t0;
    if (a.compare) listing_compare(&combined, &ncu, &diff);
    status = print_success(l, stall_reason, a.compare ? &diff : NULL);
done:
    if (status) print_failure(err[0] ? err : "instructions: failed");
out:
    listing_free(l);
    listing_insns_cleanup(&combined);
    listing_insns_cleanup(&ncu);
    session_free(rr.s);
    experiment_report_free(rr.r);
    return status;
}
