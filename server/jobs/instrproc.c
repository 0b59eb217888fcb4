/* instrproc.c -- a report's instruction profiles from processes of their
 * own, cached (instrproc.h).
 *
 * Per row: the profile plan (model/model/profile.h: the blocks that stand for the
 * grid, its cost, its mask hash) decides whether the row can be profiled at
 * all and under the cap; the cache is asked once the kernel's function and
 * cubin are known. The rows left go to one `divergence-gpu instructions
 * --rows T:R,...` (or `--table T --row R` for one), which gets the request
 * on stdin (subproc.h) and answers with one JSON line per row, read with
 * api/report.h's reader of a row's `instructions` object, so the child and
 * the document cannot disagree on the shape. The process's wall time, its
 * start and CUDA context included, shared among the rows it profiled, is
 * each profile's collect_ms: the cold cost of a row.
 *
 * The cache is kernels/base/lru.h's, bounded by its entries (the least
 * recently used makes room), keyed by the text of the row's struct
 * listing_key. What it holds are copies, and so is what a report gets: the
 * report frees its own.
 */
#define _GNU_SOURCE
#include "server/jobs/instrproc.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "api/options.h"
#include "api/report.h"
#include "api/request.h"
#include "kernels/base/lru.h"
#include "kernels/base/timeutil.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/profile.h"
#include "server/core/log.h"
#include "server/core/subproc.h"
#include "server/jobs/instrserve.h"
#include "server/jobs/instrunion.h"
#include "server/jobs/profilecache.h"

#define KEY_LEN 768
#define INSTRPROC_MAX_ROWS (DV_MAX_TABLES * DV_MAX_ROWS)

/* What the first profile of a kernel's instantiation said about it, by the
 * instantiation's name (profile_kernel_identity(): "branch/1",
 * "scenario/short/4x3/c", ...). */
#define INSTRPROC_KERNEL_IDS 128
struct kernel_id {
    char name[96];
    int known;
    char function[LISTING_FUNCTION_LEN];
    uint64_t crc;
};

struct instrproc {
    char exe[PATH_MAX];
    char disassembler[PATH_MAX];
    int has_disassembler;
    int device;
    double deadline_ms, budget_ms;
    char dir[PATH_MAX]; /* the disassembly folder */
    struct lru *cache; /* key text -> struct listing (a copy) */
    struct kernel_id ids[INSTRPROC_KERNEL_IDS]; /* by name; name "" past the last */
    unsigned children;
    void (*before_child)(void *ctx);
    void *before_child_ctx;
    char cache_dir[PATH_MAX]; /* "" when none                      */
    struct profilecache *disk; /* NULL until opened, or memory alone */
    int disk_tried;            /* opened, or failed and logged once   */
    /* The profiling server (instrserve.h): NULL until started, or with
     * one_shot (told so, or it could not start): a process per batch. */
    struct instrserve *server;
    int one_shot;
    unsigned served; /* requests the server answered whole */
    /* During a batch's profiles (instrproc_report_batch()): why each row of
     * the union's table has none, by row; NULL otherwise. */
    const struct dv_table *why_table;
    char (*why_rows)[ERR_LEN];
};

/* The cache's values are listings (lru.h's free_value). */
static void free_listing(void *l) { listing_free(l); }

