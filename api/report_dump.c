/* report_dump.c -- struct dv_report as the divergence.v1 document.
 *
 * report_json() builds the document the project's one way (api/jsonout.h:
 * jsonout_put / jsonout_append), one builder per level (device, build,
 * config, table, row); any NULL along the way sets the one `bad` flag, which
 * turns into a NULL result, and the text is written by jsonout_dumpf(), which
 * refuses a dump during which an allocation failed, so out of memory never
 * yields half a document. Non-finite numbers
 * are written as null (JSON has no NaN); quantities that are unknown when 0
 * (clocks, the FMA floor, CUDA versions, the compute capability) are null too.
 * Reals are written with 15 significant digits: enough for any timing, and a
 * document read back and written again is byte for byte the same. When the
 * report is not measured (analyze) the timing fields are left out.
 *
 * The reader is report_load.c and the text layout report_text.c, each in a
 * file of its own: writer and reader change for different reasons (a field
 * the writer adds, a document the reader must still accept), each reads
 * whole beside the struct it walks, and the round trip in test_report.c is
 * what ties them together.
 */
#include "api/report.h"
#include "api/jsonout.h"
#include "api/report_sort.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/listing/listing_shape.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kernels/model/model/analysis.h"
#include "kernels/model/model/findings.h"
#include "kernels/model/stats/ratio.h"
#include "kernels/model/stats/spread.h"

#define REPORT_JSON_FLAGS JSON_REAL_PRECISION(REPORT_REAL_PRECISION)

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

#define put jsonout_put /* sets `key` to `v` (stolen); a failure sets *bad */

/* [a, b] (both stolen); a failure sets *bad. */
static json_t *pair(json_t *a, json_t *b, int *bad) {
    json_t *arr = json_array();
    jsonout_append(arr, a, bad);
    jsonout_append(arr, b, bad);
    return arr;
}

/* `o` when it and everything put under it were built, else NULL (and `o`
 * freed): a caller never sees half an object. */
static json_t *built(json_t *o, int bad) {
    if (o && !bad) return o;
    json_decref(o);
    return NULL;
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
    put(o, "kernel_digest", TEXT(b->kernel_digest), bad);
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
    put(o, "block", pair(integer(c->block_x), integer(c->block_y), bad), bad);
    put(o, "threads", integer((long long)c->threads), bad);
    put(o, "iterations", integer(c->iterations), bad);
    put(o, "fmas_per_launch", integer((long long)c->fmas_per_launch), bad);
    put(o, "bytes_per_launch", integer((long long)c->bytes_per_launch), bad);
    put(o, "fma_floor_ms", pos(c->fma_floor_ms), bad);
    put(o, "max_halfwidth", num(c->max_noise), bad);
    put(o, "max_noise", num(c->max_noise), bad);
    put(o, "budget_ms", num(c->budget_ms), bad);
    put(o, "min_samples", integer(c->min_samples), bad);
    put(o, "max_samples", integer(c->max_samples), bad);
    return o;
}

static json_t *count_json(const struct dv_count *c, int *bad) {
    json_t *o = json_object();
    put(o, "min", integer((long long)c->min), bad);
    put(o, "max", integer((long long)c->max), bad);
    put(o, "total", integer((long long)c->total), bad);
    return o;
}

/* An interval's ends as {"lo", "hi"}; null when neither is finite. */
static json_t *ci_json(const struct dv_ci *c, int *bad) {
    if (!isfinite(c->lo) && !isfinite(c->hi)) return json_null();
    json_t *o = json_object();
    put(o, "lo", num(c->lo), bad);
    put(o, "hi", num(c->hi), bad);
    return o;
}

/* The SPREAD_* bits as their names, in bit order. */
static json_t *spread_flags_json(unsigned flags, int *bad) {
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{SPREAD_TAIL, "tail"}, {SPREAD_SPLIT, "split"}, {SPREAD_DRIFT, "drift"}};
    json_t *a = json_array();
    for (size_t i = 0; a && i < sizeof names / sizeof names[0]; i++)
        if (flags & names[i].bit) jsonout_append(a, json_string(names[i].name), bad);
    return a;
}

