/* runest.c -- see runest.h.
 *
 * A small array searched linearly: the kinds a server sees are a few dozen
 * at most (tables x rows x testimony x profiles), and a lookup compares short
 * texts. Names are compared as cut to RUNEST_KIND_LEN - 1, the way they are
 * stored, so a long kind is still one kind.
 */
#include "server/jobs/runest.h"

#include <stdio.h>
#include <string.h>

void runest_init(struct runest *e, double default_s) {
    memset(e, 0, sizeof *e);
    e->default_s = default_s > 0 ? default_s : 1.0;
}

static const struct runest_kind *find(const struct runest *e, const char *kind) {
    if (!kind) kind = "";
    for (unsigned i = 0; i < e->n; i++)
        if (strncmp(e->kinds[i].name, kind, RUNEST_KIND_LEN - 1) == 0) return &e->kinds[i];
    return NULL;
}

double runest_get(const struct runest *e, const char *kind) {
    const struct runest_kind *k = find(e, kind);
    return k && (k->runs || k->seeded) ? k->run_s : e->default_s;
}

int runest_known(const struct runest *e, const char *kind) {
    const struct runest_kind *k = find(e, kind);
    return k && (k->runs || k->seeded);
}

unsigned long long runest_runs(const struct runest *e, const char *kind) {
    const struct runest_kind *k = find(e, kind);
    return k ? k->runs : 0;
}

/* The entry of `kind`, made (empty) when it has none: in a free place, or
 * in the place of the kind updated least recently. */
static struct runest_kind *slot(struct runest *e, const char *kind) {
    struct runest_kind *k = (struct runest_kind *)find(e, kind);
    if (k) return k;
    if (e->n < RUNEST_KINDS) {
        k = &e->kinds[e->n++];
    } else { /* the kind updated least recently makes room */
        k = &e->kinds[0];
        for (unsigned i = 1; i < e->n; i++)
            if (e->kinds[i].touched < k->touched) k = &e->kinds[i];
    }
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", kind ? kind : "");
    return k;
}

void runest_add(struct runest *e, const char *kind, double run_s) {
    if (!(run_s >= 0)) return;
    struct runest_kind *k = slot(e, kind);
    k->run_s = k->runs ? RUNEST_ALPHA * run_s + (1 - RUNEST_ALPHA) * k->run_s : run_s;
    k->runs++;
    k->seeded = 0;
    k->touched = ++e->clock;
}

int runest_seed(struct runest *e, const char *kind, double run_s) {
    if (!(run_s > 0) || run_s > 1e9) return 0; /* NaN and infinity too */
    const struct runest_kind *known = find(e, kind);
    if (known && known->runs) return 0;
    struct runest_kind *k = slot(e, kind);
    k->run_s = run_s;
    k->seeded = 1;
    k->touched = ++e->clock;
    return 1;
}