struct instrproc *instrproc_create(const struct instrproc_config *c, char *err) {
    struct instrproc *ip = calloc(1, sizeof *ip);
    if (!ip) {
        dv_seterr(err, "instructions: out of memory");
        return NULL;
    }
    if (c->exe) snprintf(ip->exe, sizeof ip->exe, "%s", c->exe);
    else {
        ssize_t n = readlink("/proc/self/exe", ip->exe, sizeof ip->exe - 1);
        if (n <= 0) {
            dv_seterr(err, "instructions: cannot name this binary: %s", strerror(errno));
            free(ip);
            return NULL;
        }
        ip->exe[n] = '\0';
    }
    if (c->disassembler) {
        snprintf(ip->disassembler, sizeof ip->disassembler, "%s", c->disassembler);
        ip->has_disassembler = 1;
    }
    ip->device = c->device;
    const char *srv = getenv("DV_INSTRUCTIONS_SERVER");
    ip->one_shot = c->one_shot || (srv && strcmp(srv, "off") == 0);
    ip->before_child = c->before_child;
    ip->before_child_ctx = c->before_child_ctx;
    ip->deadline_ms = c->deadline_ms > 0 ? c->deadline_ms : INSTRPROC_DEADLINE_MS;
    ip->budget_ms = c->budget_ms > 0 ? c->budget_ms : INSTRPROC_BUDGET_MS;
    if (c->cache_dir) snprintf(ip->cache_dir, sizeof ip->cache_dir, "%s", c->cache_dir);
    if (!(ip->cache = lru_create(c->cache_entries ? c->cache_entries : INSTRPROC_CACHE_ENTRIES, LRU_UNBOUNDED,
                                 free_listing))) {
        dv_seterr(err, "instructions: out of memory for the cache");
        free(ip);
        return NULL;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(ip->dir, sizeof ip->dir, "%s/dv-sass-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(ip->dir)) {
        dv_seterr(err, "instructions: a folder for the disassembly under %s: %s", tmp && tmp[0] ? tmp : "/tmp",
                  strerror(errno));
        lru_free(ip->cache);
        free(ip);
        return NULL;
    }
    return ip;
}

void instrproc_free(struct instrproc *ip) {
    if (!ip) return;
    instrserve_free(ip->server);
    profilecache_close(ip->disk);
    lru_free(ip->cache);
    DIR *d = opendir(ip->dir);
    if (d) {
        struct dirent *e;
        char path[PATH_MAX + 256];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                snprintf(path, sizeof path, "%s/%s", ip->dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(ip->dir);
    free(ip);
}

unsigned instrproc_children(const struct instrproc *ip) { return ip ? ip->children : 0; }

unsigned instrproc_served(const struct instrproc *ip) { return ip ? ip->served : 0; }

pid_t instrproc_server_pid(const struct instrproc *ip) { return ip ? instrserve_pid(ip->server) : 0; }

/* ---- the cache ------------------------------------------------------------ */

/* Key `key`'s profile, now the most recently used, or NULL: the cache's,
 * valid until the next cache_take() (a caller copies it). */
static const struct listing *cache_find(struct instrproc *ip, const char *key) {
    return lru_get(ip->cache, key, strlen(key));
}

/* Keeps `l` (taken) under `key`, in place of the least recently used
 * profile when full. Returns `l`, or NULL when it is not kept (out of
 * memory: the next job asks again; it is freed). */
static const struct listing *cache_take(struct instrproc *ip, const char *key, struct listing *l) {
    return l && lru_put(ip->cache, key, strlen(key), l, 0) ? l : NULL;
}

/* The entry of instantiation `name`, made when new; NULL when the table is
 * full (the row is then collected every time, never looked up). */
static struct kernel_id *kernel_id_named(struct instrproc *ip, const char *name) {
    for (unsigned k = 0; k < INSTRPROC_KERNEL_IDS; k++) {
        struct kernel_id *id = &ip->ids[k];
        if (strcmp(id->name, name) == 0) return id;
        if (!id->name[0]) {
            snprintf(id->name, sizeof id->name, "%s", name);
            return id;
        }
    }
    return NULL;
}

/* The instantiation row `row` of table `t` runs. */
static struct kernel_id *kernel_id_of(struct instrproc *ip, const struct dv_options *o, const struct dv_table *t,
                                      unsigned row, unsigned iterations) {
    char name[96];
    if (profile_kernel_identity(o, t, row, iterations, name, sizeof name) != 0) return NULL;
    return kernel_id_named(ip, name);
}

static int row_key(const struct dv_report *r, const struct dv_row *row, const struct kernel_id *id,
                   const struct profile_plan *plan, char *key) {
    struct listing_key k;
    memset(&k, 0, sizeof k);
    k.cubin_crc = id->crc;
    k.driver_version = r->device.driver_version;
    snprintf(k.nvidia_driver, sizeof k.nvidia_driver, "%s", r->device.nvidia_driver_version);
    snprintf(k.device, sizeof k.device, "%.100s %.40s", r->device.name, r->device.pci_bus_id);
    /* The function names the kernel on its own; the kernel's own name beside
     * it keeps two kernels apart whatever a process answered. */
    snprintf(k.kernel, sizeof k.kernel, "%s:%.200s", experiment_kernel_name(row->kernel), id->function);
    k.mode = row->mode;
    k.mask_hash = plan->mask_hash;
    k.blocks = r->config.blocks;
    k.block_x = r->config.block_x;
    k.block_y = r->config.block_y;
    k.iterations = r->config.iterations;
    return listing_key_format(&k, key, KEY_LEN);
}

/* ---- the cache on disk ---------------------------------------------------------- */

#define KERNELS_KEY "kernels: the functions and cubins of this binary"

/* The folder, opened at the first job that asks for profiles, and the
 * kernels' identities an earlier worker of this binary learned. */
static void disk_open(struct instrproc *ip) {
    if (ip->disk_tried || !ip->cache_dir[0]) return;
    ip->disk_tried = 1;
    char err[ERR_LEN] = "";
    if (!(ip->disk = profilecache_open(ip->cache_dir, ip->exe, err))) {
        LOG(LOG_WARNING, "instructions: profiles are kept in memory only: %s", err);
        return;
    }
    json_t *ids = profilecache_load(ip->disk, KERNELS_KEY);
    const char *name;
    const json_t *o;
    json_object_foreach(ids, name, o) {
        const json_t *fn = json_object_get(o, "function"), *crc = json_object_get(o, "cubin_crc");
        if (strlen(name) >= sizeof ip->ids[0].name || !json_is_string(fn) || !json_is_string(crc)) continue;
        struct kernel_id *id = kernel_id_named(ip, name);
        if (!id || id->known) continue;
        char *end = NULL;
        const unsigned long long v = strtoull(json_string_value(crc), &end, 16);
        if (!end || *end || strlen(json_string_value(fn)) >= sizeof id->function) continue;
        snprintf(id->function, sizeof id->function, "%s", json_string_value(fn));
        id->crc = v;
        id->known = 1;
    }
    json_decref(ids);
    LOG(LOG_INFO, "instructions: profiles are kept in %s", profilecache_dir(ip->disk));
}

/* The kernels' identities onto the disk. */
static void disk_store_ids(struct instrproc *ip) {
    if (!ip->disk) return;
    json_t *o = json_object();
    int bad = 0;
    for (unsigned k = 0; k < INSTRPROC_KERNEL_IDS && ip->ids[k].name[0]; k++) {
        const struct kernel_id *id = &ip->ids[k];
        if (!id->known) continue;
        char crc[24];
        snprintf(crc, sizeof crc, "%016llx", (unsigned long long)id->crc);
        json_t *e = json_object();
        jsonout_put(e, "function", jsonout_str(id->function), &bad);
        jsonout_put(e, "cubin_crc", jsonout_str(crc), &bad);
        jsonout_put(o, id->name, e, &bad);
    }
    char err[ERR_LEN];
    if (bad || profilecache_store(ip->disk, KERNELS_KEY, o, err) != 0)
        LOG(LOG_WARNING, "instructions: the kernels' identities were not kept: %s", bad ? "out of memory" : err);
    json_decref(o);
}

/* Key `key`'s profile from the disk into the memory cache; NULL on a miss. */
static const struct listing *disk_find(struct instrproc *ip, const char *key) {
    json_t *v = ip->disk ? profilecache_load(ip->disk, key) : NULL;
    if (!v) return NULL;
    struct listing *l = NULL;
    char err[ERR_LEN];
    if (report_instructions_parse(v, &l, err) != 0) {
        LOG(LOG_INFO, "instructions: a kept profile is refused (%s): collected again", err);
        json_decref(v);
        return NULL;
    }
    json_decref(v);
    return cache_take(ip, key, l);
}

static void disk_store(struct instrproc *ip, const char *key, const struct listing *l) {
    if (!ip->disk) return;
    json_t *v = report_instructions_json(l);
    char err[ERR_LEN];
    if (!v || profilecache_store(ip->disk, key, v, err) != 0)
        LOG(LOG_WARNING, "instructions: a profile was not kept on disk: %s", v ? err : "out of memory");
    json_decref(v);
}

/* ---- a process for the rows --------------------------------------------------- */

/* A row the cache did not have, and what its process said. */
struct pending {
    unsigned table, row;
    struct dv_row *r;
    struct profile_plan plan;
    struct kernel_id *id;
    struct listing *l; /* the profile, or NULL             */
    int answered;      /* the process wrote the row's line */
    char why[ERR_LEN]; /* without a profile: why           */
};

/* Reads one answer line `line` into the pending row it names (or, with
 * one row only, the row). */
/* The process's own account of its time (its "phases_ms"), logged. */
static void log_phases(const json_t *o, unsigned n) {
    const json_t *ph = json_object_get(o, "phases_ms");
    if (!json_is_object(ph)) return;
    char text[320] = "";
    size_t used = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)ph, k, v) if (json_is_number(v) && used < sizeof text)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s %.1f", used ? ", " : "", k, json_number_value(v));
    /* A served request's texts, by where they came from (cmd/instr_cmd.h). */
    const json_t *d = json_object_get(o, "disassembly");
    char texts[96] = "";
    if (json_is_object(d))
        snprintf(texts, sizeof texts, "; texts from memory %lld, folder %lld, the tool %lld",
                 (long long)json_integer_value(json_object_get(d, "memory")),
                 (long long)json_integer_value(json_object_get(d, "folder")),
                 (long long)json_integer_value(json_object_get(d, "tool")));
    if (used) LOG(LOG_INFO, "instructions: %u row%s in one process: %s ms%s", n, n == 1 ? "" : "s", text, texts);
    if (json_is_true(json_object_get(o, "ending")))
        LOG(LOG_WARNING, "instructions: the profiling server ends after this request (its passes failed as a whole: "
                         "its log says why); the next request starts another");
}

static void read_line(const char *line, struct pending **rows, unsigned n) {
    json_error_t je;
    json_t *o = jsonout_loads(line, 0, &je);
    if (o && (json_object_get(o, "done") || n == 1)) log_phases(o, n);
    if (!o || json_object_get(o, "done")) {
        json_decref(o);
        return;
    }
    struct pending *p = n == 1 ? rows[0] : NULL;
    const json_t *t = json_object_get(o, "table"), *r = json_object_get(o, "row");
    for (unsigned i = 0; !p && json_is_integer(t) && json_is_integer(r) && i < n; i++)
        if (rows[i]->table == json_integer_value(t) && rows[i]->row == json_integer_value(r)) p = rows[i];
    const json_t *ok = json_object_get(o, "ok");
    if (p && !p->answered) {
        char err[ERR_LEN];
        if (json_is_true(ok)) {
            p->answered = 1;
            if (report_instructions_parse(json_object_get(o, "instructions"), &p->l, err) != 0)
                dv_seterr(p->why, "the profiling process's answer is refused: %s", err);
        } else if (json_is_false(ok) && json_is_string(json_object_get(o, "reason"))) {
            p->answered = 1;
            dv_seterr(p->why, "%s", json_string_value(json_object_get(o, "reason")));
        }
    }
    json_decref(o);
}

/* ---- the profiling server ------------------------------------------------------ */

/* The profiling server running, started when it is not. Returns 0, or -1
 * when this request goes a process of its own: told so, or the server
 * could not start (logged). At a request (the caller's hook first, as
 * before any process) a failed start is for good: a process per batch from
 * then on. At the worker's warm-up (`warmup`) the worker keeps its counter
 * profiler, which the warm-up just built for the first job; the server's
 * set-up asks for no SASS metrics yet, but should it fail there, the first
 * request tries once more, the hook run. */
static int server_ready(struct instrproc *ip, int warmup) {
    if (ip->one_shot) return -1;
    if (instrserve_pid(ip->server)) return 0;
    char err[ERR_LEN] = "", dv[16];
    snprintf(dv, sizeof dv, "%d", ip->device);
    const char *argv[12] = {ip->exe, "instructions", "--serve", "--device", dv, "--sass-cache",
                            ip->disk ? profilecache_dir(ip->disk) : ip->dir};
    if (ip->has_disassembler) {
        argv[7] = "--disassembler";
        argv[8] = ip->disassembler;
    }
    if (!ip->server) ip->server = instrserve_create(argv, err);
    if (ip->before_child && !warmup) ip->before_child(ip->before_child_ctx);
    ip->children++;
    const double t0 = timeutil_now_ms();
    const double start_ms = ip->deadline_ms < INSTRPROC_START_MS ? ip->deadline_ms : INSTRPROC_START_MS;
    if (!ip->server || instrserve_start(ip->server, start_ms, err) != 0) {
        instrserve_free(ip->server);
        ip->server = NULL;
        if (warmup) {
            LOG(LOG_WARNING, "instructions: the profiling server did not start at the warm-up (the first request "
                             "tries again): %s", err);
            return -1;
        }
        LOG(LOG_WARNING, "instructions: a process per batch from now on: %s", err);
        ip->one_shot = 1;
        return -1;
    }
    LOG(LOG_INFO, "instructions: the profiling server (pid %ld) is ready in %.0f ms", (long)instrserve_pid(ip->server),
        timeutil_now_ms() - t0);
    return 0;
}

void instrproc_warm(struct instrproc *ip) {
    if (!ip) return;
    disk_open(ip);
    server_ready(ip, 1);
}

struct served {
    struct pending **rows;
    unsigned n;
};

static void read_line(const char *line, struct pending **rows, unsigned n);

static void served_line(const char *line, void *ctx) {
    struct served *c = ctx;
    read_line(line, c->rows, c->n);
}

/* Rows `rows` (list `list`) profiled by the server, as rows_collect() says.
 * Returns the request's wall time, or -1 when no server takes it (the
 * caller runs a process). */
static double served_collect(struct instrproc *ip, const char *request, const char *list, struct pending **rows,
                             unsigned n, double deadline_ms, int *hung) {
    if (server_ready(ip, 0) != 0) return -1;
    json_t *f = json_pack("{s:s, s:o}", "rows", list, "request", json_loads(request, 0, NULL));
    char *frame = f ? json_dumps(f, JSON_COMPACT) : NULL;
    json_decref(f);
    struct instrserve_answer a;
    struct served c = {rows, n};
    char err[ERR_LEN] = "";
    if (ip->before_child) ip->before_child(ip->before_child_ctx);
    if (!frame || instrserve_ask(ip->server, frame, strlen(frame), deadline_ms, served_line, &c, &a, err) != 0) {
        for (unsigned i = 0; i < n; i++)
            dv_seterr(rows[i]->why, "the profiling server: %s", frame ? err : "out of memory for the request");
        free(frame);
        return 0;
    }
    free(frame);
    *hung = a.end == INSTRSERVE_KILLED;
    ip->served += a.end == INSTRSERVE_DONE;
    unsigned got = 0;
    for (unsigned i = 0; i < n; i++) {
        got += rows[i]->l != NULL;
        if (rows[i]->answered) continue;
        if (a.end == INSTRSERVE_DONE) dv_seterr(rows[i]->why, "the profiling server's answer had no line for the row");
        else dv_seterr(rows[i]->why, "the profiling server %s, with no answer", a.what);
    }
    for (unsigned i = 0; i < n; i++)
        if (rows[i]->l) {
            rows[i]->l->collect_ms = a.ms / got;
            rows[i]->l->process_rows = got;
        }
    return a.ms;
}

/* ---- a process per batch ----------------------------------------------------------- */

/* Rows `rows` (n of them) profiled by the server, or else by one process:
 * each answered row gets its profile or its reason; the others, the
 * process's fate in `why`. Returns the process's (or the request's) wall
 * time; *hung when it ran past its deadline. */
static double rows_collect(struct instrproc *ip, const char *request, struct pending **rows, unsigned n,
                           double deadline_ms, int *hung) {
    char list[INSTRPROC_MAX_ROWS * 8] = "", dv[16], tb[16], rw[16];
    size_t used = 0;
    for (unsigned i = 0; i < n; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%u:%u", i ? "," : "", rows[i]->table, rows[i]->row);
    *hung = 0;
    const double served = served_collect(ip, request, list, rows, n, deadline_ms, hung);
    if (served >= 0) return served;
    snprintf(dv, sizeof dv, "%d", ip->device);
    snprintf(tb, sizeof tb, "%u", rows[0]->table);
    snprintf(rw, sizeof rw, "%u", rows[0]->row);
    const char *argv[16] = {ip->exe, "instructions"};
    int k = 2;
    if (n == 1) {
        argv[k++] = "--table";
        argv[k++] = tb;
        argv[k++] = "--row";
        argv[k++] = rw;
    } else {
        argv[k++] = "--rows";
        argv[k++] = list;
    }
    argv[k++] = "--device";
    argv[k++] = dv;
    /* The disassembly by cubin CRC: in the cache folder, where the next
     * worker of the same binary finds it too, else in this process's own. */
    argv[k++] = "--sass-cache";
    argv[k++] = ip->disk ? profilecache_dir(ip->disk) : ip->dir;
    if (ip->has_disassembler) {
        argv[k++] = "--disassembler";
        argv[k++] = ip->disassembler;
    }
    argv[k] = NULL;
    struct subproc_result res;
    char err[ERR_LEN];
    *hung = 0;
    ip->children++;
    if (ip->before_child) ip->before_child(ip->before_child_ctx);
    if (subproc_run(argv, request, strlen(request), deadline_ms, &res, err) != 0) {
        for (unsigned i = 0; i < n; i++) dv_seterr(rows[i]->why, "the profiling process could not start: %s", err);
        return 0;
    }
    if (res.how != SUBPROC_KILLED)
        for (char *line = res.out, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next) *next++ = '\0';
            read_line(line, rows, n);
        }
    char what[160];
    subproc_describe(&res, deadline_ms, what, sizeof what);
    *hung = res.how == SUBPROC_KILLED;
    for (unsigned i = 0; i < n; i++) {
        if (rows[i]->answered) continue;
        dv_seterr(rows[i]->why, "the profiling process %s%s, with no answer%s%.120s",
                  res.how == SUBPROC_EXITED ? "ended with " : "", what, res.len && res.how != SUBPROC_KILLED ? ": " : "",
                  res.len && res.how != SUBPROC_KILLED ? res.out : "");
    }
    /* The cold cost of a row: its share of the process, start to exit. */
    unsigned got = 0;
    for (unsigned i = 0; i < n; i++) got += rows[i]->l != NULL;
    for (unsigned i = 0; i < n; i++)
        if (rows[i]->l) {
            rows[i]->l->collect_ms = res.ms / got;
            rows[i]->l->process_rows = got;
        }
    const double ms = res.ms;
    subproc_result_cleanup(&res);
    return ms;
}

/* ---- the report --------------------------------------------------------------- */

/* The first row without a profile names itself in the testimony's reason
 * (and, in a batch's union table, each row keeps its own). */
static void row_failed(struct instrproc *ip, struct dv_testimony *tm, const struct dv_table *t, const struct dv_row *row,
                       const char *why) {
    if (ip->why_rows && t == ip->why_table) snprintf(ip->why_rows[row - t->rows], ERR_LEN, "%s", why);
    if (tm->instructions_reason[0]) return;
    dv_seterr(tm->instructions_reason, "%s row %s: %s", t->id, row->name, why);
}

/* The profile of pending row `p` onto its row, into the cache. Returns 1
 * when it taught the row's kernel's identity (new or changed), else 0. */
static int row_take(struct instrproc *ip, const struct dv_report *r, struct pending *p) {
    char key[KEY_LEN];
    int learned = 0;
    p->r->instructions = p->l;
    if (p->id) {
        learned = !p->id->known || p->id->crc != p->l->cubin_crc || strcmp(p->id->function, p->l->kernel) != 0;
        p->id->known = 1;
        snprintf(p->id->function, sizeof p->id->function, "%s", p->l->kernel);
        p->id->crc = p->l->cubin_crc;
        if (row_key(r, p->r, p->id, &p->plan, key) == 0) {
            cache_take(ip, key, listing_copy(p->l));
            disk_store(ip, key, p->l);
        }
    }
    p->l = NULL;
    return learned;
}

/* Process deadline for `n` rows within what is left of the job's budget. */
static double deadline_for(const struct instrproc *ip, unsigned n, double spent) {
    double d = ip->deadline_ms * (1.0 + (n - 1) / 4.0);
    return d < ip->budget_ms - spent ? d : ip->budget_ms - spent;
}

#define SILENT_PROCESSES 3 /* in a row that end with no answer: every row's fate */

/* The rows not in the cache (`n` of `rows`): one process for all of them.
 * Then, of what it left, each row it refused while it gave others their
 * profiles is asked again alone (a trap of rows together, not of the row);
 * and where it ended before answering a row, that row is asked alone and
 * the rows after it together again, until SILENT_PROCESSES processes in a
 * row end with no answer (then that is every row's fate: asking on would
 * change nothing). So one row that crashes its process costs itself and a
 * few processes, and a process that ran past its deadline ends the asking.
 * `spent` and `hung` carry the job's budget. */
static void pending_collect(struct instrproc *ip, const char *request, struct pending *const *rows, unsigned n,
                            double *spent, int *hung) {
    struct pending *q[INSTRPROC_MAX_ROWS], *alone[INSTRPROC_MAX_ROWS];
    unsigned nq = 0, silent = 0;
    int unrun = 0;          /* q holds rows no process has had yet   */
    char last[ERR_LEN] = ""; /* how the last silent process ended      */
    for (unsigned i = 0; i < n; i++) q[nq++] = rows[i];
    while (nq > 0) {
        unrun = 0;
        unsigned na = 0, next = 0, got = 0, answered = 0;
        for (unsigned i = 0; i < nq; i++) q[i]->answered = 0;
        *spent += rows_collect(ip, request, q, nq, deadline_for(ip, nq, *spent), hung);
        for (unsigned i = 0; i < nq; i++) {
            got += q[i]->l != NULL;
            answered += q[i]->answered;
        }
        silent = answered ? 0 : silent + 1;
        if (!answered) snprintf(last, sizeof last, "%s", q[0]->why);
        if (nq == 1 || *hung || silent >= SILENT_PROCESSES) break;
        int ended = 0; /* the first row without an answer: where the process ended */
        for (unsigned i = 0; i < nq; i++) {
            if (q[i]->l || (q[i]->answered && got == 0)) continue; /* done, or refused as every row was */
            if (q[i]->answered || !ended) alone[na++] = q[i];
            else q[next++] = q[i];
            ended |= !q[i]->answered;
        }
        for (unsigned i = 0; i < na && !*hung && *spent < ip->budget_ms; i++) {
            alone[i]->answered = 0;
            *spent += rows_collect(ip, request, &alone[i], 1, deadline_for(ip, 1, *spent), hung);
            silent = alone[i]->answered ? 0 : silent + 1;
            if (!alone[i]->answered) snprintf(last, sizeof last, "%s", alone[i]->why);
        }
        nq = next;
        unrun = 1;
        if (*hung || *spent >= ip->budget_ms || silent >= SILENT_PROCESSES) break;
    }
    for (unsigned i = 0; unrun && i < nq && (*hung || *spent >= ip->budget_ms); i++) {
        if (*hung) dv_seterr(q[i]->why, "not collected: an earlier row's profiling process ran past its deadline");
        else dv_seterr(q[i]->why, "not collected: the job's %.0f ms for new profiles were spent", ip->budget_ms);
    }
    for (unsigned i = 0; unrun && i < nq && silent >= SILENT_PROCESSES; i++)
        dv_seterr(q[i]->why, "not collected: %u profiling processes in a row ended with no answer (the last: %.200s)",
                  SILENT_PROCESSES, last);
}

/* Row `row` of table `t` planned, and from the cache when it is there (a
 * copy onto the row, counted in the testimony). Returns 1 for a hit, 0 for
 * a row to collect (its plan and kernel identity into *p), -1 for a row
 * that cannot be profiled (its reason named in the testimony), 2 for a row
 * that has no profile by design (profile_row_unprofiled(): a data-sort
 * cell's sort+shade and sort, whose launches are CUB's kernels; logged, no
 * failure of the testimony's). *plan_ms and *lookup_ms add up where the
 * time went. */
static int row_lookup(struct instrproc *ip, const struct dv_options *o, struct dv_report *r, struct dv_table *t,
                      unsigned index, struct pending *p, double *plan_ms, double *lookup_ms) {
    struct dv_row *row = &t->rows[index];
    const struct dv_geometry g = {r->config.blocks, r->config.block_x, r->config.block_y};
    char why[ERR_LEN], key[KEY_LEN];
    struct profile_plan plan;
    listing_free(row->instructions);
    row->instructions = NULL;
    if (profile_row_unprofiled(t, index, why)) {
        LOG(LOG_DEBUG, "instructions: %s row %s: %s", t->id, row->name, why);
        return 2;
    }
    const double p0 = timeutil_now_ms();
    const int planned = profile_plan_table_row(o, t, index, &g, r->config.iterations, 0, &plan, why);
    *plan_ms += timeutil_now_ms() - p0;
    if (planned == 0 && plan.cost > OPTIONS_MAX_INSTRUCTIONS_COST)
        dv_seterr(why, "over the cost cap: its profile would run %.3g thread-iterations patched (%u blocks of "
                       "%u threads), the cap is %.3g",
                  plan.cost, plan.grid.part_blocks[0], g.block_x * g.block_y, OPTIONS_MAX_INSTRUCTIONS_COST);
    if (planned != 0 || plan.cost > OPTIONS_MAX_INSTRUCTIONS_COST) {
        row_failed(ip, &r->testimony, t, row, why);
        LOG(LOG_INFO, "instructions: %s row %s: %s", t->id, row->name, why);
        return -1;
    }
    struct kernel_id *id = kernel_id_of(ip, o, t, index, r->config.iterations);
    const double l0 = timeutil_now_ms();
    const struct listing *e = NULL;
    if (id && id->known && row_key(r, row, id, &plan, key) == 0 && !(e = cache_find(ip, key))) e = disk_find(ip, key);
    const int hit = e && (row->instructions = listing_copy(e)) != NULL;
    *lookup_ms += timeutil_now_ms() - l0;
    if (hit) {
        row->instructions->cached = 1;
        r->testimony.instructions_cached_rows++;
        return 1;
    }
    p->r = row;
    p->plan = plan;
    p->id = id;
    return 0;
}

/* One report's profiles under way: its rows planned and looked up, those
 * left to collect (rows[0..n)), and, for a union's table, why each row has
 * none (why_table, why_rows: instrproc_report_batch()). */
struct report_run {
    struct dv_options ran;
    char *request;
    struct pending *rows, *left[INSTRPROC_MAX_ROWS]; /* left: the rows still to collect */
    unsigned n, nleft;
    int all, hung;
    double t0, spent;
    const struct dv_table *why_table;
    char (*why_rows)[ERR_LEN];
};

/* Report `r`'s (of request `o`) rows planned and looked up in the cache
 * (rr's why_* set by the caller). Returns 0 with rr->left[0..rr->n) to
 * collect, or -1 when there is nothing to collect: not requested, no
 * profiler, out of memory (the testimony says so). */
static int report_begin(struct instrproc *ip, const struct dv_options *o, struct dv_report *r, struct report_run *rr) {
    struct dv_testimony *tm = &r->testimony;
    rr->t0 = timeutil_now_ms();
    tm->instructions_requested = o->instructions;
    tm->instructions_taken = 0;
    tm->instructions_cached_rows = 0;
    tm->instructions_reason[0] = '\0';
    if (!o->instructions) {
        snprintf(tm->instructions_reason, sizeof tm->instructions_reason,
                 "not requested (instructions: true asks for it)");
        return -1;
    }
    if (!ip) {
        snprintf(tm->instructions_reason, sizeof tm->instructions_reason, "instructions: no profiler in this process");
        return -1;
    }
    disk_open(ip);
    /* The request as it ran: the grid auto chose, written out. */
    rr->ran = *o;
    rr->ran.blocks = r->config.blocks;
    rr->request = request_dump(&rr->ran);
    rr->rows = calloc(INSTRPROC_MAX_ROWS, sizeof *rr->rows);
    if (!rr->request || !rr->rows) {
        snprintf(tm->instructions_reason, sizeof tm->instructions_reason, "instructions: out of memory");
        free(rr->request);
        free(rr->rows);
        return -1;
    }
    rr->all = 1;
    rr->n = 0;
    double plan_ms = 0, lookup_ms = 0;
    ip->why_table = rr->why_table;
    ip->why_rows = rr->why_rows;
    /* First the plan and the cache, row by row; what is left goes to one process. */
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) {
            if (!r->tables[i].rows[j].measured) continue;
            rr->rows[rr->n] = (struct pending){.table = i, .row = j};
            const int found = row_lookup(ip, &rr->ran, r, &r->tables[i], j, &rr->rows[rr->n], &plan_ms, &lookup_ms);
            rr->left[rr->n] = &rr->rows[rr->n];
            rr->n += found == 0;
            rr->all &= found >= 0;
        }
    rr->nleft = rr->n;
    ip->why_table = NULL;
    ip->why_rows = NULL;
    if (tm->instructions_cached_rows)
        LOG(LOG_INFO, "instructions: %u rows from the cache, %u to collect: plans %.2f ms, lookups %.2f ms, %.2f ms so far",
            tm->instructions_cached_rows, rr->n, plan_ms, lookup_ms, timeutil_now_ms() - rr->t0);
    return 0;
}

