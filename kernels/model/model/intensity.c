/* intensity.c -- the arithmetic-intensity experiment's work, reference and
 * roofline (intensity.h). No GPU.
 *
 * The roofline is read against the ridge the table itself measured: the
 * streaming-read row's bandwidth and the FMA row's rate, on the same GPU,
 * in the same run, at the same clock, so a point's place left or right of
 * the ridge is this GPU's, not a datasheet's.
 */
#include "kernels/model/model/intensity.h"

#include <stdio.h>

#include "kernels/base/hostfma.h"

static int pow2_upto(unsigned v, unsigned max) { return v >= 1u && v <= max && (v & (v - 1u)) == 0; }

int intensity_point_ok(unsigned F, unsigned L) {
    return pow2_upto(F, INTENSITY_MAX_F) && pow2_upto(L, INTENSITY_MAX_L);
}

unsigned long long intensity_thread_fmas(unsigned variant, unsigned F, unsigned L) {
    switch (variant) {
    case INTENSITY_STREAM:
    case INTENSITY_CHASE: return L ? (unsigned long long)(INTENSITY_WORDS / L) * F : 0;
    case INTENSITY_RIDGE_BANDWIDTH: return 1;
    case INTENSITY_RIDGE_FMA: return INTENSITY_RIDGE_FMAS;
    default: return 0;
    }
}

unsigned intensity_thread_bytes(unsigned variant) {
    return variant == INTENSITY_RIDGE_FMA || variant >= INTENSITY_VARIANTS ? 0u : INTENSITY_WORDS * 4u;
}

double intensity_nominal(unsigned F, unsigned L) { return L ? 2.0 * F / (4.0 * L) : NAN; }

DV_FMA_CLONES
float intensity_reference(unsigned variant, unsigned F, unsigned L, float x, unsigned w) {
    if (variant == INTENSITY_RIDGE_FMA) {
        const float a = intensity_a(2), b = intensity_b(2);
        for (unsigned i = 0; i < INTENSITY_RIDGE_FMAS; i++) x = fmaf(x, a, b);
        return x;
    }
    if (variant == INTENSITY_RIDGE_BANDWIDTH)
        return fmaf(x, intensity_a(3), intensity_inject(intensity_step_sum(INTENSITY_STREAM, 0, INTENSITY_WORDS)));
    if (variant >= INTENSITY_VARIANTS || !L) return NAN;
    const unsigned p = w ? 1u : 0u;
    const float a = intensity_a(p), b = intensity_b(p);
    for (unsigned s = 0; s < INTENSITY_WORDS / L; s++) {
        x = fmaf(x, a, intensity_inject(intensity_step_sum(variant, s, L)));
        for (unsigned k = 1; k < F; k++) x = fmaf(x, a, b);
    }
    return x;
}

const char *intensity_variant_name(unsigned variant) {
    static const char *const names[INTENSITY_VARIANTS] = {"stream", "chase", "ridge-bandwidth", "ridge-fma"};
    return variant < INTENSITY_VARIANTS ? names[variant] : "";
}

/* The table's row of variant `v` that was measured, or NULL. */
static const struct dv_row *ridge_row(const struct dv_table *t, const char *v) {
    for (unsigned r = 0; r < t->nrows; r++)
        if (t->rows[r].intensity.present && strcmp(t->rows[r].intensity.variant, v) == 0 && t->rows[r].measured &&
            t->rows[r].time_ms.median > 0)
            return &t->rows[r];
    return NULL;
}

/* The ridge from the two ridge rows; present 0 without both. */
static void derive_ridge(struct dv_table *t) {
    struct dv_ridge *g = &t->ridge;
    const struct dv_row *bw = ridge_row(t, "ridge-bandwidth"), *fma = ridge_row(t, "ridge-fma");
    memset(g, 0, sizeof *g);
    g->bandwidth_gbs = g->flop_rate = g->ridge = NAN;
    if (!bw || !fma) return;
    const double bw_s = bw->time_ms.median * 1e-3, fma_s = fma->time_ms.median * 1e-3;
    g->bandwidth_from_dram = bw->counters.dram_present && bw->counters.dram_bytes_read > 0;
    g->bandwidth_gbs = (g->bandwidth_from_dram ? bw->counters.dram_bytes_read : bw->intensity.bytes) / bw_s / 1e9;
    g->flop_rate = fma->intensity.flops / fma_s;
    g->ridge = g->flop_rate / (g->bandwidth_gbs * 1e9);
    g->present = isfinite(g->ridge) && g->ridge > 0;
}

/* Row `w`'s figures against ridge `g`. */
static void derive_row(struct dv_row *w, const struct dv_ridge *g) {
    struct dv_intensity *m = &w->intensity;
    m->flop_rate = m->bandwidth_gbs = m->dram_gbs = m->dram_intensity = m->roofline = m->roofline_fraction = NAN;
    m->bound[0] = '\0';
    if (!w->measured || !(w->time_ms.median > 0)) return;
    const double sec = w->time_ms.median * 1e-3;
    m->flop_rate = m->flops / sec;
    m->bandwidth_gbs = m->bytes / sec / 1e9;
    if (w->counters.dram_present && w->counters.dram_bytes_read > 0) {
        m->dram_gbs = w->counters.dram_bytes_read / sec / 1e9;
        m->dram_intensity = m->flops / w->counters.dram_bytes_read;
    }
    if (!g->present || m->fmas == 0) return;
    /* Where the point lies: by the FLOPs per byte the DRAM served where the
     * counters said, else per byte the threads load. */
    const double at = isfinite(m->dram_intensity) ? m->dram_intensity : m->intensity;
    const double slope = at * g->bandwidth_gbs * 1e9;
    m->roofline = slope < g->flop_rate ? slope : g->flop_rate;
    m->roofline_fraction = m->roofline > 0 ? m->flop_rate / m->roofline : NAN;
    snprintf(m->bound, sizeof m->bound, "%s", at < g->ridge ? "memory" : "compute");
}

void intensity_derive(struct dv_table *t) {
    derive_ridge(t);
    for (unsigned r = 0; r < t->nrows; r++)
        if (t->rows[r].intensity.present) derive_row(&t->rows[r], &t->ridge);
}
