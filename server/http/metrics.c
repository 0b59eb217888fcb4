/* metrics.c -- see metrics.h.
 *
 * Requests are counted here and only here: the HTTP front reports each
 * answer once (http_set_observer), and one call under the metrics mutex
 * adds it to the counter of its (route, status) and to the latency
 * histogram of its (route, status class). Both tables grow on first sight
 * from the route labels and the statuses the routes answer, a small fixed
 * set; a label past a table's room is not counted there (and the server
 * logs nothing per request).
 *
 * A histogram is a fixed list of upper bounds with a count per bound, a sum
 * and a total, under the one metrics mutex; buckets are stored
 * non-cumulative and summed when written. Each (route, status class) gets a
 * histogram on first sight (the labels come from the route table and the
 * five classes, so the set is small and fixed): a slow 503 or a quick 429
 * then never hides in the latency of the 200s. Process metrics carry the names every Prometheus exporter
 * gives them (process_cpu_seconds_total, process_resident_memory_bytes,
 * ...), so dashboards and alerts written for any process read them without
 * a mapping; they are read from /proc/self at each scrape.
 */
#define _GNU_SOURCE
#include "api/jsonout.h"
#include "server/http/metrics.h"
#include "kernels/base/buildinfo.h"
#include "kernels/base/timeutil.h"

#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_ROUTES 192   /* route x status class pairs */
#define MAX_COUNTERS 256 /* route x status pairs       */
#define MAX_BOUNDS 16

static const double request_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
static const double wait_bounds[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
static const double run_bounds[] = {0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120};
/* From a Part 1 job's few milliseconds to a scenario suite's seconds, and
 * the first job's CUPTI start-up. */
static const double testimony_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};
#define NB(a) (sizeof a / sizeof a[0])

struct histogram {
    unsigned long long n[MAX_BOUNDS + 1]; /* last: above every bound */
    unsigned long long count;
    double sum;
};

/* One series of dv_http_requests_total. */
struct counter {
    char label[64];
    int status;
    unsigned long long n;
};

struct route_hist {
    char label[64];
    const char *status_class; /* http_status_class(): static text */
    struct histogram h;
};

struct metrics {
    struct service *s;
    metrics_index_fn index;
    void *index_ctx;
    pthread_mutex_t lock;
    struct route_hist routes[MAX_ROUTES];
    unsigned nroutes;
    struct counter counters[MAX_COUNTERS]; /* in the order first seen */
    unsigned ncounters;
    struct histogram wait, run_ok, run_failed, testimony;
    unsigned long long rejected;
};

static void observe(struct histogram *h, const double *bounds, size_t nb, double v) {
    size_t i = 0;
    while (i < nb && v > bounds[i]) i++;
    h->n[i]++;
    h->count++;
    h->sum += v;
}

/* A route label is "/measure" or ends in it ("/gpus/{slug}/measure"). */
static int is_measure_route(const char *route) {
    size_t n = strlen(route);
    return n >= 8 && strcmp(route + n - 8, "/measure") == 0;
}

/* The request counter of (route, status), made on first sight; NULL when
 * the table is full. Lock held. */
static struct counter *counter_locked(struct metrics *m, const char *route, int status) {
    for (unsigned i = 0; i < m->ncounters; i++)
        if (m->counters[i].status == status && strcmp(m->counters[i].label, route) == 0) return &m->counters[i];
    if (m->ncounters == MAX_COUNTERS) return NULL;
    struct counter *c = &m->counters[m->ncounters++];
    snprintf(c->label, sizeof c->label, "%s", route);
    c->status = status;
    c->n = 0;
    return c;
}

