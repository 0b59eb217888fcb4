/* record_build.c -- see record_build.h.
 *
 * Out of memory: every member goes in with jsonout_put(), and a record one
 * of whose members did not is dropped whole (-1): a record missing a member
 * would say something else than the night did.
 */
#define _GNU_SOURCE
#include "server/evidence/record_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "api/report.h"
#include "kernels/base/buildinfo.h"
#include "kernels/base/timeutil.h"
#include "kernels/model/model/experiment.h"
#include "server/evidence/names.h"

int record_build_init(struct record_build *b, const struct evidence_record *rec, char *err) {
    memset(b, 0, sizeof *b);
    b->rec = rec;
    const struct suite *suite = rec ? suites_find(rec->suite) : NULL;
    if (!suite) {
        dv_seterr(err, "evidence: unknown suite %s", rec && rec->suite ? rec->suite : "(null)");
        return -1;
    }
    b->suite = suite;
    if (!names_valid_slug(rec->gpu)) {
        dv_seterr(err, "evidence %s: gpu: expected a GPU slug such as nvidia-h200, got %.64s", suite->name,
                  rec->gpu ? rec->gpu : "(none)");
        return -1;
    }
    if (rec->ok && !rec->document_json) {
        dv_seterr(err, "evidence %s: a good record needs its document", suite->name);
        return -1;
    }
    if (rec->finished_utc) snprintf(b->finished, sizeof b->finished, "%s", rec->finished_utc);
    else timeutil_utc(time(NULL), b->finished, sizeof b->finished);
    if (rec->filed_as && !rec->date) {
        dv_seterr(err, "evidence %s: filed_as: a night filed under a given date needs the date", suite->name);
        return -1;
    }
    if (rec->date) {
        if (!names_valid_date(rec->date)) {
            dv_seterr(err, "evidence: bad date %s", rec->date);
            return -1;
        }
        memcpy(b->date, rec->date, EVIDENCE_DATE_LEN);
    } else {
        snprintf(b->date, sizeof b->date, "%.10s", b->finished);
        if (!names_valid_date(b->date)) {
            dv_seterr(err, "evidence: bad finished_utc %s", b->finished);
            return -1;
        }
    }
    return 0;
}

void record_build_cleanup(struct record_build *b) {
    for (size_t i = 0; i < b->nolder; i++) json_decref(b->older[i]);
    b->nolder = 0;
}

/* The ratios of every row, in this store's own schema. Sets *bad when a
 * member did not go in. */
static json_t *summary_of(const struct dv_report *r, int *bad) {
    json_t *s = json_object(), *tables = json_array();
    jsonout_put(s, "gpu", r->device.present || r->device.name[0] ? jsonout_str(r->device.name) : json_null(), bad);
    jsonout_put(s, "measured", json_boolean(r->measured), bad);
    for (unsigned t = 0; t < r->ntables && t < DV_MAX_TABLES; t++) {
        const struct dv_table *tb = &r->tables[t];
        json_t *jt = json_object(), *rows = json_array();
        jsonout_put(jt, "id", jsonout_str(tb->id), bad);
        jsonout_put(jt, "baseline", jsonout_str(tb->baseline), bad);
        jsonout_put(jt, "noise_limit", jsonout_num(tb->noise_limit), bad);
        jsonout_put(jt, "noise_ok", json_boolean(tb->noise_ok), bad);
        jsonout_put(jt, "baseline_row", json_integer(tb->baseline_row), bad);
        if (r->measured) {
            jsonout_put(jt, "intervals_ok", json_boolean(tb->intervals_ok), bad);
            jsonout_put(jt, "stop_reason", jsonout_str(tb->stop_reason), bad);
        }
        for (unsigned i = 0; i < tb->nrows && i < DV_MAX_ROWS; i++) {
            const struct dv_row *row = &tb->rows[i];
            json_t *jr = json_object();
            jsonout_put(jr, "name", jsonout_str(row->name), bad);
            jsonout_put(jr, "label", jsonout_str(row->label), bad);
            jsonout_put(jr, "predicted_ratio", jsonout_num(row->predicted_ratio), bad);
            if (row->measured) {
                jsonout_put(jr, "ratio", jsonout_num(row->ratio), bad);
                if (isfinite(row->ratio_ci.lo) && isfinite(row->ratio_ci.hi)) {
                    json_t *ci = json_object();
                    jsonout_put(ci, "lo", jsonout_num(row->ratio_ci.lo), bad);
                    jsonout_put(ci, "hi", jsonout_num(row->ratio_ci.hi), bad);
                    jsonout_put(jr, "ratio_ci", ci, bad);
                } else {
                    jsonout_put(jr, "ratio_ci", json_null(), bad);
                }
                jsonout_put(jr, "ratio_level", jsonout_num(row->ratio_level), bad);
                jsonout_put(jr, "median_ms", jsonout_num(row->time_ms.median), bad);
                jsonout_put(jr, "noise", jsonout_num(row->time_ms.noise), bad);
                jsonout_put(jr, "check_ok", json_boolean(row->check.ok), bad);
            } else {
                jsonout_put(jr, "ratio", json_null(), bad);
            }
            jsonout_append(rows, jr, bad);
        }
        jsonout_put(jt, "rows", rows, bad);
        /* Part 2 read both ways, as the document writes it. */
        struct dv_reading rd[DV_MAX_READINGS];
        unsigned nrd = experiment_readings(tb, rd);
        if (nrd) {
            json_t *readings = json_array();
            for (unsigned k = 0; k < nrd; k++) {
                json_t *o = json_object();
                jsonout_put(o, "kind", jsonout_str(experiment_reading_kind_name(rd[k].kind)), bad);
                jsonout_put(o, "row", jsonout_str(tb->rows[rd[k].row].name), bad);
                jsonout_put(o, "against", jsonout_str(tb->rows[rd[k].against].name), bad);
                jsonout_put(o, "ratio", r->measured ? jsonout_num(rd[k].ratio) : json_null(), bad);
                jsonout_put(o, "predicted", jsonout_num(rd[k].predicted), bad);
                jsonout_put(o, "sentence", jsonout_str(rd[k].sentence), bad);
                jsonout_append(readings, o, bad);
            }
            jsonout_put(jt, "readings", readings, bad);
        }
        jsonout_append(tables, jt, bad);
    }
    jsonout_put(s, "tables", tables, bad);
    return s;
}

