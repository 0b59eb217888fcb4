/* report.c -- struct dv_report as the divergence.v1 document and as text.
 *
 * JSON: report_json() builds the document with jansson's `_new` setters, one
 * builder per level (device, build, config, table, row); any NULL along the
 * way makes the setter fail, which is remembered and turns into a NULL
 * result, so out of memory never yields half a document. Non-finite numbers
 * are written as null (JSON has no NaN); quantities that are unknown when 0
 * (clocks, the FMA floor, CUDA versions, the compute capability) are null too.
 * Reals are written with 15 significant digits: enough for any timing, and a
 * document read back and written again is byte for byte the same. When the
 * report is not measured (analyze) the timing fields are left out.
 *
 * report_parse() is the inverse: it reads every field report_json() writes,
 * ignores fields it does not know (newer writers may add some), leaves
 * missing ones zero, reads null as NaN where NaN is what was written as null,
 * and rejects wrong types and overlong strings with the path of the field.
 *
 * Text: the lesson's layout. The header lines, then per table a title, a
 * header row, a rule and the rows in fixed-width columns: the lesson's own
 * columns first, in the lesson's widths (so a lesson row is a prefix of ours),
 * then the extra ones (threads on A, predicted ratio, noise, floor fraction,
 * correctness check). Part 2 style tables (kernel rows) put time first, as
 * the lesson's second table does. Without timings the time columns go.
 * Scenario tables have their own columns (the model's ratio and efficiency
 * beside the measured ones, and their agreement) and footer. In every table
 * the label column is as wide as the longest label, so columns stay aligned.
 */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define REPORT_JSON_FLAGS JSON_REAL_PRECISION(15)

/* ------------------------------------------------------------------ JSON out */

/* A finite number, or null. */
static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }
/* A positive number, or null for "unknown" (0, negative or not finite). */
static json_t *pos(double v) { return isfinite(v) && v > 0 ? json_real(v) : json_null(); }
static json_t *integer(long long v) { return json_integer((json_int_t)v); }

/* CUDA's 13000 form as "13.0"; null when unknown. */
static json_t *cuda_version(int v) {
    char buf[24];
    if (v <= 0) return json_null();
    snprintf(buf, sizeof buf, "%d.%d", v / 1000, (v % 1000) / 10);
    return json_string(buf);
}

/* A C string as JSON; bytes that are not UTF-8 (a device name, say) become '?'
 * rather than failing the whole document. */
static json_t *text(const char *s, size_t size) {
    size_t n = 0;
    while (n < size && s[n]) n++;
    json_t *v = json_stringn(s, n);
    if (v) return v;
    char *copy = malloc(n + 1);
    if (!copy) return NULL;
    for (size_t i = 0; i < n; i++) copy[i] = (s[i] & 0x80) ? '?' : s[i];
    copy[n] = '\0';
    v = json_stringn(copy, n);
    free(copy);
    return v;
}
#define TEXT(field) text((field), sizeof(field))

/* Sets `key` on `obj` to `v` (stolen); remembers a failure in *bad. */
static void put(json_t *obj, const char *key, json_t *v, int *bad) {
    if (json_object_set_new(obj, key, v) != 0) *bad = 1;
}

static json_t *device_json(const struct dv_device *d, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    char cc[24];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    put(o, "present", json_boolean(d->present), bad);
    put(o, "ordinal", integer(d->ordinal), bad);
    put(o, "name", TEXT(d->name), bad);
    put(o, "compute_capability", d->cc_major > 0 ? json_string(cc) : json_null(), bad);
    put(o, "cc_major", integer(d->cc_major), bad);
    put(o, "cc_minor", integer(d->cc_minor), bad);
    put(o, "sm_count", integer(d->sm_count), bad);
    put(o, "warp_size", integer(d->warp_size), bad);
    put(o, "driver_version", cuda_version(d->driver_version), bad);
    put(o, "driver_version_raw", integer(d->driver_version), bad);
    put(o, "runtime_version", cuda_version(d->runtime_version), bad);
    put(o, "runtime_version_raw", integer(d->runtime_version), bad);
    put(o, "rated_sm_clock_mhz", pos(d->rated_sm_clock_mhz), bad);
    put(o, "measured_sm_clock_mhz", pos(d->measured_sm_clock_mhz), bad);
    put(o, "measured_sm_clock_min_mhz", pos(d->measured_sm_clock_min_mhz), bad);
    put(o, "fp32_lanes_per_sm", integer(d->fp32_lanes_per_sm), bad);
    put(o, "total_mem_bytes", integer((long long)d->total_mem_bytes), bad);
    put(o, "max_threads_per_sm", integer(d->max_threads_per_sm), bad);
    put(o, "pci_bus_id", TEXT(d->pci_bus_id), bad);
    put(o, "nvidia_driver_version", TEXT(d->nvidia_driver_version), bad);
    put(o, "reason", TEXT(d->reason), bad);
    return o;
}

static json_t *build_json(const struct dv_build *b, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "nvcc_version", TEXT(b->nvcc_version), bad);
    put(o, "cuda_architectures", TEXT(b->cuda_architectures), bad);
    put(o, "flags", TEXT(b->flags), bad);
    return o;
}

static json_t *config_json(const struct dv_config *c, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "experiment", TEXT(c->experiment), bad);
    put(o, "blocks", integer(c->blocks), bad);
    put(o, "blocks_auto", json_boolean(c->blocks_auto), bad);
    put(o, "blocks_reason", TEXT(c->blocks_reason), bad);
    put(o, "threads_per_block", integer(c->threads_per_block), bad);
    put(o, "block", json_pack("[II]", (json_int_t)c->block_x, (json_int_t)c->block_y), bad);
    put(o, "threads", integer((long long)c->threads), bad);
    put(o, "iterations", integer(c->iterations), bad);
    put(o, "fmas_per_launch", integer((long long)c->fmas_per_launch), bad);
    put(o, "bytes_per_launch", integer((long long)c->bytes_per_launch), bad);
    put(o, "fma_floor_ms", pos(c->fma_floor_ms), bad);
    put(o, "max_noise", num(c->max_noise), bad);
    put(o, "budget_ms", num(c->budget_ms), bad);
    put(o, "min_samples", integer(c->min_samples), bad);
    put(o, "max_samples", integer(c->max_samples), bad);
    return o;
}