void metrics_observe_request(void *ctx, const char *route, int status, double seconds) {
    struct metrics *m = ctx;
    pthread_mutex_lock(&m->lock);
    struct counter *c = counter_locked(m, route, status);
    if (c) c->n++;
    const char *cls = http_status_class(status);
    unsigned i;
    for (i = 0; i < m->nroutes; i++)
        if (m->routes[i].status_class == cls && strcmp(m->routes[i].label, route) == 0) break;
    if (i == m->nroutes && m->nroutes < MAX_ROUTES) {
        snprintf(m->routes[i].label, sizeof m->routes[i].label, "%s", route);
        m->routes[m->nroutes++].status_class = cls;
    }
    if (i < m->nroutes) observe(&m->routes[i].h, request_bounds, NB(request_bounds), seconds < 0 ? 0 : seconds);
    if (status == 429 && is_measure_route(route)) m->rejected++;
    pthread_mutex_unlock(&m->lock);
}

void metrics_observe_job(void *ctx, int ok, double wait_s, double run_s) {
    struct metrics *m = ctx;
    pthread_mutex_lock(&m->lock);
    if (wait_s >= 0) observe(&m->wait, wait_bounds, NB(wait_bounds), wait_s);
    if (run_s >= 0) observe(ok ? &m->run_ok : &m->run_failed, run_bounds, NB(run_bounds), run_s);
    pthread_mutex_unlock(&m->lock);
}

void metrics_observe_testimony(void *ctx, double seconds) {
    struct metrics *m = ctx;
    pthread_mutex_lock(&m->lock);
    observe(&m->testimony, testimony_bounds, NB(testimony_bounds), seconds < 0 ? 0 : seconds);
    pthread_mutex_unlock(&m->lock);
}

/* Writes one histogram's series; `labels` is "" or `name="value"` pairs. */
static void put_hist(FILE *f, const char *name, const char *labels, const struct histogram *h,
                     const double *bounds, size_t nb) {
    unsigned long long cum = 0;
    const char *sep = labels[0] ? "," : "";
    for (size_t i = 0; i < nb; i++) {
        cum += h->n[i];
        fprintf(f, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, bounds[i], cum);
    }
    fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, h->count);
    if (labels[0]) {
        fprintf(f, "%s_sum{%s} %.9g\n", name, labels, h->sum);
        fprintf(f, "%s_count{%s} %llu\n", name, labels, h->count);
    } else {
        fprintf(f, "%s_sum %.9g\n%s_count %llu\n", name, h->sum, name, h->count);
    }
}

/* A label value with \, " and newline escaped as the text format wants. */
static void put_escaped(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '\\' || *s == '"') fputc('\\', f), fputc(*s, f);
        else if (*s == '\n') fputs("\\n", f);
        else fputc(*s, f);
    }
}

static void put_process(FILE *f) {
    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    char buf[2048];
    FILE *st = fopen("/proc/self/stat", "re");
    size_t n = st ? fread(buf, 1, sizeof buf - 1, st) : 0;
    if (st) fclose(st);
    buf[n] = '\0';
    /* Fields after the command name, which may hold spaces: from the last ')'. */
    char *p = strrchr(buf, ')');
    unsigned long long utime = 0, stime = 0, start = 0, vsize = 0;
    long long rss = 0;
    if (p && ticks > 0 &&
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld",
               &utime, &stime, &start, &vsize, &rss) == 5) {
        double btime = 0;
        FILE *ps = fopen("/proc/stat", "re");
        char line[256];
        while (ps && fgets(line, sizeof line, ps))
            if (sscanf(line, "btime %lf", &btime) == 1) break;
        if (ps) fclose(ps);
        fprintf(f, "# HELP process_cpu_seconds_total User and system CPU time of the server process.\n"
                   "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.2f\n",
                (double)(utime + stime) / (double)ticks);
        fprintf(f, "# HELP process_resident_memory_bytes Resident memory of the server process.\n"
                   "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %lld\n",
                rss * (long long)page);
        fprintf(f, "# HELP process_virtual_memory_bytes Virtual memory of the server process.\n"
                   "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %llu\n", vsize);
        if (btime > 0)
            fprintf(f, "# HELP process_start_time_seconds When the server process started (Unix seconds).\n"
                       "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.2f\n",
                    btime + (double)start / (double)ticks);
    }
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        long fds = -1; /* not counting the directory's own descriptor */
        struct dirent *de;
        while ((de = readdir(d)))
            if (de->d_name[0] != '.') fds++;
        closedir(d);
        fprintf(f, "# HELP process_open_fds Open file descriptors.\n"
                   "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n", fds < 0 ? 0 : fds);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        fprintf(f, "# HELP process_max_fds The limit on open file descriptors.\n"
                   "# TYPE process_max_fds gauge\nprocess_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
}

