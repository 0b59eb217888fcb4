/* router.h -- the HTTP front's route table: (method, pattern) to a handler,
 * and the match of a request's method and path against it (http.h says
 * the rules: exact patterns win over prefixes, longer prefixes over
 * shorter ones; HEAD is GET's; OPTIONS is every path's).
 *
 * Owner: struct http (http.c), which embeds it. Lock: none. Routes are
 * added before the daemon starts (http_route_add() refuses later ones), so
 * once requests come the table only is read, by any daemon thread.
 */
#ifndef DV_ROUTER_H
#define DV_ROUTER_H

#include <stddef.h>

#define ROUTER_MAX_ROUTES 64

struct http_req;

/* http.h's http_handler_fn (this part reads no request). */
typedef void (*router_fn)(struct http_req *r, void *ctx);

struct route {
    char method[8];
    char pattern[128];
    char label[64]; /* what metrics call it ("/jobs/{id}")            */
    unsigned flags; /* http.h's HTTP_ROUTE_*, for the checks there    */
    int prefix;     /* `pattern` is a prefix of the paths it takes    */
    router_fn fn;
    void *ctx;
};

struct router {
    struct route routes[ROUTER_MAX_ROUTES];
    unsigned n;
};

/* Adds a route (`label` NULL: the pattern). Returns 0, or -1 with `err`
 * when the table is full or a name too long. */
int router_add(struct router *rt, const char *method, const char *pattern, const char *label, unsigned flags,
               int prefix, router_fn fn, void *ctx, char *err);

/* The route for (method, path), or NULL. `*path_known` is 1 when some route
 * has this path, whatever its method; `allow` (`alen` bytes) lists their
 * methods ("GET, HEAD, POST, OPTIONS"), for a 405's Allow and a preflight. */
const struct route *router_match(const struct router *rt, const char *method, const char *path, int *path_known,
                                 char *allow, size_t alen);

/* What follows the route's prefix in `path` ("" for an exact route). */
const char *router_tail(const struct route *route, const char *path);

#endif /* DV_ROUTER_H */
