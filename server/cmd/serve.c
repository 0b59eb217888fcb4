/* serve.c -- see serve.h.
 *
 * Start-up: parse flags over the embedded defaults, find the static files and
 * openapi.yaml, create the job queue, start the GPU worker supervisor (which
 * execs `divergence-gpu worker` from this binary's folder), add the routes and listen. SIGTERM and
 * SIGINT are blocked in every thread and taken by sigwait() on the main
 * thread, so shutdown runs in ordinary code: stop accepting connections,
 * fail the queued jobs ("server shutting down"), let the running job finish
 * (bounded by its deadline), stop the worker, stop the daemon, exit 0.
 */
#define _GNU_SOURCE
#include "kernels/base/timeutil.h"
#include "server/cmd/serve.h"
#include "server/cmd/sibling.h"
#include "server/http/clientaddr.h"
#include "server/http/evroutes.h"
#include "server/http/metrics.h"
#include "server/core/log.h"
#include "server/core/sdnotify.h"
#include "server/evidence/suites.h"
#include "api/options.h"
#include "server/http/service.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef DV_SOURCE_STATIC_DIR
#define DV_SOURCE_STATIC_DIR ""
#endif
#ifndef DV_SOURCE_OPENAPI
#define DV_SOURCE_OPENAPI ""
#endif

#define MAX_WORKER_ARGS 16

static void usage(FILE *f) {
    fputs("usage: divergence serve [options]\n"
          "  --port N               listen port (8080; 0 picks a free one)\n"
          "  --bind ADDR            listen address (127.0.0.1; 0.0.0.0 or :: for all)\n"
          "  --queue N              jobs waiting for the GPU before 429 (256); addresses take\n"
          "                         turns, one job each\n"
          "  --queue-per-address N  jobs one address may have waiting before 429 (16; 0: no bound)\n"
          "  --queue-bytes BYTES    memory the waiting jobs may hold before 429 (8388608)\n"
          "  --job-estimate-ms N    a kind of job's expected run before one has finished and when the\n"
          "                         worker's warm-up measured none, for the queue's wait estimates\n"
          "                         and Retry-After (2000)\n"
          "  --rate-limit N         POST /measure and refreshes a minute per address (10; 0 off)\n"
          "  --job-deadline-ms N    GPU time a job may take before its worker is killed (30000)\n"
          "  --batch N              jobs for one kernel and grid measured in one GPU session, each\n"
          "                         with its own rows and rule (16; 1: every job alone)\n"
          "  --cache-ttl S          seconds an identical request is answered from cache (600)\n"
          "  --keep-jobs N          finished jobs kept for GET /jobs/{id} (256)\n"
          "  --body-limit BYTES     request body limit (65536)\n"
          "  --max-job-cost X       per-job limit on threads x iterations x rows x samples (1e15)\n"
          "  --threads N            HTTP thread pool (4)\n"
          "  --conn-timeout S       idle connection timeout (30)\n"
          "  --conn-limit N         open connections in total (256)\n"
          "  --per-ip-limit N       open connections per address (32); behind a trusted proxy,\n"
          "                         per client it forwards for\n"
          "  --held-per-ip N        long-polls and event streams held per address at once (8);\n"
          "                         past it the address's oldest answers its current state\n"
          "  --held-limit N         held requests in all (half of --conn-limit); past it the\n"
          "                         oldest anywhere answers its current state\n"
          "  --token T              bearer token for refreshes and for measurements above\n"
          "                         --open-measure-cost\n"
          "  --token-file F         read the token from F (else $DIVERGENCE_TOKEN)\n"
          "  --open-measure-cost X  with a token set, POST /measure up to this cost needs none\n"
          "                         (default: the largest suite's; 0: every job needs the token)\n"
          "  --cors-origin O        allow browser calls from origin O (repeatable; * for any)\n"
          "  --trust-forwarded      believe X-Forwarded-For from 127.0.0.1 and ::1 (a local proxy)\n"
          "  --trusted-proxy NET    believe X-Forwarded-For from NET, a network (10.244.0.0/16,\n"
          "                         fd00::/8) or one address (repeatable); the client is the\n"
          "                         rightmost hop that is not a trusted proxy (the proxy itself\n"
          "                         when that hop is no address); 0.0.0.0/0 or ::/0 warns\n"
          "  --header-timeout S     seconds to send a request's headers, from connect or the\n"
          "                         previous reply, however often bytes arrive (10)\n"
          "  --body-timeout S       seconds to send a request's body after its headers (30)\n"
          "  --analysis-threads N   threads that run analyses off the HTTP threads (2)\n"
          "  --analysis-queue N     analyses waiting for a thread before 503 (64)\n"
          "  --drain-ms N           on SIGTERM, how long answers already due (woken long-polls,\n"
          "                         streams' last events) get to be written before the server\n"
          "                         stops (5000)\n"
          "  --max-analysis-cost X  per-request limit on predicate-threads analysed (3.4e7)\n"
          "  --analyze-rate-limit N POST /analyze a minute per address (120; 0 off)\n"
          "  --history-rate-limit N evidence history pages a minute per address (120; 0 off)\n"
          "  --static-dir D         widget files (default: <bindir>/../share/divergence/static,\n"
          "                         <bindir>/static, then the source tree's static/)\n"
          "  --openapi F            the OpenAPI file served at /openapi.yaml\n"
          "  --evidence-dir D       evidence store (var/evidence)\n"
          "  --job-id-prefix HEX    job ids start with HEX (up to 8 hex digits), so a front can\n"
          "                         route GET /jobs/{id} back to this server\n"
          "  --worker-cmd CMD       GPU worker command (default: divergence-gpu worker, beside this binary)\n"
          "  --device N             CUDA ordinal of the GPU this server owns (0); passed to the worker\n"
          "  --worker-start-timeout-ms N  wait for the worker's hello (30000)\n"
          "  --log-level L          err, warning, notice, info (default), debug\n"
          "exit status: 0 stopped by SIGTERM/SIGINT, 1 could not start, 2 bad option\n",
          f);
}

