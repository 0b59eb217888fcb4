/* interval.c -- the median's distribution-free interval (interval.h).
 *
 * The ranks come from the Binomial(n, 1/2) tail, summed from 20 standard
 * deviations under the mean (where the terms are below 1e-80) up to the
 * rank where coverage falls under the level: O(sqrt(n)) terms, the first
 * from lgamma and the rest by the ratio of neighbouring terms, so n up to
 * the sample cap costs microseconds and never underflows.
 */
#include "kernels/model/stats/interval.h"

#include <math.h>
#include <string.h>

/* Sorting is most of the work of every interval here (each row, each
 * batch), so it is an introsort with the comparison inlined rather than
 * qsort's callback: quicksort (median of three, Hoare partition, which keeps
 * runs of equal step values balanced), insertion sort for short runs, and
 * heapsort past 2 log2(n) levels so no input is quadratic. */
static void swap_d(double *a, double *b) {
    const double t = *a;
    *a = *b;
    *b = t;
}

static void insertion_sort(double *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        const double v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

static void sift_down(double *a, size_t root, size_t n) {
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && a[c + 1] > a[c]) c++;
        if (!(a[c] > a[root])) return;
        swap_d(&a[root], &a[c]);
        root = c;
    }
}

static void heap_sort(double *a, size_t n) {
    for (size_t i = n / 2; i-- > 0;) sift_down(a, i, n);
    for (size_t end = n; end-- > 1;) {
        swap_d(&a[0], &a[end]);
        sift_down(a, 0, end);
    }
}

/* Hoare's partition of a[0..n) (n > 16) around the median of its first,
 * middle and last values: returns `left` with a[0..left) <= pivot <=
 * a[left..n), both sides non-empty. */
static size_t partition(double *a, size_t n) {
    const size_t mid = n / 2;
    if (a[mid] < a[0]) swap_d(&a[mid], &a[0]);
    if (a[n - 1] < a[0]) swap_d(&a[n - 1], &a[0]);
    if (a[n - 1] < a[mid]) swap_d(&a[n - 1], &a[mid]);
    const double pivot = a[mid];
    size_t i = 0, j = n - 1;
    for (;;) { /* a[0] <= pivot <= a[n-1] bound both scans */
        while (a[i] < pivot) i++;
        while (a[j] > pivot) j--;
        if (i >= j) break;
        swap_d(&a[i], &a[j]);
        i++;
        j--;
    }
    return j + 1;
}

static void intro_sort(double *a, size_t n, unsigned depth) {
    while (n > 16) {
        if (depth-- == 0) {
            heap_sort(a, n);
            return;
        }
        /* a[0..left) <= pivot <= a[left..n): recurse into the smaller side. */
        const size_t left = partition(a, n);
        if (left < n - left) {
            intro_sort(a, left, depth);
            a += left;
            n -= left;
        } else {
            intro_sort(a + left, n - left, depth);
            n = left;
        }
    }
    insertion_sort(a, n);
}

void interval_sort(double *s, unsigned n) {
    unsigned depth = 0;
    for (unsigned m = n; m > 1; m >>= 1) depth += 2;
    intro_sort(s, n, depth);
}

/* Quickselect for the k-th smallest of a[0..n) (0-based): afterwards
 * a[0..k) <= a[k] <= a(k..n). The same partition as the sort; a range that
 * shrinks too slowly is sorted instead, so no input is quadratic. */
static void select_k(double *a, size_t n, size_t k) {
    unsigned budget = 0;
    for (size_t m = n; m > 1; m >>= 1) budget += 2;
    while (n > 16) {
        if (budget-- == 0) {
            heap_sort(a, n);
            return;
        }
        const size_t left = partition(a, n);
        if (k < left) {
            n = left;
        } else {
            a += left;
            n -= left;
            k -= left;
        }
    }
    insertion_sort(a, n);
}

void interval_select(double *s, unsigned n, const unsigned *ranks, unsigned m, double *out) {
    /* Each rank's selection leaves everything above it to its right, so the
     * next (larger) rank is looked for there only. */
    unsigned base = 0;
    for (unsigned i = 0; i < m; i++) {
        const unsigned k = ranks[i];
        if (k >= base) {
            select_k(s + base, n - base, k - base);
            base = k + 1;
        }
        out[i] = s[k];
    }
}