static json_t *count_json(const struct dv_count *c) {
    return json_pack("{sIsIsI}", "min", (json_int_t)c->min, "max", (json_int_t)c->max, "total",
                     (json_int_t)c->total);
}

static json_t *row_json(const struct dv_row *w, int measured, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "name", TEXT(w->name), bad);
    put(o, "label", TEXT(w->label), bad);
    put(o, "kernel", json_string(experiment_kernel_name(w->kernel)), bad);
    put(o, "mode", integer(w->mode), bad);
    put(o, "warps_per_block", integer(w->warps_per_block), bad);
    put(o, "warps_split_per_block", num(w->warps_split.per_block), bad);
    put(o, "warps_split", count_json(&w->warps_split), bad);
    put(o, "threads_per_block", integer(w->threads_per_block), bad);
    put(o, "threads_on_a_per_block", num(w->threads_on_a.per_block), bad);
    put(o, "threads_on_a", count_json(&w->threads_on_a), bad);
    put(o, "path_runs_per_block", num(w->path_runs.per_block), bad);
    put(o, "path_runs", count_json(&w->path_runs), bad);
    put(o, "predicted_ratio", num(w->predicted_ratio), bad);
    put(o, "comparable", json_boolean(w->comparable), bad);
    if (!w->comparable) put(o, "comparable_reason", TEXT(w->comparable_reason), bad);
    put(o, "note", TEXT(w->note), bad);
    /* Scenario rows carry the seed's efficiency model beside the ratio. */
    if (w->kernel == DV_KERNEL_SCENARIO) put(o, "predicted_efficiency", num(w->predicted_efficiency), bad);
    if (!measured) return o;
    if (w->kernel == DV_KERNEL_SCENARIO) {
        put(o, "measured_efficiency", num(w->measured_efficiency), bad);
        put(o, "agreement", num(w->agreement), bad);
    }

    put(o, "time_ms",
        json_pack("{sososososo}", "median", num(w->time_ms.median), "min", num(w->time_ms.min),
                  "max", num(w->time_ms.max), "mean", num(w->time_ms.mean), "stdev",
                  num(w->time_ms.stdev)),
        bad);
    put(o, "samples", integer(w->time_ms.samples), bad);
    put(o, "noise", num(w->time_ms.noise), bad);
    put(o, "ratio", num(w->ratio), bad);
    put(o, "floor_fraction", num(w->floor_fraction), bad);
    const struct dv_check *c = &w->check;
    json_t *check = json_object();
    if (!check) {
        *bad = 1;
        return o;
    }
    put(check, "ok", json_boolean(c->ok), bad);
    put(check, "checked", integer((long long)c->checked), bad);
    put(check, "mismatches", integer((long long)c->mismatches), bad);
    put(check, "first_mismatch", c->first_mismatch < 0 ? json_null() : integer(c->first_mismatch), bad);
    put(check, "expected", num(c->expected), bad);
    put(check, "got", num(c->got), bad);
    put(o, "check", check, bad);
    return o;
}

static json_t *table_json(const struct dv_table *t, int measured, int *bad) {
    json_t *o = json_object(), *rows = json_array();
    if (!o || !rows) {
        json_decref(o);
        json_decref(rows);
        return NULL;
    }
    put(o, "id", TEXT(t->id), bad);
    put(o, "title", TEXT(t->title), bad);
    put(o, "kernel", TEXT(t->kernel), bad);
    put(o, "baseline", TEXT(t->baseline), bad);
    put(o, "baseline_row", integer(t->baseline_row), bad);
    put(o, "noise_limit", num(t->noise_limit), bad);
    if (measured) {
        put(o, "noise_ok", json_boolean(t->noise_ok), bad);
        put(o, "gpu_time_ms", num(t->gpu_time_ms), bad);
    }
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++)
        if (json_array_append_new(rows, row_json(&t->rows[i], measured, bad)) != 0) *bad = 1;
    put(o, "rows", rows, bad);
    return o;
}

char *report_device_json(const struct dv_device *d) {
    int bad = 0;
    json_t *o = device_json(d, &bad);
    if (!o || bad) {
        json_decref(o);
        return NULL;
    }
    char *out = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return out;
}

char *report_json(const struct dv_report *r, int pretty) {
    json_t *doc = json_object(), *tables = json_array(), *warnings = json_array();
    char *out = NULL;
    int bad = !doc || !tables || !warnings;

    if (bad) {
        json_decref(tables);
        json_decref(warnings);
        goto cleanup;
    }
    put(doc, "schema", json_string(REPORT_SCHEMA), &bad);
    put(doc, "device", device_json(&r->device, &bad), &bad);
    put(doc, "build", build_json(&r->build, &bad), &bad);
    put(doc, "config", config_json(&r->config, &bad), &bad);
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++)
        if (json_array_append_new(tables, table_json(&r->tables[i], r->measured, &bad)) != 0)
            bad = 1;
    put(doc, "tables", tables, &bad);
    for (unsigned i = 0; i < r->nwarnings && i < DV_MAX_WARNINGS; i++)
        if (json_array_append_new(warnings, TEXT(r->warnings[i])) != 0) bad = 1;
    put(doc, "warnings", warnings, &bad);
    put(doc, "measured", json_boolean(r->measured), &bad);
    if (r->measured) put(doc, "gpu_time_ms", num(r->gpu_time_ms), &bad);
    put(doc, "wall_time_ms", num(r->wall_time_ms), &bad);
    put(doc, "started_utc", TEXT(r->started_utc), &bad);
    put(doc, "finished_utc", TEXT(r->finished_utc), &bad);
    if (!bad) out = json_dumps(doc, REPORT_JSON_FLAGS | (pretty ? JSON_INDENT(2) : JSON_COMPACT));

