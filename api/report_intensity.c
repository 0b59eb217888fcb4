/* report_intensity.c -- the lines under an arithmetic-intensity table
 * (report_intensity.h), from the fields the document carries: each point
 * is its lane-split row (whose ratio is over its warp-aligned row), the
 * DRAM bytes both rows read (the equal work, as the counters saw it), the
 * aligned row's FLOP rate and bandwidth, and the side of the measured
 * ridge it lies on.
 */
#include "api/report_intensity.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "1.234 [1.230, 1.240]", or "-". */
static void ratio_text(char *buf, size_t len, const struct dv_row *w) {
    if (!w->measured || !isfinite(w->ratio)) snprintf(buf, len, "-");
    else if (!isfinite(w->ratio_ci.lo) || !isfinite(w->ratio_ci.hi)) snprintf(buf, len, "%.3f", w->ratio);
    else snprintf(buf, len, "%.3f [%.3f, %.3f]", w->ratio, w->ratio_ci.lo, w->ratio_ci.hi);
}

/* `v` with an SI prefix ("1.23 G"), or "-". */
static void si_text(char *buf, size_t len, double v) {
    static const char *const pre[] = {"", "k", "M", "G", "T", "P"};
    unsigned k = 0;
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
        return;
    }
    while (fabs(v) >= 1000.0 && k + 1 < sizeof pre / sizeof pre[0]) {
        v /= 1000.0;
        k++;
    }
    snprintf(buf, len, "%.3g %s", v, pre[k]);
}

static void ridge_text(struct strbuf *b, const struct dv_table *t) {
    const struct dv_ridge *g = &t->ridge;
    char bw[32], fr[32];
    if (!g->present) {
        strbuf_printf(b, "roofline: no ridge (its two rows were not measured)\n");
        return;
    }
    si_text(fr, sizeof fr, g->flop_rate);
    snprintf(bw, sizeof bw, "%.0f", g->bandwidth_gbs);
    strbuf_printf(b,
                  "roofline, measured here: bandwidth %s GB/s (ridge-bandwidth, %s over its time), FMA rate "
                  "%sFLOP/s (ridge-fma), ridge %.2f FLOP/byte\n",
                  bw, g->bandwidth_from_dram ? "DRAM bytes read" : "bytes loaded", fr, g->ridge);
    if (t->dram_reason[0])
        strbuf_printf(b, "DRAM bytes: none (%s); points placed by the bytes loaded\n", t->dram_reason);
}

/* The aligned row a lane-split row is over. */
static const struct dv_row *aligned_of(const struct dv_table *t, unsigned r) {
    const unsigned ref = dv_row_reference(t, r);
    return ref != r ? &t->rows[ref] : NULL;
}

static void point_line(struct strbuf *b, const struct dv_table *t, unsigned r) {
    const struct dv_row *w = &t->rows[r], *a = aligned_of(t, r);
    const struct dv_intensity *m = &w->intensity, *am = a ? &a->intensity : m;
    char ratio[48], ds[24], da[24], fr[24], gbs[24];
    ratio_text(ratio, sizeof ratio, w);
    si_text(ds, sizeof ds, w->counters.dram_present ? w->counters.dram_bytes_read : NAN);
    si_text(da, sizeof da, a && a->counters.dram_present ? a->counters.dram_bytes_read : NAN);
    si_text(fr, sizeof fr, am->flop_rate);
    const double g = isfinite(am->dram_gbs) ? am->dram_gbs : am->bandwidth_gbs;
    if (isfinite(g)) snprintf(gbs, sizeof gbs, "%.0f", g);
    else snprintf(gbs, sizeof gbs, "-");
    strbuf_printf(b, "  %-14s %4u %3u %8.4g  %-24s %9sB %9sB %10s %7s  %s\n", w->name, m->fmas, m->loads, m->intensity,
                  ratio, ds, da, fr, gbs, am->bound[0] ? am->bound : "-");
}

/* The reading of the curve: the penalty at the lowest and the highest
 * intensity, and the ridge between them. */
static void reading_text(struct strbuf *b, const struct dv_table *t) {
    const struct dv_row *lo = NULL, *hi = NULL;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_row *w = &t->rows[r];
        if (!w->intensity.present || !w->intensity.fmas || !aligned_of(t, r) || !w->measured) continue;
        if (!lo || w->intensity.intensity < lo->intensity.intensity) lo = w;
        if (!hi || w->intensity.intensity > hi->intensity.intensity) hi = w;
    }
    if (!lo || !hi || lo == hi) return;
    strbuf_printf(b,
                  "reading: the lane-split branch costs %.2fx the warp-aligned one at %.3g FLOP/byte and %.2fx at "
                  "%.3g FLOP/byte",
                  lo->ratio, lo->intensity.intensity, hi->ratio, hi->intensity.intensity);
    if (t->ridge.present) strbuf_printf(b, "; the ridge lies at %.2f FLOP/byte", t->ridge.ridge);
    strbuf_printf(b, ": left of it the loads bound the time and the second path's issue hides under them\n");
}

void report_intensity_text(struct strbuf *b, const struct dv_table *t, int measured) {
    if (strcmp(t->experiment, "intensity") != 0) return;
    if (measured) ridge_text(b, t);
    strbuf_printf(b, "  %-14s %4s %3s %8s  %-24s %10s %10s %10s %7s  %s\n", "point", "F", "L", "FLOP/B",
                  "split/aligned [95%]", "DRAM split", "aligned", "FLOP/s", "GB/s", "bound");
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_row *w = &t->rows[r];
        if (w->intensity.present && w->intensity.fmas && aligned_of(t, r)) point_line(b, t, r);
    }
    if (measured) reading_text(b, t);
}