int interval_ranks(unsigned n, double level, struct interval_ranks *out, char *err) {
    memset(out, 0, sizeof(*out));
    if (n == 0) {
        dv_seterr(err, "interval: n: no samples");
        return DV_ERR;
    }
    if (!(level > 0.0 && level < 1.0)) {
        dv_seterr(err, "interval: level: %g is outside (0, 1)", level);
        return DV_ERR;
    }
    out->n = n;
    const double sd = 0.5 * sqrt((double)n);
    const double start = floor(0.5 * n - 20.0 * sd);
    unsigned i = start > 0 ? (unsigned)start : 0;
    /* pmf(i) = C(n, i) / 2^n; the mass under i is negligible. */
    double pmf = exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma((double)(n - i) + 1.0) - n * log(2.0));
    double cdf = 0.0;
    double prev = 1.0; /* coverage of [X(i), X(n+1-i)]: 1 - 2 cdf(i-1) */
    for (;; i++) {
        cdf += pmf;
        const double cov = 1.0 - 2.0 * cdf; /* of [X(i+1), X(n-i)] */
        if (cov < level) {
            if (i == 0) { /* even [min, max] is short of the level */
                out->lo = 1;
                out->hi = n;
                out->level = cov > 0 ? cov : 0.0;
                return 0;
            }
            const unsigned d = i;
            out->lo = d;
            out->hi = n + 1 - d;
            out->level = level;
            if (d + 1 <= n - d) {
                /* Hettmansperger-Sheather: the share of the inner pair that
                 * brings the coverage to the level, exact for symmetric
                 * distributions. */
                const double in = (prev - level) / (prev - cov);
                out->weight = ((double)(n - d) * in) / ((double)d + (double)(n - 2 * d) * in);
            }
            return 0;
        }
        prev = cov;
        pmf *= (double)(n - i) / (double)(i + 1);
    }
}

/* The 1-based order statistics an interval reads, ascending: lo, lo+1,
 * the middle one or two, hi-1, hi (repeats allowed). */
static unsigned needed_ranks(const struct interval_ranks *rk, unsigned r[6]) {
    const unsigned n = rk->n;
    const int inner = rk->weight > 0 && rk->lo + 1 <= rk->hi - 1;
    unsigned m = 0;
    r[m++] = rk->lo;
    if (inner) r[m++] = rk->lo + 1;
    r[m++] = (n + 1) / 2;
    r[m++] = n / 2 + 1;
    if (inner) r[m++] = rk->hi - 1;
    r[m++] = rk->hi;
    return m;
}

/* The interval from its order statistics x[] at ranks r[] (needed_ranks). */
static void from_order_stats(const struct interval_ranks *rk, const unsigned *r, const double *x, unsigned m,
                             double resolution, struct interval *out) {
    double v[4] = {0, 0, 0, 0}; /* X(lo), X(lo+1), X(hi-1), X(hi) */
    double mid[2] = {0, 0};
    const unsigned n = rk->n;
    for (unsigned i = 0; i < m; i++) {
        if (r[i] == rk->lo) v[0] = x[i];
        if (r[i] == rk->lo + 1) v[1] = x[i];
        if (r[i] == rk->hi - 1) v[2] = x[i];
        if (r[i] == rk->hi) v[3] = x[i];
        if (r[i] == (n + 1) / 2) mid[0] = x[i];
        if (r[i] == n / 2 + 1) mid[1] = x[i];
    }
    out->point = (n & 1) ? mid[0] : 0.5 * (mid[0] + mid[1]);
    const double w = rk->weight;
    double lo = v[0], hi = v[3];
    if (w > 0 && rk->lo + 1 <= rk->hi - 1) {
        lo = (1.0 - w) * lo + w * v[1];
        hi = (1.0 - w) * hi + w * v[2];
    }
    out->lo = lo - 0.5 * resolution;
    out->hi = hi + 0.5 * resolution;
    out->level = rk->level;
}

void interval_median_sorted(const double *sorted, const struct interval_ranks *rk, double resolution,
                            struct interval *out) {
    unsigned r[6];
    double x[6];
    const unsigned m = needed_ranks(rk, r);
    for (unsigned i = 0; i < m; i++) x[i] = sorted[r[i] - 1];
    from_order_stats(rk, r, x, m, resolution, out);
}

void interval_median_select(double *work, const struct interval_ranks *rk, double resolution, struct interval *out) {
    unsigned r[6], z[6];
    double x[6];
    const unsigned m = needed_ranks(rk, r);
    for (unsigned i = 0; i < m; i++) z[i] = r[i] - 1;
    interval_select(work, rk->n, z, m, x);
    from_order_stats(rk, r, x, m, resolution, out);
}

int interval_median(const double *s, unsigned n, double level, double resolution, double *scratch, struct interval *out,
                    char *err) {
    struct interval_ranks rk;
    memset(out, 0, sizeof(*out));
    if (interval_ranks(n, level, &rk, err) != 0) return DV_ERR;
    if (!(resolution >= 0.0) || !isfinite(resolution)) {
        dv_seterr(err, "interval: resolution: %g is not a finite step >= 0", resolution);
        return DV_ERR;
    }
    for (unsigned i = 0; i < n; i++) {
        if (!isfinite(s[i])) {
            dv_seterr(err, "interval: samples[%u]: %g is not finite", i, s[i]);
            return DV_ERR;
        }
    }
    memcpy(scratch, s, n * sizeof(double));
    interval_median_select(scratch, &rk, resolution, out);
    return 0;
}

double interval_rel_halfwidth(const struct interval *iv) {
    const double a = iv->point - iv->lo, b = iv->hi - iv->point;
    const double h = a > b ? a : b;
    if (iv->point == 0) return h == 0 ? 0.0 : INFINITY;
    return h / fabs(iv->point);
}