/* The collected profiles onto report `r`'s rows and into the cache, each
 * row without one named in the testimony; frees what report_begin() made. */
static void report_end(struct instrproc *ip, struct dv_report *r, struct report_run *rr) {
    struct dv_testimony *tm = &r->testimony;
    int learned = 0;
    ip->why_table = rr->why_table;
    ip->why_rows = rr->why_rows;
    for (unsigned i = 0; i < rr->n; i++) {
        struct pending *p = &rr->rows[i];
        if (p->l) {
            learned |= row_take(ip, r, p);
            continue;
        }
        const struct dv_table *t = &r->tables[p->table];
        rr->all = 0;
        row_failed(ip, tm, t, p->r, p->why);
        LOG(LOG_INFO, "instructions: %s row %s: %s", t->id, p->r->name, p->why);
    }
    ip->why_table = NULL;
    ip->why_rows = NULL;
    if (learned) disk_store_ids(ip);
    free(rr->rows);
    free(rr->request);
    tm->instructions_taken = rr->all;
    if (rr->all) tm->instructions_reason[0] = '\0';
    tm->instructions_ms = timeutil_now_ms() - rr->t0;
}

void instrproc_report(struct instrproc *ip, const struct dv_options *o, struct dv_report *r) {
    struct report_run rr = {.why_table = ip ? ip->why_table : NULL, .why_rows = ip ? ip->why_rows : NULL};
    if (report_begin(ip, o, r, &rr) != 0) return;
    pending_collect(ip, rr.request, rr.left, rr.nleft, &rr.spent, &rr.hung);
    report_end(ip, r, &rr);
}