/* The GPU worker's resident memory, from /proc/<pid>/statm (its child: the
 * same pid namespace), when there is a worker to read. */
static void put_worker_memory(FILE *f, pid_t pid) {
    fputs(
        "# HELP dv_worker_resident_memory_bytes Resident memory of the GPU worker process.\n"
        "# TYPE dv_worker_resident_memory_bytes gauge\n",
        f);
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/statm", (long)pid);
    FILE *st = pid > 0 ? fopen(path, "re") : NULL;
    long long size = 0, resident = 0;
    if (st && fscanf(st, "%lld %lld", &size, &resident) == 2)
        fprintf(f, "dv_worker_resident_memory_bytes %lld\n", resident * (long long)sysconf(_SC_PAGESIZE));
    if (st) fclose(st);
}

static void put_fresh(FILE *f, json_t *entries, const char *gpu) {
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e) {
        const char *suite = json_string_value(json_object_get(e, "suite"));
        const char *fin = json_string_value(json_object_get(e, "finished_utc"));
        time_t t;
        if (!suite || !fin || timeutil_parse_utc(fin, &t) != 0) continue;
        fputs("dv_evidence_last_success_timestamp_seconds{suite=\"", f);
        put_escaped(f, suite);
        if (gpu) {
            fputs("\",gpu=\"", f);
            put_escaped(f, gpu);
        }
        fprintf(f, "\"} %lld\n", (long long)t);
    }
}

/* The latest good night's ratios against the night before it, per suite:
 * `key` "changed" (higher or lower beyond the tolerance) or "ambiguous"
 * (from the comparison's counts). Suites whose latest record has no
 * comparison have no sample. */
static void put_changed(FILE *f, json_t *entries, const char *gpu, const char *metric, const char *key) {
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e) {
        const char *suite = json_string_value(json_object_get(e, "suite"));
        json_t *c = json_object_get(e, "comparison");
        json_t *v = strcmp(key, "changed") == 0 ? json_object_get(c, key)
                                                : json_object_get(json_object_get(c, "counts"), key);
        if (!suite || !json_is_integer(v) || json_is_null(json_object_get(c, "previous"))) continue;
        fprintf(f, "%s{suite=\"", metric);
        put_escaped(f, suite);
        if (gpu) {
            fputs("\",gpu=\"", f);
            put_escaped(f, gpu);
        }
        fprintf(f, "\"} %lld\n", (long long)json_integer_value(v));
    }
}

/* put_changed() over each GPU's suite entries of the index (or the
 * single-GPU ones). */
static void each_changed(FILE *f, json_t *idx, const char *metric, const char *key) {
    json_t *gpus = json_object_get(idx, "gpus");
    if (json_array_size(gpus) > 0) {
        size_t i;
        json_t *g;
        json_array_foreach(gpus, i, g)
            put_changed(f, json_object_get(g, "suites"), json_string_value(json_object_get(g, "gpu")), metric, key);
    } else {
        put_changed(f, json_object_get(idx, "suites"), NULL, metric, key);
    }
}

/* Good evidence's finished_utc per suite (and per GPU model where the index
 * lists several), from the evidence index; and how many of the latest
 * night's ratios changed since the night before (an operator alerts on
 * dv_evidence_changed_ratios > 0). */