cleanup:
    json_decref(doc);
    return out;
}

/* ------------------------------------------------------------------- JSON in */

/* Reading state: the first error wins and names the field by its path. */
struct rd {
    char *err;
    int failed;
};

static int rd_fail(struct rd *rd, const char *path, const char *key, const char *why) {
    if (!rd->failed) dv_seterr(rd->err, "%s%s%s: %s", path, *path ? "." : "", key, why);
    rd->failed = 1;
    return -1;
}

/* Each getter: missing (or null, where noted) leaves *dst as it is. */
static void get_ll(struct rd *rd, const json_t *o, const char *path, const char *key, long long *dst) {
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return;
    if (!json_is_integer(v)) {
        rd_fail(rd, path, key, "expected an integer");
        return;
    }
    *dst = json_integer_value(v);
}

#define GET_INT(rd, o, path, key, dst, type)                                  \
    do {                                                                      \
        long long tmp_ = (long long)(dst);                                    \
        get_ll(rd, o, path, key, &tmp_);                                      \
        if (tmp_ < 0 && (type)-1 > 0) rd_fail(rd, path, key, "negative");     \
        else (dst) = (type)tmp_;                                              \
    } while (0)

/* A number; null reads as `if_null` (NaN where null stood for NaN). */
static void get_num(struct rd *rd, const json_t *o, const char *path, const char *key, double *dst,
                    double if_null) {
    const json_t *v = json_object_get(o, key);
    if (!v) return;
    if (json_is_null(v)) *dst = if_null;
    else if (json_is_number(v)) *dst = json_number_value(v);
    else rd_fail(rd, path, key, "expected a number");
}

static void get_bool(struct rd *rd, const json_t *o, const char *path, const char *key, int *dst) {
    const json_t *v = json_object_get(o, key);
    if (!v) return;
    if (json_is_boolean(v)) *dst = json_is_true(v);
    else rd_fail(rd, path, key, "expected true or false");
}

static void get_str(struct rd *rd, const json_t *o, const char *path, const char *key, char *dst,
                    size_t size) {
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return;
    if (!json_is_string(v)) {
        rd_fail(rd, path, key, "expected a string");
        return;
    }
    size_t n = json_string_length(v);
    if (n >= size) {
        char why[64];
        snprintf(why, sizeof why, "longer than %zu characters", size - 1);
        rd_fail(rd, path, key, why);
        return;
    }
    memcpy(dst, json_string_value(v), n + 1);
}
#define GET_STR(rd, o, path, key, dst) get_str(rd, o, path, key, dst, sizeof(dst))

/* An object member that must be an object when present; NULL when absent. */
static const json_t *get_obj(struct rd *rd, const json_t *o, const char *path, const char *key) {
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return NULL;
    if (!json_is_object(v)) {
        rd_fail(rd, path, key, "expected an object");
        return NULL;
    }
    return v;
}

static const json_t *get_arr(struct rd *rd, const json_t *o, const char *path, const char *key,
                             size_t max) {
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return NULL;
    if (!json_is_array(v)) {
        rd_fail(rd, path, key, "expected an array");
        return NULL;
    }
    if (json_array_size(v) > max) {
        char why[64];
        snprintf(why, sizeof why, "more than %zu entries", max);
        rd_fail(rd, path, key, why);
        return NULL;
    }
    return v;
}

/* "13.0" -> 13000, as CUDA writes versions. */
static int parse_version(const char *s) {
    int major = 0, minor = 0;
    if (sscanf(s, "%d.%d", &major, &minor) < 1) return 0;
    return major * 1000 + minor * 10;
}

static void device_parse(struct rd *rd, const json_t *o, struct dv_device *d) {
    const char *p = "device";
    char cc[24] = "", ver[24];
    get_bool(rd, o, p, "present", &d->present);
    GET_INT(rd, o, p, "ordinal", d->ordinal, int);
    GET_STR(rd, o, p, "name", d->name);
    GET_STR(rd, o, p, "compute_capability", cc);
    if (cc[0] && sscanf(cc, "%d.%d", &d->cc_major, &d->cc_minor) != 2)
        rd_fail(rd, p, "compute_capability", "expected \"major.minor\"");
    GET_INT(rd, o, p, "cc_major", d->cc_major, int);
    GET_INT(rd, o, p, "cc_minor", d->cc_minor, int);
    GET_INT(rd, o, p, "sm_count", d->sm_count, int);
    GET_INT(rd, o, p, "warp_size", d->warp_size, int);
    ver[0] = '\0';
    GET_STR(rd, o, p, "driver_version", ver);
    if (ver[0]) d->driver_version = parse_version(ver);
    GET_INT(rd, o, p, "driver_version_raw", d->driver_version, int);
    ver[0] = '\0';
    GET_STR(rd, o, p, "runtime_version", ver);
    if (ver[0]) d->runtime_version = parse_version(ver);
    GET_INT(rd, o, p, "runtime_version_raw", d->runtime_version, int);
    get_num(rd, o, p, "rated_sm_clock_mhz", &d->rated_sm_clock_mhz, 0);
    get_num(rd, o, p, "measured_sm_clock_mhz", &d->measured_sm_clock_mhz, 0);
    get_num(rd, o, p, "measured_sm_clock_min_mhz", &d->measured_sm_clock_min_mhz, 0);
    GET_INT(rd, o, p, "fp32_lanes_per_sm", d->fp32_lanes_per_sm, int);
    GET_INT(rd, o, p, "total_mem_bytes", d->total_mem_bytes, unsigned long long);
    GET_INT(rd, o, p, "max_threads_per_sm", d->max_threads_per_sm, int);
    GET_STR(rd, o, p, "pci_bus_id", d->pci_bus_id);
    GET_STR(rd, o, p, "nvidia_driver_version", d->nvidia_driver_version);
    GET_STR(rd, o, p, "reason", d->reason);
}