/* ---- a batch's profiles ------------------------------------------------------ */

void instrproc_report_batch(struct instrproc *ip, const struct dv_options *const *o, struct dv_report *const *r,
                            unsigned n) {
    struct dv_options u;
    struct dv_report *ur = NULL;
    char(*why)[ERR_LEN] = NULL;
    int fit = n > 1 && ip && o[0]->instructions;
    for (unsigned i = 1; i < n && fit; i++) fit = instrunion_same_run(o[0], r[0], o[i], r[i]);
    if (fit && (why = calloc(DV_MAX_ROWS, ERR_LEN)) != NULL) ur = instrunion_report(o, r, n, &u);
    if (!ur) { /* one reader, none asked, readers that ran other things, rows past one table: each on its own */
        free(why);
        for (unsigned i = 0; i < n; i++) instrproc_report(ip, o[i], r[i]);
        return;
    }
    ip->why_table = &ur->tables[0];
    ip->why_rows = why;
    instrproc_report(ip, &u, ur);
    ip->why_table = NULL;
    ip->why_rows = NULL;
    for (unsigned i = 0; i < n; i++) instrunion_hand_back(ur, why, r[i]);
    LOG(LOG_INFO, "instructions: a batch of %u readers, %u rows in one table: %u from the cache, %.1f ms", n,
        ur->tables[0].nrows, ur->testimony.instructions_cached_rows, ur->testimony.instructions_ms);
    experiment_report_free(ur);
    free(why);
}