/* The largest cost of any suite's request: what a lesson page measures. */
static double suites_max_cost(void) {
    double max = 0;
    char err[ERR_LEN];
    for (size_t i = 0; i < suites_count(); i++) {
        struct dv_options o;
        if (suites_options(suites_get(i), &o, err) == 0 && options_cost(&o) > max) max = options_cost(&o);
    }
    return max;
}

/* The embedded defaults (serve.h); http_create() would pick the same for
 * the HTTP front's zeros, but --help and the log name them from here. */
static void config_defaults(struct service_config *c) {
    memset(c, 0, sizeof *c);
    c->http.bind = "127.0.0.1";
    c->http.port = 8080;
    c->http.rate_per_min = 10;
    c->http.body_limit = 64 * 1024;
    c->http.threads = 4;
    c->http.conn_timeout_s = 30;
    c->http.conn_limit = 256;
    c->http.per_ip_limit = 32;
    c->http.cpu_rate_per_min = 120;
    c->http.header_timeout_s = 10;
    c->http.body_timeout_s = 30;
    c->http.cpu_threads = 2;
    c->http.cpu_queue = 64;
    c->http.drain_ms = 5000;
    c->http.held_per_ip = 8;
    /* held_limit 0: half of conn_limit, whatever --conn-limit says (http.h) */
    c->queue = 256;
    c->queue_per_address = 16;
    c->queue_bytes = 8u << 20; /* 256 of the largest jobs (about 10 KB each) take 2.5 MB */
    c->job_estimate_ms = 2000;
    c->deadline_ms = 30000;
    c->batch = JOBQ_BATCH_MAX_JOBS;
    c->cache_ttl_s = 600;
    c->keep_jobs = 256;
    c->max_cost = 1e15;
    c->open_cost = -1;               /* not given: suites_max_cost() */
    c->max_analysis_cost = 33554432; /* 2^25: four blockIdx.x predicates over 8 Mi threads */
    c->history_rate_per_min = 120;
    c->evidence_dir = "var/evidence";
    c->worker_start_timeout_ms = 30000;
}

