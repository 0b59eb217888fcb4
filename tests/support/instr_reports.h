/* instr_reports.h -- the reports the instruction-profile tests hand the
 * profiler (tests/server/jobs/test_instrproc.c, test_instrserve.c,
 * test_instrgroups.c): a request planned as measured on a named device, the
 * widget's request for one predicate with profiles asked for, and which of
 * a request's rows a stand-in profile answered. Header-only (static inline), as
 * tests/support/fake_measure.h. */
#ifndef DV_TEST_INSTR_REPORTS_H
#define DV_TEST_INSTR_REPORTS_H

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/options.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"

/* The plan of `o` as a measured report on a named device (an H200 at a
 * fixed PCI address, driver 13.0), every row measured. */
static inline struct dv_report *instr_test_measured(struct dv_options *o) {
    char err[ERR_LEN];
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(o, r, NULL, err), 0, "%s", err);
    r->measured = 1;
    snprintf(r->device.name, sizeof r->device.name, "NVIDIA H200");
    snprintf(r->device.pci_bus_id, sizeof r->device.pci_bus_id, "0000:19:00.0");
    r->device.driver_version = 13000;
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) r->tables[i].rows[j].measured = 1;
    return r;
}

/* The widget's request for `expr` against the lesson's baseline, asking for
 * the profiles; `target` its half-width target (0: the default). */
static inline struct dv_options instr_test_widget(const char *expr, double target) {
    struct dv_options o;
    char err[ERR_LEN];
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.instructions = 1;
    o.npredicates = 2;
    if (target > 0) o.max_noise = target;
    snprintf(o.predicates[0], sizeof o.predicates[0], "%s", expr);
    snprintf(o.predicates[1], sizeof o.predicates[1], "%s", DV_DEFAULT_BASELINE);
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    return o;
}

/* Report `r`'s row `name`: the line of its profile's one run (the stand-in
 * profiler writes there the row's index in the request it was asked in),
 * -1 without a profile, -2 without the row. */
static inline int instr_test_profiled_as(const struct dv_report *r, const char *name) {
    for (unsigned j = 0; j < r->tables[0].nrows; j++)
        if (strcmp(r->tables[0].rows[j].name, name) == 0) {
            const struct listing *l = r->tables[0].rows[j].instructions;
            return l && l->nruns ? (int)l->runs[0].line : -1;
        }
    return -2;
}

/* The stand-in profilers' environment for a test suite's set-up: SIGPIPE
 * ignored, their log at /tmp/dv-fake-instr-NAME-PID.log (into `path`,
 * emptied) named by FAKE_INSTRUCTIONS_LOG, and none of the variables that
 * pick a stand-in's behaviour or the profiling server left set. */
static inline void instr_test_fake_env(const char *name, char *path, size_t len) {
    signal(SIGPIPE, SIG_IGN);
    snprintf(path, len, "/tmp/dv-fake-instr-%s-%ld.log", name, (long)getpid());
    unlink(path);
    setenv("FAKE_INSTRUCTIONS_LOG", path, 1);
    unsetenv("FAKE_INSTRUCTIONS");
    unsetenv("FAKE_INSTR_SERVER");
    unsetenv("DV_INSTRUCTIONS_SERVER");
}

#endif /* DV_TEST_INSTR_REPORTS_H */