static void put_evidence(FILE *f, struct metrics *m) {
    fputs("# HELP dv_evidence_last_success_timestamp_seconds When each suite last recorded good evidence "
          "(Unix seconds; absent until it has).\n"
          "# TYPE dv_evidence_last_success_timestamp_seconds gauge\n",
          f);
    char *text = m->index ? m->index(m->index_ctx) : NULL;
    json_t *idx = text ? jsonout_loads(text, 0, NULL) : NULL;
    free(text);
    json_t *gpus = json_object_get(idx, "gpus");
    if (json_array_size(gpus) > 0) {
        size_t i;
        json_t *g;
        json_array_foreach(gpus, i, g) put_fresh(f, json_object_get(g, "suites"), json_string_value(json_object_get(g, "gpu")));
    } else {
        put_fresh(f, json_object_get(idx, "suites"), NULL);
    }
    fputs("# HELP dv_evidence_changed_ratios Ratios of each suite's latest good night labelled higher or lower "
          "than the previous good night's beyond the tolerance (absent before a second night).\n"
          "# TYPE dv_evidence_changed_ratios gauge\n",
          f);
    each_changed(f, idx, "dv_evidence_changed_ratios", "changed");
    fputs("# HELP dv_evidence_ambiguous_ratios Ratios of each suite's latest good night whose change since the "
          "previous good night the intervals cannot tell from none.\n"
          "# TYPE dv_evidence_ambiguous_ratios gauge\n",
          f);
    each_changed(f, idx, "dv_evidence_ambiguous_ratios", "ambiguous");
    json_decref(idx);
}

/* The job counters. Lock held. */
static void put_jobs(FILE *f, const struct metrics *m, const struct jobq_stats *st) {
    fprintf(f,
            "# HELP dv_jobs_total Measurement jobs by outcome (rejected: answered 429 on a measure route).\n"
            "# TYPE dv_jobs_total counter\n"
            "dv_jobs_total{outcome=\"done\"} %llu\n"
            "dv_jobs_total{outcome=\"failed\"} %llu\n"
            "dv_jobs_total{outcome=\"cached\"} %llu\n"
            "dv_jobs_total{outcome=\"joined\"} %llu\n"
            "dv_jobs_total{outcome=\"rejected\"} %llu\n",
            st->done, st->failed, st->cache_hits, st->coalesced, m->rejected);
}

/* Every histogram. Lock held. */
static void put_histograms(FILE *f, const struct metrics *m) {
    fputs(
        "# HELP dv_http_request_duration_seconds Time from a request's headers to its answer, per route and "
        "status class.\n"
        "# TYPE dv_http_request_duration_seconds histogram\n",
        f);
    for (unsigned i = 0; i < m->nroutes; i++) {
        char labels[128];
        snprintf(labels, sizeof labels, "route=\"%s\",status_class=\"%s\"", m->routes[i].label,
                 m->routes[i].status_class);
        put_hist(f, "dv_http_request_duration_seconds", labels, &m->routes[i].h, request_bounds, NB(request_bounds));
    }
    fputs("# HELP dv_job_queue_wait_seconds Time a job waited in the queue before it ran.\n"
          "# TYPE dv_job_queue_wait_seconds histogram\n",
          f);
    put_hist(f, "dv_job_queue_wait_seconds", "", &m->wait, wait_bounds, NB(wait_bounds));
    fputs("# HELP dv_job_run_seconds Time a job ran on the GPU worker, by outcome.\n"
          "# TYPE dv_job_run_seconds histogram\n",
          f);
    put_hist(f, "dv_job_run_seconds", "outcome=\"done\"", &m->run_ok, run_bounds, NB(run_bounds));
    put_hist(f, "dv_job_run_seconds", "outcome=\"failed\"", &m->run_failed, run_bounds, NB(run_bounds));
    fputs(
        "# HELP dv_testimony_seconds Host time of a job's witness and counter passes on the GPU worker.\n"
        "# TYPE dv_testimony_seconds histogram\n",
        f);
    put_hist(f, "dv_testimony_seconds", "", &m->testimony, testimony_bounds, NB(testimony_bounds));
}