/* A JSON text of the record handed over (NULL: JSON null), or NULL with *bad when it was not
 * JSON or there was no memory: `what` names it in `err`. */
static json_t *record_part(const char *text, const char *suite, const char *what, int *bad, char *err) {
    if (!text) return json_null();
    json_error_t je;
    json_t *v = jsonout_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, &je);
    if (!v) {
        *bad = 1;
        if (jsonout_oom(&je)) dv_seterr(err, "evidence: out of memory");
        else dv_seterr(err, "evidence %s: the %s is not JSON", suite, what);
    }
    return v;
}

/* The comparison of a night with `older` (newest first), from its date,
 * summary, document and provenance (borrowed). */
static json_t *night_comparison(const char *date, json_t *summary, json_t *doc, json_t *prov, json_t *const *older,
                                size_t n, int *bad) {
    json_t *night = json_object();
    jsonout_put(night, "date", jsonout_str(date), bad);
    jsonout_put(night, "summary", json_incref(summary), bad);
    jsonout_put(night, "document", json_incref(doc), bad);
    jsonout_put(night, "provenance", json_incref(prov), bad);
    json_t *c = *bad ? NULL : nights_compare(night, older, n, NIGHTS_TOLERANCE, bad);
    json_decref(night);
    return c;
}

/* What a record is made of besides its own members: the document and the
 * request parsed, the summary, and the transcript. */
struct parts {
    json_t *doc, *req, *summary;
    const char *transcript;   /* the caller's, or made_text                  */
    char *made_text;          /* the transcript written here, from the report */
    struct dv_report *report; /* the document read here (when not handed over) */
};

static void parts_cleanup(struct parts *p) {
    json_decref(p->doc);
    json_decref(p->req);
    json_decref(p->summary);
    free(p->made_text);
    experiment_report_free(p->report);
}

/* The parts of the record `b` makes. Returns 0, or -1 with `err` (then
 * parts_cleanup() is still called). */
