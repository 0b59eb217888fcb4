/* helper_gpu.c -- asks CUDA (through the runner) whether device 0 is usable,
 * and the check every GPU suite expects of a measured report. */
#include <stdio.h>

#include "tests/kernels/gpu/helper_gpu.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/measure.h"

int helper_gpu_available(char *why) {
    struct dv_device d;
    char err[ERR_LEN] = "";
    int rc = device_query(0, &d, err);
    if (rc == 0 && d.present) return 1;
    snprintf(why, ERR_LEN, "%s", err[0] ? err : "no device");
    return 0;
}

void helper_expect_all_checked(const struct dv_report *r) {
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        for (unsigned j = 0; j < t->nrows; j++) {
            const struct dv_row *row = &t->rows[j];
            cr_expect(row->measured, "%s/%s not measured", t->id, row->name);
            cr_expect(row->check.ok, "%s/%s: %llu mismatches, first thread %lld (want %.9g got %.9g)", t->id, row->name,
                      row->check.mismatches, row->check.first_mismatch, row->check.expected, row->check.got);
            cr_expect_eq(row->check.checked, r->config.threads, "%s/%s checked %llu of %llu", t->id, row->name,
                         row->check.checked, r->config.threads);
        }
    }
}