static void build_parse(struct rd *rd, const json_t *o, struct dv_build *b) {
    GET_STR(rd, o, "build", "nvcc_version", b->nvcc_version);
    GET_STR(rd, o, "build", "cuda_architectures", b->cuda_architectures);
    GET_STR(rd, o, "build", "flags", b->flags);
}

static void config_parse(struct rd *rd, const json_t *o, struct dv_config *c) {
    const char *p = "config";
    GET_STR(rd, o, p, "experiment", c->experiment);
    GET_INT(rd, o, p, "blocks", c->blocks, unsigned);
    get_bool(rd, o, p, "blocks_auto", &c->blocks_auto);
    GET_STR(rd, o, p, "blocks_reason", c->blocks_reason);
    GET_INT(rd, o, p, "threads_per_block", c->threads_per_block, unsigned);
    const json_t *block = get_arr(rd, o, p, "block", 2);
    if (block) {
        const json_t *x = json_array_get(block, 0), *y = json_array_get(block, 1);
        if (json_array_size(block) != 2 || !json_is_integer(x) || !json_is_integer(y) ||
            json_integer_value(x) < 0 || json_integer_value(y) < 0)
            rd_fail(rd, p, "block", "expected [x, y]");
        else {
            c->block_x = (unsigned)json_integer_value(x);
            c->block_y = (unsigned)json_integer_value(y);
        }
    }
    GET_INT(rd, o, p, "threads", c->threads, unsigned long long);
    GET_INT(rd, o, p, "iterations", c->iterations, unsigned);
    GET_INT(rd, o, p, "fmas_per_launch", c->fmas_per_launch, unsigned long long);
    GET_INT(rd, o, p, "bytes_per_launch", c->bytes_per_launch, unsigned long long);
    get_num(rd, o, p, "fma_floor_ms", &c->fma_floor_ms, 0);
    get_num(rd, o, p, "max_noise", &c->max_noise, NAN);
    get_num(rd, o, p, "budget_ms", &c->budget_ms, NAN);
    GET_INT(rd, o, p, "min_samples", c->min_samples, unsigned);
    GET_INT(rd, o, p, "max_samples", c->max_samples, unsigned);
}

static void count_parse(struct rd *rd, const json_t *o, const char *path, const char *key,
                        struct dv_count *c) {
    char sub[96];
    const json_t *v = get_obj(rd, o, path, key);
    if (!v) return;
    snprintf(sub, sizeof sub, "%s.%s", path, key);
    GET_INT(rd, v, sub, "min", c->min, unsigned);
    GET_INT(rd, v, sub, "max", c->max, unsigned);
    GET_INT(rd, v, sub, "total", c->total, unsigned long long);
}

static void row_parse(struct rd *rd, const json_t *o, const char *p, struct dv_row *w) {
    char kernel[32] = "", sub[96];
    GET_STR(rd, o, p, "name", w->name);
    GET_STR(rd, o, p, "label", w->label);
    GET_STR(rd, o, p, "kernel", kernel);
    if (kernel[0]) {
        int k = 0;
        while (k < DV_NUM_KERNELS && strcmp(experiment_kernel_name(k), kernel) != 0) k++;
        if (k == DV_NUM_KERNELS) rd_fail(rd, p, "kernel", "unknown kernel");
        w->kernel = k;
    }
    GET_INT(rd, o, p, "mode", w->mode, int);
    GET_INT(rd, o, p, "warps_per_block", w->warps_per_block, unsigned);
    get_num(rd, o, p, "warps_split_per_block", &w->warps_split.per_block, NAN);
    count_parse(rd, o, p, "warps_split", &w->warps_split);
    GET_INT(rd, o, p, "threads_per_block", w->threads_per_block, unsigned);
    get_num(rd, o, p, "threads_on_a_per_block", &w->threads_on_a.per_block, NAN);
    count_parse(rd, o, p, "threads_on_a", &w->threads_on_a);
    get_num(rd, o, p, "path_runs_per_block", &w->path_runs.per_block, NAN);
    count_parse(rd, o, p, "path_runs", &w->path_runs);
    get_num(rd, o, p, "predicted_ratio", &w->predicted_ratio, NAN);
    get_bool(rd, o, p, "comparable", &w->comparable);
    GET_STR(rd, o, p, "comparable_reason", w->comparable_reason);
    GET_STR(rd, o, p, "note", w->note);
    get_num(rd, o, p, "predicted_efficiency", &w->predicted_efficiency, NAN);
    get_num(rd, o, p, "measured_efficiency", &w->measured_efficiency, NAN);
    get_num(rd, o, p, "agreement", &w->agreement, NAN);

    const json_t *t = get_obj(rd, o, p, "time_ms");
    if (!t) return;
    w->measured = 1;
    snprintf(sub, sizeof sub, "%s.time_ms", p);
    get_num(rd, t, sub, "median", &w->time_ms.median, NAN);
    get_num(rd, t, sub, "min", &w->time_ms.min, NAN);
    get_num(rd, t, sub, "max", &w->time_ms.max, NAN);
    get_num(rd, t, sub, "mean", &w->time_ms.mean, NAN);
    get_num(rd, t, sub, "stdev", &w->time_ms.stdev, NAN);
    GET_INT(rd, o, p, "samples", w->time_ms.samples, unsigned);
    get_num(rd, o, p, "noise", &w->time_ms.noise, NAN);
    get_num(rd, o, p, "ratio", &w->ratio, NAN);
    get_num(rd, o, p, "floor_fraction", &w->floor_fraction, NAN);

    const json_t *c = get_obj(rd, o, p, "check");
    w->check.first_mismatch = -1;
    if (!c) return;
    snprintf(sub, sizeof sub, "%s.check", p);
    double expected = 0, got = 0;
    get_bool(rd, c, sub, "ok", &w->check.ok);
    GET_INT(rd, c, sub, "checked", w->check.checked, unsigned long long);
    GET_INT(rd, c, sub, "mismatches", w->check.mismatches, unsigned long long);
    get_ll(rd, c, sub, "first_mismatch", &w->check.first_mismatch);
    get_num(rd, c, sub, "expected", &expected, NAN);
    get_num(rd, c, sub, "got", &got, NAN);
    w->check.expected = (float)expected;
    w->check.got = (float)got;
}

