/* report_render.c -- a divergence.v1 document in one of this build's
 * forms: the transcript (text), Markdown, CSV or the SVG chart, as
 * `divergence measure --format F` would have printed the same measurement.
 * For tests/bench/experiments_gpu.sh, which keeps one measurement's JSON
 * and its transcript side by side.
 *
 * Usage: report_render text|md|csv|svg < DOCUMENT. Exit 1 when it does not
 * read, 2 for an unknown form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/report.h"

int main(int argc, char **argv) {
    const char *form = argc > 1 ? argv[1] : "text";
    if (strcmp(form, "text") != 0 && strcmp(form, "md") != 0 && strcmp(form, "csv") != 0 && strcmp(form, "svg") != 0) {
        fprintf(stderr, "usage: report_render text|md|csv|svg < DOCUMENT\n");
        return 2;
    }
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += n;
        if (len == cap && !(buf = realloc(buf, cap *= 2))) break;
    }
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    if (!buf || !r || report_parse(buf, len, r, err) != 0) {
        fprintf(stderr, "report_render: %s\n", buf && r ? err : "out of memory");
        return 1;
    }
    char *out = form[0] == 't'   ? report_text(r)
                : form[0] == 'm' ? report_markdown(r)
                : form[0] == 'c' ? report_csv(r)
                                 : report_svg(r, NULL);
    const int ok = out && fputs(out, stdout) >= 0;
    free(out);
    free(buf);
    experiment_report_free(r);
    return ok ? 0 : 1;
}
