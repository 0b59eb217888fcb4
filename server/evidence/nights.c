/* nights.c -- each night's ratios against the nights before it (nights.h).
 *
 * Everything is read from the records' own JSON: the summary's rows (their
 * ratio and ratio_ci), the document's device and build, the provenance. A
 * row is matched by table id and row name, so a suite whose rows are
 * reordered still compares row with row; the intervals go to
 * kernels/model/stats/compare.h, which decides the labels. Every object is built
 * with jsonout_put() and dropped whole when a member did not go in.
 */
#include "server/evidence/nights.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/jsonout.h"
#include "kernels/model/stats/compare.h"

static const char *jstr(json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }

static double jnum(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A row's ratio and its interval from a summary row; 0 when it has none. */
static int row_interval(json_t *row, struct interval *out) {
    json_t *ci = json_object_get(row, "ratio_ci");
    out->point = jnum(row, "ratio");
    out->lo = jnum(ci, "lo");
    out->hi = jnum(ci, "hi");
    out->level = jnum(row, "ratio_level");
    if (!isfinite(out->level)) out->level = INTERVAL_LEVEL;
    return isfinite(out->point) && isfinite(out->lo) && isfinite(out->hi) && out->lo > 0 && out->lo <= out->point &&
           out->point <= out->hi;
}

/* Row `name` of table `table` in record `rec`'s summary, or NULL. */
static json_t *find_row(json_t *rec, const char *table, const char *name) {
    json_t *tables = json_object_get(json_object_get(rec, "summary"), "tables"), *t, *r;
    size_t i, k;
    json_array_foreach(tables, i, t) {
        const char *id = jstr(t, "id");
        if (!id || strcmp(id, table) != 0) continue;
        json_array_foreach(json_object_get(t, "rows"), k, r) {
            const char *n = jstr(r, "name");
            if (n && strcmp(n, name) == 0) return r;
        }
    }
    return NULL;
}

static json_t *ci_json(double lo, double hi, int *bad) {
    json_t *o = json_object();
    jsonout_put(o, "lo", jsonout_num(lo), bad);
    jsonout_put(o, "hi", jsonout_num(hi), bad);
    return o;
}

/* {"label", "change", "change_ci"} of one comparison (the caller adds what
 * its kind of reference needs). */
static json_t *change_json(const struct compare *c, int *bad) {
    json_t *o = json_object();
    jsonout_put(o, "label", jsonout_str(compare_label_name(c->label)), bad);
    jsonout_put(o, "change", jsonout_num(c->change.point), bad);
    jsonout_put(o, "change_ci", ci_json(c->change.lo, c->change.hi, bad), bad);
    return o;
}

/* "part1 lane-half higher by 4.8% [4.2, 5.3]" (a change's magnitude for
 * higher and lower, signed otherwise) appended to buf. */
static void describe(char *buf, size_t len, const char *table, const char *name, const struct compare *c) {
    size_t n = strlen(buf);
    if (n >= len) return;
    const double p = 100 * c->change.point, lo = 100 * c->change.lo, hi = 100 * c->change.hi;
    if (c->label == COMPARE_HIGHER)
        snprintf(buf + n, len - n, "%s %s higher by %.1f%% [%.1f, %.1f]", table, name, p, lo, hi);
    else if (c->label == COMPARE_LOWER)
        snprintf(buf + n, len - n, "%s %s lower by %.1f%% [%.1f, %.1f]", table, name, -p, -hi, -lo);
    else snprintf(buf + n, len - n, "%s %s %+.1f%% [%+.1f, %+.1f]", table, name, p, lo, hi);
}

/* One field of the nights' environment, when both nights name it and they
 * differ. */
static void env_text(json_t *list, const char *what, const char *before, const char *after, int *bad) {
    if (!before || !after || strcmp(before, after) == 0) return;
    json_t *e = json_object();
    jsonout_put(e, "what", jsonout_str(what), bad);
    jsonout_put(e, "before", jsonout_str(before), bad);
    jsonout_put(e, "after", jsonout_str(after), bad);
    jsonout_append(list, e, bad);
}

static void env_clock(json_t *list, const char *what, double before, double after, double share, int *bad) {
    if (!(before > 0) || !(after > 0) || fabs(after / before - 1) <= share) return;
    char b[32], a[32];
    snprintf(b, sizeof b, "%.0f MHz", before);
    snprintf(a, sizeof a, "%.0f MHz", after);
    env_text(list, what, b, a, bad);
}

/* What changed between the previous night and this one that can move a
 * ratio. */
static json_t *environment(json_t *prev, json_t *night, int *bad) {
    json_t *list = json_array();
    json_t *pd = json_object_get(prev, "document"), *nd = json_object_get(night, "document");
    json_t *pdev = json_object_get(pd, "device"), *ndev = json_object_get(nd, "device");
    json_t *pb = json_object_get(pd, "build"), *nb = json_object_get(nd, "build");
    json_t *pp = json_object_get(prev, "provenance"), *np = json_object_get(night, "provenance");
    env_text(list, "GPU", jstr(pdev, "name"), jstr(ndev, "name"), bad);
    env_text(list, "driver", jstr(pdev, "nvidia_driver_version"), jstr(ndev, "nvidia_driver_version"), bad);
    env_text(list, "CUDA driver", jstr(pdev, "driver_version"), jstr(ndev, "driver_version"), bad);
    env_text(list, "CUDA runtime", jstr(pdev, "runtime_version"), jstr(ndev, "runtime_version"), bad);
    env_text(list, "nvcc", jstr(pb, "nvcc_version"), jstr(nb, "nvcc_version"), bad);
    env_text(list, "build revision", jstr(pp, "git_revision"), jstr(np, "git_revision"), bad);
    env_text(list, "server version", jstr(pp, "server_version"), jstr(np, "server_version"), bad);
    env_clock(list, "SM clock", jnum(pdev, "measured_sm_clock_mhz"), jnum(ndev, "measured_sm_clock_mhz"),
              NIGHTS_CLOCK_CHANGE, bad);
    env_clock(list, "rated SM clock", jnum(pdev, "rated_sm_clock_mhz"), jnum(ndev, "rated_sm_clock_mhz"), 0, bad);
    return list;
}

struct tally {
    unsigned n[COMPARE_AMBIGUOUS + 1];
    unsigned not_compared;
    char changed[1024], ambiguous[512];
};

/* One row of the night against the previous night and the history; adds
 * its entry to `rows` and its label to `t`. */
static void compare_row(json_t *night_row, const char *table, json_t *const *older, size_t n, double tolerance,
                        json_t *rows, struct tally *t, int *bad) {
    const char *name = jstr(night_row, "name");
    struct interval after;
    const int have = name && row_interval(night_row, &after);
    json_t *e = json_object();
    jsonout_put(e, "table", jsonout_str(table), bad);
    jsonout_put(e, "name", jsonout_str(name ? name : ""), bad);
    jsonout_put(e, "label", jsonout_str(jstr(night_row, "label") ? jstr(night_row, "label") : ""), bad);
    jsonout_put(e, "ratio", jsonout_num(jnum(night_row, "ratio")), bad);
    jsonout_put(e, "ratio_ci", have ? ci_json(after.lo, after.hi, bad) : json_null(), bad);

    struct interval before, past[NIGHTS_HISTORY];
    unsigned k = 0;
    json_t *prev = NULL;
    if (have && n > 0 && row_interval(find_row(older[0], table, name), &before)) {
        struct compare c;
        if (compare_pair(&before, &after, tolerance, &c, NULL) == 0) {
            prev = change_json(&c, bad);
            jsonout_put(prev, "ratio", jsonout_num(before.point), bad);
            t->n[c.label]++;
            char *list = c.label == COMPARE_AMBIGUOUS ? t->ambiguous : t->changed;
            const size_t size = c.label == COMPARE_AMBIGUOUS ? sizeof t->ambiguous : sizeof t->changed;
            if (c.label != COMPARE_SAME) {
                if (list[0] && strlen(list) + 2 < size) strcat(list, ", ");
                describe(list, size, table, name, &c);
            }
        }
    }
    if (!prev) t->not_compared++;
    jsonout_put(e, "previous", prev ? prev : json_null(), bad);

    for (size_t i = 0; have && i < n && k < NIGHTS_HISTORY; i++) {
        json_t *r = find_row(older[i], table, name);
        if (r && row_interval(r, &past[k])) k++;
    }
    json_t *hist = NULL;
    double scratch[NIGHTS_HISTORY];
    struct compare h;
    if (k > 0 && compare_history(past, k, &after, tolerance, scratch, &h, NULL) == 0) {
        hist = change_json(&h, bad);
        jsonout_put(hist, "nights", json_integer(k), bad);
        jsonout_put(hist, "median", jsonout_num(h.reference.point), bad);
    }
    jsonout_put(e, "history", hist ? hist : json_null(), bad);
    jsonout_append(rows, e, bad);
}

/* The line for people: unchanged since when, or what changed; then what
 * changed around the numbers. */
static json_t *summary_text(const struct tally *t, const char *prev_date, const char *since, double tolerance,
                            json_t *env, int *bad) {
    char buf[2048];
    const unsigned compared = t->n[COMPARE_SAME] + t->n[COMPARE_HIGHER] + t->n[COMPARE_LOWER] + t->n[COMPARE_AMBIGUOUS];
    const unsigned changed = t->n[COMPARE_HIGHER] + t->n[COMPARE_LOWER];
    if (!prev_date) snprintf(buf, sizeof buf, "no earlier good night to compare with");
    else if (compared == 0)
        snprintf(buf, sizeof buf, "no ratio with an interval on both nights to compare with %s", prev_date);
    else if (since)
        snprintf(buf, sizeof buf, "unchanged since %s (%u ratios the same within %.1f%%)", since, compared,
                 100 * tolerance);
    else if (changed)
        snprintf(buf, sizeof buf, "%u of %u ratios changed since %s: %s", changed, compared, prev_date, t->changed);
    else snprintf(buf, sizeof buf, "no ratio changed by more than %.1f%% since %s", 100 * tolerance, prev_date);
    size_t n = strlen(buf);
    if (prev_date && t->n[COMPARE_AMBIGUOUS] && n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, "; %u ambiguous: %s", t->n[COMPARE_AMBIGUOUS], t->ambiguous);
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e) {
        n = strlen(buf);
        if (n >= sizeof buf) break;
        snprintf(buf + n, sizeof buf - n, "; %s %s -> %s", jstr(e, "what"), jstr(e, "before"), jstr(e, "after"));
    }
    return jsonout_str(buf);
}

