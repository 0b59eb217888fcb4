/* test_intensity_measure.c -- the arithmetic-intensity table's DRAM pass
 * where it cannot run, no GPU needed: without counters the rows have no
 * DRAM bytes, the table says why, and the roofline is read from the bytes
 * the threads load. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/gpu/intensity_measure.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"

static struct dv_report *planned(void) {
    struct dv_options o;
    experiment_defaults(&o);
    o.blocks = 4096;
    snprintf(o.scenario, sizeof o.scenario, "intensity-stream");
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    struct dv_table *t = &r->tables[0];
    for (unsigned k = 0; k < t->nrows; k++) {
        t->rows[k].measured = 1;
        t->rows[k].time_ms.median = 1.0;
        t->rows[k].counters.dram_present = 1; /* a stale value the pass must clear */
        t->rows[k].counters.dram_bytes_read = 1.0;
    }
    t->rows[0].time_ms.median = 0.0625;
    t->rows[1].time_ms.median = 0.5;
    return r;
}

Test(intensity_measure, without_counters_the_roofline_is_read_from_the_bytes_loaded) {
    static const struct {
        const char *counters_reason, *want;
    } cases[] = {
        {"CUPTI: this build has no CUPTI headers", "CUPTI: this build has no CUPTI headers"},
        {"", "no counters were asked for"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dv_report *r = planned();
        struct dv_table *t = &r->tables[0];
        struct counters *cnt = NULL;
        struct scenario_rows c;
        memset(&c, 0, sizeof c);
        char err[ERR_LEN] = "";
        snprintf(r->testimony.counters_reason, sizeof r->testimony.counters_reason, "%s", cases[i].counters_reason);
        cr_assert_eq(intensity_measure_dram(&c, t, &cnt, &r->testimony, err), 0, "%s", err);
        cr_expect_str_eq(t->dram_reason, cases[i].want);
        for (unsigned k = 0; k < t->nrows; k++) {
            cr_expect_not(t->rows[k].counters.dram_present, "%s", t->rows[k].name);
            cr_expect(isnan(t->rows[k].intensity.dram_intensity));
        }
        cr_assert(t->ridge.present);
        cr_expect_not(t->ridge.bandwidth_from_dram);
        cr_expect(fabs(t->ridge.bandwidth_gbs - 4096.0 * 256 * 256 / 0.0625e-3 / 1e9) < 1e-6);
        cr_expect_str_eq(t->rows[2].intensity.bound, "memory");
        experiment_report_free(r);
    }
}