static json_t *pair_ull(const unsigned long long v[2], int *bad) {
    return pair(integer((long long)v[0]), integer((long long)v[1]), bad);
}

/* The witness of a row (struct dv_observed), or null when not taken. */
static json_t *observed_json(const struct dv_observed *w, int *bad) {
    if (!w->present) return json_null();
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "split_warps_per_block", num(w->split_warps.per_block), bad);
    put(o, "split_warps", count_json(&w->split_warps, bad), bad);
    put(o, "path_runs_per_block", num(w->path_runs.per_block), bad);
    put(o, "path_runs", count_json(&w->path_runs, bad), bad);
    put(o, "iterations", integer(w->per), bad);
    put(o, "runs", pair_ull(w->runs, bad), bad);
    put(o, "partial_runs", pair_ull(w->split, bad), bad);
    put(o, "lanes", pair_ull(w->lanes, bad), bad);
    put(o, "lanes_per_run", pair(num(w->lanes_per_run[0]), num(w->lanes_per_run[1]), bad), bad);
    json_t *hist = json_array();
    for (unsigned p = 0; hist && p < 2; p++) {
        json_t *bins = json_array();
        for (unsigned k = 0; bins && k < 33; k++) jsonout_append(bins, integer((long long)w->hist[p][k]), bad);
        jsonout_append(hist, bins, bad);
    }
    put(o, "lanes_histogram", hist, bad);
    put(o, "agrees", json_boolean(w->agrees), bad);
    put(o, "predicated", json_boolean(w->predicated), bad);
    put(o, "first_difference", w->first_difference < 0 ? json_null() : integer(w->first_difference), bad);
    if (w->blocks_witnessed) put(o, "blocks_witnessed", integer(w->blocks_witnessed), bad);
    put(o, "verdict", TEXT(w->verdict), bad);
    return o;
}

/* The hardware counters of a row (struct dv_counters), or null. */
static json_t *counters_json(const struct dv_counters *c, int *bad) {
    if (!c->present) return json_null();
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "smsp__sass_branch_targets_threads_divergent.sum", num(c->branch_targets_divergent), bad);
    put(o, "smsp__sass_branch_targets.sum", num(c->branch_targets), bad);
    put(o, "smsp__sass_average_branch_targets_threads_uniform.pct", num(c->branch_uniform_pct), bad);
    put(o, "smsp__thread_inst_executed_per_inst_executed.ratio", num(c->threads_per_inst), bad);
    put(o, "smsp__inst_executed.sum", num(c->inst_executed), bad);
    put(o, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", num(c->ffma_threads), bad);
    put(o, "warp_execution_efficiency", num(c->warp_efficiency), bad);
    put(o, "divergent_branches_per_block", num(c->divergent_per_block), bad);
    put(o, "model_split_warps_per_block", num(c->model_split_per_block), bad);
    put(o, "warp_instructions_per_fma", num(c->inst_per_fma), bad);
    put(o, "instructions_vs_baseline", num(c->inst_vs_baseline), bad);
    put(o, "predicated", json_boolean(c->predicated), bad);
    put(o, "verdict", TEXT(c->verdict), bad);
    /* arithmetic intensity: the DRAM pass's count, absent where none ran
     * (every other row's counters read as they did before it) */
    if (c->dram_present) put(o, "dram__bytes_read.sum", num(c->dram_bytes_read), bad);
    return o;
}

/* A string, or null when empty. */
static json_t *text_or_null(const char *s, size_t size) { return s[0] ? text(s, size) : json_null(); }
#define TEXT_OR_NULL(field) text_or_null((field), sizeof(field))

/* A 64-bit value as 16 hex digits. */
static json_t *hex64(uint64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
    return json_string(buf);
}

