/* stats.c -- a table's statistics (stats.h). */
#include "kernels/model/stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/stats/throttle.h"

void stats_compute(const double *s, unsigned n, double *scratch, struct dv_stats *out) {
    memset(out, 0, sizeof(*out));
    out->samples = n;
    if (n == 0) return;
    double sum = 0;
    for (unsigned i = 0; i < n; i++) sum += s[i];
    out->mean = sum / n;
    double var = 0;
    for (unsigned i = 0; i < n; i++) var += (s[i] - out->mean) * (s[i] - out->mean);
    out->stdev = n > 1 ? sqrt(var / (n - 1)) : 0.0;
    out->min = out->max = s[0];
    for (unsigned i = 1; i < n; i++) {
        if (s[i] < out->min) out->min = s[i];
        if (s[i] > out->max) out->max = s[i];
    }
    /* The middle one or two by selection: O(n) where a sort is O(n log n),
     * and this runs for every row after every batch. */
    const unsigned ranks[2] = {(n - 1) / 2, n / 2};
    double mid[2];
    memcpy(scratch, s, n * sizeof(double));
    interval_select(scratch, n, ranks, 2, mid);
    out->median = 0.5 * (mid[0] + mid[1]);
    out->noise = out->mean > 0 ? out->stdev / out->mean : 0.0;
}

void stats_sample_bounds(const struct dv_options *o, unsigned *min_samples, unsigned *max_samples) {
    const unsigned lo = o->min_samples ? o->min_samples : DV_DEFAULT_MIN_SAMPLES;
    unsigned hi = o->max_samples;
    if (hi < lo) hi = lo > DV_DEFAULT_MAX_SAMPLES ? lo : DV_DEFAULT_MAX_SAMPLES;
    *min_samples = lo;
    *max_samples = hi;
}

void stats_config_default(struct stats_config *c) {
    memset(c, 0, sizeof(*c));
    c->level = INTERVAL_LEVEL;
    c->resolution = 0.0;
    c->method = RATIO_OF_MEDIANS;
}

int stats_table(const double *samples, size_t stride, unsigned nrows, unsigned nrounds, const unsigned char *drop,
                unsigned baseline, const struct stats_config *c, double *scratch, struct stats_row *out, unsigned *kept,
                char *err) {
    return stats_table_ref(samples, stride, nrows, nrounds, drop, baseline, NULL, c, scratch, out, kept, err);
}

int stats_table_ref(const double *samples, size_t stride, unsigned nrows, unsigned nrounds, const unsigned char *drop,
                    unsigned baseline, const unsigned *ref, const struct stats_config *c, double *scratch,
                    struct stats_row *out, unsigned *kept, char *err) {
    *kept = 0;
    if (nrows == 0 || baseline >= nrows) {
        dv_seterr(err, "stats: baseline: row %u is not among the %u rows", baseline, nrows);
        return DV_ERR;
    }
    for (unsigned r = 0; ref && r < nrows; r++)
        if (ref[r] >= nrows) {
            dv_seterr(err, "stats: reference: row %u's, %u, is not among the %u rows", r, ref[r], nrows);
            return DV_ERR;
        }
    memset(out, 0, sizeof(*out) * nrows);
    if (stride < nrounds) {
        dv_seterr(err, "stats: stride: %zu is under the %u rounds", stride, nrounds);
        return DV_ERR;
    }
    if (!ratio_pick(&(struct ratio_pair){0}, c->method)) {
        dv_seterr(err, "stats: method: %d is not a known ratio method", (int)c->method);
        return DV_ERR;
    }
    double *base = scratch, *row = scratch + nrounds, *work = scratch + 2 * (size_t)nrounds;
    const unsigned n = throttle_keep(samples + (size_t)baseline * stride, drop, nrounds, base);
    if (n == 0) {
        dv_seterr(err, "stats: rounds: none of the %u rounds was kept", nrounds);
        return DV_ERR;
    }
    for (unsigned r = 0; r < nrows; r++) {
        throttle_keep(samples + (size_t)r * stride, drop, nrounds, row);
        for (unsigned k = 0; k < n; k++) {
            if (!(row[k] > 0) || !isfinite(row[k])) {
                dv_seterr(err, "stats: row %u, kept round %u: %g is not a finite positive time", r, k, row[k]);
                return DV_ERR;
            }
        }
        struct stats_row *o = &out[r];
        o->dropped = nrounds - n;
        stats_compute(row, n, work, &o->summary);
        if (interval_median(row, n, c->level, c->resolution, work, &o->median, err) != 0) return DV_ERR;
        if (spread_measure(row, n, work, &o->spread, err) != 0) return DV_ERR;
        const unsigned against = ref ? ref[r] : baseline;
        if (r == against) {
            const struct interval one = {.point = 1.0, .lo = 1.0, .hi = 1.0, .level = 1.0};
            o->ratios.of_medians = o->ratios.of_rounds = o->ratio = one;
            o->ratios.corr = 1.0;
        } else {
            /* The row's reference's kept rounds, where it is not the baseline. */
            if (against != baseline) throttle_keep(samples + (size_t)against * stride, drop, nrounds, base);
            if (ratio_paired(row, base, n, c->level, c->resolution, work, &o->ratios, err) != 0) return DV_ERR;
            o->ratio = *ratio_pick(&o->ratios, c->method);
            if (against != baseline) throttle_keep(samples + (size_t)baseline * stride, drop, nrounds, base);
        }
    }
    *kept = n;
    return 0;
}

unsigned stats_judged(const struct stats_row *rows, unsigned nrows, unsigned baseline, struct interval *out,
                      unsigned *idx) {
    unsigned m = 0;
    for (unsigned r = 0; r < nrows; r++) {
        if (r == baseline) continue;
        if (idx) idx[m] = r;
        out[m++] = rows[r].ratio;
    }
    if (m == 0 && baseline < nrows) {
        if (idx) idx[0] = baseline;
        out[m++] = rows[baseline].median;
    }
    return m;
}
