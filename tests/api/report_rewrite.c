/* report_rewrite.c -- a divergence.v1 document read by this build's reader
 * and written again by its writer (report_parse, report_json): what this
 * build would write for the same measurement. tests/fixtures/capture_check.py
 * compares the fields of a committed capture with it, so a capture made by a
 * writer with other fields shows as stale.
 *
 * Usage: report_rewrite < DOCUMENT > DOCUMENT. Exit 1 when it does not read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/report.h"

int main(void) {
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += n;
        if (len == cap && !(buf = realloc(buf, cap *= 2))) break;
    }
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    if (!buf || !r || report_parse(buf, len, r, err) != 0) {
        fprintf(stderr, "report_rewrite: %s\n", buf && r ? err : "out of memory");
        return 1;
    }
    char *out = report_json(r, 0);
    if (!out || puts(out) < 0) return 1;
    free(out);
    free(buf);
    experiment_report_free(r);
    return 0;
}