static json_t *region_json(const struct listing_region *r, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "kind", json_string(listing_kind_name(r->kind)), bad);
    put(o, "instructions", integer(r->instructions), bad);
    put(o, "warp_executions", integer((long long)r->warp), bad);
    put(o, "thread_executions", integer((long long)r->thread), bad);
    put(o, "pred_on_thread_executions", integer((long long)r->pred_on), bad);
    put(o, "lanes_per_execution", num(r->lanes), bad);
    json_t *stalls = r->has_stalls ? json_array() : json_null();
    for (unsigned k = 0; r->has_stalls && stalls && k < r->nstalls && k < LISTING_TOP_STALLS; k++) {
        json_t *e = json_object();
        put(e, "reason", TEXT(r->stalls[k].reason), bad);
        put(e, "share", num(r->stalls[k].share), bad);
        jsonout_append(stalls, e, bad);
    }
    put(o, "stalls", stalls, bad);
    return o;
}

static json_t *run_json(const struct listing_run *r, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "pc", integer(r->pc), bad);
    put(o, "count", integer(r->count), bad);
    put(o, "opcode", TEXT_OR_NULL(r->opcode), bad);
    put(o, "sass", TEXT_OR_NULL(r->sass), bad);
    put(o, "last_sass", TEXT_OR_NULL(r->last_sass), bad);
    put(o, "file", TEXT_OR_NULL(r->file), bad);
    put(o, "line", r->line ? integer(r->line) : json_null(), bad);
    put(o, "region", json_string(listing_kind_name(r->region)), bad);
    put(o, "guarded", json_boolean(r->guarded), bad);
    put(o, "warp_executions", integer((long long)r->warp), bad);
    put(o, "thread_executions", integer((long long)r->thread), bad);
    put(o, "pred_on_thread_executions", integer((long long)r->pred_on), bad);
    put(o, "lanes", num(r->lanes), bad);
    put(o, "divergent_targets", integer((long long)r->divergent), bad);
    put(o, "target", r->has_target ? integer(r->target) : json_null(), bad);
    return o;
}

/* How the profile's paths were laid out (model/listing/listing_shape.h):
 * derived from the runs, written for readers, not read back. */
static json_t *shape_json(const struct listing *l, int *bad) {
    struct listing_shape sh;
    listing_shape(l, &sh);
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "branching", json_string(listing_branching_name(sh.branching)), bad);
    put(o, "path_ffma", integer(sh.path_ffma), bad);
    put(o, "guarded_ffma", integer(sh.guarded_ffma), bad);
    put(o, "window_bssy", integer(sh.window_bssy), bad);
    put(o, "window_bsync", integer(sh.window_bsync), bad);
    put(o, "window_guarded_bra", integer(sh.window_guarded_bra), bad);
    put(o, "bssy", integer(sh.bssy), bad);
    put(o, "bsync", integer(sh.bsync), bad);
    put(o, "warpsync", integer(sh.warpsync), bad);
    put(o, "path_lanes", num(sh.path_lanes), bad);
    put(o, "guarded_lanes", num(sh.guarded_lanes), bad);
    put(o, "guarded_lanes_on", num(sh.guarded_lanes_on), bad);
    put(o, "join_pc", sh.has_join ? integer(sh.join_pc) : json_null(), bad);
    put(o, "join_is_tail", json_boolean(sh.join_is_tail), bad);
    put(o, "sync_at_join", json_boolean(sh.sync_at_join), bad);
    put(o, "join_lanes", num(sh.join_lanes), bad);
    put(o, "text", TEXT(sh.text), bad);
    return o;
}

