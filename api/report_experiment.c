/* report_experiment.c -- the lines under a compiler-and-warp table
 * (report_experiment.h): each experiment's own reading of its rows, from
 * the fields the document carries (the fit, the points, the profiles'
 * regions and shapes, the join records) and model/model/findings.h. */
#include "api/report_experiment.h"

#include "api/report_intensity.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/model/listing/listing.h"
#include "kernels/model/listing/listing_shape.h"
#include "kernels/model/model/findings.h"

/* "1.234 [1.230, 1.240]", or "-". */
static void fmt_ci(char *buf, size_t len, double v, const struct dv_ci *ci, int decimals) {
    if (!isfinite(v)) snprintf(buf, len, "-");
    else if (!isfinite(ci->lo) || !isfinite(ci->hi)) snprintf(buf, len, "%.*f", decimals, v);
    else snprintf(buf, len, "%.*f [%.*f, %.*f]", decimals, v, decimals, ci->lo, decimals, ci->hi);
}

/* The work the rows do: each row's FMAs per thread, said once where every
 * row's is the same. */
static void work_text(struct strbuf *b, const struct dv_table *t) {
    unsigned long long first = t->nrows ? t->rows[0].thread_fmas : 0;
    int same = 1;
    for (unsigned r = 1; r < t->nrows && r < DV_MAX_ROWS; r++) same &= t->rows[r].thread_fmas == first;
    if (same && t->nrows) {
        strbuf_printf(b,
                      "work: every row's threads run %llu FMAs in all (the same work, so every ratio compares "
                      "like with like)\n",
                      first);
        return;
    }
    strbuf_printf(b, "work (FMAs the threads run in all):");
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++)
        strbuf_printf(b, "%s %s %llu", r ? "," : "", t->rows[r].name, t->rows[r].thread_fmas);
    strbuf_printf(b, "; a row is compared only with a row of the same work (its vs)\n");
}

/* What each row's ratio is over, where it is not the baseline. */
static void versus_text(struct strbuf *b, const struct dv_table *t) {
    int any = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        if (!t->rows[r].versus) continue;
        const unsigned ref = dv_row_reference(t, r);
        if (!any++) strbuf_printf(b, "vs:");
        if (ref == r) strbuf_printf(b, " %s its own;", t->rows[r].name);
        else strbuf_printf(b, " %s over %s;", t->rows[r].name, t->rows[ref].name);
    }
    if (any) strbuf_printf(b, " the other rows over the baseline\n");
}

/* The lanes each path region ran with, lowest to highest ("8.0" or
 * "10.0-11.0"), into buf; and how many paths. */
static unsigned path_lanes(const struct listing *l, char *buf, size_t len) {
    double lo = INFINITY, hi = -INFINITY;
    unsigned n = 0;
    for (unsigned k = 0; k < l->nregions; k++) {
        const struct listing_region *g = &l->regions[k];
        if (!listing_kind_is_path(g->kind) || !isfinite(g->lanes)) continue;
        n++;
        lo = g->lanes < lo ? g->lanes : lo;
        hi = g->lanes > hi ? g->lanes : hi;
    }
    if (!n) snprintf(buf, len, "-");
    else if (hi - lo < 0.05) snprintf(buf, len, "%.1f", lo);
    else snprintf(buf, len, "%.1f-%.1f", lo, hi);
    return n;
}

/* The k-paths table: the fit, the aligned rows against k = 1, and per row
 * the paths' lanes from its profile against 32 / k and the counters'. */
static void kpaths_text(struct strbuf *b, const struct dv_table *t) {
    const struct dv_fit *f = &t->fit;
    char a[64], bb[64], r[64];
    if (f->present) {
        fmt_ci(a, sizeof a, f->a, &f->a_ci, 4);
        fmt_ci(bb, sizeof bb, f->b, &f->b_ci, 4);
        fmt_ci(r, sizeof r, f->b_over_a, &f->b_over_a_ci, 3);
        strbuf_printf(b,
                      "fit T(k) = a + b k over the %u split rows, a line per round of %u, the median and its %.0f%% "
                      "interval: a = %s ms, b = %s ms a path, b / a = %s; residual of the medians' line %.4f ms rms, "
                      "at most %.2f%% of a row\n",
                      f->points, f->rounds, 100 * f->level, a, bb, r, f->residual_rms_ms, 100 * f->residual_max_rel);
    }
    double worst = 0;
    int aligned = 0;
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++)
        if (strcmp(t->rows[i].point.arrangement, "warp-mod") == 0 && isfinite(t->rows[i].ratio)) {
            aligned = 1;
            worst = fabs(t->rows[i].ratio - 1) > worst ? fabs(t->rows[i].ratio - 1) : worst;
        }
    if (aligned) strbuf_printf(b, "aligned rows (warp %% k): within %.2f%% of k = 1\n", 100 * worst);
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        const struct dv_row *w = &t->rows[i];
        if (!w->instructions && !w->counters.present) continue;
        char lanes[32] = "-", cnt[32] = "-";
        unsigned paths = w->instructions ? path_lanes(w->instructions, lanes, sizeof lanes) : 0;
        if (w->counters.present) snprintf(cnt, sizeof cnt, "%.2f", w->counters.threads_per_inst);
        const double want = strcmp(w->point.arrangement, "lane-mod") == 0 && w->point.k ? 32.0 / w->point.k : 32.0;
        strbuf_printf(b, "  %-12s %2u path%s at %s lanes each (32 / k = %.2f); counters %s lanes a warp instruction\n",
                      w->name, paths, paths == 1 ? "" : "s", lanes, want, cnt);
    }
}