static unsigned tally_compared(const struct tally *t) {
    return t->n[COMPARE_SAME] + t->n[COMPARE_HIGHER] + t->n[COMPARE_LOWER] + t->n[COMPARE_AMBIGUOUS];
}

/* Table `id`'s entry of the comparison: since when its ratios are all the
 * same ("unchanged_since", as the night's but for this table alone, so a
 * table of a suite is not said changed when another table moved), how many
 * were compared and how many changed. `before` and `after` are the tally
 * before and after its rows; `prev` the previous night (NULL: none). */
static json_t *table_entry(const char *id, const struct tally *before, const struct tally *after, json_t *prev,
                           int *bad) {
    const unsigned compared = tally_compared(after) - tally_compared(before);
    const unsigned same = after->n[COMPARE_SAME] - before->n[COMPARE_SAME];
    const unsigned changed =
        after->n[COMPARE_HIGHER] + after->n[COMPARE_LOWER] - before->n[COMPARE_HIGHER] - before->n[COMPARE_LOWER];
    const char *prev_date = prev ? jstr(prev, "date") : NULL, *since = NULL;
    if (prev_date && compared > 0 && same == compared && after->not_compared == before->not_compared) {
        json_t *pt, *ptables = json_object_get(json_object_get(prev, "comparison"), "tables");
        size_t i;
        since = prev_date;
        json_array_foreach(ptables, i, pt) {
            const char *pid = jstr(pt, "id");
            if (pid && strcmp(pid, id) == 0 && jstr(pt, "unchanged_since")) since = jstr(pt, "unchanged_since");
        }
    }
    json_t *e = json_object();
    jsonout_put(e, "id", jsonout_str(id), bad);
    jsonout_put(e, "unchanged_since", jsonout_str_or_null(since), bad);
    jsonout_put(e, "compared", json_integer(compared), bad);
    jsonout_put(e, "changed", json_integer(changed), bad);
    return e;
}

