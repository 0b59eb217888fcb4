/* plans.h -- what the model's experiment tests start from
 * (test_experiments.c, test_intensity.c, test_sortexp.c, test_scenario.c):
 * a scenario by name, and the report a request for a scenario on `blocks`
 * blocks plans. Header-only (static inline). */
#ifndef DV_TEST_MODEL_PLANS_H
#define DV_TEST_MODEL_PLANS_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"

/* Scenario `name`, which must exist. */
static inline const struct scenario *get(const char *name) {
    const struct scenario *s = scenario_find(name);
    cr_assert_not_null(s, "no scenario %s", name);
    return s;
}

/* The plan of the request for scenario `scenario` (a name, "all" or a
 * suite's) on `blocks` blocks (0: the default). */
static inline struct dv_report *plan_of(const char *scenario, unsigned blocks) {
    struct dv_options o;
    experiment_defaults(&o);
    o.blocks = blocks;
    snprintf(o.scenario, sizeof o.scenario, "%s", scenario);
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    return r;
}

#endif /* DV_TEST_MODEL_PLANS_H */