/* A row's instruction profile (model/listing/listing.h), or null when not taken. */
static json_t *instructions_json(const struct listing *l, int *bad) {
    if (!l) return json_null();
    json_t *o = json_object(), *grid = json_object(), *regions = json_array(), *runs = json_array();
    if (!o || !grid || !regions || !runs) {
        json_decref(o);
        json_decref(grid);
        json_decref(regions);
        json_decref(runs);
        return NULL;
    }
    put(o, "source", TEXT(l->source), bad);
    put(o, "kernel", TEXT(l->kernel), bad);
    put(o, "cubin_crc", hex64(l->cubin_crc), bad);
    put(o, "mask_hash", hex64(l->mask_hash), bad);
    put(grid, "blocks", integer(l->grid_blocks), bad);
    put(grid, "block", pair(integer(l->block_x), integer(l->block_y), bad), bad);
    put(o, "grid", grid, bad);
    put(o, "scale", num(l->scale), bad);
    put(o, "cached", json_boolean(l->cached), bad);
    put(o, "collected_utc", TEXT(l->collected_utc), bad);
    put(o, "collect_ms", num(l->collect_ms), bad);
    put(o, "disassembler", TEXT_OR_NULL(l->disassembler), bad);
    put(o, "disassembly_reason", TEXT_OR_NULL(l->disassembly_reason), bad);
    put(o, "mapped", num(l->mapped), bad);
    for (unsigned k = 0; k < l->nregions && k < LISTING_KINDS; k++) jsonout_append(regions, region_json(&l->regions[k], bad), bad);
    put(o, "regions", regions, bad);
    for (unsigned k = 0; k < l->nruns; k++) jsonout_append(runs, run_json(&l->runs[k], bad), bad);
    put(o, "runs", runs, bad);
    put(o, "shape", shape_json(l, bad), bad);
    return o;
}

json_t *report_instructions_json(const struct listing *l) {
    int bad = 0;
    json_t *o = instructions_json(l, &bad);
    return built(o, bad);
}

static json_t *testimony_json(const struct dv_testimony *t, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    json_t *w = json_object();
    put(w, "requested", json_boolean(t->witness_requested), bad);
    put(w, "taken", json_boolean(t->witness_taken), bad);
    put(w, "reason", t->witness_taken ? json_null() : TEXT(t->witness_reason), bad);
    put(w, "host_ms", num(t->witness_ms), bad);
    put(o, "witness", w, bad);
    json_t *c = json_object();
    put(c, "requested", json_boolean(t->counters_requested), bad);
    put(c, "taken", json_boolean(t->counters_taken), bad);
    put(c, "reason", t->counters_taken ? json_null() : TEXT(t->counters_reason), bad);
    put(c, "library", t->counters_library[0] ? TEXT(t->counters_library) : json_null(), bad);
    put(c, "host_ms", num(t->counters_ms), bad);
    put(c, "setup_ms", num(t->counters_setup_ms), bad);
    put(o, "counters", c, bad);
    json_t *in = json_object();
    put(in, "requested", json_boolean(t->instructions_requested), bad);
    put(in, "taken", json_boolean(t->instructions_taken), bad);
    put(in, "reason", t->instructions_taken ? json_null() : TEXT(t->instructions_reason), bad);
    put(in, "host_ms", num(t->instructions_ms), bad);
    put(in, "cached_rows", integer(t->instructions_cached_rows), bad);
    put(o, "instructions", in, bad);
    return o;
}

/* Block 0's lane map (struct dv_row.lanes_block0) as one string per warp:
 * 'A' or 'B' per lane by its bit, '-' for a lane past threads_per_block
 * (report_load.c reads the same rule back). */
static json_t *lanes_json(const struct dv_row *w, int *bad) {
    json_t *a = json_array();
    const unsigned nwarps = w->lanes_warps < DV_MAX_THREADS_PER_BLOCK / 32 ? w->lanes_warps : DV_MAX_THREADS_PER_BLOCK / 32;
    for (unsigned k = 0; a && k < nwarps; k++) {
        char lanes[33];
        const unsigned present = k * 32 < w->threads_per_block ? dv_warp_lanes(w->threads_per_block, k) : 0;
        for (unsigned l = 0; l < 32; l++) lanes[l] = l >= present ? '-' : ((w->lanes_block0[k] >> l) & 1u) ? 'A' : 'B';
        lanes[32] = '\0';
        jsonout_append(a, json_string(lanes), bad);
    }
    return a;
}

/* What an experiment's row varies (struct dv_point), or null for any other row. */
static json_t *point_json(const struct dv_point *p, int *bad) {
    if (!p->arrangement[0]) return json_null();
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "arrangement", TEXT(p->arrangement), bad);
    put(o, "k", p->k ? integer(p->k) : json_null(), bad);
    put(o, "la", p->la ? integer(p->la) : json_null(), bad);
    put(o, "lb", p->lb ? integer(p->lb) : json_null(), bad);
    put(o, "variant", TEXT_OR_NULL(p->variant), bad);
    return o;
}