/* ---- a message's groups --------------------------------------------------------- */

/* One group of a message of groups: its readers, its union's report and
 * the profiles under way (`begun`: report_begin() gave rows to collect). */
struct group_run {
    const struct dv_options *const *o;
    struct dv_report *const *r;
    unsigned n;
    struct dv_options u;
    struct dv_report *ur;
    char (*why)[ERR_LEN];
    struct report_run rr;
    int begun;
};

/* The readers of a frame of parts: part k's rows are group part_group[k]'s. */
struct parts_read {
    struct group_run *g;
    unsigned part_group[INSTRPROC_MAX_GROUPS], np, rows;
};

static void parts_line(const char *line, void *ctx) {
    const struct parts_read *c = ctx;
    json_error_t je;
    json_t *o = jsonout_loads(line, 0, &je);
    const json_t *k = json_object_get(o, "part");
    if (json_is_integer(k) && json_integer_value(k) >= 0 && json_integer_value(k) < c->np) {
        struct report_run *rr = &c->g[c->part_group[json_integer_value(k)]].rr;
        read_line(line, rr->left, rr->nleft);
    } else if (json_object_get(o, "done")) {
        log_phases(o, c->rows);
    }
    json_decref(o);
}

/* The frame {"parts": [{"rows", "request"}...]} of the groups in c->g
 * that have rows to collect (c->part_group, c->np, c->rows filled), or
 * NULL out of memory. */
