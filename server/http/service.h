/* service.h -- the running service: its configuration and the parts every
 * route reads (job queue, GPU worker supervisor, HTTP front). serve.c builds
 * one; routes.c adds the core routes to its HTTP front, and other modules add
 * theirs the same way (http_route_add with the service as context).
 */
#ifndef DV_SERVICE_H
#define DV_SERVICE_H

#include <limits.h>
#include <stdatomic.h>
#include "server/http/http.h"
#include "kernels/model/model/experiment.h"
#include "server/jobs/jobq.h"
#include "server/jobs/worker.h"

/* What `divergence serve` runs with: the HTTP front's own configuration,
 * passed to http_create() as it is, and the service's. */
struct service_config {
    struct http_config http;    /* bind, port, token, CORS, proxies, limits,
                                   timeouts, the analysis pool, the drain  */
    unsigned queue;             /* waiting jobs                         */
    unsigned queue_per_address; /* waiting jobs of one address; 0: any  */
    size_t queue_bytes;         /* memory the waiting jobs may hold     */
    unsigned job_estimate_ms;   /* a kind of job's run before any has
                                   finished (jobq_limits.default_run_s) */
    unsigned deadline_ms;       /* per job                              */
    unsigned batch;             /* jobs one GPU session may batch (0: 16) */
    double cache_ttl_s;
    unsigned keep_jobs;         /* finished jobs (and cache entries)    */
    double max_cost;            /* options_cost() limit per job         */
    double open_cost;           /* with a token set, POST /measure up to
                                   this cost needs none (lesson pages)  */
    const char *static_dir;     /* NULL: search (serve.c)               */
    const char *openapi;        /* NULL: search                         */
    const char *evidence_dir;
    const char *worker_cmd;     /* NULL: this binary + " worker"        */
    unsigned worker_start_timeout_ms;
    double max_analysis_cost;   /* routes_analysis_cost() limit; 0: none */
    unsigned history_rate_per_min; /* history pages a minute per address; 0: off */
};

struct service {
    struct service_config cfg;
    struct jobq *q;
    struct worker *w;
    struct http *http;
    double started;             /* monotonic seconds                    */
    atomic_int stopping;        /* set on SIGTERM (main thread), read by
                                   the HTTP threads: /readyz answers 503 */
    char static_dir[PATH_MAX];  /* "" when none was found               */
    char openapi[4][PATH_MAX];  /* candidates, first readable wins      */
};

/* Adds the core routes (issue: measure, jobs, analyze, predicates, device,
 * healthz, readyz, openapi.yaml, static files) to s->http; GET /metrics is
 * metrics.c's. */
int routes_add_core(struct service *s, char *err);

/* Serves `rel` (a path below the static directory, "" = index.html). */
void routes_static_file(struct http_req *r, const char *dir, const char *rel);

/* Thread evaluations the analysis of `o` makes (plan_cost():
 * the model that plans counts them). The cap --max-analysis-cost applies to
 * it on /analyze and /measure alike; an over-limit 400 names the field the
 * bulk of it comes from. */
double routes_analysis_cost(const struct dv_options *o);

/* The GET /jobs/{id} document for `v`: a new reference, or NULL when any
 * allocation failed (never a partial document). */
json_t *routes_job_json(const struct job_view *v);

/* The GET /predicates document (malloc()ed), or NULL with `err`. */
char *routes_predicates_doc(char *err);

#endif /* DV_SERVICE_H */