/* A predication, branchless or reconvergence row's SASS shape, one line. */
static void shape_line(struct strbuf *b, const struct dv_row *w) {
    char ratio[64];
    fmt_ci(ratio, sizeof ratio, w->ratio, &w->ratio_ci, 3);
    if (!w->instructions) {
        strbuf_printf(b, "  %-18s ratio %s; no instruction profile\n", w->name, ratio);
        return;
    }
    struct listing_shape sh;
    listing_shape(w->instructions, &sh);
    char lanes[32];
    path_lanes(w->instructions, lanes, sizeof lanes);
    strbuf_printf(b, "  %-18s ratio %s; paths at %s lanes; SASS %s\n", w->name, ratio, lanes, sh.text);
}

/* The reconvergence table: per row its join record, and its shape. */
static void reconvergence_text(struct strbuf *b, const struct dv_table *t) {
    unsigned rows = 0, met = 0;
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        const struct dv_row *w = &t->rows[i];
        shape_line(b, w);
        if (!w->join.present) continue;
        const struct dv_join *j = &w->join;
        strbuf_printf(b, "  %-18s join: %s", "", j->verdict);
        for (unsigned k = 0; k < j->nmasks; k++)
            strbuf_printf(b, "%s0x%08x x%u", k ? ", " : "; masks ", (unsigned)j->mask[k], j->mask_groups[k]);
        strbuf_printf(b, "\n");
        rows++;
        met += j->warps && j->reconverged == j->warps;
    }
    if (rows)
        strbuf_printf(b, "reconvergence: %u of %u rows met again at the join in every warp%s\n", met, rows,
                      met == rows ? ": this GPU and compiler reconverge there with __syncwarp() and without it" : "");
}

void report_experiment_text(struct strbuf *b, const struct dv_table *t, int measured) {
    if (!t->experiment[0]) return;
    work_text(b, t);
    versus_text(b, t);
    if (!measured) return;
    if (strcmp(t->experiment, "k-paths") == 0) kpaths_text(b, t);
    else if (strcmp(t->experiment, "intensity") == 0) report_intensity_text(b, t, measured); /* arithmetic intensity */
    else if (strcmp(t->experiment, "reconvergence") == 0) reconvergence_text(b, t);
    else
        for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
            const struct dv_row *w = &t->rows[i];
            if (strcmp(t->experiment, "predication") == 0 && strcmp(w->point.arrangement, "lanes") != 0) continue;
            shape_line(b, w);
        }
}

void report_findings_text(struct strbuf *b, const struct dv_report *r) {
    struct findings_predication f;
    if (!r->measured || !findings_predication(r, &f)) return;
    strbuf_printf(b, "\npredication map (%u points, lane-split over warp-split, the SASS of the lane-split row):\n",
                  f.npoints);
    strbuf_printf(b, "  LA\\LB");
    for (unsigned lb = 1; lb <= 8; lb++) strbuf_printf(b, "  %6u", lb);
    strbuf_printf(b, "\n");
    for (unsigned la = 1; la <= 8; la++) {
        int any = 0;
        char line[160];
        int n = snprintf(line, sizeof line, "  %5u", la);
        for (unsigned lb = 1; lb <= 8 && n > 0 && (size_t)n < sizeof line; lb++) {
            const struct findings_point *p = NULL;
            for (unsigned i = 0; i < f.npoints && !p; i++)
                if (f.points[i].la == la && f.points[i].lb == lb) p = &f.points[i];
            char cell[16] = "      .";
            if (p) {
                const char c = p->branching == LISTING_SHAPE_PREDICATED ? 'P'
                               : p->branching == LISTING_SHAPE_BRANCHED ? 'B'
                                                                        : '?';
                snprintf(cell, sizeof cell, "%c%5.2f", c, p->ratio);
                any = 1;
            }
            n += snprintf(line + n, sizeof line - (size_t)n, "  %6s", cell);
        }
        if (any) strbuf_printf(b, "%s\n", line);
    }
    strbuf_printf(b, "  (P predicated, B branched, ? no SASS read; the figure is the time ratio)\n");
    strbuf_printf(b, "boundary: %s\n", f.text);
    strbuf_printf(b, "the guide's old rule: %s\n", FINDINGS_GUIDE_RULE);
}
