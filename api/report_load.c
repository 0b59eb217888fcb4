/* report_load.c -- a divergence.v1 document back into struct dv_report.
 *
 * report_parse() is the inverse of report_json() (report_dump.c): it reads
 * every field the writer writes, ignores fields it does not know (newer
 * writers may add some), leaves missing ones zero, reads null as NaN where
 * NaN is what was written as null, and rejects wrong types and overlong
 * strings with the path of the field.
 */
#include "api/report.h"
#include "api/jsonout.h"
#include "api/report_sort.h"
#include "kernels/model/listing/listing.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kernels/model/model/analysis.h"
#include "kernels/model/stats/ratio.h"
#include "kernels/model/stats/spread.h"

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

#define GET_INT(rd, o, path, key, dst, type)                                      \
    do {                                                                          \
        long long tmp_ = (long long)(dst);                                        \
        get_ll(rd, o, path, key, &tmp_);                                          \
        if (tmp_ < 0 && (type)-1 > 0) rd_fail(rd, path, key, "negative");         \
        else if ((long long)(type)tmp_ != tmp_) rd_fail(rd, path, key, "out of range"); \
        else (dst) = (type)tmp_;                                                  \
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

/* get_obj() for a member whose own members are read next: their path
 * ("tables[0].rows[1].observed") goes to `sub`. */
static const json_t *get_sub(struct rd *rd, const json_t *o, const char *path, const char *key, char *sub,
                             size_t size) {
    const json_t *v = get_obj(rd, o, path, key);
    if (v) snprintf(sub, size, "%s%s%s", path, *path ? "." : "", key);
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

/* An int that may be null (-1). */
static void get_ll_int(struct rd *rd, const json_t *o, const char *path, const char *key, int *dst) {
    long long v = *dst;
    const json_t *j = json_object_get(o, key);
    if (j && json_is_null(j)) v = -1;
    else get_ll(rd, o, path, key, &v);
    if (v < -1 || v > 0x7fffffff) rd_fail(rd, path, key, "out of range");
    else *dst = (int)v;
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
    GET_STR(rd, o, "build", "kernel_digest", b->kernel_digest);
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
    get_num(rd, o, p, "max_halfwidth", &c->max_noise, NAN); /* the same target, its new name */
    get_num(rd, o, p, "budget_ms", &c->budget_ms, NAN);
    GET_INT(rd, o, p, "min_samples", c->min_samples, unsigned);
    GET_INT(rd, o, p, "max_samples", c->max_samples, unsigned);
}

/* {"lo", "hi"} into `c`; absent or null leaves it as it is. */
static void ci_parse(struct rd *rd, const json_t *o, const char *path, const char *key, struct dv_ci *c) {
    char sub[112];
    const json_t *v = get_sub(rd, o, path, key, sub, sizeof sub);
    if (!v) return;
    get_num(rd, v, sub, "lo", &c->lo, NAN);
    get_num(rd, v, sub, "hi", &c->hi, NAN);
}

/* ["tail", "split", "drift"] into SPREAD_* bits; a name this reader does not
 * know (a newer writer's flag) is skipped. */
static void spread_flags_parse(struct rd *rd, const json_t *o, const char *path, unsigned *flags) {
    const json_t *a = get_arr(rd, o, path, "spread_flags", 8);
    for (size_t i = 0; a && i < json_array_size(a); i++) {
        const char *name = json_string_value(json_array_get(a, i));
        if (!name) {
            rd_fail(rd, path, "spread_flags", "expected names");
            return;
        }
        if (strcmp(name, "tail") == 0) *flags |= SPREAD_TAIL;
        else if (strcmp(name, "split") == 0) *flags |= SPREAD_SPLIT;
        else if (strcmp(name, "drift") == 0) *flags |= SPREAD_DRIFT;
    }
}

static void count_parse(struct rd *rd, const json_t *o, const char *path, const char *key,
                        struct dv_count *c) {
    char sub[96];
    const json_t *v = get_sub(rd, o, path, key, sub, sizeof sub);
    if (!v) return;
    GET_INT(rd, v, sub, "min", c->min, unsigned);
    GET_INT(rd, v, sub, "max", c->max, unsigned);
    GET_INT(rd, v, sub, "total", c->total, unsigned long long);
}

/* A two-entry array of counts ("runs": [A, B]). */
static void pair_parse(struct rd *rd, const json_t *o, const char *path, const char *key, unsigned long long v[2]) {
    const json_t *a = get_arr(rd, o, path, key, 2);
    if (!a) return;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        if (!json_is_integer(e) || json_integer_value(e) < 0) {
            rd_fail(rd, path, key, "expected two counts");
            return;
        }
        v[i] = (unsigned long long)json_integer_value(e);
    }
}

static void observed_parse(struct rd *rd, const json_t *o, const char *path, struct dv_observed *w) {
    char sub[112];
    const json_t *v = get_sub(rd, o, path, "observed", sub, sizeof sub);
    if (!v) return;
    w->present = 1;
    w->first_difference = -1;
    get_num(rd, v, sub, "split_warps_per_block", &w->split_warps.per_block, NAN);
    count_parse(rd, v, sub, "split_warps", &w->split_warps);
    get_num(rd, v, sub, "path_runs_per_block", &w->path_runs.per_block, NAN);
    count_parse(rd, v, sub, "path_runs", &w->path_runs);
    GET_INT(rd, v, sub, "iterations", w->per, unsigned);
    pair_parse(rd, v, sub, "runs", w->runs);
    pair_parse(rd, v, sub, "partial_runs", w->split);
    pair_parse(rd, v, sub, "lanes", w->lanes);
    const json_t *l = get_arr(rd, v, sub, "lanes_per_run", 2);
    for (size_t i = 0; l && i < json_array_size(l); i++) {
        const json_t *e = json_array_get(l, i);
        w->lanes_per_run[i] = json_is_number(e) ? json_number_value(e) : NAN;
    }
    const json_t *h = get_arr(rd, v, sub, "lanes_histogram", 2);
    for (size_t p = 0; h && p < json_array_size(h); p++) {
        const json_t *bins = json_array_get(h, p);
        if (!json_is_array(bins) || json_array_size(bins) > 33) {
            rd_fail(rd, sub, "lanes_histogram", "expected two arrays of at most 33 counts");
            break;
        }
        for (size_t k = 0; k < json_array_size(bins); k++) {
            const json_t *e = json_array_get(bins, k);
            if (!json_is_integer(e) || json_integer_value(e) < 0) {
                rd_fail(rd, sub, "lanes_histogram", "expected counts");
                break;
            }
            w->hist[p][k] = (unsigned long long)json_integer_value(e);
        }
    }
    get_bool(rd, v, sub, "agrees", &w->agrees);
    get_bool(rd, v, sub, "predicated", &w->predicated);
    get_ll(rd, v, sub, "first_difference", &w->first_difference);
    long long witnessed = 0;
    get_ll(rd, v, sub, "blocks_witnessed", &witnessed);
    if (witnessed < 0 || witnessed > DV_MAX_BLOCKS) rd_fail(rd, sub, "blocks_witnessed", "out of range");
    else w->blocks_witnessed = (unsigned)witnessed;
    GET_STR(rd, v, sub, "verdict", w->verdict);
}

static void counters_parse(struct rd *rd, const json_t *o, const char *path, struct dv_counters *c) {
    char sub[112];
    const json_t *v = get_sub(rd, o, path, "counters", sub, sizeof sub);
    if (!v) return;
    c->present = 1;
    get_num(rd, v, sub, "smsp__sass_branch_targets_threads_divergent.sum", &c->branch_targets_divergent, NAN);
    get_num(rd, v, sub, "smsp__sass_branch_targets.sum", &c->branch_targets, NAN);
    get_num(rd, v, sub, "smsp__sass_average_branch_targets_threads_uniform.pct", &c->branch_uniform_pct, NAN);
    get_num(rd, v, sub, "smsp__thread_inst_executed_per_inst_executed.ratio", &c->threads_per_inst, NAN);
    get_num(rd, v, sub, "smsp__inst_executed.sum", &c->inst_executed, NAN);
    get_num(rd, v, sub, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", &c->ffma_threads, NAN);
    get_num(rd, v, sub, "warp_execution_efficiency", &c->warp_efficiency, NAN);
    get_num(rd, v, sub, "divergent_branches_per_block", &c->divergent_per_block, NAN);
    get_num(rd, v, sub, "model_split_warps_per_block", &c->model_split_per_block, NAN);
    get_num(rd, v, sub, "warp_instructions_per_fma", &c->inst_per_fma, NAN);
    get_num(rd, v, sub, "instructions_vs_baseline", &c->inst_vs_baseline, NAN);
    get_bool(rd, v, sub, "predicated", &c->predicated);
    GET_STR(rd, v, sub, "verdict", c->verdict);
    /* arithmetic intensity: null (or absent, before the field) when no DRAM pass ran */
    c->dram_bytes_read = NAN;
    get_num(rd, v, sub, "dram__bytes_read.sum", &c->dram_bytes_read, NAN);
    c->dram_present = isfinite(c->dram_bytes_read);
}

/* ---- arithmetic intensity ---- */
/* An arithmetic-intensity row's `intensity` (struct dv_intensity); absent
 * for any other row. Its dram_bytes is the counters' (read there). */
static void intensity_parse(struct rd *rd, const json_t *o, const char *p, struct dv_intensity *m) {
    char sub[112];
    const json_t *v = get_sub(rd, o, p, "intensity", sub, sizeof sub);
    if (!v) return;
    m->present = 1;
    GET_STR(rd, v, sub, "variant", m->variant);
    GET_INT(rd, v, sub, "fmas", m->fmas, unsigned);
    GET_INT(rd, v, sub, "loads", m->loads, unsigned);
    get_num(rd, v, sub, "intensity", &m->intensity, NAN);
    get_num(rd, v, sub, "flops", &m->flops, NAN);
    get_num(rd, v, sub, "bytes", &m->bytes, NAN);
    get_num(rd, v, sub, "flop_rate", &m->flop_rate, NAN);
    get_num(rd, v, sub, "bandwidth_gbs", &m->bandwidth_gbs, NAN);
    get_num(rd, v, sub, "dram_gbs", &m->dram_gbs, NAN);
    get_num(rd, v, sub, "dram_intensity", &m->dram_intensity, NAN);
    get_num(rd, v, sub, "roofline", &m->roofline, NAN);
    get_num(rd, v, sub, "roofline_fraction", &m->roofline_fraction, NAN);
    GET_STR(rd, v, sub, "bound", m->bound);
    if (!m->variant[0]) rd_fail(rd, sub, "variant", "missing: an intensity row names its variant");
}

/* An arithmetic-intensity table's `roofline` (struct dv_ridge); absent for
 * any other table. */
static void roofline_parse(struct rd *rd, const json_t *o, const char *p, struct dv_table *t) {
    char sub[64], from[16] = "";
    const json_t *v = get_sub(rd, o, p, "roofline", sub, sizeof sub);
    struct dv_ridge *g = &t->ridge;
    g->bandwidth_gbs = g->flop_rate = g->ridge = NAN;
    if (!v) return;
    get_bool(rd, v, sub, "present", &g->present);
    get_num(rd, v, sub, "bandwidth_gbs", &g->bandwidth_gbs, NAN);
    GET_STR(rd, v, sub, "bandwidth_from", from);
    if (from[0] && strcmp(from, "dram") != 0 && strcmp(from, "loads") != 0)
        rd_fail(rd, sub, "bandwidth_from", "not dram or loads");
    g->bandwidth_from_dram = strcmp(from, "dram") == 0;
    get_num(rd, v, sub, "flop_rate", &g->flop_rate, NAN);
    get_num(rd, v, sub, "ridge", &g->ridge, NAN);
    GET_STR(rd, v, sub, "dram_reason", t->dram_reason);
}
/* ---- end arithmetic intensity ---- */

/* 16 hex digits into a 64-bit value. */
static void get_hex64(struct rd *rd, const json_t *o, const char *path, const char *key, uint64_t *dst) {
    char buf[24] = "";
    get_str(rd, o, path, key, buf, sizeof buf);
    if (!buf[0] || rd->failed) return;
    char *end = NULL;
    unsigned long long v = strtoull(buf, &end, 16);
    if (!end || *end || strlen(buf) != 16) rd_fail(rd, path, key, "expected 16 hex digits");
    else *dst = v;
}

/* A region or run kind ("path_a") into *dst. */
static void get_kind(struct rd *rd, const json_t *o, const char *path, const char *key, enum listing_kind *dst) {
    char buf[24] = "";
    get_str(rd, o, path, key, buf, sizeof buf);
    if (!buf[0] || rd->failed) return;
    int k = listing_kind_parse(buf);
    if (k < 0) rd_fail(rd, path, key, "expected before, path_a, path_b, reconverge or after");
    else *dst = (enum listing_kind)k;
}

#define GET_ULL(rd, o, path, key, dst) GET_INT(rd, o, path, key, dst, unsigned long long)

static void region_parse(struct rd *rd, const json_t *o, const char *path, struct listing_region *r) {
    get_kind(rd, o, path, "kind", &r->kind);
    GET_INT(rd, o, path, "instructions", r->instructions, unsigned);
    GET_ULL(rd, o, path, "warp_executions", r->warp);
    GET_ULL(rd, o, path, "thread_executions", r->thread);
    GET_ULL(rd, o, path, "pred_on_thread_executions", r->pred_on);
    r->lanes = NAN;
    get_num(rd, o, path, "lanes_per_execution", &r->lanes, NAN);
    const json_t *st = get_arr(rd, o, path, "stalls", LISTING_TOP_STALLS);
    r->has_stalls = st != NULL;
    for (size_t k = 0; st && k < json_array_size(st) && !rd->failed; k++) {
        char sp[224], key[32];
        snprintf(key, sizeof key, "stalls[%zu]", k);
        snprintf(sp, sizeof sp, "%s.%s", path, key);
        const json_t *e = json_array_get(st, k);
        if (!json_is_object(e)) {
            rd_fail(rd, path, key, "expected an object");
            break;
        }
        GET_STR(rd, e, sp, "reason", r->stalls[k].reason);
        get_num(rd, e, sp, "share", &r->stalls[k].share, NAN);
        r->nstalls = (unsigned)k + 1;
    }
}

static void run_parse(struct rd *rd, const json_t *o, const char *path, struct listing_run *r) {
    GET_INT(rd, o, path, "pc", r->pc, uint32_t);
    GET_INT(rd, o, path, "count", r->count, unsigned);
    GET_STR(rd, o, path, "opcode", r->opcode);
    GET_STR(rd, o, path, "sass", r->sass);
    GET_STR(rd, o, path, "last_sass", r->last_sass);
    GET_STR(rd, o, path, "file", r->file);
    GET_INT(rd, o, path, "line", r->line, unsigned);
    get_kind(rd, o, path, "region", &r->region);
    get_bool(rd, o, path, "guarded", &r->guarded);
    GET_ULL(rd, o, path, "warp_executions", r->warp);
    GET_ULL(rd, o, path, "thread_executions", r->thread);
    GET_ULL(rd, o, path, "pred_on_thread_executions", r->pred_on);
    r->lanes = NAN;
    get_num(rd, o, path, "lanes", &r->lanes, NAN);
    GET_ULL(rd, o, path, "divergent_targets", r->divergent);
    const json_t *t = json_object_get(o, "target"); /* absent or null: not known (older documents) */
    if (t && !json_is_null(t)) {
        GET_INT(rd, o, path, "target", r->target, uint32_t);
        r->has_target = 1;
    }
}

/* The runs of a profile: as many as a kernel has instructions, at most. */
#define REPORT_MAX_RUNS 65536

/* Object `v` (a row's `instructions`) at `path` into a new listing, or NULL
 * after a failure (recorded in rd) or when out of memory. */
static struct listing *listing_parse(struct rd *rd, const json_t *v, const char *path) {
    char sub[160];
    struct listing *l = listing_create();
    if (!l) {
        rd_fail(rd, path, "", "out of memory");
        return NULL;
    }
    GET_STR(rd, v, path, "source", l->source);
    GET_STR(rd, v, path, "kernel", l->kernel);
    get_hex64(rd, v, path, "cubin_crc", &l->cubin_crc);
    get_hex64(rd, v, path, "mask_hash", &l->mask_hash);
    const json_t *g = get_sub(rd, v, path, "grid", sub, sizeof sub);
    if (g) {
        GET_INT(rd, g, sub, "blocks", l->grid_blocks, unsigned);
        const json_t *b = get_arr(rd, g, sub, "block", 2);
        if (b && (json_array_size(b) != 2 || !json_is_integer(json_array_get(b, 0)) ||
                  !json_is_integer(json_array_get(b, 1)) || json_integer_value(json_array_get(b, 0)) < 0 ||
                  json_integer_value(json_array_get(b, 1)) < 0))
            rd_fail(rd, sub, "block", "expected [x, y]");
        else if (b) {
            l->block_x = (unsigned)json_integer_value(json_array_get(b, 0));
            l->block_y = (unsigned)json_integer_value(json_array_get(b, 1));
        }
    }
    get_num(rd, v, path, "scale", &l->scale, NAN);
    get_bool(rd, v, path, "cached", &l->cached);
    GET_STR(rd, v, path, "collected_utc", l->collected_utc);
    get_num(rd, v, path, "collect_ms", &l->collect_ms, NAN);
    GET_STR(rd, v, path, "disassembler", l->disassembler);
    GET_STR(rd, v, path, "disassembly_reason", l->disassembly_reason);
    get_num(rd, v, path, "mapped", &l->mapped, NAN);
    const json_t *regions = get_arr(rd, v, path, "regions", LISTING_KINDS);
    char key[32];
    for (size_t k = 0; regions && k < json_array_size(regions) && !rd->failed; k++) {
        snprintf(key, sizeof key, "regions[%zu]", k);
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        const json_t *e = json_array_get(regions, k);
        if (!json_is_object(e)) {
            rd_fail(rd, path, key, "expected an object");
            break;
        }
        region_parse(rd, e, sub, &l->regions[k]);
        l->nregions = (unsigned)k + 1;
    }
    const json_t *runs = get_arr(rd, v, path, "runs", REPORT_MAX_RUNS);
    for (size_t k = 0; runs && k < json_array_size(runs) && !rd->failed; k++) {
        snprintf(key, sizeof key, "runs[%zu]", k);
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        const json_t *e = json_array_get(runs, k);
        struct listing_run run;
        memset(&run, 0, sizeof run);
        if (!json_is_object(e)) {
            rd_fail(rd, path, key, "expected an object");
            break;
        }
        run_parse(rd, e, sub, &run);
        if (!rd->failed && listing_add_run(l, &run) != 0) rd_fail(rd, sub, "", "out of memory");
    }
    if (rd->failed) {
        listing_free(l);
        return NULL;
    }
    return l;
}

int report_instructions_parse(const json_t *o, struct listing **out, char *err) {
    struct rd rd = {err, 0};
    *out = NULL;
    if (!json_is_object(o)) {
        dv_seterr(err, "instructions: expected an object");
        return -1;
    }
    *out = listing_parse(&rd, o, "instructions");
    if (!*out) return -1;
    /* Read, then whole: a profile that reads but does not add up (no
     * regions, counts its runs do not give) is refused here, before any
     * cache takes it. */
    char field[64], why[ERR_LEN];
    if (listing_check(*out, field, sizeof field, why) != 0) {
        rd_fail(&rd, "instructions", field, why);
        listing_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

static void testimony_parse(struct rd *rd, const json_t *o, struct dv_testimony *t) {
    char sub[32];
    const json_t *w = get_sub(rd, o, "testimony", "witness", sub, sizeof sub);
    if (w) {
        get_bool(rd, w, sub, "requested", &t->witness_requested);
        get_bool(rd, w, sub, "taken", &t->witness_taken);
        GET_STR(rd, w, sub, "reason", t->witness_reason);
        get_num(rd, w, sub, "host_ms", &t->witness_ms, NAN);
    }
    const json_t *c = get_sub(rd, o, "testimony", "counters", sub, sizeof sub);
    if (c) {
        get_bool(rd, c, sub, "requested", &t->counters_requested);
        get_bool(rd, c, sub, "taken", &t->counters_taken);
        GET_STR(rd, c, sub, "reason", t->counters_reason);
        GET_STR(rd, c, sub, "library", t->counters_library);
        get_num(rd, c, sub, "host_ms", &t->counters_ms, NAN);
        get_num(rd, c, sub, "setup_ms", &t->counters_setup_ms, NAN);
    }
    const json_t *in = get_sub(rd, o, "testimony", "instructions", sub, sizeof sub);
    if (in) {
        get_bool(rd, in, sub, "requested", &t->instructions_requested);
        get_bool(rd, in, sub, "taken", &t->instructions_taken);
        GET_STR(rd, in, sub, "reason", t->instructions_reason);
        get_num(rd, in, sub, "host_ms", &t->instructions_ms, NAN);
        GET_INT(rd, in, sub, "cached_rows", t->instructions_cached_rows, unsigned);
    }
}

/* "lanes_block0": one string per warp of the row's block (threads_per_block
 * read first), each 32 of 'A' / 'B' per lane and '-' exactly for the lanes
 * past threads_per_block, as report_dump.c writes them; into the bits of
 * struct dv_row. Absent leaves the row without a lane map. */
static void lanes_parse(struct rd *rd, const json_t *o, const char *path, struct dv_row *w) {
    const size_t max = sizeof w->lanes_block0 / sizeof w->lanes_block0[0];
    const json_t *a = get_arr(rd, o, path, "lanes_block0", max);
    if (!a) return;
    const size_t want = ((size_t)w->threads_per_block + 31) / 32;
    if (json_array_size(a) != want) {
        char why[96];
        snprintf(why, sizeof why, "%zu warps for a block of %u threads (%zu warps)", json_array_size(a),
                 w->threads_per_block, want);
        rd_fail(rd, path, "lanes_block0", why);
        return;
    }
    for (size_t k = 0; k < want; k++) {
        const char *s = json_string_value(json_array_get(a, k));
        uint32_t bits = 0;
        int ok = s && json_string_length(json_array_get(a, k)) == 32;
        const unsigned present = dv_warp_lanes(w->threads_per_block, (unsigned)k);
        for (unsigned l = 0; ok && l < 32; l++) {
            if (l < present && s[l] == 'A') bits |= 1u << l;
            else if (!(l < present ? s[l] == 'B' : s[l] == '-')) ok = 0;
        }
        if (!ok) {
            char why[128];
            snprintf(why, sizeof why, "warp %zu: expected 32 of A or B per lane, - for each lane past the block's %u threads",
                     k, w->threads_per_block);
            rd_fail(rd, path, "lanes_block0", why);
            return;
        }
        w->lanes_block0[k] = bits;
    }
    w->lanes_warps = (unsigned)want;
}

/* An experiment's row: what it varies (`point`, null for any other row)
 * and its x in the table's fit (`fit_x`, null when it is no point of it). */
static void point_parse(struct rd *rd, const json_t *o, const char *p, struct dv_row *w) {
    char sub[112];
    w->fit_x = NAN;
    const json_t *v = json_object_get(o, "fit_x");
    if (v && !json_is_null(v)) {
        w->in_fit = 1;
        get_num(rd, o, p, "fit_x", &w->fit_x, NAN);
    }
    const json_t *pt = get_sub(rd, o, p, "point", sub, sizeof sub);
    if (!pt) return;
    struct dv_point *q = &w->point;
    GET_STR(rd, pt, sub, "arrangement", q->arrangement);
    GET_INT(rd, pt, sub, "k", q->k, unsigned);
    GET_INT(rd, pt, sub, "la", q->la, unsigned);
    GET_INT(rd, pt, sub, "lb", q->lb, unsigned);
    GET_STR(rd, pt, sub, "variant", q->variant);
    if (!q->arrangement[0]) rd_fail(rd, sub, "arrangement", "missing: a point says how its work is laid out");
}

/* "01234567" (8 hex digits) into *v. */
static void get_hex32(struct rd *rd, const json_t *o, const char *path, const char *key, uint32_t *v) {
    char buf[16] = "";
    GET_STR(rd, o, path, key, buf);
    if (!buf[0]) return;
    char *end = NULL;
    const unsigned long x = strtoul(buf, &end, 16);
    if (strlen(buf) != 8 || *end || x > 0xffffffffUL) rd_fail(rd, path, key, "expected 8 hex digits");
    else *v = (uint32_t)x;
}

/* A reconvergence row's join record (struct dv_join), null for none. */
static void join_parse(struct rd *rd, const json_t *o, const char *p, struct dv_join *j) {
    char sub[112], key[32], mp[160];
    const json_t *v = get_sub(rd, o, p, "join", sub, sizeof sub);
    if (!v) return;
    j->present = 1;
    j->groups_mean = j->lanes_mean = j->spread_median = j->spread_max = NAN;
    GET_INT(rd, v, sub, "warps", j->warps, unsigned);
    GET_INT(rd, v, sub, "reconverged_warps", j->reconverged, unsigned);
    get_num(rd, v, sub, "groups_per_warp", &j->groups_mean, NAN);
    GET_INT(rd, v, sub, "groups_max", j->groups_max, unsigned);
    get_num(rd, v, sub, "lanes_per_group", &j->lanes_mean, NAN);
    get_hex32(rd, v, sub, "expected_mask", &j->expected_mask);
    const json_t *masks = get_arr(rd, v, sub, "masks", DV_JOIN_MASKS);
    for (size_t k = 0; masks && k < json_array_size(masks) && !rd->failed; k++) {
        snprintf(key, sizeof key, "masks[%zu]", k);
        snprintf(mp, sizeof mp, "%s.%s", sub, key);
        const json_t *e = json_array_get(masks, k);
        if (!json_is_object(e)) {
            rd_fail(rd, sub, key, "expected an object");
            break;
        }
        get_hex32(rd, e, mp, "mask", &j->mask[k]);
        GET_INT(rd, e, mp, "groups", j->mask_groups[k], unsigned);
        j->nmasks = (unsigned)k + 1;
    }
    get_num(rd, v, sub, "clock_spread_cycles_median", &j->spread_median, NAN);
    get_num(rd, v, sub, "clock_spread_cycles_max", &j->spread_max, NAN);
    GET_INT(rd, v, sub, "blocks", j->blocks, unsigned);
    GET_STR(rd, v, sub, "verdict", j->verdict);
}

/* A measured row's correctness check; 0 when the row has none (a document
 * of a measurement cut short), else 1. */
static int check_parse(struct rd *rd, const json_t *o, const char *p, struct dv_check *chk) {
    char sub[96];
    chk->first_mismatch = -1;
    const json_t *c = get_sub(rd, o, p, "check", sub, sizeof sub);
    if (!c) return 0;
    double expected = 0, got = 0;
    get_bool(rd, c, sub, "ok", &chk->ok);
    GET_INT(rd, c, sub, "checked", chk->checked, unsigned long long);
    GET_INT(rd, c, sub, "mismatches", chk->mismatches, unsigned long long);
    get_ll(rd, c, sub, "first_mismatch", &chk->first_mismatch);
    get_num(rd, c, sub, "expected", &expected, NAN);
    get_num(rd, c, sub, "got", &got, NAN);
    chk->expected = (float)expected;
    chk->got = (float)got;
    return 1;
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
    lanes_parse(rd, o, p, w);
    get_num(rd, o, p, "predicted_efficiency", &w->predicted_efficiency, NAN);
    get_num(rd, o, p, "measured_efficiency", &w->measured_efficiency, NAN);
    get_num(rd, o, p, "agreement", &w->agreement, NAN);
    GET_INT(rd, o, p, "thread_fmas", w->thread_fmas, unsigned long long);
    point_parse(rd, o, p, w);
    intensity_parse(rd, o, p, &w->intensity);

    const json_t *t = get_sub(rd, o, p, "time_ms", sub, sizeof sub);
    if (!t) return;
    w->measured = 1;
    /* A document from before the intervals has none: unknown, not 0. */
    w->median_ci_ms = w->ratio_ci = (struct dv_ci){NAN, NAN};
    w->ratio_level = w->ratio_halfwidth = w->ratio_of_medians = w->spread_excess = w->spread_drift = NAN;
    get_num(rd, t, sub, "median", &w->time_ms.median, NAN);
    get_num(rd, t, sub, "min", &w->time_ms.min, NAN);
    get_num(rd, t, sub, "max", &w->time_ms.max, NAN);
    get_num(rd, t, sub, "mean", &w->time_ms.mean, NAN);
    get_num(rd, t, sub, "stdev", &w->time_ms.stdev, NAN);
    GET_INT(rd, o, p, "samples", w->time_ms.samples, unsigned);
    get_num(rd, o, p, "noise", &w->time_ms.noise, NAN);
    get_num(rd, o, p, "ratio", &w->ratio, NAN);
    ci_parse(rd, o, p, "median_ci_ms", &w->median_ci_ms);
    GET_INT(rd, o, p, "rounds_dropped", w->rounds_dropped, unsigned);
    spread_flags_parse(rd, o, p, &w->spread_flags);
    get_num(rd, o, p, "spread_excess", &w->spread_excess, NAN);
    get_num(rd, o, p, "spread_drift", &w->spread_drift, NAN);
    ci_parse(rd, o, p, "ratio_ci", &w->ratio_ci);
    get_num(rd, o, p, "ratio_level", &w->ratio_level, NAN);
    char method[32] = "";
    GET_STR(rd, o, p, "ratio_method", method);
    if (method[0]) {
        int m = RATIO_OF_MEDIANS;
        while (m <= RATIO_OF_ROUNDS && strcmp(ratio_method_name(m), method) != 0) m++;
        if (m > RATIO_OF_ROUNDS) rd_fail(rd, p, "ratio_method", "unknown ratio method");
        w->ratio_method = m;
    }
    get_num(rd, o, p, "ratio_halfwidth", &w->ratio_halfwidth, NAN);
    get_num(rd, o, p, "ratio_of_medians", &w->ratio_of_medians, NAN);
    get_num(rd, o, p, "floor_fraction", &w->floor_fraction, NAN);

    if (!check_parse(rd, o, p, &w->check)) return;
    observed_parse(rd, o, p, &w->observed);
    counters_parse(rd, o, p, &w->counters);
    char ip[112];
    const json_t *in = get_sub(rd, o, p, "instructions", ip, sizeof ip);
    if (in) w->instructions = listing_parse(rd, in, ip);
    join_parse(rd, o, p, &w->join);
}

/* A table's fit (struct dv_fit), null for none. */
static void fit_parse(struct rd *rd, const json_t *o, const char *p, struct dv_fit *f) {
    char sub[64];
    const json_t *v = get_sub(rd, o, p, "fit", sub, sizeof sub);
    if (!v) return;
    f->present = 1;
    f->a = f->b = f->b_over_a = f->level = f->residual_rms_ms = f->residual_max_rel = NAN;
    f->a_ci = f->b_ci = f->b_over_a_ci = (struct dv_ci){NAN, NAN};
    GET_STR(rd, v, sub, "x", f->x);
    GET_INT(rd, v, sub, "points", f->points, unsigned);
    GET_INT(rd, v, sub, "rounds", f->rounds, unsigned);
    get_num(rd, v, sub, "a_ms", &f->a, NAN);
    ci_parse(rd, v, sub, "a_ci", &f->a_ci);
    get_num(rd, v, sub, "b_ms", &f->b, NAN);
    ci_parse(rd, v, sub, "b_ci", &f->b_ci);
    get_num(rd, v, sub, "b_over_a", &f->b_over_a, NAN);
    ci_parse(rd, v, sub, "b_over_a_ci", &f->b_over_a_ci);
    get_num(rd, v, sub, "level", &f->level, NAN);
    get_num(rd, v, sub, "residual_rms_ms", &f->residual_rms_ms, NAN);
    get_num(rd, v, sub, "residual_max_rel", &f->residual_max_rel, NAN);
}

/* Each row's `versus` (a row's name) as the index dv_row_reference()
 * reads, once every row is in; a name no row has is an error. */
static void versus_parse(struct rd *rd, const json_t *rows, const char *p, struct dv_table *t) {
    char rp[80];
    for (size_t i = 0; rows && i < json_array_size(rows) && i < t->nrows && !rd->failed; i++) {
        snprintf(rp, sizeof rp, "%s.rows[%zu]", p, i);
        char name[PREDICATE_TEXT_LEN] = "";
        GET_STR(rd, json_array_get(rows, i), rp, "versus", name);
        if (!name[0]) continue;
        unsigned k = 0;
        while (k < t->nrows && strcmp(t->rows[k].name, name) != 0) k++;
        if (k == t->nrows) rd_fail(rd, rp, "versus", "names no row of the table");
        else t->rows[i].versus = k + 1;
    }
}

static void table_parse(struct rd *rd, const json_t *o, unsigned index, struct dv_table *t) {
    char p[32], rp[80];
    snprintf(p, sizeof p, "tables[%u]", index);
    GET_STR(rd, o, p, "id", t->id);
    GET_STR(rd, o, p, "title", t->title);
    GET_STR(rd, o, p, "kernel", t->kernel);
    GET_STR(rd, o, p, "baseline", t->baseline);
    GET_INT(rd, o, p, "baseline_row", t->baseline_row, int);
    GET_STR(rd, o, p, "note", t->note);
    GET_STR(rd, o, p, "suggested_baseline", t->suggested_baseline);
    get_num(rd, o, p, "noise_limit", &t->noise_limit, NAN);
    get_bool(rd, o, p, "noise_ok", &t->noise_ok);
    /* A document from before the intervals: its noise verdict stands in. */
    t->halfwidth_target = t->noise_limit;
    t->intervals_ok = t->noise_ok;
    t->worst_row = -1;
    t->worst_halfwidth = t->timer_resolution_ms = NAN;
    t->cost_witness_ms = t->cost_counters_ms = NAN;
    get_num(rd, o, p, "halfwidth_target", &t->halfwidth_target, NAN);
    get_bool(rd, o, p, "intervals_ok", &t->intervals_ok);
    GET_STR(rd, o, p, "stop_reason", t->stop_reason);
    get_ll_int(rd, o, p, "worst_row", &t->worst_row);
    get_num(rd, o, p, "worst_halfwidth", &t->worst_halfwidth, NAN);
    get_num(rd, o, p, "timer_resolution_ms", &t->timer_resolution_ms, NAN);
    get_num(rd, o, p, "gpu_time_ms", &t->gpu_time_ms, NAN);
    GET_STR(rd, o, p, "kernel_iterations", t->kernel_iterations);
    GET_STR(rd, o, p, "experiment", t->experiment);
    fit_parse(rd, o, p, &t->fit);
    roofline_parse(rd, o, p, t);
    char cp[96];
    const json_t *cost = get_sub(rd, o, p, "testimony_cost", cp, sizeof cp);
    if (cost) {
        long long launches = 0, blocks = 0;
        get_num(rd, cost, cp, "witness_host_ms", &t->cost_witness_ms, NAN);
        get_num(rd, cost, cp, "counters_host_ms", &t->cost_counters_ms, NAN);
        get_ll(rd, cost, cp, "counters_launches", &launches);
        get_ll(rd, cost, cp, "counters_blocks", &blocks);
        if (launches < 0 || launches > UINT_MAX) rd_fail(rd, cp, "counters_launches", "out of range");
        else if (blocks < 0) rd_fail(rd, cp, "counters_blocks", "out of range");
        t->counters_launches = (unsigned)(launches > 0 && launches <= UINT_MAX ? launches : 0);
        t->counters_blocks = (unsigned long long)(blocks > 0 ? blocks : 0);
    }
    const json_t *batch = get_sub(rd, o, p, "batch", cp, sizeof cp);
    if (batch) {
        GET_INT(rd, batch, cp, "readers", t->batch_readers, unsigned);
        GET_INT(rd, batch, cp, "rows", t->batch_rows, unsigned);
        if (!rd->failed && (t->batch_readers < 2 || t->batch_rows < 1 || t->batch_rows > DV_MAX_ROWS))
            rd_fail(rd, cp, "readers", "a batch is of at least 2 readers and 1 to 16 rows");
    }
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
    versus_parse(rd, rows, p, t);
}

int report_parse(const char *json, size_t len, struct dv_report *r, char *err) {
    json_error_t jerr;
    json_t *doc = jsonout_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        memset(r, 0, sizeof *r);
        dv_seterr(err, "report: line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
        return -1;
    }
    int rc = report_parse_json(doc, r, err);
    json_decref(doc);
    return rc;
}

int report_parse_json(const json_t *doc, struct dv_report *r, char *err) {
    struct rd rd = {err, 0};
    const json_t *v;

    memset(r, 0, sizeof *r);
    if (!json_is_object(doc)) {
        dv_seterr(err, "report: expected a JSON object");
        return -1;
    }
    v = json_object_get(doc, "schema");
    if (!json_is_string(v) || strcmp(json_string_value(v), REPORT_SCHEMA) != 0) {
        dv_seterr(err, "schema: expected \"%s\"", REPORT_SCHEMA);
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
    if ((v = get_obj(&rd, doc, "", "testimony"))) testimony_parse(&rd, v, &r->testimony);
    if ((v = json_object_get(doc, "sort")) && !rd.failed && report_sort_parse(v, &r->sort, err) != 0) /* data-sort */
        return -1;
    get_num(&rd, doc, "", "wall_time_ms", &r->wall_time_ms, NAN);
    GET_STR(&rd, doc, "", "started_utc", r->started_utc);
    GET_STR(&rd, doc, "", "finished_utc", r->finished_utc);
    return rd.failed ? -1 : 0;
}