static char *parts_frame(struct parts_read *c, unsigned ng) {
    json_t *parts = json_array();
    for (unsigned gi = 0; parts && gi < ng; gi++) {
        const struct report_run *rr = &c->g[gi].rr;
        if (!c->g[gi].begun || rr->nleft == 0) continue;
        char list[INSTRPROC_MAX_ROWS * 8] = "";
        size_t used = 0;
        for (unsigned i = 0; i < rr->nleft; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%u:%u", i ? "," : "", rr->left[i]->table,
                                     rr->left[i]->row);
        if (json_array_append_new(parts, json_pack("{s:s, s:o}", "rows", list, "request",
                                                    json_loads(rr->request, 0, NULL))) != 0) {
            json_decref(parts);
            return NULL;
        }
        c->part_group[c->np++] = gi;
        c->rows += rr->nleft;
    }
    json_t *f = parts ? json_pack("{s:o}", "parts", parts) : NULL;
    char *frame = f ? json_dumps(f, JSON_COMPACT) : NULL;
    json_decref(f);
    return frame;
}

/* What a frame of parts left, group by group: rows with a profile are
 * done; so is a row refused in a part that gave none (refused as every
 * row was); after a request killed at its deadline the rows without an
 * answer are done with that reason; the rest stay in rr->left for the
 * group's own asking (pending_collect(): a row that crashed the server
 * costs its group, not the others). */
