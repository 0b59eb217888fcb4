/* report_sort.c -- the data-sort experiment's part of the document
 * (report_sort.h): written with the `_new` setters, NaN as null, read back
 * field by field, and drawn as a map of cells (M down, C across) in the
 * transcript and the Markdown.
 */
#include "api/report_sort.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/jsonout.h"
#include "kernels/base/status.h"

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *ci(const struct dv_ci *c, int *bad) {
    json_t *a = json_array();
    jsonout_append(a, num(c->lo), bad);
    jsonout_append(a, num(c->hi), bad);
    return a;
}

static const char *verdict_name(int v) { return v > 0 ? "pays" : v < 0 ? "costs" : "ambiguous"; }

static json_t *hist(const unsigned long long *h, int *bad) {
    json_t *a = json_array();
    for (unsigned i = 0; i <= 32; i++) jsonout_append(a, json_integer((json_int_t)h[i]), bad);
    return a;
}

static json_t *witness_json(const struct dv_sort_witness *w, int *bad) {
    if (!w->present) return json_null();
    json_t *o = json_object();
    jsonout_put(o, "warps", json_integer((json_int_t)w->warps), bad);
    jsonout_put(o, "k_mean", num(w->k_mean), bad);
    jsonout_put(o, "k_hist", hist(w->k_hist, bad), bad);
    jsonout_put(o, "lane_hist", hist(w->lane_hist, bad), bad);
    jsonout_put(o, "agrees", json_boolean(w->agrees), bad);
    jsonout_put(o, "first_difference", w->first_difference < 0 ? json_null() : json_integer(w->first_difference), bad);
    return o;
}

static json_t *cell_json(const struct dv_sort_cell *c, int *bad) {
    json_t *o = json_object(), *w = json_object();
    jsonout_put(o, "distribution", json_string(c->distribution), bad);
    jsonout_put(o, "m", json_integer(c->m), bad);
    jsonout_put(o, "c", json_integer(c->c), bad);
    jsonout_put(o, "table", json_integer(c->table), bad);
    jsonout_put(o, "measured", json_boolean(c->measured), bad);
    jsonout_put(o, "ratio", num(c->ratio), bad);
    jsonout_put(o, "ratio_ci", ci(&c->ratio_ci, bad), bad);
    jsonout_put(o, "ratio_level", num(c->ratio_level), bad);
    jsonout_put(o, "verdict", c->measured ? json_string(verdict_name(c->verdict)) : json_null(), bad);
    jsonout_put(o, "ambiguous", json_boolean(c->measured && c->verdict == 0), bad);
    jsonout_put(o, "index_ratio", num(c->index_ratio), bad);
    jsonout_put(o, "sort_ms", num(c->sort_ms), bad);
    jsonout_put(o, "sort_ci_ms", ci(&c->sort_ci, bad), bad);
    jsonout_put(o, "sort_inside_ms", num(c->sort_inside_ms), bad);
    jsonout_put(o, "sort_inside_ci_ms", ci(&c->sort_inside_ci, bad), bad);
    jsonout_put(o, "sort_inside_ratio", num(c->sort_inside_ratio), bad);
    jsonout_put(o, "sort_inside_ratio_ci", ci(&c->sort_inside_ratio_ci, bad), bad);
    jsonout_put(o, "sort_agrees", c->measured ? json_boolean(c->sort_agrees) : json_null(), bad);
    jsonout_put(o, "k_naive", num(c->k_naive), bad);
    jsonout_put(o, "k_sorted", num(c->k_sorted), bad);
    jsonout_put(w, "naive", witness_json(&c->naive, bad), bad);
    jsonout_put(w, "sorted", witness_json(&c->sorted, bad), bad);
    jsonout_put(o, "witness", w, bad);
    return o;
}

json_t *report_sort_json(const struct dv_sort *s) {
    int bad = 0;
    json_t *o = json_object(), *cells = json_array(), *cross = json_array();
    for (unsigned i = 0; i < s->ncells && i < DV_MAX_TABLES; i++)
        jsonout_append(cells, cell_json(&s->cells[i], &bad), &bad);
    for (unsigned i = 0; i < s->ncross && i < DV_MAX_TABLES; i++) {
        const struct dv_sort_crossover *x = &s->cross[i];
        json_t *e = json_object();
        jsonout_put(e, "distribution", json_string(x->distribution), &bad);
        jsonout_put(e, "m", json_integer(x->m), &bad);
        jsonout_put(e, "c", x->c ? json_integer(x->c) : json_null(), &bad);
        jsonout_put(e, "ambiguous", json_integer(x->ambiguous), &bad);
        jsonout_append(cross, e, &bad);
    }
    jsonout_put(o, "ratio", json_string("naive / (sort+shade)"), &bad);
    jsonout_put(o, "cells", cells, &bad);
    jsonout_put(o, "crossover", cross, &bad);
    jsonout_put(o, "sentence", json_string(s->sentence), &bad);
    if (!bad) return o;
    json_decref(o);
    return NULL;
}

