/* router.c -- see router.h.
 *
 * A table of at most ROUTER_MAX_ROUTES, searched in full per request: the
 * best path first (an exact pattern over any prefix, a longer prefix over a
 * shorter one), then, among the routes of that pattern, the method; the
 * methods of that pattern make the Allow list on the way.
 */
#include "server/http/router.h"

#include <stdio.h>
#include <string.h>

#include "kernels/base/status.h"

int router_add(struct router *rt, const char *method, const char *pattern, const char *label, unsigned flags,
               int prefix, router_fn fn, void *ctx, char *err) {
    if (rt->n == ROUTER_MAX_ROUTES || strlen(method) >= sizeof rt->routes[0].method ||
        strlen(pattern) >= sizeof rt->routes[0].pattern) {
        dv_seterr(err, "http: cannot add route %s %s: table full or names too long", method, pattern);
        return -1;
    }
    struct route *r = &rt->routes[rt->n++];
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->pattern, sizeof r->pattern, "%s", pattern);
    snprintf(r->label, sizeof r->label, "%s", label ? label : pattern);
    r->flags = flags;
    r->prefix = prefix != 0;
    r->fn = fn;
    r->ctx = ctx;
    return 0;
}

static int path_matches(const struct route *r, const char *path) {
    if (r->prefix) return strncmp(path, r->pattern, strlen(r->pattern)) == 0;
    return strcmp(path, r->pattern) == 0;
}

/* The pattern of the best route for `path` (exact > longest prefix), or
 * NULL; whether it is a prefix into *prefix. */
static const char *best_pattern(const struct router *rt, const char *path, int *prefix) {
    const char *best = NULL;
    size_t best_len = 0;
    int best_exact = 0;
    for (unsigned i = 0; i < rt->n; i++) {
        const struct route *r = &rt->routes[i];
        if (!path_matches(r, path)) continue;
        int exact = !r->prefix;
        size_t l = strlen(r->pattern);
        if (!best || (exact && !best_exact) || (exact == best_exact && l > best_len)) {
            best = r->pattern;
            *prefix = r->prefix;
            best_exact = exact;
            best_len = l;
        }
    }
    return best;
}

const struct route *router_match(const struct router *rt, const char *method, const char *path, int *path_known,
                                 char *allow, size_t alen) {
    const struct route *best = NULL;
    int prefix = 0;
    *path_known = 0;
    allow[0] = '\0';
    const char *pattern = best_pattern(rt, path, &prefix);
    if (!pattern) return NULL;
    *path_known = 1;
    const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
    for (unsigned i = 0; i < rt->n; i++) {
        const struct route *r = &rt->routes[i];
        if (strcmp(r->pattern, pattern) != 0 || r->prefix != prefix) continue;
        if (!strstr(allow, r->method)) {
            size_t n = strlen(allow);
            snprintf(allow + n, alen - n, "%s%s", n ? ", " : "", r->method);
            if (strcmp(r->method, "GET") == 0) {
                n = strlen(allow);
                snprintf(allow + n, alen - n, ", HEAD");
            }
        }
        if (strcmp(r->method, m) == 0) best = r;
    }
    size_t n = strlen(allow);
    snprintf(allow + n, alen - n, ", OPTIONS");
    return best;
}

const char *router_tail(const struct route *route, const char *path) {
    if (!route || !route->prefix) return "";
    return path + strlen(route->pattern);
}