/* The queue, the worker and the GPU, as the queue and the worker see them. */
static void put_queue(FILE *f, const struct jobq_stats *st, const struct worker_snapshot *ws) {
    fprintf(f,
            "# HELP dv_queue_depth Jobs waiting for the GPU.\n"
            "# TYPE dv_queue_depth gauge\n"
            "dv_queue_depth %u\n"
            "# HELP dv_queue_capacity Jobs the queue holds before answering 429.\n"
            "# TYPE dv_queue_capacity gauge\n"
            "dv_queue_capacity %u\n"
            "# HELP dv_jobs_running Jobs on the GPU now.\n"
            "# TYPE dv_jobs_running gauge\n"
            "dv_jobs_running %u\n"
            "# HELP dv_worker_restarts_total GPU worker processes replaced after a failure.\n"
            "# TYPE dv_worker_restarts_total counter\n"
            "dv_worker_restarts_total %llu\n"
            "# HELP dv_worker_up 1 when the GPU worker is ready.\n"
            "# TYPE dv_worker_up gauge\n"
            "dv_worker_up %d\n"
            "# HELP dv_gpu_present 1 when the worker found a GPU.\n"
            "# TYPE dv_gpu_present gauge\n"
            "dv_gpu_present %d\n"
            "# HELP dv_gpu_busy_seconds_total Wall time the GPU worker spent on jobs.\n"
            "# TYPE dv_gpu_busy_seconds_total counter\n"
            "dv_gpu_busy_seconds_total %.6f\n"
            "# HELP dv_gpu_kernel_seconds_total Timed GPU work the worker reported.\n"
            "# TYPE dv_gpu_kernel_seconds_total counter\n"
            "dv_gpu_kernel_seconds_total %.6f\n",
            st->depth, st->capacity, st->running, ws->restarts, ws->state == WORKER_READY, ws->gpu_present, ws->busy_s,
            ws->gpu_time_s);
}

static void put_build(FILE *f) {
    fputs("# HELP divergence_build_info The running build (always 1).\n"
          "# TYPE divergence_build_info gauge\n"
          "divergence_build_info{version=\"",
          f);
    put_escaped(f, buildinfo_version());
    fputs("\",git_revision=\"", f);
    put_escaped(f, buildinfo_git_revision());
    fputs("\"} 1\n", f);
}

/* The HTTP front's connection table, held requests, analysis queue and
 * gzip forms. */
static void put_connections(FILE *f, const struct http_conn_stats *cs) {
    const struct conntable_stats *t = &cs->table;
    fprintf(f,
            "# HELP dv_http_connections Connections open now.\n"
            "# TYPE dv_http_connections gauge\n"
            "dv_http_connections %u\n"
            "# HELP dv_http_connections_closed_total Connections the server shut: past a header or body deadline, "
            "evicted for a newcomer, refused (table all busy), refused over the per-address share, or hung up "
            "while held.\n"
            "# TYPE dv_http_connections_closed_total counter\n"
            "dv_http_connections_closed_total{reason=\"deadline\"} %llu\n"
            "dv_http_connections_closed_total{reason=\"evicted\"} %llu\n"
            "dv_http_connections_closed_total{reason=\"refused\"} %llu\n"
            "dv_http_connections_closed_total{reason=\"address_limit\"} %llu\n"
            "dv_http_connections_closed_total{reason=\"hangup\"} %llu\n"
            "# HELP dv_http_held_requests Long-polls and event streams held open now.\n"
            "# TYPE dv_http_held_requests gauge\n"
            "dv_http_held_requests %u\n"
            "# HELP dv_http_held_released_total Held requests answered early with their current state to make "
            "room: over the per-address bound, over the total bound, or for a newcomer to a full table.\n"
            "# TYPE dv_http_held_released_total counter\n"
            "dv_http_held_released_total{reason=\"address\"} %llu\n"
            "dv_http_held_released_total{reason=\"total\"} %llu\n"
            "dv_http_held_released_total{reason=\"table\"} %llu\n"
            "# HELP dv_analysis_queue_depth Analyses waiting for a CPU pool thread.\n"
            "# TYPE dv_analysis_queue_depth gauge\n"
            "dv_analysis_queue_depth %u\n"
            "# HELP dv_http_gzip_compressions_total Bodies compressed with gzip: each document, view, page or "
            "file once while its form is kept, never per request.\n"
            "# TYPE dv_http_gzip_compressions_total counter\n"
            "dv_http_gzip_compressions_total %llu\n"
            "# HELP dv_http_gzip_reused_total Answers sent gzip from a form made earlier.\n"
            "# TYPE dv_http_gzip_reused_total counter\n"
            "dv_http_gzip_reused_total %llu\n",
            t->open, t->deadline_closed, t->evicted, t->refused, t->address_refused, t->hangups, t->held,
            t->released_address, t->released_total, t->released_table, cs->cpu_queued, cs->gzip.compressions,
            cs->gzip.hits);
}