static void table_parse(struct rd *rd, const json_t *o, unsigned index, struct dv_table *t) {
    char p[32], rp[80];
    snprintf(p, sizeof p, "tables[%u]", index);
    GET_STR(rd, o, p, "id", t->id);
    GET_STR(rd, o, p, "title", t->title);
    GET_STR(rd, o, p, "kernel", t->kernel);
    GET_STR(rd, o, p, "baseline", t->baseline);
    GET_INT(rd, o, p, "baseline_row", t->baseline_row, int);
    get_num(rd, o, p, "noise_limit", &t->noise_limit, NAN);
    get_bool(rd, o, p, "noise_ok", &t->noise_ok);
    get_num(rd, o, p, "gpu_time_ms", &t->gpu_time_ms, NAN);
    const json_t *rows = get_arr(rd, o, p, "rows", DV_MAX_ROWS);
    for (size_t i = 0; rows && i < json_array_size(rows) && !rd->failed; i++) {
        snprintf(rp, sizeof rp, "%s.rows[%zu]", p, i);
        const json_t *row = json_array_get(rows, i);
        if (!json_is_object(row)) {
            rd_fail(rd, rp, "", "expected an object");
            break;
        }
        row_parse(rd, row, rp, &t->rows[i]);
        t->nrows = (unsigned)i + 1;
    }
}