/* ---- arithmetic intensity ---- */
/* An arithmetic-intensity row's point and roofline figures (struct
 * dv_intensity; the measured ones null until measured). `dram` is the
 * row's DRAM bytes read (NaN: none). */
static json_t *intensity_json(const struct dv_intensity *m, double dram, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "variant", TEXT(m->variant), bad);
    put(o, "fmas", m->fmas ? integer(m->fmas) : json_null(), bad);
    put(o, "loads", m->loads ? integer(m->loads) : json_null(), bad);
    put(o, "intensity", num(m->intensity), bad);
    put(o, "flops", num(m->flops), bad);
    put(o, "bytes", num(m->bytes), bad);
    put(o, "dram_bytes", num(dram), bad);
    put(o, "flop_rate", num(m->flop_rate), bad);
    put(o, "bandwidth_gbs", num(m->bandwidth_gbs), bad);
    put(o, "dram_gbs", num(m->dram_gbs), bad);
    put(o, "dram_intensity", num(m->dram_intensity), bad);
    put(o, "roofline", num(m->roofline), bad);
    put(o, "roofline_fraction", num(m->roofline_fraction), bad);
    put(o, "bound", TEXT_OR_NULL(m->bound), bad);
    return o;
}

/* An arithmetic-intensity table's measured ridge (struct dv_ridge). */
static json_t *roofline_json(const struct dv_table *t, int *bad) {
    json_t *o = json_object();
    if (!o) return NULL;
    const struct dv_ridge *g = &t->ridge;
    put(o, "present", json_boolean(g->present), bad);
    put(o, "bandwidth_gbs", num(g->bandwidth_gbs), bad);
    put(o, "bandwidth_from", json_string(g->bandwidth_from_dram ? "dram" : "loads"), bad);
    put(o, "flop_rate", num(g->flop_rate), bad);
    put(o, "ridge", num(g->ridge), bad);
    put(o, "dram_reason", TEXT_OR_NULL(t->dram_reason), bad);
    return o;
}
/* ---- end arithmetic intensity ---- */