/* The request counters. Lock held. */
static void put_requests(FILE *f, const struct metrics *m) {
    fputs(
        "# HELP dv_http_requests_total HTTP requests by route, status and status class.\n"
        "# TYPE dv_http_requests_total counter\n",
        f);
    for (unsigned i = 0; i < m->ncounters; i++)
        fprintf(f, "dv_http_requests_total{route=\"%s\",status=\"%d\",status_class=\"%s\"} %llu\n",
                m->counters[i].label, m->counters[i].status, http_status_class(m->counters[i].status),
                m->counters[i].n);
}

char *metrics_text(struct metrics *m) {
    struct service *s = m->s;
    struct jobq_stats st;
    struct worker_snapshot ws;
    struct http_conn_stats cs;
    jobq_get_stats(s->q, &st);
    worker_get_snapshot(s->w, &ws);
    free(ws.device_json);
    http_conn_stats(s->http, &cs);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    pthread_mutex_lock(&m->lock);
    put_jobs(f, m, &st);
    put_histograms(f, m);
    pthread_mutex_unlock(&m->lock);
    put_worker_memory(f, ws.pid);
    put_queue(f, &st, &ws);
    put_evidence(f, m); /* reads the evidence index: not under the lock */
    put_build(f);
    put_process(f);
    put_connections(f, &cs);
    pthread_mutex_lock(&m->lock);
    put_requests(f, m);
    pthread_mutex_unlock(&m->lock);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

static void metrics_route(struct http_req *r, void *ctx) {
    char *text = metrics_text(ctx);
    if (!text) {
        http_reply_error(r, 500, NULL, "out of memory");
        return;
    }
    http_reply_take(r, 200, "text/plain; version=0.0.4; charset=utf-8", text);
}

struct metrics *metrics_create(struct service *s, metrics_index_fn index, void *ctx, char *err) {
    struct metrics *m = calloc(1, sizeof *m);
    if (!m) {
        dv_seterr(err, "metrics: out of memory");
        return NULL;
    }
    m->s = s;
    m->index = index;
    m->index_ctx = ctx;
    pthread_mutex_init(&m->lock, NULL);
    if (http_route_add(s->http, "GET", "/metrics", "/metrics", 0, metrics_route, m, err) < 0) {
        metrics_free(m);
        return NULL;
    }
    http_set_observer(s->http, metrics_observe_request, m);
    jobq_set_observer(s->q, metrics_observe_job, m);
    if (s->w) worker_set_testimony_observer(s->w, metrics_observe_testimony, m);
    return m;
}

void metrics_free(struct metrics *m) {
    if (!m) return;
    pthread_mutex_destroy(&m->lock);
    free(m);
}