json_t *nights_compare(json_t *night, json_t *const *older, size_t n, double tolerance, int *bad) {
    struct tally t;
    memset(&t, 0, sizeof t);
    json_t *out = json_object(), *rows = json_array(), *per_table = json_array();
    json_t *tables = json_object_get(json_object_get(night, "summary"), "tables"), *tb, *row;
    json_t *prev = n > 0 ? older[0] : NULL;
    size_t i, k;
    json_array_foreach(tables, i, tb) {
        const char *id = jstr(tb, "id");
        json_t *base = json_object_get(tb, "baseline_row");
        const struct tally before = t;
        json_array_foreach(json_object_get(tb, "rows"), k, row) {
            if (json_is_integer(base) && (json_int_t)k == json_integer_value(base)) continue; /* 1 by definition */
            compare_row(row, id ? id : "", older, n, tolerance, rows, &t, bad);
        }
        jsonout_append(per_table, table_entry(id ? id : "", &before, &t, prev, bad), bad);
    }
    const char *prev_date = prev ? jstr(prev, "date") : NULL;
    const unsigned compared = tally_compared(&t);
    /* Unchanged: every row compared and the same; since the start of the
     * previous night's own run of unchanged nights. */
    const char *since = NULL;
    if (prev_date && compared > 0 && compared == t.n[COMPARE_SAME] && t.not_compared == 0) {
        const char *before = jstr(json_object_get(prev, "comparison"), "unchanged_since");
        since = before ? before : prev_date;
    }
    json_t *env = prev ? environment(prev, night, bad) : json_array();

    jsonout_put(out, "tolerance", jsonout_num(tolerance), bad);
    if (prev) {
        json_t *p = json_object();
        jsonout_put(p, "date", jsonout_str_or_null(prev_date), bad);
        jsonout_put(p, "finished_utc", jsonout_str_or_null(jstr(json_object_get(prev, "provenance"), "finished_utc")),
                    bad);
        jsonout_put(out, "previous", p, bad);
    } else {
        jsonout_put(out, "previous", json_null(), bad);
    }
    jsonout_put(out, "history_nights", json_integer((json_int_t)(n < NIGHTS_HISTORY ? n : NIGHTS_HISTORY)), bad);
    jsonout_put(out, "unchanged_since", jsonout_str_or_null(since), bad);
    json_t *counts = json_object();
    for (int l = COMPARE_SAME; l <= COMPARE_AMBIGUOUS; l++)
        jsonout_put(counts, compare_label_name(l), json_integer(t.n[l]), bad);
    jsonout_put(counts, "not_compared", json_integer(t.not_compared), bad);
    jsonout_put(out, "counts", counts, bad);
    jsonout_put(out, "changed", json_integer(t.n[COMPARE_HIGHER] + t.n[COMPARE_LOWER]), bad);
    jsonout_put(out, "summary", summary_text(&t, prev_date, since, tolerance, env, bad), bad);
    jsonout_put(out, "environment", env, bad);
    jsonout_put(out, "tables", per_table, bad);
    jsonout_put(out, "rows", rows, bad);
    if (*bad) {
        json_decref(out);
        return NULL;
    }
    return out;
}

json_t *nights_brief(json_t *rec, int *bad) {
    json_t *c = json_object_get(rec, "comparison");
    if (!json_is_object(c)) return json_null();
    json_t *out = json_object(), *v;
    const char *key;
    json_object_foreach(c, key, v) {
        if (strcmp(key, "rows") != 0) jsonout_put(out, key, json_incref(v), bad);
    }
    return out;
}

json_t *nights_row(json_t *rec, const char *table, const char *name) {
    json_t *rows = json_object_get(json_object_get(rec, "comparison"), "rows"), *r;
    size_t i;
    json_array_foreach(rows, i, r) {
        const char *t = jstr(r, "table"), *n = jstr(r, "name");
        if (t && n && strcmp(t, table) == 0 && strcmp(n, name) == 0) {
            json_t *p = json_object_get(r, "previous");
            return json_is_object(p) ? p : NULL;
        }
    }
    return NULL;
}