/* A flag that sets one field of the configuration: exactly one of the
 * pointers is set, and its type is the field's, so the compiler checks
 * that a number goes into a number. Numbers must lie in lo..hi (a double
 * only >= lo). */
struct flag {
    const char *name;
    unsigned *u;
    size_t *z;
    double *d;
    const char **text;
    int *on; /* a flag without a value: sets 1 */
    double lo, hi;
};

/* 0 when `v` is a number `f` accepts, written to its field; else -1 after
 * saying why on stderr. */
static int flag_set(const struct flag *f, const char *v) {
    char *end;
    errno = 0;
    if (f->text) {
        *f->text = v;
        return 0;
    }
    if (f->on) {
        *f->on = 1;
        return 0;
    }
    if (f->d) {
        double d = strtod(v, &end);
        if (errno || end == v || *end || !(d >= f->lo)) {
            fprintf(stderr, "divergence serve: --%s %s: expected a number >= %g\n", f->name, v, f->lo);
            return -1;
        }
        *f->d = d;
        return 0;
    }
    unsigned long n = strtoul(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || n < f->lo || n > f->hi) {
        fprintf(stderr, "divergence serve: --%s %s: expected an integer in %.0f..%.0f\n", f->name, v, f->lo, f->hi);
        return -1;
    }
    if (f->u) *f->u = (unsigned)n;
    else *f->z = n;
    return 0;
}

/* Reads the first line of `path` into a new string (trailing whitespace cut). */
static char *read_token_file(const char *path) {
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "divergence serve: --token-file %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char buf[1024];
    char *s = fgets(buf, sizeof buf, f) ? strdup(buf) : NULL;
    fclose(f);
    if (!s) {
        fprintf(stderr, "divergence serve: --token-file %s: empty\n", path);
        return NULL;
    }
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = '\0';
    return s;
}