/* ---- reading back ------------------------------------------------------------ */

struct rd {
    char *err;
    int failed;
    char path[64];
};

static const json_t *field(struct rd *rd, const json_t *o, const char *key, int (*is)(const json_t *), const char *want,
                           int nullable) {
    const json_t *v = json_object_get(o, key);
    if (rd->failed) return NULL;
    if (nullable && (!v || json_is_null(v))) return NULL;
    if (!v || !is(v)) {
        dv_seterr(rd->err, "%s.%s: expected %s", rd->path, key, want);
        rd->failed = 1;
        return NULL;
    }
    return v;
}
static int is_num(const json_t *v) { return json_is_number(v); }
static int is_int(const json_t *v) { return json_is_integer(v) && json_integer_value(v) >= 0; }
static int is_bool(const json_t *v) { return json_is_boolean(v); }
static int is_str(const json_t *v) { return json_is_string(v); }
static int is_arr(const json_t *v) { return json_is_array(v); }
static int is_obj(const json_t *v) { return json_is_object(v); }

static double get_num(struct rd *rd, const json_t *o, const char *key) {
    const json_t *v = field(rd, o, key, is_num, "a number or null", 1);
    return v ? json_number_value(v) : NAN;
}
static unsigned long long get_uint(struct rd *rd, const json_t *o, const char *key) {
    const json_t *v = field(rd, o, key, is_int, "a non-negative integer", 0);
    return v ? (unsigned long long)json_integer_value(v) : 0;
}
static int get_bool(struct rd *rd, const json_t *o, const char *key) {
    const json_t *v = field(rd, o, key, is_bool, "true or false", 1);
    return v ? json_is_true(v) : 0;
}
static void get_ci(struct rd *rd, const json_t *o, const char *key, struct dv_ci *c) {
    const json_t *v = field(rd, o, key, is_arr, "[lo, hi]", 0);
    c->lo = c->hi = NAN;
    if (!v) return;
    if (json_array_size(v) != 2) {
        dv_seterr(rd->err, "%s.%s: expected [lo, hi]", rd->path, key);
        rd->failed = 1;
        return;
    }
    const json_t *lo = json_array_get(v, 0), *hi = json_array_get(v, 1);
    c->lo = json_is_number(lo) ? json_number_value(lo) : NAN;
    c->hi = json_is_number(hi) ? json_number_value(hi) : NAN;
}
static void get_hist(struct rd *rd, const json_t *o, const char *key, unsigned long long *h) {
    const json_t *v = field(rd, o, key, is_arr, "an array of 33 counts", 0);
    if (!v) return;
    if (json_array_size(v) != 33) {
        dv_seterr(rd->err, "%s.%s: expected an array of 33 counts", rd->path, key);
        rd->failed = 1;
        return;
    }
    for (unsigned i = 0; i <= 32; i++) {
        const json_t *e = json_array_get(v, i);
        h[i] = is_int(e) ? (unsigned long long)json_integer_value(e) : 0;
    }
}
static void get_text(struct rd *rd, const json_t *o, const char *key, char *dst, size_t size) {
    const json_t *v = field(rd, o, key, is_str, "a string", 0);
    if (v && json_string_length(v) >= size) {
        dv_seterr(rd->err, "%s.%s: longer than %zu characters", rd->path, key, size - 1);
        rd->failed = 1;
    } else if (v) memcpy(dst, json_string_value(v), json_string_length(v) + 1);
}