/* A reconvergence row's join record (struct dv_join), or null. */
static json_t *join_json(const struct dv_join *j, int *bad) {
    if (!j->present) return json_null();
    json_t *o = json_object(), *masks = json_array();
    if (!o || !masks) {
        json_decref(o);
        json_decref(masks);
        return NULL;
    }
    char hex[16];
    put(o, "warps", integer(j->warps), bad);
    put(o, "reconverged_warps", integer(j->reconverged), bad);
    put(o, "groups_per_warp", num(j->groups_mean), bad);
    put(o, "groups_max", integer(j->groups_max), bad);
    put(o, "lanes_per_group", num(j->lanes_mean), bad);
    snprintf(hex, sizeof hex, "%08x", (unsigned)j->expected_mask);
    put(o, "expected_mask", json_string(hex), bad);
    for (unsigned k = 0; k < j->nmasks && k < DV_JOIN_MASKS; k++) {
        json_t *e = json_object();
        snprintf(hex, sizeof hex, "%08x", (unsigned)j->mask[k]);
        put(e, "mask", json_string(hex), bad);
        put(e, "groups", integer(j->mask_groups[k]), bad);
        jsonout_append(masks, e, bad);
    }
    put(o, "masks", masks, bad);
    put(o, "clock_spread_cycles_median", num(j->spread_median), bad);
    put(o, "clock_spread_cycles_max", num(j->spread_max), bad);
    put(o, "blocks", integer(j->blocks), bad);
    put(o, "verdict", TEXT(j->verdict), bad);
    return o;
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
    put(o, "warps_split", count_json(&w->warps_split, bad), bad);
    put(o, "threads_per_block", integer(w->threads_per_block), bad);
    put(o, "threads_on_a_per_block", num(w->threads_on_a.per_block), bad);
    put(o, "threads_on_a", count_json(&w->threads_on_a, bad), bad);
    put(o, "path_runs_per_block", num(w->path_runs.per_block), bad);
    put(o, "path_runs", count_json(&w->path_runs, bad), bad);
    put(o, "predicted_ratio", num(w->predicted_ratio), bad);
    put(o, "comparable", json_boolean(w->comparable), bad);
    if (!w->comparable) put(o, "comparable_reason", TEXT(w->comparable_reason), bad);
    put(o, "note", TEXT(w->note), bad);
    if (w->lanes_warps) put(o, "lanes_block0", lanes_json(w, bad), bad);
    /* Scenario rows carry the worked examples' efficiency model beside the
     * ratio, and the FMAs their threads need (the work compared rows share). */
    if (w->kernel == DV_KERNEL_SCENARIO) {
        put(o, "predicted_efficiency", num(w->predicted_efficiency), bad);
        put(o, "thread_fmas", integer((long long)w->thread_fmas), bad);
        if (w->point.arrangement[0]) put(o, "point", point_json(&w->point, bad), bad);
        if (w->in_fit) put(o, "fit_x", num(w->fit_x), bad);
        if (w->intensity.present) /* arithmetic intensity */
            put(o, "intensity",
                intensity_json(&w->intensity,
                               measured && w->counters.dram_present ? w->counters.dram_bytes_read : NAN, bad),
                bad);
    }
    if (!measured) return o;
    if (w->kernel == DV_KERNEL_SCENARIO) {
        put(o, "measured_efficiency", num(w->measured_efficiency), bad);
        put(o, "agreement", num(w->agreement), bad);
    }

    json_t *tm = json_object();
    put(tm, "median", num(w->time_ms.median), bad);
    put(tm, "min", num(w->time_ms.min), bad);
    put(tm, "max", num(w->time_ms.max), bad);
    put(tm, "mean", num(w->time_ms.mean), bad);
    put(tm, "stdev", num(w->time_ms.stdev), bad);
    put(o, "time_ms", tm, bad);
    put(o, "median_ci_ms", ci_json(&w->median_ci_ms, bad), bad);
    put(o, "samples", integer(w->time_ms.samples), bad);
    put(o, "rounds_dropped", integer(w->rounds_dropped), bad);
    put(o, "noise", num(w->time_ms.noise), bad);
    put(o, "spread_flags", spread_flags_json(w->spread_flags, bad), bad);
    put(o, "spread_excess", num(w->spread_excess), bad);
    put(o, "spread_drift", num(w->spread_drift), bad);
    put(o, "ratio", num(w->ratio), bad);
    put(o, "ratio_ci", ci_json(&w->ratio_ci, bad), bad);
    put(o, "ratio_level", num(w->ratio_level), bad);
    put(o, "ratio_method", json_string(ratio_method_name(w->ratio_method)), bad);
    put(o, "ratio_halfwidth", num(w->ratio_halfwidth), bad);
    put(o, "ratio_of_medians", num(w->ratio_of_medians), bad);
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
    put(o, "observed", observed_json(&w->observed, bad), bad);
    put(o, "counters", counters_json(&w->counters, bad), bad);
    put(o, "instructions", instructions_json(w->instructions, bad), bad);
    if (w->join.present) put(o, "join", join_json(&w->join, bad), bad);
    return o;
}

json_t *report_row_json(const struct dv_row *row, int measured) {
    int bad = 0;
    json_t *o = row_json(row, measured, &bad);
    return built(o, bad);
}

/* Part 2 read both ways (model/model/experiment.h: experiment_readings), with the
 * rows named as the document names them. */
static json_t *readings_json(const struct dv_table *t, const struct dv_reading *rd, unsigned n, int measured,
                             int *bad) {
    json_t *arr = json_array();
    for (unsigned i = 0; arr && i < n; i++) {
        json_t *o = json_object();
        put(o, "kind", json_string(experiment_reading_kind_name(rd[i].kind)), bad);
        put(o, "row", TEXT(t->rows[rd[i].row].name), bad);
        put(o, "against", TEXT(t->rows[rd[i].against].name), bad);
        put(o, "ratio", measured ? num(rd[i].ratio) : json_null(), bad); /* timings left out: none */
        put(o, "predicted", num(rd[i].predicted), bad);
        put(o, "sentence", TEXT(rd[i].sentence), bad);
        jsonout_append(arr, o, bad);
    }
    return arr;
}

