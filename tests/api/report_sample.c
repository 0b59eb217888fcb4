/* report_sample.c -- prints the divergence.v1 documents of the report with
 * every field set (tests/api/report_full.h), one a line: measured, then the
 * same report as an analysis (measured false). Run by
 * tests/api/openapi/report_schema.test.mjs, which checks their keys against
 * api/openapi.yaml's Report schema both ways. Exit status 1 when a document
 * cannot be written.
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/report.h"
#include "tests/api/report_full.h"

int main(void) {
    struct dv_report *r = experiment_report_create();
    if (!r) {
        fprintf(stderr, "report_sample: out of memory\n");
        return 1;
    }
    report_full(r);
    int rc = 0;
    for (int measured = 1; measured >= 0 && rc == 0; measured--) {
        r->measured = measured;
        char *s = report_json(r, 0);
        if (!s || printf("%s\n", s) < 0) rc = 1;
        free(s);
    }
    experiment_report_free(r);
    if (rc) fprintf(stderr, "report_sample: cannot write the documents\n");
    return rc;
}
