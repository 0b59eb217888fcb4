/* metrics.h -- GET /metrics: the service's Prometheus text exposition.
 *
 * What it exposes (all dv_* unless said otherwise):
 *   dv_http_requests_total{route,status,status_class}  counter
 *   dv_http_request_duration_seconds{route,status_class}  histogram, headers
 *                                                  to answer; status_class is
 *                                                  2xx, 3xx, 4xx or 5xx
 *   dv_job_queue_wait_seconds                      histogram, submit to start
 *   dv_job_run_seconds{outcome}                    histogram, start to end
 *   dv_testimony_seconds                           histogram, host time of a
 *                                                  job's witness and counter
 *                                                  passes (the worker's
 *                                                  "testimony_ms")
 *   dv_worker_resident_memory_bytes                gauge, the GPU worker's
 *                                                  resident memory (CUPTI's
 *                                                  metric database and buffers
 *                                                  once a job asked for
 *                                                  counters), from /proc
 *   dv_jobs_total{outcome}                         done, failed, cached, joined,
 *                                                  rejected (every 429 a
 *                                                  measure route answered: a
 *                                                  full queue or the rate limit)
 *   dv_queue_depth, dv_queue_capacity, dv_jobs_running, dv_worker_*,
 *   dv_gpu_*                                       gauges and counters
 *   dv_evidence_last_success_timestamp_seconds{suite[,gpu]}  when each suite last
 *                                                  recorded good evidence (alert
 *                                                  on time() - it > a day and a bit)
 *   dv_evidence_changed_ratios{suite[,gpu]}        the latest good night's ratios
 *                                                  higher or lower than the night
 *                                                  before (alert on > 0)
 *   dv_evidence_ambiguous_ratios{suite[,gpu]}      ... whose change the intervals
 *                                                  cannot tell from none
 *   divergence_build_info{version,git_revision}    1
 *   process_*                                      the standard process metrics
 *                                                  from /proc/self
 *   dv_http_connections, dv_http_connections_closed_total{reason},
 *   dv_http_held_requests, dv_http_held_released_total{reason},
 *   dv_analysis_queue_depth                        the HTTP front's connection
 *                                                  table (http_conn_stats())
 * The request counters and the histograms are fed by observers on the HTTP
 * front and the job queue (cheap: a mutex and a few additions; each request
 * is counted here once); everything else is read at scrape.
 *
 * Owner: the service that metrics_create()s it (serve.c), which frees it
 * after the queue and the front are gone. Lock: one mutex over the counters
 * and histograms, never held while the rest is read (the evidence index,
 * /proc). Threads: the observers run on the HTTP daemon threads, the job
 * queue's and the worker's; metrics_text() on a daemon thread (GET
 * /metrics).
 */
#ifndef DV_METRICS_H
#define DV_METRICS_H

#include "server/http/service.h"

struct metrics;

/* The evidence index (GET /evidence/latest's JSON, malloc()ed; NULL when it
 * cannot be had) that the freshness gauge reads at each scrape: the
 * single-GPU "suites" and, where present, every GPU's ("gpus"). */
typedef char *(*metrics_index_fn)(void *ctx);

/* Adds GET /metrics to s->http and hooks the observers of s->http and s->q.
 * `index` (may be NULL) with `ctx` feeds the freshness gauge. Call before
 * http_start(); free after the queue and the front are gone. Returns NULL
 * with `err`. */
struct metrics *metrics_create(struct service *s, metrics_index_fn index, void *ctx, char *err);
void metrics_free(struct metrics *m);

/* The observers (exported for tests). */
void metrics_observe_request(void *m, const char *route, int status, double seconds);
void metrics_observe_job(void *m, int ok, double wait_s, double run_s);
void metrics_observe_testimony(void *m, double seconds);

/* The whole exposition (malloc()ed), or NULL when out of memory. */
char *metrics_text(struct metrics *m);

#endif /* DV_METRICS_H */
