/* evroutes.h -- the evidence routes of the service: GET /suites, POST
 * /evidence/refresh, GET /evidence/refresh/{id} and the evidence store's
 * GETs (/evidence/latest..., /evidence/{date}/{suite}, /evidence/history/...).
 *
 * It owns the evidence store (opened at cfg.evidence_dir) and the refresh
 * registry, and queues each suite through the service's job queue like any
 * /measure job (never cached, never joined to another job), so the GPU is
 * never shared.
 */
#ifndef DV_EVROUTES_H
#define DV_EVROUTES_H

#include "http/service.h"

struct evroutes;

/* Opens the store, makes the registry and adds the routes to s->http (before
 * http_start). Returns NULL with `err`. */
struct evroutes *evroutes_create(struct service *s, char *err);

/* GET /evidence/latest's body (malloc()ed), or NULL: what the metrics'
 * freshness gauge reads. `e` is a struct evroutes (void * for the metrics'
 * callback type). */
char *evroutes_index_json(void *e);

/* Frees the registry and closes the store. Call once no job can end any
 * more (after jobq_close and worker_stop). NULL ok. */
void evroutes_free(struct evroutes *e);

#endif /* DV_EVROUTES_H */