static void parts_left(struct group_run *g, unsigned ng, const struct instrserve_answer *a, unsigned got) {
    for (unsigned gi = 0; gi < ng; gi++) {
        struct report_run *rr = &g[gi].rr;
        unsigned m = 0, mine = 0;
        if (!g[gi].begun) continue;
        rr->spent += a->ms;
        rr->hung = a->end == INSTRSERVE_KILLED;
        for (unsigned i = 0; i < rr->nleft; i++) mine += rr->left[i]->l != NULL;
        for (unsigned i = 0; i < rr->nleft; i++) {
            struct pending *p = rr->left[i];
            if (p->l) {
                p->l->collect_ms = a->ms / got;
                p->l->process_rows = got;
                continue;
            }
            if (!p->answered) dv_seterr(p->why, "the profiling server %s, with no answer", a->what);
            if (!rr->hung && (!p->answered || mine > 0)) rr->left[m++] = p;
        }
        rr->nleft = m;
    }
}

/* The rows of every group with rows to collect in one served request (a
 * frame of parts: one CUDA context, one CUPTI set-up, one sampling pass
 * for them all). Nothing when fewer than two groups have rows or no server
 * takes it: each group then asks on its own as a batch does. */
static void groups_collect(struct instrproc *ip, struct group_run *g, unsigned ng) {
    unsigned parts = 0, total = 0;
    for (unsigned gi = 0; gi < ng; gi++) {
        parts += g[gi].begun && g[gi].rr.nleft > 0;
        total += g[gi].begun ? g[gi].rr.nleft : 0;
    }
    if (parts < 2 || total > INSTRPROC_MAX_ROWS || server_ready(ip, 0) != 0) return;
    struct parts_read c = {.g = g};
    char *frame = parts_frame(&c, ng), err[ERR_LEN] = "";
    struct instrserve_answer a;
    for (unsigned gi = 0; gi < ng; gi++)
        for (unsigned i = 0; g[gi].begun && i < g[gi].rr.nleft; i++) g[gi].rr.left[i]->answered = 0;
    if (ip->before_child) ip->before_child(ip->before_child_ctx);
    if (!frame || instrserve_ask(ip->server, frame, strlen(frame), deadline_for(ip, total, 0), parts_line, &c, &a,
                                 err) != 0) {
        LOG(LOG_WARNING, "instructions: the groups' request: %s", frame ? err : "out of memory");
        free(frame);
        return; /* each group asks on its own */
    }
    free(frame);
    ip->served += a.end == INSTRSERVE_DONE;
    unsigned got = 0;
    for (unsigned gi = 0; gi < ng; gi++)
        for (unsigned i = 0; g[gi].begun && i < g[gi].rr.nleft; i++) got += g[gi].rr.left[i]->l != NULL;
    if (a.end == INSTRSERVE_DONE) snprintf(a.what, sizeof a.what, "answered, but with no line for the row");
    parts_left(g, ng, &a, got ? got : 1);
    LOG(LOG_INFO, "instructions: %u groups' %u rows in one request of %u parts: %u profiles, %.1f ms", ng, total,
        c.np, got, a.ms);
}