static int parts_make(const struct record_build *b, struct parts *p, char *err) {
    const struct evidence_record *rec = b->rec;
    const struct dv_report *read = rec->report; /* the document as a report, when it reads as one */
    int bad = 0;
    memset(p, 0, sizeof *p);
    p->transcript = rec->transcript;
    p->summary = json_null();
    /* The record holds the caller's parsed document (a reference) or its own. */
    p->doc = rec->document ? json_incref((json_t *)rec->document)
                           : record_part(rec->document_json, b->suite->name, "document", &bad, err);
    p->req = bad ? NULL : record_part(rec->request_json, b->suite->name, "request", &bad, err);
    if (bad) return -1;
    if (!rec->document_json && !rec->document) return 0;
    char why[ERR_LEN] = "";
    int parsed = read != NULL;
    if (!read) {
        if (!(p->report = experiment_report_create())) {
            dv_seterr(err, "evidence: out of memory");
            return -1;
        }
        unsigned long failures = jsonout_failures();
        parsed = report_parse_json(p->doc, p->report, why) == 0;
        if (jsonout_failures() != failures) { /* what it read may be cut short */
            dv_seterr(err, "evidence: out of memory");
            return -1;
        }
        read = p->report;
    }
    if (parsed) {
        json_decref(p->summary);
        p->summary = summary_of(read, &bad);
        if (!p->transcript) p->transcript = p->made_text = report_text(read);
        if (!p->transcript || bad) {
            dv_seterr(err, "evidence: out of memory");
            return -1;
        }
    } else if (rec->ok) {
        dv_seterr(err, "evidence %s: the document does not parse: %s", b->suite->name, why);
        return -1;
    }
    return 0;
}

/* The record's JSON: its own members, the provenance, the parts (taken:
 * `p`'s doc, req and summary are NULL after) and the transcript `text`.
 * Sets *bad when a member did not go in. */
static json_t *record_root(const struct record_build *b, struct parts *p, const char *text, int *bad) {
    const struct evidence_record *rec = b->rec;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    json_t *root = json_object(), *prov = json_object();
    jsonout_put(root, "schema", jsonout_str(EVIDENCE_SCHEMA), bad);
    jsonout_put(root, "suite", jsonout_str(b->suite->name), bad);
    jsonout_put(root, "suite_version", json_integer(b->suite->version), bad);
    jsonout_put(root, "date", jsonout_str(b->date), bad);
    /* Filed under a date the capture gave: said, so no reader takes the
     * date for the day it was measured (provenance.finished_utc is). */
    if (rec->filed_as) jsonout_put(root, "filed_as", jsonout_str(b->date), bad);
    jsonout_put(root, "gpu", jsonout_str(rec->gpu), bad);
    jsonout_put(root, "gpu_name", jsonout_str_or_null(rec->gpu_name), bad);
    jsonout_put(root, "status", jsonout_str(rec->ok ? "ok" : "failed"), bad);
    if (!rec->ok) jsonout_put(root, "reason", jsonout_str(rec->reason ? rec->reason : "unknown"), bad);
    jsonout_put(prov, "server_version", jsonout_str(buildinfo_version()), bad);
    jsonout_put(prov, "git_revision", jsonout_str(buildinfo_git_revision()), bad);
    jsonout_put(prov, "request", p->req, bad);
    jsonout_put(prov, "queued_utc", jsonout_str_or_null(rec->queued_utc), bad);
    jsonout_put(prov, "started_utc", jsonout_str_or_null(rec->started_utc), bad);
    jsonout_put(prov, "finished_utc", jsonout_str(b->finished), bad);
    if (host[0]) jsonout_put(prov, "host", jsonout_str(host), bad);
    /* The comparison reads the summary, the document and the provenance:
     * made before they go into `root`, which may release them. */
    const int compared = rec->ok && json_is_object(p->summary);
    json_t *cmp = compared ? night_comparison(b->date, p->summary, p->doc, prov, b->older, b->nolder, bad) : NULL;
    jsonout_put(root, "provenance", prov, bad);
    jsonout_put(root, "summary", p->summary, bad);
    if (compared) jsonout_put(root, "comparison", cmp, bad);
    jsonout_put(root, "document", p->doc, bad);
    jsonout_put(root, "transcript", jsonout_str(text), bad);
    p->doc = p->req = p->summary = NULL; /* in `root` now, or released */
    return root;
}

int record_build_text(const struct record_build *b, char **json, char **text, char *err) {
    struct parts p;
    *json = *text = NULL;
    if (parts_make(b, &p, err) != 0) {
        parts_cleanup(&p);
        return -1;
    }
    if (p.transcript) {
        *text = strdup(p.transcript);
    } else {
        const char *why = b->rec->reason ? b->rec->reason : "unknown";
        size_t need = strlen(b->suite->name) + strlen(b->date) + strlen(why) + 64;
        if ((*text = malloc(need))) snprintf(*text, need, "suite %s, %s: failed: %s\n", b->suite->name, b->date, why);
    }
    int bad = *text == NULL;
    json_t *root = record_root(b, &p, *text ? *text : "", &bad);
    if (!bad) *json = jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    parts_cleanup(&p);
    if (*json) return 0;
    dv_seterr(err, "evidence: out of memory");
    free(*text);
    *text = NULL;
    return -1;
}