static void witness_parse(struct rd *rd, const json_t *o, const char *key, struct dv_sort_witness *w) {
    const json_t *v = field(rd, o, key, is_obj, "an object or null", 1);
    w->first_difference = -1;
    if (!v) return;
    w->present = 1;
    w->warps = get_uint(rd, v, "warps");
    w->k_mean = get_num(rd, v, "k_mean");
    get_hist(rd, v, "k_hist", w->k_hist);
    get_hist(rd, v, "lane_hist", w->lane_hist);
    w->agrees = get_bool(rd, v, "agrees");
    const json_t *d = json_object_get(v, "first_difference");
    w->first_difference = json_is_integer(d) ? (long long)json_integer_value(d) : -1;
}

static void cell_parse(struct rd *rd, const json_t *o, struct dv_sort_cell *c) {
    get_text(rd, o, "distribution", c->distribution, sizeof c->distribution);
    c->m = (unsigned)get_uint(rd, o, "m");
    c->c = (unsigned)get_uint(rd, o, "c");
    c->table = (int)get_uint(rd, o, "table");
    c->measured = get_bool(rd, o, "measured");
    c->ratio = get_num(rd, o, "ratio");
    get_ci(rd, o, "ratio_ci", &c->ratio_ci);
    c->ratio_level = get_num(rd, o, "ratio_level");
    const json_t *v = json_object_get(o, "verdict");
    c->verdict = json_is_string(v) ? (strcmp(json_string_value(v), "pays") == 0    ? 1
                                      : strcmp(json_string_value(v), "costs") == 0 ? -1
                                                                                   : 0)
                                   : 0;
    c->index_ratio = get_num(rd, o, "index_ratio");
    c->sort_ms = get_num(rd, o, "sort_ms");
    get_ci(rd, o, "sort_ci_ms", &c->sort_ci);
    c->sort_inside_ms = get_num(rd, o, "sort_inside_ms");
    get_ci(rd, o, "sort_inside_ci_ms", &c->sort_inside_ci);
    /* inside / alone paired by round: not in documents from before it */
    c->sort_inside_ratio = get_num(rd, o, "sort_inside_ratio");
    c->sort_inside_ratio_ci.lo = c->sort_inside_ratio_ci.hi = NAN;
    if (json_object_get(o, "sort_inside_ratio_ci")) get_ci(rd, o, "sort_inside_ratio_ci", &c->sort_inside_ratio_ci);
    c->sort_agrees = get_bool(rd, o, "sort_agrees");
    c->k_naive = get_num(rd, o, "k_naive");
    c->k_sorted = get_num(rd, o, "k_sorted");
    const json_t *w = field(rd, o, "witness", is_obj, "an object", 0);
    if (w) {
        witness_parse(rd, w, "naive", &c->naive);
        witness_parse(rd, w, "sorted", &c->sorted);
    }
}

int report_sort_parse(const json_t *o, struct dv_sort *s, char *err) {
    struct rd rd = {err, 0, "sort"};
    memset(s, 0, sizeof *s);
    if (!json_is_object(o)) {
        dv_seterr(err, "sort: expected an object");
        return -1;
    }
    s->present = 1;
    const json_t *cells = field(&rd, o, "cells", is_arr, "an array", 0);
    const json_t *cross = field(&rd, o, "crossover", is_arr, "an array", 0);
    if ((cells && json_array_size(cells) > DV_MAX_TABLES) || (cross && json_array_size(cross) > DV_MAX_TABLES)) {
        dv_seterr(err, "sort: at most %d cells and crossovers", DV_MAX_TABLES);
        return -1;
    }
    for (size_t i = 0; cells && i < json_array_size(cells) && !rd.failed; i++) {
        snprintf(rd.path, sizeof rd.path, "sort.cells[%zu]", i);
        const json_t *c = json_array_get(cells, i);
        if (!json_is_object(c)) {
            dv_seterr(err, "%s: expected an object", rd.path);
            return -1;
        }
        cell_parse(&rd, c, &s->cells[i]);
        s->ncells = (unsigned)i + 1;
    }
    for (size_t i = 0; cross && i < json_array_size(cross) && !rd.failed; i++) {
        snprintf(rd.path, sizeof rd.path, "sort.crossover[%zu]", i);
        const json_t *c = json_array_get(cross, i);
        struct dv_sort_crossover *x = &s->cross[i];
        if (!json_is_object(c)) {
            dv_seterr(err, "%s: expected an object", rd.path);
            return -1;
        }
        get_text(&rd, c, "distribution", x->distribution, sizeof x->distribution);
        x->m = (unsigned)get_uint(&rd, c, "m");
        const json_t *cv = json_object_get(c, "c");
        x->c = is_int(cv) ? (unsigned)json_integer_value(cv) : 0;
        x->ambiguous = (unsigned)get_uint(&rd, c, "ambiguous");
        s->ncross = (unsigned)i + 1;
    }
    snprintf(rd.path, sizeof rd.path, "sort");
    get_text(&rd, o, "sentence", s->sentence, sizeof s->sentence);
    return rd.failed ? -1 : 0;
}