int report_parse(const char *json, size_t len, struct dv_report *r, char *err) {
    json_error_t jerr;
    struct rd rd = {err, 0};
    json_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    const json_t *v;

    memset(r, 0, sizeof *r);
    if (!doc) {
        dv_seterr(err, "report: line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
        return -1;
    }
    if (!json_is_object(doc)) {
        dv_seterr(err, "report: expected a JSON object");
        json_decref(doc);
        return -1;
    }
    v = json_object_get(doc, "schema");
    if (!json_is_string(v) || strcmp(json_string_value(v), REPORT_SCHEMA) != 0) {
        dv_seterr(err, "schema: expected \"%s\"", REPORT_SCHEMA);
        json_decref(doc);
        return -1;
    }
    if ((v = get_obj(&rd, doc, "", "device"))) device_parse(&rd, v, &r->device);
    if ((v = get_obj(&rd, doc, "", "build"))) build_parse(&rd, v, &r->build);
    if ((v = get_obj(&rd, doc, "", "config"))) config_parse(&rd, v, &r->config);
    const json_t *tables = get_arr(&rd, doc, "", "tables", DV_MAX_TABLES);
    for (size_t i = 0; tables && i < json_array_size(tables) && !rd.failed; i++) {
        const json_t *t = json_array_get(tables, i);
        if (!json_is_object(t)) {
            char p[32];
            snprintf(p, sizeof p, "tables[%zu]", i);
            rd_fail(&rd, "", p, "expected an object");
            break;
        }
        table_parse(&rd, t, (unsigned)i, &r->tables[i]);
        r->ntables = (unsigned)i + 1;
    }
    const json_t *warnings = get_arr(&rd, doc, "", "warnings", DV_MAX_WARNINGS);
    for (size_t i = 0; warnings && i < json_array_size(warnings) && !rd.failed; i++) {
        const json_t *w = json_array_get(warnings, i);
        size_t n = json_string_length(w);
        if (!json_is_string(w) || n >= sizeof r->warnings[0]) {
            rd_fail(&rd, "", "warnings", "expected strings of at most 255 characters");
            break;
        }
        memcpy(r->warnings[i], json_string_value(w), n + 1);
        r->nwarnings = (unsigned)i + 1;
    }
    get_bool(&rd, doc, "", "measured", &r->measured);
    get_num(&rd, doc, "", "gpu_time_ms", &r->gpu_time_ms, NAN);
    get_num(&rd, doc, "", "wall_time_ms", &r->wall_time_ms, NAN);
    GET_STR(&rd, doc, "", "started_utc", r->started_utc);
    GET_STR(&rd, doc, "", "finished_utc", r->finished_utc);
    json_decref(doc);
    return rd.failed ? -1 : 0;
}

/* ---------------------------------------------------------------------- text */

/* A growing string; an allocation failure sticks and report_text() returns NULL. */
struct sb {
    char *s;
    size_t len, cap;
    int oom;
};

#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
static void sb_printf(struct sb *b, const char *fmt, ...) {
    va_list ap;
    if (b->oom) return;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Cell text for a count: "8", or "0-8" when blocks differ. */
static void fmt_count(char *buf, size_t len, const struct dv_count *c) {
    if (c->min == c->max) snprintf(buf, len, "%u", c->min);
    else snprintf(buf, len, "%u-%u", c->min, c->max);
}

static void fmt_fixed(char *buf, size_t len, double v, int decimals) {
    if (isfinite(v)) snprintf(buf, len, "%.*f", decimals, v);
    else snprintf(buf, len, "-");
}

static void fmt_check(char *buf, size_t len, const struct dv_check *c) {
    if (c->checked == 0 && c->mismatches == 0 && !c->ok) snprintf(buf, len, "-");
    else if (c->ok) snprintf(buf, len, "ok");
    else if (c->first_mismatch >= 0)
        snprintf(buf, len, "FAIL %llu (first thread %lld)", c->mismatches, c->first_mismatch);
    else snprintf(buf, len, "FAIL %llu", c->mismatches);
}

/* Column kinds of a table row. The C_MODEL_* to C_AGREEMENT kinds belong to
 * scenario tables only. */
enum col {
    C_WARPS, C_TIME, C_RATIO, C_THREADS_A, C_PATH_RUNS, C_PREDICTED, C_NOISE, C_FLOOR, C_CHECK,
    C_MODEL_RATIO, C_MODEL_EFF, C_MEASURED_EFF, C_AGREEMENT
};
#define MAX_COLS 12
#define CELL_LEN 96

struct layout {
    int first_width;          /* the label column                        */
    const char *first_header; /* "predicate", "kernel" or "row"          */
    int ncols;
    enum col cols[MAX_COLS];
    int width[MAX_COLS];
    const char *gap[MAX_COLS]; /* spaces before each column              */
    char ratio_header[48];
};

/* Agreement further than this from 1 is marked '*'; the slack keeps a ratio
 * of exactly 1.10 or 0.90 (not representable in binary) unmarked. */
#define AGREEMENT_TOLERANCE 0.10
#define AGREEMENT_SLACK 1e-9

static int is_kernel_table(const struct dv_table *t) {
    for (unsigned i = 0; i < t->nrows; i++)
        if (t->rows[i].kernel == DV_KERNEL_NOBRANCH || t->rows[i].kernel == DV_KERNEL_PERITER)
            return 1;
    return 0;
}

static int is_scenario_table(const struct dv_table *t) {
    if (t->nrows == 0) return strncmp(t->id, "scenario:", 9) == 0;
    for (unsigned i = 0; i < t->nrows; i++)
        if (t->rows[i].kernel != DV_KERNEL_SCENARIO) return 0;
    return 1;
}

static void add_col(struct layout *l, enum col c, int width, const char *gap) {
    if (l->ncols >= MAX_COLS) return;
    l->cols[l->ncols] = c;
    l->width[l->ncols] = width;
    l->gap[l->ncols] = gap;
    l->ncols++;
}

/* Scenario tables: their own columns, three spaces apart; the model's ratio
 * and efficiency always, the measurement beside them when there is one. */
static void layout_scenario(int measured, struct layout *l) {
    snprintf(l->ratio_header, sizeof l->ratio_header, "vs baseline");
    l->first_header = "row";
    l->first_width = (int)strlen(l->first_header);
    add_col(l, C_WARPS, 11, "   ");
    if (measured) {
        add_col(l, C_TIME, 10, "   ");
        add_col(l, C_RATIO, 11, "   ");
    }
    add_col(l, C_MODEL_RATIO, 11, "   ");
    add_col(l, C_MODEL_EFF, 10, "   ");
    if (measured) {
        add_col(l, C_MEASURED_EFF, 13, "   ");
        add_col(l, C_AGREEMENT, 9, "   ");
        add_col(l, C_NOISE, 6, "   ");
        add_col(l, C_CHECK, 0, "   ");
    }
}

/* The lesson's widths: Part 1 "%-24s  %11s   %10s   %10s", Part 2
 * "%-28s   %10s %12s"; extra columns follow, three spaces apart. */
static void layout_table(const struct dv_table *t, int measured, struct layout *l) {
    memset(l, 0, sizeof *l);
    if (is_scenario_table(t)) {
        layout_scenario(measured, l);
        return;
    }
    int kernel_style = is_kernel_table(t);
    const struct dv_row *base =
        t->baseline_row >= 0 && (unsigned)t->baseline_row < t->nrows ? &t->rows[t->baseline_row] : NULL;
    if (base && base->kernel == DV_KERNEL_NOBRANCH) snprintf(l->ratio_header, sizeof l->ratio_header, "vs no branch");
    else if (base && base->warps_split.max == 0) snprintf(l->ratio_header, sizeof l->ratio_header, "vs uniform");
    else snprintf(l->ratio_header, sizeof l->ratio_header, "vs baseline");
    int ratio_width = kernel_style ? 12 : 10;
    l->first_header = kernel_style ? "kernel" : "predicate";
    l->first_width = kernel_style ? 28 : 24;
    if (measured && kernel_style) {
        add_col(l, C_TIME, 10, "   ");
        add_col(l, C_RATIO, ratio_width, " ");
        add_col(l, C_WARPS, 11, "   ");
    } else {
        add_col(l, C_WARPS, 11, kernel_style ? "   " : "  ");
        if (measured) {
            add_col(l, C_TIME, 10, "   ");
            add_col(l, C_RATIO, ratio_width, "   ");
        }
    }
    add_col(l, C_THREADS_A, 12, "   ");
    if (!measured) add_col(l, C_PATH_RUNS, 9, "   ");
    add_col(l, C_PREDICTED, 9, "   ");
    if (measured) {
        add_col(l, C_NOISE, 6, "   ");
        add_col(l, C_FLOOR, 5, "   ");
        add_col(l, C_CHECK, 0, "   ");
    }
}

static const char *col_header(const struct layout *l, enum col c) {
    switch (c) {
    case C_WARPS: return "warps split";
    case C_TIME: return "time (ms)";
    case C_RATIO: return l->ratio_header;
    case C_THREADS_A: return "threads on A";
    case C_PATH_RUNS: return "path-runs";
    case C_PREDICTED: return "predicted";
    case C_NOISE: return "noise";
    case C_FLOOR: return "floor";
    case C_CHECK: return "check";
    case C_MODEL_RATIO: return "model ratio";
    case C_MODEL_EFF: return "model eff.";
    case C_MEASURED_EFF: return "measured eff.";
    case C_AGREEMENT: return "agreement";
    }
    return "";
}

/* A fraction as a percentage with one decimal, as the seed writes 57.1%. */
static void fmt_percent(char *buf, size_t len, double v) {
    if (isfinite(v)) snprintf(buf, len, "%.1f%%", 100.0 * v);
    else snprintf(buf, len, "-");
}

/* Measured ratio over the model's; NaN when either is missing. Documents
 * that predate the agreement field still get one from the two ratios. */
static double row_agreement(const struct dv_row *w) {
    if (isfinite(w->agreement)) return w->agreement;
    if (isfinite(w->ratio) && isfinite(w->predicted_ratio) && w->predicted_ratio > 0)
        return w->ratio / w->predicted_ratio;
    return NAN;
}

/* "1.05 " or "1.25*": the mark takes the last place, so the figures of
 * marked and unmarked rows stay aligned on the decimal point. */
static void fmt_agreement(char *buf, size_t len, double a) {
    if (!isfinite(a)) snprintf(buf, len, "- ");
    else snprintf(buf, len, "%.2f%c", a,
                  fabs(a - 1.0) > AGREEMENT_TOLERANCE + AGREEMENT_SLACK ? '*' : ' ');
}

static void col_cell(enum col c, const struct dv_row *w, char *buf, size_t len) {
    switch (c) {
    case C_WARPS: fmt_count(buf, len, &w->warps_split); return;
    case C_TIME: fmt_fixed(buf, len, w->time_ms.median, 3); return;
    case C_RATIO: fmt_fixed(buf, len, w->ratio, 2); return;
    case C_THREADS_A: fmt_count(buf, len, &w->threads_on_a); return;
    case C_PATH_RUNS: fmt_count(buf, len, &w->path_runs); return;
    case C_PREDICTED:
    case C_MODEL_RATIO: fmt_fixed(buf, len, w->predicted_ratio, 2); return;
    case C_NOISE:
        if (isfinite(w->time_ms.noise)) snprintf(buf, len, "%.2f%%", 100.0 * w->time_ms.noise);
        else snprintf(buf, len, "-");
        return;
    case C_FLOOR: fmt_fixed(buf, len, w->floor_fraction, 2); return;
    case C_CHECK: fmt_check(buf, len, &w->check); return;
    case C_MODEL_EFF: fmt_percent(buf, len, w->predicted_efficiency); return;
    case C_MEASURED_EFF: fmt_percent(buf, len, w->measured_efficiency); return;
    case C_AGREEMENT: fmt_agreement(buf, len, row_agreement(w)); return;
    }
    buf[0] = '\0';
}

/* Writes one line: the label column, then each column right-aligned (the
 * check column, last and of any width, left-aligned); no trailing blanks. */
static void put_line(struct sb *b, const struct layout *l, const char *first, char cells[][CELL_LEN]) {
    char line[2048];
    int n = snprintf(line, sizeof line, "%-*s", l->first_width, first);
    for (int i = 0; i < l->ncols && n >= 0 && (size_t)n < sizeof line; i++) {
        int w = l->width[i] ? l->width[i] : 0;
        if (l->cols[i] == C_CHECK)
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", l->gap[i], cells[i]);
        else
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%*s", l->gap[i], w, cells[i]);
    }
    size_t end = strlen(line);
    while (end && line[end - 1] == ' ') end--;
    sb_printf(b, "%.*s\n", (int)end, line);
}

/* The footer of a scenario table: what the baseline is, what each model and
 * measured column is out of, and the agreement mark. */
static void scenario_footer(struct sb *b, const struct dv_row *base, int measured) {
    if (base)
        sb_printf(b, "baseline: the same work grouped so each warp runs one path (row \"%s\")\n",
                  base->label);
    else
        sb_printf(b, "baseline: the same work grouped so each warp runs one path\n");
    if (measured) sb_printf(b, "vs baseline: each median over the baseline row's median\n");
    sb_printf(b, "model ratio: the issued path work over the baseline's\n");
    sb_printf(b, "model eff.: max / sum of the path lengths in a warp for branches, useful / issued"
                 " lane-iterations for loops (seeds 002/003)\n");
    if (measured) {
        sb_printf(b, "measured eff.: the same figure from times: the median of the row where every"
                     " lane runs its warp's longest path (or of the baseline) over the row's\n");
        sb_printf(b, "agreement: vs baseline / model ratio; * = model and measurement differ by"
                     " more than %.0f%%\n", 100.0 * AGREEMENT_TOLERANCE);
    }
}

static void table_text(struct sb *b, const struct dv_table *t, int measured) {
    struct layout l;
    char cells[MAX_COLS][CELL_LEN], label[PREDICATE_TEXT_LEN + 16];
    char rule[PREDICATE_TEXT_LEN + 16];
    unsigned notes = 0;
    int scenario = is_scenario_table(t);

    layout_table(t, measured, &l);
    /* Widen the label column to the longest label with its footnote mark, so
     * every row of the table keeps the same column offsets. */
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        if (!t->rows[i].comparable) notes++;
        int len = (int)strlen(t->rows[i].label) +
                  (t->rows[i].comparable ? 0 : snprintf(NULL, 0, " [%u]", notes));
        if (len > l.first_width && len < (int)sizeof rule) l.first_width = len;
    }
    notes = 0;
    for (int i = 0; i < l.ncols; i++) {
        const char *h = col_header(&l, l.cols[i]);
        if ((int)strlen(h) > l.width[i] && l.cols[i] != C_CHECK) l.width[i] = (int)strlen(h);
        snprintf(cells[i], sizeof cells[i], "%s", h);
    }
    sb_printf(b, "%s\n", t->title);
    put_line(b, &l, l.first_header, cells);
    for (int i = 0; i < l.ncols; i++) {
        int w = l.cols[i] == C_CHECK ? (int)strlen("check") : l.width[i];
        memset(cells[i], '-', (size_t)w);
        cells[i][w] = '\0';
    }
    memset(rule, '-', (size_t)l.first_width);
    rule[l.first_width] = '\0';
    put_line(b, &l, rule, cells);

    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_row *w = &t->rows[r];
        if (w->comparable) snprintf(label, sizeof label, "%s", w->label);
        else snprintf(label, sizeof label, "%s [%u]", w->label, ++notes);
        for (int i = 0; i < l.ncols; i++) col_cell(l.cols[i], w, cells[i], sizeof cells[i]);
        put_line(b, &l, label, cells);
    }

    /* Footer: what the columns are out of, then the footnotes. */
    if (t->nrows) {
        unsigned wpb = t->rows[0].warps_per_block, tpb = t->rows[0].threads_per_block;
        int same = 1;
        for (unsigned r = 1; r < t->nrows && r < DV_MAX_ROWS; r++)
            same &= t->rows[r].warps_per_block == wpb && t->rows[r].threads_per_block == tpb;
        if (same && !is_kernel_table(t) && !scenario)
            sb_printf(b, "warps split is out of the %u warps in a block, computed from the predicate\n",
                      wpb);
        else if (same)
            sb_printf(b, "warps split is out of the %u warps in a block\n", wpb);
        if (same && !scenario)
            sb_printf(b, "threads on A is out of the %u threads in a block; a-b is the range over"
                         " the blocks of the grid\n", tpb);
    }
    const struct dv_row *base = t->baseline_row >= 0 && (unsigned)t->baseline_row < t->nrows
                                    ? &t->rows[t->baseline_row] : NULL;
    if (scenario)
        scenario_footer(b, base, measured);
    else if (base && measured)
        sb_printf(b, "%s: each median over the %s row's median; predicted: the path-run model's ratio\n",
                  l.ratio_header, base->label);
    else if (base)
        sb_printf(b, "predicted: the path-run model's ratio against the %s row\n", base->label);
    if (measured) {
        sb_printf(b, "noise is stdev / mean over each row's samples; limit %.2f%%%s\n",
                  100.0 * t->noise_limit, t->noise_ok ? "" : ", exceeded");
    }
    if (t->kernel[0]) sb_printf(b, "kernel: %s\n", t->kernel);
    notes = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++)
        if (!t->rows[r].comparable)
            sb_printf(b, "[%u] %s: not comparable: %s\n", ++notes, t->rows[r].label,
                      t->rows[r].comparable_reason[0] ? t->rows[r].comparable_reason
                                                      : "different work from the baseline");
}

