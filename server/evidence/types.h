/* types.h -- the evidence store's data model, and nothing else (STYLE.md
 * 23): what a record is made from, the forms a read returns, and how a
 * read fails. The units that read a record (record.h), build one
 * (record_build.h), draw one (draw.h), keep the nights (history.h), hold
 * the views (gpuview.h, views.h) and file them (evidence.h) depend on these
 * types and not on each other.
 *
 * A record is <gpu>/<YYYY-MM-DD>/<suite>.json, schema divergence.evidence.v1
 * (evidence.h says the layout and what it holds); the index and a history
 * page are documents of their own schemas, made from the records.
 */
#ifndef DV_EVIDENCE_TYPES_H
#define DV_EVIDENCE_TYPES_H

#include <jansson.h>

#include "kernels/base/status.h"

#define EVIDENCE_SCHEMA "divergence.evidence.v1"
#define EVIDENCE_INDEX_SCHEMA "divergence.evidence.index.v1"
#define EVIDENCE_HISTORY_SCHEMA "divergence.evidence.history.v1"
#define EVIDENCE_DATE_LEN 11 /* "YYYY-MM-DD" + NUL */
#define EVIDENCE_SLUG_LEN 64 /* at most 63 characters + NUL */
#define EVIDENCE_HISTORY_DEFAULT 30
#define EVIDENCE_HISTORY_MAX 366

struct dv_report; /* kernels/model/model/types.h */

/* One night's result for one suite, as the refresh hands it over. Strings
 * are borrowed. */
struct evidence_record {
    const char *suite;         /* a name from the suites table                 */
    const char *gpu;           /* the writing server's GPU slug (required)     */
    const char *gpu_name;      /* its device name, or NULL                     */
    const char *date;          /* YYYY-MM-DD filed under; NULL: finished_utc's */
    /* The capture's --file-as: 1 when `date` is a date the caller chose for
     * the night rather than the night it was measured (the record then says
     * "filed_as", its finished_utc still the measurement's). Such a night
     * never replaces a record of its date, nor goes before a later night of
     * its suite (their comparisons were made without it), unless
     * `replace_night` is 1. */
    int filed_as;
    int replace_night;
    int ok;                    /* 1: good evidence; 0: a failure               */
    const char *reason;        /* why it failed (required when !ok)            */
    const char *request_json;  /* the request body that ran (JSON), or NULL    */
    const char *queued_utc;    /* ISO 8601 UTC timestamps; NULL when unknown   */
    const char *started_utc;   /* as queued_utc                                */
    const char *finished_utc;  /* NULL: now                                    */
    const char *document_json; /* divergence.v1 document, or NULL (required ok) */
    const char *transcript;    /* lesson text; NULL: made from the document    */
    /* Optional, borrowed: document_json already parsed (a JSON object), and
     * that object read as a report (report_parse_json() succeeded), so the
     * write does not parse them again; NULL: parsed from document_json. */
    const json_t *document;
    const struct dv_report *report;
};

/* The forms a read returns. The record (JSON) and its transcript (TEXT) are
 * the files; the chart (SVG) and the tables as Markdown and CSV are drawn
 * from the record's document by api/report.h, the same writers as
 * `divergence analyze --format`. */
/* EVIDENCE_JSON is the record as filed (served as .full.json); EVIDENCE_SLIM
 * the record without each row's listing (slim.h; served as .json and
 * without an extension: what a page loads first). */
enum evidence_kind { EVIDENCE_JSON = 0, EVIDENCE_TEXT, EVIDENCE_SVG, EVIDENCE_MD, EVIDENCE_CSV, EVIDENCE_SLIM };
#define EVIDENCE_NUM_KINDS 6
/* 1 for the kinds drawn from the document rather than read from a file:
 * a later build may draw the same record differently, so none is final. */
#define EVIDENCE_KIND_DRAWN(k) ((k) >= EVIDENCE_SVG)

enum evidence_fresh {
    EVIDENCE_CHANGES = 0, /* may change (latest views, index, history, today) */
    EVIDENCE_FINAL        /* a night before yesterday: never changes again    */
};

/* Why a read failed. */
enum evidence_code {
    EVIDENCE_EINVAL = 1, /* a malformed name, date, slug or cursor          */
    EVIDENCE_ENOENT,     /* nothing filed there                             */
    EVIDENCE_EIO         /* the store could not be read, out of memory      */
};
struct evidence_error {
    enum evidence_code code;
    char reason[ERR_LEN];
};

#endif /* DV_EVIDENCE_TYPES_H */
