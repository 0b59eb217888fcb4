/* record.c -- see record.h. */
#define _GNU_SOURCE

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"
#include "api/report.h"
#include "kernels/base/timeutil.h"
#include "server/evidence/durable.h"
#include "server/evidence/record.h"
#include "server/evidence/types.h"

const char *record_str(json_t *obj, const char *key) { return json_string_value(json_object_get(obj, key)); }

json_t *record_load(const char *dir, const char *date, const char *name, struct stat *st, char **raw, size_t *rawlen,
                    int *oom) {
    char path[PATH_MAX], *data;
    size_t len;
    char err[ERR_LEN];
    if (raw) *raw = NULL;
    if (durable_join(path, sizeof path, dir, date, name) != 0) return NULL;
    enum durable_read_status rs = durable_read(path, RECORD_MAX_BYTES, &data, &len, st, err);
    if (rs != DURABLE_READ_OK) {
        if (rs == DURABLE_NOMEM) *oom = 1;
        return NULL;
    }
    json_error_t je;
    json_t *j = jsonout_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    if (!j && jsonout_oom(&je)) *oom = 1;
    if (!j || !json_is_object(j) || !json_is_string(json_object_get(j, "status")) ||
        strcmp(record_str(j, "schema") ? record_str(j, "schema") : "", EVIDENCE_SCHEMA) != 0) {
        json_decref(j);
        free(data);
        return NULL;
    }
    if (raw) {
        *raw = data;
        *rawlen = len;
    } else {
        free(data);
    }
    return j;
}

int record_same_file(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int record_ok(json_t *rec) {
    const char *s = json_string_value(json_object_get(rec, "status"));
    return s && strcmp(s, "ok") == 0;
}

const char *record_gpu_name(json_t *rec) {
    const char *n = record_str(json_object_get(rec, "summary"), "gpu");
    return n ? n : record_str(rec, "gpu_name");
}

time_t record_time(json_t *rec, time_t fallback) {
    time_t t;
    if (timeutil_parse_utc(record_str(json_object_get(rec, "document"), "finished_utc"), &t) == 0) return t;
    if (timeutil_parse_utc(record_str(json_object_get(rec, "provenance"), "finished_utc"), &t) == 0) return t;
    return fallback;
}

int record_report(json_t *rec, struct dv_report **out, char *why) {
    *out = NULL;
    const json_t *doc = json_object_get(rec, "document");
    if (!json_is_object(doc)) {
        if (why) dv_seterr(why, "%s", doc && !json_is_null(doc) ? "it is not an object" : "there is none");
        return 0;
    }
    char err[ERR_LEN];
    struct dv_report *r = experiment_report_create();
    if (!r) return -1;
    unsigned long failures = jsonout_failures();
    int parsed = report_parse_json(doc, r, err) == 0;
    if (jsonout_failures() != failures) { /* what it read may be cut short */
        experiment_report_free(r);
        return -1;
    }
    if (parsed) *out = r;
    else {
        experiment_report_free(r);
        if (why) dv_seterr(why, "%s", err);
    }
    return 0;
}

int record_judge(json_t *rec, struct dv_report **report) {
    if (report) *report = NULL;
    if (!record_ok(rec)) return 0;
    struct dv_report *r = NULL;
    char why[ERR_LEN] = "", reason[ERR_LEN + 64];
    if (record_report(rec, &r, why) != 0) return -1;
    if (r) {
        if (report) *report = r;
        else experiment_report_free(r);
        return 0;
    }
    snprintf(reason, sizeof reason, "filed as ok, but its document does not read as divergence.v1: %s", why);
    json_t *status = jsonout_str("failed"), *text = jsonout_str(reason);
    if (!status || !text || json_object_set_new(rec, "reason", text) != 0) {
        json_decref(status);
        return -1;
    }
    /* The reason is in. Deleting members and replacing the value of one
     * that exists ("status" is, record_ok() read it) allocate nothing, so
     * nothing below can fail half-way. */
    json_object_del(rec, "summary");
    json_object_del(rec, "comparison");
    if (json_object_set_new(rec, "status", status) != 0) return -1;
    return 0;
}
