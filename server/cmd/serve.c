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
#include "server/http/evroutes.h"
#include "server/http/metrics.h"
#include "server/core/log.h"
#include "server/core/sdnotify.h"
#include "server/evidence/suites.h"
#include "api/options.h"
#include "server/http/service.h"

#include <arpa/inet.h>
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
          "  --queue N              jobs waiting for the GPU before 429 (16)\n"
          "  --rate-limit N         POST /measure and refreshes a minute per address (10; 0 off)\n"
          "  --job-deadline-ms N    GPU time a job may take before its worker is killed (30000)\n"
          "  --cache-ttl S          seconds an identical request is answered from cache (600)\n"
          "  --keep-jobs N          finished jobs kept for GET /jobs/{id} (256)\n"
          "  --body-limit BYTES     request body limit (65536)\n"
          "  --max-job-cost X       per-job limit on threads x iterations x rows x samples (1e15)\n"
          "  --threads N            HTTP thread pool (4)\n"
          "  --conn-timeout S       idle connection timeout (30)\n"
          "  --conn-limit N         open connections in total (256)\n"
          "  --per-ip-limit N       open connections per address (32)\n"
          "  --token T              bearer token for refreshes and for measurements above\n"
          "                         --open-measure-cost\n"
          "  --token-file F         read the token from F (else $DIVERGENCE_TOKEN)\n"
          "  --open-measure-cost X  with a token set, POST /measure up to this cost needs none\n"
          "                         (default: the largest suite's; 0: every job needs the token)\n"
          "  --cors-origin O        allow browser calls from origin O (repeatable; * for any)\n"
          "  --trust-forwarded      believe X-Forwarded-For from 127.0.0.1 and ::1 (a local proxy)\n"
          "  --trusted-proxy ADDR   believe X-Forwarded-For from ADDR (repeatable); the client is\n"
          "                         the rightmost hop that is not a trusted proxy\n"
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

static void config_defaults(struct service_config *c) {
    memset(c, 0, sizeof *c);
    c->bind = "127.0.0.1";
    c->port = 8080;
    c->queue = 16;
    c->rate_per_min = 10;
    c->deadline_ms = 30000;
    c->cache_ttl_s = 600;
    c->keep_jobs = 256;
    c->body_limit = 64 * 1024;
    c->threads = 4;
    c->conn_timeout_s = 30;
    c->conn_limit = 256;
    c->per_ip_limit = 32;
    c->max_cost = 1e15;
    c->max_analysis_cost = 33554432; /* 2^25: four blockIdx.x predicates over 8 Mi threads */
    c->analyze_rate_per_min = 120;
    c->header_timeout_s = 10;
    c->body_timeout_s = 30;
    c->cpu_threads = 2;
    c->cpu_queue = 64;
    c->drain_ms = 5000;
    c->evidence_dir = "var/evidence";
    c->worker_start_timeout_ms = 30000;
}

static int parse_uint(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *out) {
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || n < lo || n > hi) {
        fprintf(stderr, "divergence serve: %s %s: expected an integer in %u..%u\n", opt, v, lo, hi);
        return -1;
    }
    *out = (unsigned)n;
    return 0;
}

static int parse_double(const char *opt, const char *v, double lo, double *out) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= lo)) {
        fprintf(stderr, "divergence serve: %s %s: expected a number >= %g\n", opt, v, lo);
        return -1;
    }
    *out = d;
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
 * is `divergence-gpu worker` from this binary's folder (cmd/sibling.h).
 * `device` (NULL: not given) is passed on as `--device N`. */