static int is_dir_with_index(const char *dir) {
    char p[PATH_MAX + 16];
    struct stat sb;
    int n = snprintf(p, sizeof p, "%s/index.html", dir);
    if (n < 0 || (size_t)n >= sizeof p) return 0; /* a path that long is no static dir */
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* --static-dir, else the install / bundle layouts next to the binary, else
 * the source tree of a development build. Stored resolved (realpath) so the
 * traversal check in routes_static_file() compares real paths. */
static void find_static(struct service *s) {
    char bindir[PATH_MAX], cand[3][PATH_MAX + 64];
    int n = 0;
    s->static_dir[0] = '\0';
    if (s->cfg.static_dir) {
        if (!realpath(s->cfg.static_dir, s->static_dir)) {
            LOG(LOG_WARNING, "static: --static-dir %s: %s; no static files served", s->cfg.static_dir, strerror(errno));
            s->static_dir[0] = '\0';
        }
        return;
    }
    if (sibling_exe_dir(bindir, sizeof bindir) == 0) {
        snprintf(cand[n++], sizeof cand[0], "%s/../share/divergence/static", bindir);
        snprintf(cand[n++], sizeof cand[0], "%s/static", bindir);
    }
    snprintf(cand[n++], sizeof cand[0], "%s", DV_SOURCE_STATIC_DIR);
    for (int i = 0; i < n; i++) {
        if (cand[i][0] && is_dir_with_index(cand[i]) && realpath(cand[i], s->static_dir)) {
            LOG(LOG_INFO, "static: serving %s", s->static_dir);
            return;
        }
    }
    s->static_dir[0] = '\0';
    LOG(LOG_WARNING, "static: no widget files found (use --static-dir); / answers 404");
}

static void find_openapi(struct service *s) {
    char bindir[PATH_MAX];
    int n = 0;
    memset(s->openapi, 0, sizeof s->openapi);
    if (s->cfg.openapi) {
        snprintf(s->openapi[n++], PATH_MAX, "%s", s->cfg.openapi);
        return;
    }
    if (sibling_exe_dir(bindir, sizeof bindir) == 0) {
        snprintf(s->openapi[n++], PATH_MAX, "%.*s/../share/divergence/openapi.yaml", PATH_MAX - 40, bindir);
        snprintf(s->openapi[n++], PATH_MAX, "%.*s/openapi.yaml", PATH_MAX - 40, bindir);
    }
    snprintf(s->openapi[n++], PATH_MAX, "%s", DV_SOURCE_OPENAPI);
}

/* Splits `cmd` on spaces into argv (strings point into `buf`). The default
 * is `divergence-gpu worker` from this binary's folder (cmd/sibling.h); a
 * build without CUDA has none, and its own `divergence worker` stands in
 * (jobs/nogpu.h: every job answered "measuring needs the CUDA toolkit").
 * `device` (NULL: not given) is passed on as `--device N`. */
static int worker_argv(const char *cmd, const char *device, char *buf, size_t len, char **argv) {
    int n = 0;
    if (!cmd) {
        if (sibling_path(DV_BUILT_WITH_CUDA ? SIBLING_GPU : "divergence", buf, len) != 0) return -1;
        argv[n++] = buf;
        argv[n++] = "worker";
    } else {
        snprintf(buf, len, "%s", cmd);
        for (char *tok = strtok(buf, " \t"); tok && n < MAX_WORKER_ARGS - 3; tok = strtok(NULL, " \t"))
            argv[n++] = tok;
        if (n == 0) return -1;
    }
    if (device) {
        argv[n++] = "--device";
        argv[n++] = (char *)device;
    }
    argv[n] = NULL;
    return 0;
}

/* What the flags give beyond the configuration's own fields. */
struct serve_args {
    char *token;           /* --token, --token-file or $DIVERGENCE_TOKEN (malloc()ed) */
    char device[8];        /* --device N, "" when not given              */
    const char *id_prefix; /* --job-id-prefix, or NULL                   */
};

/* getopt values: the table's flags from FLAG_BASE (past every character
 * getopt returns), the flags with a handling of their own from O_TOKEN. */
enum { FLAG_BASE = 256, O_TOKEN = 1000, O_TOKENFILE, O_CORS, O_PROXY, O_DEVICE, O_LOG, O_HELP, O_IDPREFIX };

static const struct option special_opts[] = {
    {"token", required_argument, 0, O_TOKEN},
    {"token-file", required_argument, 0, O_TOKENFILE},
    {"cors-origin", required_argument, 0, O_CORS},
    {"trusted-proxy", required_argument, 0, O_PROXY},
    {"device", required_argument, 0, O_DEVICE},
    {"log-level", required_argument, 0, O_LOG},
    {"help", no_argument, 0, O_HELP},
    {"job-id-prefix", required_argument, 0, O_IDPREFIX},
};
#define NSPECIAL (sizeof special_opts / sizeof special_opts[0])

/* One of the special flags with its value `v`. Returns -1 to go on, else
 * the exit status (0 after --help, 1 out of memory, 2 a bad value). */
static int special_set(int c, const char *v, struct service_config *cfg, struct serve_args *a) {
    struct http_config *h = &cfg->http;
    unsigned n = 0;
    switch (c) {
    case O_TOKEN: free(a->token); return (a->token = strdup(v)) ? -1 : 1;
    case O_TOKENFILE: free(a->token); return (a->token = read_token_file(v)) ? -1 : 2;
    case O_CORS:
        while (n < HTTP_MAX_CORS && h->cors[n]) n++;
        if (n == HTTP_MAX_CORS) {
            fprintf(stderr, "divergence serve: at most %d --cors-origin\n", HTTP_MAX_CORS);
            return 2;
        }
        h->cors[n] = v;
        return -1;
    case O_PROXY: {
        struct clientaddr_net net;
        char why[ERR_LEN];
        if (clientaddr_net_parse(v, &net, why) < 0) {
            fprintf(stderr, "divergence serve: --trusted-proxy %s\n", why);
            return 2;
        }
        /* A prefix of no bits is every address of its family: then any
         * client is a "proxy", names itself in X-Forwarded-For and has
         * fresh limits with each name. Allowed (a test bench may want it),
         * never silent. */
        if (net.bits == 0)
            fprintf(stderr,
                    "divergence serve: warning: --trusted-proxy %s trusts every %s address: any client can name "
                    "itself in X-Forwarded-For and escape the per-address limits\n",
                    v, net.family == AF_INET ? "IPv4" : "IPv6");
        while (h->trusted_proxies[n]) n++;
        if (n == HTTP_MAX_PROXIES - 2) { /* room for --trust-forwarded's two */
            fprintf(stderr, "divergence serve: at most %d --trusted-proxy\n", HTTP_MAX_PROXIES - 2);
            return 2;
        }
        h->trusted_proxies[n] = v;
        return -1;
    }
    case O_DEVICE: {
        struct flag f = {.name = "device", .u = &n, .lo = 0, .hi = 255};
        if (flag_set(&f, v) != 0) return 2;
        snprintf(a->device, sizeof a->device, "%u", n);
        return -1;
    }
    case O_LOG:
        if (log_set_verbosity(v) < 0) {
            fprintf(stderr, "divergence serve: --log-level %s: expected err, warning, notice, info or debug\n", v);
            return 2;
        }
        return -1;
    case O_HELP: usage(stdout); return 0;
    case O_IDPREFIX: a->id_prefix = v; return -1;
    default: return 2;
    }
}

/* Reads the flags over the defaults in `cfg`. Returns -1 to go on (the
 * token then in cfg->http.token, owned by `a`), else the exit status. */
static int parse_flags(int argc, char **argv, struct service_config *cfg, struct serve_args *a) {
    struct http_config *h = &cfg->http;
    const struct flag flags[] = {
        {"port", .u = &h->port, .lo = 0, .hi = 65535},
        {"bind", .text = &h->bind},
        {"queue", .u = &cfg->queue, .lo = 1, .hi = 100000},
        {"queue-per-address", .u = &cfg->queue_per_address, .lo = 0, .hi = 100000},
        {"queue-bytes", .z = &cfg->queue_bytes, .lo = 65536, .hi = 68719476736.0},
        {"job-estimate-ms", .u = &cfg->job_estimate_ms, .lo = 1, .hi = 3600000},
        {"rate-limit", .u = &h->rate_per_min, .lo = 0, .hi = 1000000},
        {"job-deadline-ms", .u = &cfg->deadline_ms, .lo = 100, .hi = 3600000},
        {"batch", .u = &cfg->batch, .lo = 1, .hi = JOBQ_BATCH_MAX_JOBS},
        {"cache-ttl", .d = &cfg->cache_ttl_s, .lo = 0},
        {"keep-jobs", .u = &cfg->keep_jobs, .lo = 1, .hi = 1000000},
        {"body-limit", .z = &h->body_limit, .lo = 64, .hi = 64u << 20},
        {"max-job-cost", .d = &cfg->max_cost, .lo = 1},
        {"threads", .u = &h->threads, .lo = 1, .hi = 256},
        {"conn-timeout", .u = &h->conn_timeout_s, .lo = 1, .hi = 3600},
        {"conn-limit", .u = &h->conn_limit, .lo = 1, .hi = 1000000},
        {"per-ip-limit", .u = &h->per_ip_limit, .lo = 1, .hi = 1000000},
        {"held-per-ip", .u = &h->held_per_ip, .lo = 1, .hi = 1000000},
        {"held-limit", .u = &h->held_limit, .lo = 1, .hi = 1000000},
        {"trust-forwarded", .on = &h->trust_forwarded},
        {"header-timeout", .u = &h->header_timeout_s, .lo = 1, .hi = 3600},
        {"body-timeout", .u = &h->body_timeout_s, .lo = 1, .hi = 3600},
        {"analysis-threads", .u = &h->cpu_threads, .lo = 1, .hi = 256},
        {"analysis-queue", .u = &h->cpu_queue, .lo = 1, .hi = 100000},
        {"max-analysis-cost", .d = &cfg->max_analysis_cost, .lo = 0},
        {"analyze-rate-limit", .u = &h->cpu_rate_per_min, .lo = 0, .hi = 1000000},
        {"history-rate-limit", .u = &cfg->history_rate_per_min, .lo = 0, .hi = 1000000},
        {"open-measure-cost", .d = &cfg->open_cost, .lo = 0},
        {"drain-ms", .u = &h->drain_ms, .lo = 1, .hi = 600000},
        {"static-dir", .text = &cfg->static_dir},
        {"openapi", .text = &cfg->openapi},
        {"evidence-dir", .text = &cfg->evidence_dir},
        {"worker-cmd", .text = &cfg->worker_cmd},
        {"worker-start-timeout-ms", .u = &cfg->worker_start_timeout_ms, .lo = 100, .hi = 600000},
    };
    enum { NFLAGS = sizeof flags / sizeof flags[0] };
    struct option opts[NFLAGS + NSPECIAL + 1];
    for (size_t i = 0; i < NFLAGS; i++)
        opts[i] = (struct option){flags[i].name, flags[i].on ? no_argument : required_argument, 0, FLAG_BASE + (int)i};
    memcpy(opts + NFLAGS, special_opts, sizeof special_opts);
    memset(&opts[NFLAGS + NSPECIAL], 0, sizeof opts[0]);
    int c, rc = -1;
    optind = 1;
    opterr = 0;
    while (rc < 0 && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        const char *name = argv[optind - 1];
        if (c >= FLAG_BASE && c < FLAG_BASE + NFLAGS) rc = flag_set(&flags[c - FLAG_BASE], optarg) == 0 ? -1 : 2;
        else if (c >= O_TOKEN) rc = special_set(c, optarg, cfg, a);
        else if (c == ':') fprintf(stderr, "divergence serve: %s needs a value\n", name), rc = 2;
        else fprintf(stderr, "divergence serve: unknown option %s\n", name), rc = 2;
    }
    if (rc < 0 && optind < argc) {
        fprintf(stderr, "divergence serve: unexpected argument %s\n", argv[optind]);
        rc = 2;
    }
    if (rc < 0 && !a->token) {
        const char *env = getenv("DIVERGENCE_TOKEN");
        if (env && env[0] && !(a->token = strdup(env))) rc = 1;
    }
    if (rc == 2) fputs("Run 'divergence serve --help' for the options.\n", stderr);
    if (rc >= 0) return rc;
    h->token = a->token;
    if (cfg->open_cost < 0) cfg->open_cost = suites_max_cost();
    return -1;
}

/* The host the listening lines name, for a client on this machine:
 * 127.0.0.1 for 0.0.0.0, [::1] for an IPv6 bind (the wildcard :: is the one
 * the deploy files use), else the address itself. One place, so the log
 * line and the line scripts read name the same host. */
static const char *local_host(const char *bind) {
    if (strchr(bind, ':')) return "[::1]";
    return strcmp(bind, "0.0.0.0") == 0 ? "127.0.0.1" : bind;
}

/* The queue, the worker, the HTTP front and its routes, listening. Returns
 * 0, or -1 with `err` (what was made is freed by the caller). */
static int serve_start(struct service *s, const struct serve_args *a, struct evroutes **evr, struct metrics **met,
                       char *err) {
    s->started = timeutil_now_ms() / 1e3;
    find_static(s);
    find_openapi(s);
    if (!(s->q = jobq_create(s->cfg.queue, s->cfg.keep_jobs, s->cfg.cache_ttl_s, err))) return -1;
    if (a->id_prefix && jobq_set_id_prefix(s->q, a->id_prefix, err) < 0) return -1;
    struct jobq_limits lim = {.per_client = s->cfg.queue_per_address,
                              .max_bytes = s->cfg.queue_bytes,
                              .default_run_s = s->cfg.job_estimate_ms / 1e3};
    if (jobq_set_limits(s->q, &lim, err) < 0) return -1;
    char wbuf[PATH_MAX + 256];
    char *wargv[MAX_WORKER_ARGS];
    if (worker_argv(s->cfg.worker_cmd, a->device[0] ? a->device : NULL, wbuf, sizeof wbuf, wargv) < 0) {
        dv_seterr(err, "serve: cannot form the worker command");
        return -1;
    }
    struct worker_config wc = {
        .argv = wargv, .hello_timeout_ms = s->cfg.worker_start_timeout_ms, .batch_jobs = s->cfg.batch};
    if (!(s->w = worker_create(&wc, s->q, err)) || worker_start(s->w, err) < 0) return -1;
    if (!(s->http = http_create(&s->cfg.http, err)) || routes_add_core(s, err) < 0 ||
        !(*evr = evroutes_create(s, err)) || !(*met = metrics_create(s, evroutes_index_json, *evr, err)) ||
        http_start(s->http, err) < 0)
        return -1;
    const char *host = local_host(s->cfg.http.bind);
    LOG(LOG_NOTICE, "listening on http://%s:%u (queue %u, deadline %u ms, token %s)", host, http_port(s->http),
        s->cfg.queue, s->cfg.deadline_ms, s->cfg.http.token ? "required for POSTs" : "off");
    /* The line tests and scripts read to find an ephemeral port. */
    fprintf(stderr, "listening on http://%s:%u\n", host, http_port(s->http));
    fflush(stderr);
    return 0;
}

/* Waits for SIGTERM or SIGINT (blocked in `sigs`) and returns it. Under a
 * systemd watchdog, pings at half its interval from this loop, after taking
 * the queue's lock (a wedged queue stops the pings). */
static int serve_wait(const sigset_t *sigs, struct jobq *q) {
    unsigned long wd = sdnotify_watchdog_ms();
    int sig = 0;
    for (;;) {
        if (!wd) {
            if (sigwait(sigs, &sig) == 0) return sig;
            continue;
        }
        struct timespec ts = {(time_t)(wd / 2000), (long)((wd / 2) % 1000) * 1000000L};
        int got = sigtimedwait(sigs, NULL, &ts);
        if (got > 0) return got;
        struct jobq_stats st;
        jobq_get_stats(q, &st);
        sdnotify_send("WATCHDOG=1");
    }
}

int serve_main(int argc, char **argv) {
    struct service s;
    struct serve_args a;
    struct evroutes *evr = NULL;
    struct metrics *met = NULL;
    char err[ERR_LEN] = "";
    memset(&s, 0, sizeof s);
    memset(&a, 0, sizeof a);
    config_defaults(&s.cfg);
    int rc = parse_flags(argc, argv, &s.cfg, &a);
    if (rc >= 0) goto cleanup;

    /* Signals: taken synchronously by this thread; every thread started
     * from here on inherits the blocked mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (serve_start(&s, &a, &evr, &met, err) < 0) {
        LOG(LOG_ERR, "%s", err);
        fprintf(stderr, "divergence serve: %s\n", err);
        rc = 1;
        goto cleanup;
    }
    sdnotify_send("READY=1\nSTATUS=listening");
    int sig = serve_wait(&sigs, s.q);
    sdnotify_send("STOPPING=1");
    LOG(LOG_NOTICE, "serve: %s: draining (the running job may take up to %u ms)", strsignal(sig), s.cfg.deadline_ms);
    s.stopping = 1;
    http_quiesce(s.http);
    jobq_close(s.q, "server shutting down");
    worker_stop(s.w);
    evroutes_drain(evr); /* the last results' evidence on disk */
    LOG(LOG_NOTICE, "serve: stopped");
    rc = 0;
cleanup:
    http_free(s.http);
    worker_free(s.w);
    jobq_free(s.q);
    evroutes_free(evr);
    metrics_free(met);
    free(a.token);
    return rc;
}