/* Group `x`'s union report and its rows looked up, when its readers make
 * one table (as instrproc_report_batch()'s); else x->ur stays NULL. */
static void group_begin(struct instrproc *ip, struct group_run *x) {
    int fit = ip && x->n >= 1 && x->o[0]->instructions;
    for (unsigned i = 0; i < x->n && fit; i++) fit = instrunion_same_run(x->o[0], x->r[0], x->o[i], x->r[i]);
    if (!fit || !(x->why = calloc(DV_MAX_ROWS, ERR_LEN)) || !(x->ur = instrunion_report(x->o, x->r, x->n, &x->u))) return;
    x->rr.why_table = &x->ur->tables[0];
    x->rr.why_rows = x->why;
    x->begun = report_begin(ip, &x->u, x->ur, &x->rr) == 0;
}

void instrproc_report_groups(struct instrproc *ip, const struct dv_options *const *o, struct dv_report *const *r,
                             const unsigned *size, unsigned ngroups) {
    struct group_run *g = ngroups <= INSTRPROC_MAX_GROUPS ? calloc(ngroups ? ngroups : 1, sizeof *g) : NULL;
    for (unsigned gi = 0, at = 0; gi < ngroups; at += size[gi++]) {
        if (g) g[gi] = (struct group_run){.o = o + at, .r = r + at, .n = size[gi]};
        if (g) group_begin(ip, &g[gi]);
        else instrproc_report_batch(ip, o + at, r + at, size[gi]); /* too many, or out of memory: one by one */
    }
    if (!g) return;
    groups_collect(ip, g, ngroups);
    for (unsigned gi = 0; gi < ngroups; gi++) {
        struct group_run *x = &g[gi];
        if (!x->ur) { /* readers that do not make one table: as a batch */
            free(x->why);
            instrproc_report_batch(ip, x->o, x->r, x->n);
            continue;
        }
        if (x->begun) {
            pending_collect(ip, x->rr.request, x->rr.left, x->rr.nleft, &x->rr.spent, &x->rr.hung);
            report_end(ip, x->ur, &x->rr);
        }
        for (unsigned i = 0; i < x->n; i++) instrunion_hand_back(x->ur, x->why, x->r[i]);
        LOG(LOG_INFO, "instructions: group %u of %u, %u readers, %u rows in one table: %u from the cache, %.1f ms",
            gi + 1, ngroups, x->n, x->ur->tables[0].nrows, x->ur->testimony.instructions_cached_rows,
            x->ur->testimony.instructions_ms);
        experiment_report_free(x->ur);
        free(x->why);
    }
    free(g);
}