static int worker_argv(const char *cmd, const char *device, char *buf, size_t len, char **argv) {
    int n = 0;
    if (!cmd) {
        if (sibling_path(SIBLING_GPU, buf, len) != 0) return -1;
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

int serve_main(int argc, char **argv) {
    enum {
        O_PORT = 256, O_BIND, O_QUEUE, O_RATE, O_DEADLINE, O_TTL, O_KEEP, O_BODY, O_COST, O_THREADS,
        O_CTIMEOUT, O_CLIMIT, O_IPLIMIT, O_TOKEN, O_TOKENFILE, O_CORS, O_TRUST, O_STATIC, O_OPENAPI,
        O_EVIDENCE, O_WORKER, O_WSTART, O_LOG, O_HELP, O_DEVICE, O_PROXY, O_HTIMEOUT, O_BTIMEOUT, O_ATHREADS,
        O_AQUEUE, O_ACOST, O_ARATE, O_OPENCOST, O_IDPREFIX, O_DRAIN
    };
    static const struct option opts[] = {
        {"port", required_argument, 0, O_PORT}, {"bind", required_argument, 0, O_BIND},
        {"queue", required_argument, 0, O_QUEUE}, {"rate-limit", required_argument, 0, O_RATE},
        {"job-deadline-ms", required_argument, 0, O_DEADLINE}, {"cache-ttl", required_argument, 0, O_TTL},
        {"keep-jobs", required_argument, 0, O_KEEP}, {"body-limit", required_argument, 0, O_BODY},
        {"max-job-cost", required_argument, 0, O_COST}, {"threads", required_argument, 0, O_THREADS},
        {"conn-timeout", required_argument, 0, O_CTIMEOUT}, {"conn-limit", required_argument, 0, O_CLIMIT},
        {"per-ip-limit", required_argument, 0, O_IPLIMIT}, {"token", required_argument, 0, O_TOKEN},
        {"token-file", required_argument, 0, O_TOKENFILE}, {"cors-origin", required_argument, 0, O_CORS},
        {"trust-forwarded", no_argument, 0, O_TRUST}, {"static-dir", required_argument, 0, O_STATIC},
        {"openapi", required_argument, 0, O_OPENAPI}, {"evidence-dir", required_argument, 0, O_EVIDENCE},
        {"worker-cmd", required_argument, 0, O_WORKER}, {"device", required_argument, 0, O_DEVICE},
        {"worker-start-timeout-ms", required_argument, 0, O_WSTART},
        {"log-level", required_argument, 0, O_LOG}, {"help", no_argument, 0, O_HELP},
        {"trusted-proxy", required_argument, 0, O_PROXY}, {"header-timeout", required_argument, 0, O_HTIMEOUT},
        {"body-timeout", required_argument, 0, O_BTIMEOUT}, {"analysis-threads", required_argument, 0, O_ATHREADS},
        {"analysis-queue", required_argument, 0, O_AQUEUE}, {"max-analysis-cost", required_argument, 0, O_ACOST},
        {"analyze-rate-limit", required_argument, 0, O_ARATE}, {"open-measure-cost", required_argument, 0, O_OPENCOST},
        {"job-id-prefix", required_argument, 0, O_IDPREFIX}, {"drain-ms", required_argument, 0, O_DRAIN},
        {0, 0, 0, 0},
    };
    struct service s;
    struct evroutes *evr = NULL;
    struct metrics *met = NULL;
    memset(&s, 0, sizeof s);
    config_defaults(&s.cfg);
    char *token = NULL, device[8] = "";
    unsigned ncors = 0, nproxies = 0, u;
    const char *id_prefix = NULL;
    s.cfg.open_cost = -1;
    int rc = 1, c;
    char err[ERR_LEN] = "";
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        const char *name = argv[optind - 1];
        switch (c) {
        case O_PORT: if (parse_uint("--port", optarg, 0, 65535, &s.cfg.port)) goto usage; break;
        case O_BIND: s.cfg.bind = optarg; break;
        case O_QUEUE: if (parse_uint("--queue", optarg, 1, 100000, &s.cfg.queue)) goto usage; break;
        case O_RATE: if (parse_uint("--rate-limit", optarg, 0, 1000000, &s.cfg.rate_per_min)) goto usage; break;
        case O_DEADLINE: if (parse_uint("--job-deadline-ms", optarg, 100, 3600000, &s.cfg.deadline_ms)) goto usage; break;
        case O_TTL: if (parse_double("--cache-ttl", optarg, 0, &s.cfg.cache_ttl_s)) goto usage; break;
        case O_KEEP: if (parse_uint("--keep-jobs", optarg, 1, 1000000, &s.cfg.keep_jobs)) goto usage; break;
        case O_BODY:
            if (parse_uint("--body-limit", optarg, 64, 64u << 20, &u)) goto usage;
            s.cfg.body_limit = u;
            break;
        case O_COST: if (parse_double("--max-job-cost", optarg, 1, &s.cfg.max_cost)) goto usage; break;
        case O_THREADS: if (parse_uint("--threads", optarg, 1, 256, &s.cfg.threads)) goto usage; break;
        case O_CTIMEOUT: if (parse_uint("--conn-timeout", optarg, 1, 3600, &s.cfg.conn_timeout_s)) goto usage; break;
        case O_CLIMIT: if (parse_uint("--conn-limit", optarg, 1, 1000000, &s.cfg.conn_limit)) goto usage; break;
        case O_IPLIMIT: if (parse_uint("--per-ip-limit", optarg, 1, 1000000, &s.cfg.per_ip_limit)) goto usage; break;
        case O_TOKEN:
            free(token);
            if (!(token = strdup(optarg))) goto cleanup;
            break;
        case O_TOKENFILE:
            free(token);
            if (!(token = read_token_file(optarg))) goto usage;
            break;
        case O_CORS:
            if (ncors == SERVICE_MAX_CORS) {
                fprintf(stderr, "divergence serve: at most %d --cors-origin\n", SERVICE_MAX_CORS);
                goto usage;
            }
            s.cfg.cors[ncors++] = optarg;
            break;
        case O_TRUST: s.cfg.trust_forwarded = 1; break;
        case O_PROXY: {
            unsigned char a[16];
            if (inet_pton(AF_INET, optarg, a) != 1 && inet_pton(AF_INET6, optarg, a) != 1) {
                fprintf(stderr, "divergence serve: --trusted-proxy %s: not an IPv4 or IPv6 address\n", optarg);
                goto usage;
            }
            if (nproxies == HTTP_MAX_PROXIES - 2) {
                fprintf(stderr, "divergence serve: at most %d --trusted-proxy\n", HTTP_MAX_PROXIES - 2);
                goto usage;
            }
            s.cfg.trusted_proxies[nproxies++] = optarg;
            break;
        }
        case O_HTIMEOUT: if (parse_uint("--header-timeout", optarg, 1, 3600, &s.cfg.header_timeout_s)) goto usage; break;
        case O_BTIMEOUT: if (parse_uint("--body-timeout", optarg, 1, 3600, &s.cfg.body_timeout_s)) goto usage; break;
        case O_ATHREADS: if (parse_uint("--analysis-threads", optarg, 1, 256, &s.cfg.cpu_threads)) goto usage; break;
        case O_AQUEUE: if (parse_uint("--analysis-queue", optarg, 1, 100000, &s.cfg.cpu_queue)) goto usage; break;
        case O_ACOST: if (parse_double("--max-analysis-cost", optarg, 0, &s.cfg.max_analysis_cost)) goto usage; break;
        case O_ARATE: if (parse_uint("--analyze-rate-limit", optarg, 0, 1000000, &s.cfg.analyze_rate_per_min)) goto usage; break;
        case O_STATIC: s.cfg.static_dir = optarg; break;
        case O_OPENAPI: s.cfg.openapi = optarg; break;
        case O_EVIDENCE: s.cfg.evidence_dir = optarg; break;
        case O_WORKER: s.cfg.worker_cmd = optarg; break;
        case O_DEVICE:
            if (parse_uint("--device", optarg, 0, 255, &u)) goto usage;
            snprintf(device, sizeof device, "%u", u);
            break;
        case O_WSTART: if (parse_uint("--worker-start-timeout-ms", optarg, 100, 600000, &s.cfg.worker_start_timeout_ms)) goto usage; break;
        case O_LOG:
            if (log_set_verbosity(optarg) < 0) {
                fprintf(stderr, "divergence serve: --log-level %s: expected err, warning, notice, info or debug\n", optarg);
                goto usage;
            }
            break;
        case O_HELP: usage(stdout); rc = 0; goto cleanup;
        case O_OPENCOST: if (parse_double("--open-measure-cost", optarg, 0, &s.cfg.open_cost)) goto usage; break;
        case O_IDPREFIX: id_prefix = optarg; break;
        case O_DRAIN: if (parse_uint("--drain-ms", optarg, 1, 600000, &s.cfg.drain_ms)) goto usage; break;
        case ':': fprintf(stderr, "divergence serve: %s needs a value\n", name); goto usage;
        default: fprintf(stderr, "divergence serve: unknown option %s\n", name); goto usage;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "divergence serve: unexpected argument %s\n", argv[optind]);
        goto usage;
    }
    if (!token) {
        const char *env = getenv("DIVERGENCE_TOKEN");
        if (env && env[0] && !(token = strdup(env))) goto cleanup;
    }
    s.cfg.token = token;
    if (s.cfg.open_cost < 0) s.cfg.open_cost = suites_max_cost();

    /* Signals: taken synchronously by this thread; every thread started
     * from here on inherits the blocked mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    s.started = (timeutil_now_ms() / 1e3);
    find_static(&s);
    find_openapi(&s);
    if (!(s.q = jobq_create(s.cfg.queue, s.cfg.keep_jobs, s.cfg.cache_ttl_s, err))) goto fail;
    if (id_prefix && jobq_set_id_prefix(s.q, id_prefix, err) < 0) goto fail;

    char wbuf[PATH_MAX + 256];
    char *wargv[MAX_WORKER_ARGS];
    if (worker_argv(s.cfg.worker_cmd, device[0] ? device : NULL, wbuf, sizeof wbuf, wargv) < 0) {
        dv_seterr(err, "serve: cannot form the worker command");
        goto fail;
    }
    struct worker_config wc = {.argv = wargv, .hello_timeout_ms = s.cfg.worker_start_timeout_ms};
    if (!(s.w = worker_create(&wc, s.q, err)) || worker_start(s.w, err) < 0) goto fail;

    struct http_config hc;
    memset(&hc, 0, sizeof hc);
    hc.bind = s.cfg.bind;
    hc.port = s.cfg.port;
    hc.threads = s.cfg.threads;
    hc.conn_timeout_s = s.cfg.conn_timeout_s;
    hc.conn_limit = s.cfg.conn_limit;
    hc.per_ip_limit = s.cfg.per_ip_limit;
    hc.body_limit = s.cfg.body_limit;
    hc.token = s.cfg.token;
    for (unsigned i = 0; i < ncors; i++) hc.cors[i] = s.cfg.cors[i];
    hc.rate_per_min = s.cfg.rate_per_min;
    hc.trust_forwarded = s.cfg.trust_forwarded;
    for (unsigned i = 0; i < nproxies; i++) hc.trusted_proxies[i] = s.cfg.trusted_proxies[i];
    hc.cpu_rate_per_min = s.cfg.analyze_rate_per_min;
    hc.header_timeout_s = s.cfg.header_timeout_s;
    hc.body_timeout_s = s.cfg.body_timeout_s;
    hc.cpu_threads = s.cfg.cpu_threads;
    hc.cpu_queue = s.cfg.cpu_queue;
    hc.drain_ms = s.cfg.drain_ms;
    if (!(s.http = http_create(&hc, err)) || routes_add_core(&s, err) < 0 ||
        !(evr = evroutes_create(&s, err)) || !(met = metrics_create(&s, evroutes_index_json, evr, err)) ||
        http_start(s.http, err) < 0)
        goto fail;
    LOG(LOG_NOTICE, "listening on http://%s:%u (queue %u, deadline %u ms, token %s)",
        strchr(s.cfg.bind, ':') ? "[::1]" : strcmp(s.cfg.bind, "0.0.0.0") == 0 ? "127.0.0.1" : s.cfg.bind,
        http_port(s.http), s.cfg.queue, s.cfg.deadline_ms, s.cfg.token ? "required for POSTs" : "off");
    /* The line tests and scripts read to find an ephemeral port. */
    fprintf(stderr, "listening on http://%s:%u\n",
            strchr(s.cfg.bind, ':') ? "[::1]" : strcmp(s.cfg.bind, "0.0.0.0") == 0 ? "127.0.0.1" : s.cfg.bind,
            http_port(s.http));
    fflush(stderr);

    sdnotify_send("READY=1\nSTATUS=listening");
    /* Under a systemd watchdog, ping at half its interval from this loop,
     * after taking the queue's lock (a wedged queue stops the pings). */
    unsigned long wd = sdnotify_watchdog_ms();
    int sig = 0;
    for (;;) {
        if (!wd) {
            if (sigwait(&sigs, &sig) == 0) break;
            continue;
        }
        struct timespec ts = {(time_t)(wd / 2000), (long)((wd / 2) % 1000) * 1000000L};
        int got = sigtimedwait(&sigs, NULL, &ts);
        if (got > 0) {
            sig = got;
            break;
        }
        struct jobq_stats st;
        jobq_get_stats(s.q, &st);
        sdnotify_send("WATCHDOG=1");
    }
    sdnotify_send("STOPPING=1");
    LOG(LOG_NOTICE, "serve: %s: draining (the running job may take up to %u ms)", strsignal(sig), s.cfg.deadline_ms);
    s.stopping = 1;
    http_quiesce(s.http);
    jobq_close(s.q, "server shutting down");
    worker_stop(s.w);
    LOG(LOG_NOTICE, "serve: stopped");
    rc = 0;
    goto cleanup;

usage:
    fputs("Run 'divergence serve --help' for the options.\n", stderr);
    rc = 2;
    goto cleanup;
fail:
    LOG(LOG_ERR, "%s", err);
    fprintf(stderr, "divergence serve: %s\n", err);
    rc = 1;
cleanup:
    http_free(s.http);
    worker_free(s.w);
    jobq_free(s.q);
    evroutes_free(evr);
    metrics_free(met);
    free(token);
    return rc;
}
