/* synth.h -- synthetic timed samples of known distribution for the
 * statistics tests: a seeded generator (xoshiro256**, seeded by splitmix64,
 * so every run of a test draws the same numbers on every machine) and the
 * shapes a GPU timing takes, each with its true median in closed form or by
 * bisection on its CDF, so a test can count how often an interval covers it.
 *
 * Shapes, all as a relative deviation from 1 scaled by `noise`:
 *   SYNTH_NORMAL    1 + noise z
 *   SYNTH_CLUSTERS  two clusters: 1 + noise z, and in SYNTH_CLUSTER_SHARE of
 *                   the samples (1 + SYNTH_CLUSTER_GAP)(1 + noise z): a row
 *                   that sometimes runs a few percent slower (a clock step,
 *                   a different placement)
 *   SYNTH_PARETO    1 + noise (P - median P), P Pareto of index 2.5: a
 *                   heavy right tail with a finite variance
 *   SYNTH_LOGNORMAL exp(noise z)
 * Header-only (static functions), shared by the test files of this folder.
 */
#ifndef DV_TEST_SYNTH_H
#define DV_TEST_SYNTH_H

#include <math.h>
#include <stdint.h>

#define SYNTH_CLUSTER_SHARE 0.3
#define SYNTH_CLUSTER_GAP 0.03
#define SYNTH_PARETO_INDEX 2.5

enum synth_shape { SYNTH_NORMAL, SYNTH_CLUSTERS, SYNTH_PARETO, SYNTH_LOGNORMAL };

struct synth {
    uint64_t s[4];
    int has_spare;
    double spare;
};

static inline uint64_t synth_splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void synth_seed(struct synth *g, uint64_t seed) {
    for (int i = 0; i < 4; i++) g->s[i] = synth_splitmix(&seed);
    g->has_spare = 0;
}

static inline uint64_t synth_u64(struct synth *g) {
    uint64_t *s = g->s;
    const uint64_t r = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3] << 45 | s[3] >> 19;
    return r;
}

/* Uniform in (0, 1), never 0 or 1. */
static inline double synth_unif(struct synth *g) { return ((double)(synth_u64(g) >> 11) + 0.5) * 0x1p-53; }

/* Standard normal (Marsaglia's polar method). */
static inline double synth_normal(struct synth *g) {
    if (g->has_spare) {
        g->has_spare = 0;
        return g->spare;
    }
    double u, v, q;
    do {
        u = 2 * synth_unif(g) - 1;
        v = 2 * synth_unif(g) - 1;
        q = u * u + v * v;
    } while (q >= 1 || q == 0);
    const double m = sqrt(-2 * log(q) / q);
    g->spare = v * m;
    g->has_spare = 1;
    return u * m;
}

/* One sample of `shape` around 1 at relative `noise`. */
static inline double synth_draw(struct synth *g, enum synth_shape shape, double noise) {
    switch (shape) {
    case SYNTH_CLUSTERS: {
        const double c = synth_unif(g) < SYNTH_CLUSTER_SHARE ? 1 + SYNTH_CLUSTER_GAP : 1.0;
        return c * (1 + noise * synth_normal(g));
    }
    case SYNTH_PARETO:
        return 1 + noise * (pow(synth_unif(g), -1.0 / SYNTH_PARETO_INDEX) - pow(2.0, 1.0 / SYNTH_PARETO_INDEX));
    case SYNTH_LOGNORMAL: return exp(noise * synth_normal(g));
    case SYNTH_NORMAL:
    default: return 1 + noise * synth_normal(g);
    }
}

static inline double synth_phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* The true median of `shape` at `noise`. */
static inline double synth_median(enum synth_shape shape, double noise) {
    if (shape != SYNTH_CLUSTERS) return 1.0;
    const double p = SYNTH_CLUSTER_SHARE, c = 1 + SYNTH_CLUSTER_GAP;
    double lo = 0.5, hi = 1.5;
    for (int i = 0; i < 200; i++) {
        const double m = 0.5 * (lo + hi);
        const double f = (1 - p) * synth_phi((m - 1) / noise) + p * synth_phi((m / c - 1) / noise);
        if (f < 0.5) lo = m;
        else hi = m;
    }
    return 0.5 * (lo + hi);
}

static inline const char *synth_name(enum synth_shape shape) {
    switch (shape) {
    case SYNTH_CLUSTERS: return "two clusters";
    case SYNTH_PARETO: return "pareto tail";
    case SYNTH_LOGNORMAL: return "lognormal";
    default: return "normal";
    }
}

#endif /* DV_TEST_SYNTH_H */