/* ---- text ---------------------------------------------------------------------- */

/* The cell of (d, m, c), NULL when the grid has none. */
static const struct dv_sort_cell *find(const struct dv_sort *s, const char *d, unsigned m, unsigned c) {
    for (unsigned i = 0; i < s->ncells; i++)
        if (s->cells[i].m == m && s->cells[i].c == c && strcmp(s->cells[i].distribution, d) == 0) return &s->cells[i];
    return NULL;
}

static void map_lines(struct strbuf *b, const struct dv_sort *s, const char *d) {
    unsigned cs[DV_MAX_TABLES], nc = 0;
    for (unsigned i = 0; i < s->ncells; i++) {
        const struct dv_sort_cell *x = &s->cells[i];
        int have = strcmp(x->distribution, d) != 0;
        for (unsigned k = 0; k < nc && !have; k++) have = cs[k] == x->c;
        if (!have) cs[nc++] = x->c;
    }
    strbuf_printf(b, "\n  %s: M \\ C", d);
    for (unsigned k = 0; k < nc; k++) strbuf_printf(b, " %22u", cs[k]);
    strbuf_printf(b, "   crossover\n");
    for (unsigned j = 0; j < s->ncross; j++) {
        const struct dv_sort_crossover *x = &s->cross[j];
        if (strcmp(x->distribution, d) != 0) continue;
        strbuf_printf(b, "  %*u", (int)strlen(d) + 7, x->m);
        int measured = 0;
        for (unsigned k = 0; k < nc; k++) {
            const struct dv_sort_cell *c = find(s, d, x->m, cs[k]);
            char cell[64] = "-";
            if (c && c->measured)
                snprintf(cell, sizeof cell, "%.3f [%.3f, %.3f]%s", c->ratio, c->ratio_ci.lo, c->ratio_ci.hi,
                         c->verdict == 0  ? "?"
                         : c->verdict > 0 ? "+"
                                          : " ");
            measured |= c && c->measured;
            strbuf_printf(b, " %22s", cell);
        }
        if (!measured) strbuf_printf(b, "   -\n");
        else if (x->c) strbuf_printf(b, "   C = %u\n", x->c);
        else strbuf_printf(b, "   none\n");
    }
}

void report_sort_text(struct strbuf *b, const struct dv_report *r) {
    const struct dv_sort *s = &r->sort;
    if (!s->present || !s->ncells) return;
    strbuf_printf(b,
                  "\ndata-sort: naive / (sort+shade) per cell with its interval (+ sorting pays, ? ambiguous: the "
                  "interval straddles 1); crossover: the smallest C from which sorting pays.\n");
    for (unsigned i = 0; i < s->ncells; i++) {
        int seen = 0;
        for (unsigned k = 0; k < i && !seen; k++)
            seen = strcmp(s->cells[k].distribution, s->cells[i].distribution) == 0;
        if (!seen) map_lines(b, s, s->cells[i].distribution);
    }
    for (unsigned i = 0; i < s->ncells; i++) {
        const struct dv_sort_cell *c = &s->cells[i];
        if (!c->naive.present || !c->sorted.present) continue;
        strbuf_printf(b,
                      "\n  %s M=%u C=%u: k a warp naive %.2f (witness) / %.2f (model), sorted %.2f; witness %s; "
                      "the sort row %.4f ms; the sort inside sort+shade %.4f ms, %.3f [%.3f, %.3f] times the sort "
                      "alone timed beside it in the same rounds (%s)",
                      c->distribution, c->m, c->c, c->naive.k_mean, c->k_naive, c->sorted.k_mean,
                      c->naive.agrees && c->sorted.agrees ? "equals the CPU count" : "DIFFERS from the CPU count",
                      c->sort_ms, c->sort_inside_ms, c->sort_inside_ratio, c->sort_inside_ratio_ci.lo,
                      c->sort_inside_ratio_ci.hi, c->sort_agrees ? "the same" : "NOT the same");
    }
    strbuf_printf(b, "\n  %s\n", s->sentence);
}