/* A table's fit (struct dv_fit), or null. */
static json_t *fit_json(const struct dv_fit *f, int *bad) {
    if (!f->present) return json_null();
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "x", TEXT(f->x), bad);
    put(o, "points", integer(f->points), bad);
    put(o, "rounds", integer(f->rounds), bad);
    put(o, "a_ms", num(f->a), bad);
    put(o, "a_ci", ci_json(&f->a_ci, bad), bad);
    put(o, "b_ms", num(f->b), bad);
    put(o, "b_ci", ci_json(&f->b_ci, bad), bad);
    put(o, "b_over_a", num(f->b_over_a), bad);
    put(o, "b_over_a_ci", ci_json(&f->b_over_a_ci, bad), bad);
    put(o, "level", num(f->level), bad);
    put(o, "residual_rms_ms", num(f->residual_rms_ms), bad);
    put(o, "residual_max_rel", num(f->residual_max_rel), bad);
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
    if (t->note[0]) put(o, "note", TEXT(t->note), bad);
    if (t->suggested_baseline[0]) put(o, "suggested_baseline", TEXT(t->suggested_baseline), bad);
    put(o, "noise_limit", num(t->noise_limit), bad);
    put(o, "halfwidth_target", num(t->halfwidth_target), bad);
    if (t->experiment[0]) put(o, "experiment", TEXT(t->experiment), bad);
    if (measured) {
        put(o, "noise_ok", json_boolean(t->noise_ok), bad);
        put(o, "intervals_ok", json_boolean(t->intervals_ok), bad);
        put(o, "stop_reason", TEXT(t->stop_reason), bad);
        put(o, "worst_row", t->worst_row < 0 ? json_null() : integer(t->worst_row), bad);
        put(o, "worst_halfwidth", num(t->worst_halfwidth), bad);
        put(o, "timer_resolution_ms", num(t->timer_resolution_ms), bad);
        put(o, "gpu_time_ms", num(t->gpu_time_ms), bad);
        if (t->kernel_iterations[0]) put(o, "kernel_iterations", TEXT(t->kernel_iterations), bad);
        json_t *cost = json_object();
        put(cost, "witness_host_ms", num(t->cost_witness_ms), bad);
        put(cost, "counters_host_ms", num(t->cost_counters_ms), bad);
        put(cost, "counters_launches", integer(t->counters_launches), bad);
        put(cost, "counters_blocks", integer((long long)t->counters_blocks), bad);
        put(o, "testimony_cost", cost, bad);
        if (t->experiment[0]) put(o, "fit", fit_json(&t->fit, bad), bad);
        if (strcmp(t->experiment, "intensity") == 0) put(o, "roofline", roofline_json(t, bad), bad);
        if (t->batch_readers > 1) { /* measured in a batch of readers: said, and with how many */
            json_t *b = json_object();
            put(b, "readers", integer(t->batch_readers), bad);
            put(b, "rows", integer(t->batch_rows), bad);
            put(o, "batch", b, bad);
        }
    }
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        json_t *row = row_json(&t->rows[i], measured, bad);
        /* The row its ratio is against, by name, where it names one. */
        if (row && t->rows[i].versus) put(row, "versus", TEXT(t->rows[dv_row_reference(t, i)].name), bad);
        jsonout_append(rows, row, bad);
    }
    put(o, "rows", rows, bad);
    struct dv_reading rd[DV_MAX_READINGS];
    unsigned nrd = experiment_readings(t, rd);
    if (nrd) put(o, "readings", readings_json(t, rd, nrd, measured, bad), bad);
    return o;
}

/* The experiments read as a whole (model/model/findings.h): derived from
 * the rows, written for readers, not read back. */
