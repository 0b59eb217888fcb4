/* draw.c -- see draw.h. */
#include "server/evidence/draw.h"

#include <stdio.h>
#include <string.h>

#include "api/report.h"
#include "server/evidence/record.h"
#include "server/evidence/slim.h"

int draw_record(const struct dv_report *r, json_t *rec, const struct suite *suite, const char *date,
                enum evidence_kind kind, time_t mtime, const char *history, struct blob **out) {
    *out = NULL;
    if (kind == EVIDENCE_SLIM) { /* made from the record, with or without a document */
        size_t len = 0;
        const char *gpu = record_str(rec, "gpu");
        char *slim = slim_record(rec, gpu ? gpu : "unknown", date, suite->name, history, &len);
        return slim && (*out = blob_new(slim, len, mtime, kind, EVIDENCE_CHANGES)) ? 0 : -1;
    }
    if (!r) return 0;
    char *drawn = NULL;
    if (kind == EVIDENCE_SVG) {
        /* The title names what a reader of the picture alone needs: the
         * suite, the GPU and the night. */
        char title[512];
        const char *gpu = record_gpu_name(rec);
        snprintf(title, sizeof title, "%s, on %s, %s: the measured ratio beside the model's, per row",
                 suite->description, gpu ? gpu : "an unnamed GPU", date);
        drawn = report_svg(r, title);
    } else {
        drawn = kind == EVIDENCE_MD ? report_markdown(r) : report_csv(r);
    }
    return drawn && (*out = blob_new(drawn, strlen(drawn), mtime, kind, EVIDENCE_CHANGES)) ? 0 : -1;
}