char *report_text(const struct dv_report *r) {
    struct sb b = {0};
    const struct dv_device *d = &r->device;
    const struct dv_config *c = &r->config;

    if (d->present || d->name[0]) {
        sb_printf(&b, "GPU: %s (compute capability %d.%d)", d->name, d->cc_major, d->cc_minor);
        /* The kernel module release names the driver; the CUDA level beside
         * it says what that driver supports. */
        if (d->nvidia_driver_version[0]) {
            sb_printf(&b, ", driver %.*s", (int)sizeof d->nvidia_driver_version,
                      d->nvidia_driver_version);
            if (d->driver_version > 0)
                sb_printf(&b, ", CUDA %d.%d", d->driver_version / 1000, (d->driver_version % 1000) / 10);
        }
        sb_printf(&b, "\n");
    } else
        sb_printf(&b, "GPU: none (%s)\n", d->reason[0] ? d->reason : "no device");
    if (d->sm_count > 0)
        sb_printf(&b, "%d SMs, warp size %d, ", d->sm_count, d->warp_size ? d->warp_size : 32);
    else
        sb_printf(&b, "warp size %d, ", d->warp_size ? d->warp_size : 32);
    if (c->block_y > 1)
        sb_printf(&b, "%u blocks x %u (%ux%u) threads = %llu threads\n", c->blocks,
                  c->threads_per_block, c->block_x, c->block_y, c->threads);
    else
        sb_printf(&b, "%u blocks x %u threads = %llu threads\n", c->blocks, c->threads_per_block,
                  c->threads);
    sb_printf(&b, "%u multiply-adds per thread, %llu bytes moved per launch\n", c->iterations,
              c->bytes_per_launch);
    if (c->blocks_auto)
        sb_printf(&b, "blocks: auto, %s\n", c->blocks_reason[0] ? c->blocks_reason : "chosen by the runner");
    if (isfinite(d->measured_sm_clock_mhz) && d->measured_sm_clock_mhz > 0) {
        sb_printf(&b, "SM clock: measured %.0f MHz", d->measured_sm_clock_mhz);
        if (isfinite(d->rated_sm_clock_mhz) && d->rated_sm_clock_mhz > 0)
            sb_printf(&b, ", rated %.0f MHz", d->rated_sm_clock_mhz);
        sb_printf(&b, "\n");
    }
    if (isfinite(c->fma_floor_ms) && c->fma_floor_ms > 0) {
        sb_printf(&b, "FMA floor: %.3f ms per launch (%llu FMAs", c->fma_floor_ms, c->fmas_per_launch);
        if (d->sm_count > 0 && d->fp32_lanes_per_sm > 0 && d->measured_sm_clock_mhz > 0)
            sb_printf(&b, " / (%d SMs x %d FP32 lanes x %.0f MHz)", d->sm_count,
                      d->fp32_lanes_per_sm, d->measured_sm_clock_mhz);
        sb_printf(&b, ")\n");
    }
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++) {
        sb_printf(&b, "\n");
        table_text(&b, &r->tables[i], r->measured);
    }
    if (r->nwarnings) sb_printf(&b, "\n");
    for (unsigned i = 0; i < r->nwarnings && i < DV_MAX_WARNINGS; i++)
        sb_printf(&b, "warning: %s\n", r->warnings[i]);
    if (b.oom || !b.s) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
