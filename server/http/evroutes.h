/* evroutes.h -- the evidence routes of the service: GET /suites, POST
 * /evidence/refresh, GET /evidence/refresh/{id} and the evidence store's
 * GETs, for this server's GPU (/evidence/latest..., /evidence/{date}/{suite},
 * /evidence/history/...) and for any GPU (/evidence/{gpu}/latest...,
 * /evidence/{gpu}/{date}/{suite}, /evidence/{gpu}/history/...).
 *
 * It owns the evidence store (opened at cfg.evidence_dir) and the refresh
 * registry, and queues each suite through the service's job queue like any
 * /measure job (never cached, never joined to another job), so the GPU is
 * never shared. HTTP caching (ETag, Last-Modified, 304, Cache-Control) and
 * the error shape are done here; the store answers bytes and reasons.
 */
#ifndef DV_EVROUTES_H
#define DV_EVROUTES_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "server/http/service.h"

/* Cache-Control values: the latest views change nightly; a past night's
 * file never changes again (today's still may: a re-run). */
#define EVROUTES_CACHE_LATEST "public, max-age=300, stale-while-revalidate=3600"
#define EVROUTES_CACHE_IMMUTABLE "public, max-age=31536000, immutable"
#define EVROUTES_CACHE_MISSING "public, max-age=60"
#define EVROUTES_ETAG_LEN 40

struct evroutes;

/* Opens the store, makes the registry and adds the routes to s->http (before
 * http_start). Returns NULL with `err`. */
struct evroutes *evroutes_create(struct service *s, char *err);

/* GET /evidence/latest's body (malloc()ed), or NULL: what the metrics'
 * freshness gauge reads. `e` is a struct evroutes (void * for the metrics'
 * callback type). */
char *evroutes_index_json(void *e);

/* Waits until every refresh result reported so far is filed (the drain on
 * shutdown, after jobq_close and worker_stop). NULL ok. */
void evroutes_drain(struct evroutes *e);

/* Frees the registry (filing what is still queued) and closes the store.
 * Call once no job can end any more (after jobq_close and worker_stop).
 * NULL ok. */
void evroutes_free(struct evroutes *e);

/* The strong ETag of `len` bytes whose digest is `digest` into `out`
 * (EVROUTES_ETAG_LEN): "\"<16 hex>-<hex length>\"". */
void evroutes_etag(uint64_t digest, size_t len, char *out);

#endif /* DV_EVROUTES_H */