static json_t *findings_json(const struct findings_predication *f, int *bad) {
    json_t *o = json_object(), *p = json_object(), *pts = json_array();
    if (!o || !p || !pts) {
        json_decref(o);
        json_decref(p);
        json_decref(pts);
        return NULL;
    }
    for (unsigned i = 0; i < f->npoints; i++) {
        const struct findings_point *q = &f->points[i];
        json_t *e = json_object();
        put(e, "la", integer(q->la), bad);
        put(e, "lb", integer(q->lb), bad);
        put(e, "branching", json_string(listing_branching_name(q->branching)), bad);
        put(e, "ratio", num(q->ratio), bad);
        put(e, "ratio_ci", ci_json(&(struct dv_ci){q->lo, q->hi}, bad), bad);
        put(e, "guarded_lanes", num(q->guarded_lanes), bad);
        put(e, "guarded_lanes_on", num(q->guarded_lanes_on), bad);
        put(e, "table", integer(q->table), bad);
        put(e, "row", integer(q->row), bad);
        jsonout_append(pts, e, bad);
    }
    put(p, "points", pts, bad);
    put(p, "predicated", integer(f->predicated), bad);
    put(p, "branched", integer(f->branched), bad);
    put(p, "other", integer(f->other), bad);
    put(p, "unknown", integer(f->unknown), bad);
    put(p, "sum_rule", f->sum_rule >= 0 ? integer(f->sum_rule) : json_null(), bad);
    put(p, "max_rule", f->max_rule >= 0 ? integer(f->max_rule) : json_null(), bad);
    put(p, "side_rule", f->side_a >= 0 ? pair(integer(f->side_a), integer(f->side_b), bad) : json_null(), bad);
    put(p, "guide_threshold", integer(FINDINGS_GUIDE_DIVERGENT), bad);
    put(p, "guide_threshold_otherwise", integer(FINDINGS_GUIDE_OTHERWISE), bad);
    put(p, "guide_rule", json_string(FINDINGS_GUIDE_RULE), bad);
    put(p, "guide_disagrees", integer(f->guide_disagrees), bad);
    put(p, "text", TEXT(f->text), bad);
    put(o, "predication", p, bad);
    return o;
}

json_t *report_device_json(const struct dv_device *d) {
    int bad = 0;
    json_t *o = device_json(d, &bad);
    return built(o, bad);
}

json_t *report_document(const struct dv_report *r) {
    json_t *doc = json_object(), *tables = json_array(), *warnings = json_array();
    int bad = !doc || !tables || !warnings;

    if (bad) {
        json_decref(doc);
        json_decref(tables);
        json_decref(warnings);
        return NULL;
    }
    put(doc, "schema", json_string(REPORT_SCHEMA), &bad);
    put(doc, "device", device_json(&r->device, &bad), &bad);
    put(doc, "build", build_json(&r->build, &bad), &bad);
    put(doc, "config", config_json(&r->config, &bad), &bad);
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++)
        jsonout_append(tables, table_json(&r->tables[i], r->measured, &bad), &bad);
    put(doc, "tables", tables, &bad);
    for (unsigned i = 0; i < r->nwarnings && i < DV_MAX_WARNINGS; i++)
        jsonout_append(warnings, TEXT(r->warnings[i]), &bad);
    put(doc, "warnings", warnings, &bad);
    put(doc, "measured", json_boolean(r->measured), &bad);
    if (r->measured) put(doc, "gpu_time_ms", num(r->gpu_time_ms), &bad);
    if (r->measured) put(doc, "testimony", testimony_json(&r->testimony, &bad), &bad);
    struct findings_predication fp;
    if (r->measured && findings_predication(r, &fp)) put(doc, "findings", findings_json(&fp, &bad), &bad);
    if (r->sort.present) put(doc, "sort", report_sort_json(&r->sort), &bad); /* data-sort */
    put(doc, "wall_time_ms", num(r->wall_time_ms), &bad);
    put(doc, "started_utc", TEXT(r->started_utc), &bad);
    put(doc, "finished_utc", TEXT(r->finished_utc), &bad);
    return built(doc, bad);
}

char *report_json(const struct dv_report *r, int pretty) {
    json_t *doc = report_document(r);
    char *out = doc ? jsonout_dumpf(doc, REPORT_JSON_FLAGS | (pretty ? JSON_INDENT(2) : JSON_COMPACT)) : NULL;
    json_decref(doc);
    return out;
}

