/* test_evidence.c -- the evidence store: durable writes under SIGKILL, a
 * failure never replacing good evidence, history order, validators and 304,
 * and the path checks that keep requests inside the store. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buildinfo.h"
#include "evidence/evidence.h"
#include "support/evidence_fixture.h"
#include "evidence/suites.h"

static char *dir;
static struct evidence *ev;

static void setup(void) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    char err[ERR_LEN];
    ev = evidence_open(dir, err);
    cr_assert_not_null(ev, "%s", err);
}

static void teardown(void) {
    evidence_close(ev);
    fixture_rmrf(dir);
    free(dir);
}

static void put(const char *suite, const char *date, int ok, double base_ms, const char *reason,
                const char *finished) {
    char err[ERR_LEN] = "";
    char *doc = ok ? fixture_document((size_t)suites_index(suite), base_ms, 0.001, 1, "NVIDIA H200") : NULL;
    if (ok) cr_assert_not_null(doc);
    struct evidence_record rec = {.suite = suite, .date = date, .ok = ok, .reason = reason,
                                  .request_json = "{\"part\": 1}", .queued_utc = "2024-01-01T00:00:00Z",
                                  .finished_utc = finished, .document_json = doc};
    cr_assert_eq(evidence_write(ev, &rec, err), 0, "%s", err);
    free(doc);
}

static json_t *get_json(const char *path, int want_status, struct evidence_response *keep) {
    struct evidence_response r;
    int st = evidence_http_get(ev, path, NULL, NULL, &r);
    cr_assert_eq(st, want_status, "GET %s: %d %.*s", path, st, (int)r.len, r.body ? r.body : "");
    cr_assert_eq(r.status, st);
    json_error_t je;
    json_t *j = r.body ? json_loadb(r.body, r.len, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (st != 304 && strcmp(r.content_type, "application/json") == 0)
        cr_assert_not_null(j, "GET %s: not JSON: %s", path, je.text);
    if (keep) *keep = r;
    else evidence_response_cleanup(&r);
    return j;
}

static const char *js(json_t *o, const char *key) {
    return json_string_value(json_object_get(o, key));
}

/* ---- durability ------------------------------------------------------ */

#define DATE "2024-05-01"

/* Version `seq` of the transcript: a first line naming it, then a length and
 * body that depend on it, so a torn or mixed file cannot pass. */
static char *pattern(unsigned long seq) {
    size_t len = 2000 + (seq * 7919u) % 150000u;
    char *p = malloc(len + 64);
    int n = sprintf(p, "seq=%lu\n", seq);
    for (size_t i = (size_t)n; i < len; i++) p[i] = (char)('a' + (seq + i) % 26);
    p[len] = '\n';
    p[len + 1] = '\0';
    return p;
}

static void writer(unsigned long base) {
    char err[ERR_LEN];
    struct evidence *w = evidence_open(dir, err);
    if (!w) _exit(3);
    for (unsigned long seq = base;; seq++) {
        char reason[32], req[64];
        snprintf(reason, sizeof reason, "v%lu", seq);
        snprintf(req, sizeof req, "{\"seq\": %lu}", seq);
        char *text = pattern(seq);
        struct evidence_record rec = {.suite = "day22-part1", .date = DATE, .ok = 0, .reason = reason,
                                      .request_json = req, .transcript = text};
        if (evidence_write(w, &rec, err) != 0) _exit(4);
        free(text);
    }
}

/* Reads a file whole; NULL when it does not exist. */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        cr_assert_eq(errno, ENOENT, "%s: %s", path, strerror(errno));
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static long text_version(const char *text) {
    unsigned long seq;
    if (!text || sscanf(text, "seq=%lu\n", &seq) != 1) return -1;
    char *want = pattern(seq);
    int same = strcmp(want, text) == 0;
    free(want);
    return same ? (long)seq : -2;
}

static int count_tmp(const char *d) {
    DIR *dd = opendir(d);
    if (!dd) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dd)) != NULL) n += strncmp(e->d_name, EVIDENCE_TMP_PREFIX, 5) == 0;
    closedir(dd);
    return n;
}

Test(evidence, killed_writer_leaves_old_or_new_file_whole, .init = setup, .fini = teardown, .timeout = 120) {
    char jpath[700], tpath[700], ddir[600];
    snprintf(ddir, sizeof ddir, "%s/%s", dir, DATE);
    snprintf(jpath, sizeof jpath, "%s/day22-part1.json", ddir);
    snprintf(tpath, sizeof tpath, "%s/day22-part1.txt", ddir);
    unsigned seed = (unsigned)time(NULL);
    cr_log_info("seed %u", seed);
    int iterations = 150, seen = 0, tmp_seen = 0;
    long last = -1;
    for (int it = 0; it < iterations; it++) {
        unsigned long base = (unsigned long)(it + 1) * 100000u;
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) writer(base);
        usleep((useconds_t)(rand_r(&seed) % 15000));
        kill(pid, SIGKILL);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFSIGNALED(status), "writer ended by itself: status %d", status);

        size_t jlen = 0, tlen = 0;
        char *jtext = slurp(jpath, &jlen), *ttext = slurp(tpath, &tlen);
        if (!jtext) {
            cr_assert_eq(seen, 0, "iteration %d: the record disappeared after it had been written", it);
        } else {
            seen = 1;
            json_error_t je;
            json_t *j = json_loadb(jtext, jlen, JSON_REJECT_DUPLICATES, &je);
            cr_assert_not_null(j, "iteration %d: torn record: %s", it, je.text);
            cr_assert_str_eq(js(j, "schema"), EVIDENCE_SCHEMA);
            cr_assert_str_eq(js(j, "status"), "failed");
            long seq = text_version(js(j, "transcript"));
            cr_assert_geq(seq, 0, "iteration %d: the record's transcript is not one whole version", it);
            char want[32];
            snprintf(want, sizeof want, "v%ld", seq);
            cr_assert_str_eq(js(j, "reason"), want, "iteration %d: fields of two versions mixed", it);
            json_t *req = json_object_get(json_object_get(j, "provenance"), "request");
            cr_assert_eq(json_integer_value(json_object_get(req, "seq")), seq);
            cr_assert_geq(seq, last, "iteration %d: went back from version %ld to %ld", it, last, seq);
            last = seq;
            /* The .txt goes first: the same version, or the one a writer
             * was killed between the two renames of: the same writer's next
             * version or a later writer's first. */
            cr_assert_not_null(ttext, "iteration %d: record without transcript file", it);
            long tseq = text_version(ttext);
            cr_assert_geq(tseq, 0, "iteration %d: torn transcript file", it);
            cr_assert(tseq == seq || tseq == seq + 1 || (tseq > seq && tseq % 100000 == 0),
                      "iteration %d: txt v%ld beside json v%ld", it, tseq, seq);
            json_decref(j);
        }
        free(jtext);
        free(ttext);
        tmp_seen += count_tmp(ddir) + count_tmp(dir);
        char err[ERR_LEN];
        struct evidence *again = evidence_open(dir, err);
        cr_assert_not_null(again, "%s", err);
        cr_assert_eq(count_tmp(ddir), 0, "iteration %d: temp files left after open", it);
        cr_assert_eq(count_tmp(dir), 0);
        evidence_close(again);
    }
    cr_assert(seen, "no write ever completed: the test measured nothing");
    cr_log_info("%d kills, last version %ld, %d temp files swept", iterations, last, tmp_seen);
}

Test(evidence, open_sweeps_only_temp_files, .init = setup, .fini = teardown) {
    put("day22-part1", DATE, 0, 0, "no GPU", NULL);
    char p[700];
    const char *plant[] = {".tmp-day22-part1.json.1.1", DATE "/.tmp-day22-part1.json.9.9", DATE "/notes.md"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, plant[i]);
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f);
        fputs("partial", f);
        fclose(f);
    }
    char err[ERR_LEN];
    cr_assert_eq(evidence_sweep(ev, err), 2, "%s", err);
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, plant[i]);
        cr_expect_neq(access(p, F_OK), 0, "%s survived", plant[i]);
    }
    snprintf(p, sizeof p, "%s/%s", dir, plant[2]);
    cr_expect_eq(access(p, F_OK), 0, "a file that is not a temp file was removed");
    snprintf(p, sizeof p, "%s/" DATE "/day22-part1.json", dir);
    cr_expect_eq(access(p, F_OK), 0);
    cr_assert_eq(evidence_sweep(ev, err), 0);
}

Test(evidence, write_rejects_bad_records, .init = setup, .fini = teardown) {
    char err[ERR_LEN] = "";
    struct evidence_record rec = {.suite = "nope", .date = DATE, .ok = 0, .reason = "x"};
    cr_expect_eq(evidence_write(ev, &rec, err), -1);
    cr_expect(strstr(err, "unknown suite"), "%s", err);
    rec.suite = "../day22-part1";
    cr_expect_eq(evidence_write(ev, &rec, err), -1);
    rec.suite = "day22-part1";
    rec.date = "2024-02-30";
    cr_expect_eq(evidence_write(ev, &rec, err), -1);
    cr_expect(strstr(err, "bad date"), "%s", err);
    rec.date = DATE;
    rec.ok = 1;
    cr_expect_eq(evidence_write(ev, &rec, err), -1, "a good record without a document");
    rec.ok = 0;
    rec.document_json = "{not json";
    cr_expect_eq(evidence_write(ev, &rec, err), -1);
    char p[700];
    snprintf(p, sizeof p, "%s/" DATE "/day22-part1.json", dir);
    cr_expect_neq(access(p, F_OK), 0, "a rejected record left a file");
}

/* ---- a failure never replaces good evidence --------------------------- */

Test(evidence, failed_suite_keeps_previous_latest, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, "2024-05-01T03:00:00Z");
    put("day22-part1", "2024-05-02", 0, 0, "runner: no CUDA device: CUDA driver version is insufficient",
        "2024-05-02T03:00:00Z");

    json_t *j = get_json("/evidence/latest/day22-part1", 200, NULL);
    cr_expect_str_eq(js(j, "status"), "ok");
    cr_expect_str_eq(js(j, "date"), "2024-05-01");
    cr_expect(json_is_object(json_object_get(j, "document")));
    cr_expect_str_eq(js(json_object_get(j, "provenance"), "server_version"), buildinfo_version());
    const char *transcript = js(j, "transcript");
    cr_assert_not_null(transcript);

    struct evidence_response r;
    json_t *none = get_json("/evidence/latest/day22-part1.txt", 200, &r);
    cr_expect_null(none);
    cr_expect_str_eq(r.content_type, "text/plain; charset=utf-8");
    cr_expect_eq(r.len, strlen(transcript));
    cr_expect_eq(memcmp(r.body, transcript, r.len), 0);
    cr_expect(strstr(r.body, "threadIdx.x & 1"), "transcript: %s", r.body);
    evidence_response_cleanup(&r);
    json_decref(j);

    /* The index says the last attempt failed, and where the good one is. */
    j = get_json("/evidence/latest", 200, NULL);
    json_t *e = json_array_get(json_object_get(j, "suites"), (size_t)suites_index("day22-part1"));
    cr_expect_str_eq(js(e, "suite"), "day22-part1");
    cr_expect_str_eq(js(e, "status"), "failed");
    cr_expect_str_eq(js(e, "date"), "2024-05-01");
    cr_expect_str_eq(js(e, "gpu"), "NVIDIA H200");
    cr_expect_str_eq(js(json_object_get(e, "last_attempt"), "date"), "2024-05-02");
    cr_expect(strstr(js(json_object_get(e, "last_attempt"), "reason"), "no CUDA device"));
    cr_expect(strstr(js(e, "reason"), "no CUDA device"));
    cr_expect_str_eq(js(e, "last_failure"), "2024-05-02");
    cr_expect(json_is_array(json_object_get(json_object_get(e, "summary"), "tables")));
    json_t *never = json_array_get(json_object_get(j, "suites"), (size_t)suites_index("day22-part2"));
    cr_expect_str_eq(js(never, "status"), "none");
    cr_expect(json_is_null(json_object_get(never, "date")));
    json_decref(j);

    /* The failure is on record for its own date. */
    j = get_json("/evidence/2024-05-02/day22-part1.json", 200, NULL);
    cr_expect_str_eq(js(j, "status"), "failed");
    cr_expect(json_is_null(json_object_get(j, "document")));
    json_decref(j);
}

Test(evidence, failed_rerun_on_the_same_date_keeps_that_dates_good_record, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-03", 1, 1.0, NULL, "2024-05-03T03:00:00Z");
    put("day22-part1", "2024-05-03", 0, 0, "correctness gate failed", "2024-05-03T09:00:00Z");
    json_t *j = get_json("/evidence/2024-05-03/day22-part1", 200, NULL);
    cr_expect_str_eq(js(j, "status"), "ok");
    json_decref(j);
    char p[700];
    snprintf(p, sizeof p, "%s/2024-05-03/day22-part1.failed.json", dir);
    cr_expect_eq(access(p, F_OK), 0, "the failure was not recorded");
    j = get_json("/evidence/latest", 200, NULL);
    json_t *e = json_array_get(json_object_get(j, "suites"), (size_t)suites_index("day22-part1"));
    cr_expect_str_eq(js(e, "status"), "failed");
    cr_expect_str_eq(js(e, "date"), "2024-05-03");
    cr_expect_str_eq(js(e, "last_failure"), "2024-05-03");
    json_decref(j);
    /* A good re-run replaces the day's record, and the index says ok. */
    put("day22-part1", "2024-05-03", 1, 2.0, NULL, "2024-05-03T12:00:00Z");
    j = get_json("/evidence/latest", 200, NULL);
    e = json_array_get(json_object_get(j, "suites"), (size_t)suites_index("day22-part1"));
    cr_expect_str_eq(js(e, "status"), "ok");
    cr_expect_str_eq(js(e, "last_failure"), "2024-05-03", "the day's failure is still on record");
    cr_expect_null(json_object_get(e, "reason"));
    json_decref(j);
    put("day22-part1", "2024-05-04", 1, 2.0, NULL, NULL);
    j = get_json("/evidence/latest", 200, NULL);
    e = json_array_get(json_object_get(j, "suites"), (size_t)suites_index("day22-part1"));
    cr_expect(json_is_null(json_object_get(e, "last_failure")), "no failure since the latest good night");
    json_decref(j);
}

Test(evidence, suite_never_good_has_no_latest, .init = setup, .fini = teardown) {
    put("day22-part2", "2024-05-01", 0, 0, "worker crashed: signal 11", NULL);
    struct evidence_response r;
    json_t *j = get_json("/evidence/latest/day22-part2", 404, &r);
    cr_expect(strstr(js(j, "error"), "signal 11"), "%s", js(j, "error"));
    cr_expect_str_eq(r.cache_control, EVIDENCE_CACHE_MISSING);
    evidence_response_cleanup(&r);
    json_decref(j);
    json_decref(get_json("/evidence/2024-05-01/day22-part2.txt", 200, NULL));
}

/* ---- history ------------------------------------------------------------ */

Test(evidence, history_is_sorted_oldest_first, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-03-02", 1, 3.0, NULL, NULL);
    put("day22-part1", "2024-01-15", 1, 1.0, NULL, NULL);
    put("day22-part1", "2024-02-01", 0, 0, "noise over limit", NULL);
    put("day22-part1", "2024-02-10", 1, 2.0, NULL, NULL);
    put("day22-part2", "2024-01-20", 1, 1.0, NULL, NULL);
    char p[700];
    snprintf(p, sizeof p, "%s/notadate", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/2024-13-01", dir);
    mkdir(p, 0755);

    json_t *j = get_json("/evidence/history/day22-part1", 200, NULL);
    json_t *pts = json_object_get(j, "nights");
    const char *dates[] = {"2024-01-15", "2024-02-01", "2024-02-10", "2024-03-02"};
    const double base[] = {1.0, 0, 2.0, 3.0};
    cr_assert_eq(json_array_size(pts), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *pt = json_array_get(pts, i);
        cr_expect_str_eq(js(pt, "date"), dates[i]);
        json_t *rows = json_object_get(pt, "rows");
        if (base[i] == 0) {
            cr_expect_str_eq(js(pt, "status"), "failed");
            cr_expect_str_eq(js(pt, "reason"), "noise over limit");
            cr_expect_eq(json_array_size(rows), 0);
            continue;
        }
        cr_expect_str_eq(js(pt, "status"), "ok");
        cr_assert_eq(json_array_size(rows), 4);
        json_t *row0 = json_array_get(rows, 0);
        cr_expect_str_eq(js(row0, "name"), "lane-parity");
        cr_expect_str_eq(js(row0, "table"), "part1");
        cr_expect_float_eq(json_real_value(json_object_get(row0, "ratio")), 2.0, 1e-9);
        cr_expect_float_eq(json_real_value(json_object_get(row0, "median_ms")), 2.0 * base[i], 1e-9);
    }
    json_decref(j);
    j = get_json("/evidence/history/day22-part2", 200, NULL);
    cr_expect_eq(json_array_size(json_object_get(j, "nights")), 1);
    json_decref(j);
    j = get_json("/evidence/history/day22-exercise", 200, NULL);
    cr_expect_eq(json_array_size(json_object_get(j, "nights")), 0);
    json_decref(j);
}

/* ---- validators and 304 --------------------------------------------------- */

static void cond(const char *path, const char *inm, const char *ims, int want, const char *why) {
    struct evidence_response r;
    int st = evidence_http_get(ev, path, inm, ims, &r);
    cr_expect_eq(st, want, "%s (INM %s, IMS %s): %s", path, inm ? inm : "-", ims ? ims : "-", why);
    if (st == 304) {
        cr_expect_null(r.body);
        cr_expect_neq(r.etag[0], 0, "a 304 repeats the ETag");
        cr_expect_not_null(r.cache_control);
    }
    evidence_response_cleanup(&r);
}

Test(evidence, etag_and_last_modified_are_stable_and_answer_304, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    const char *paths[] = {"/evidence/latest", "/evidence/latest/day22-part1.json",
                           "/evidence/latest/day22-part1.txt", "/evidence/2024-05-01/day22-part1",
                           "/evidence/history/day22-part1"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        struct evidence_response a, b;
        cr_assert_eq(evidence_http_get(ev, paths[i], NULL, NULL, &a), 200, "%s", paths[i]);
        cr_assert_eq(evidence_http_get(ev, paths[i], NULL, NULL, &b), 200);
        cr_expect_eq(a.etag[0], '"', "%s: strong, quoted ETag: %s", paths[i], a.etag);
        cr_expect_str_eq(a.etag, b.etag, "%s: ETag changed between two GETs", paths[i]);
        cr_expect_str_eq(a.last_modified, b.last_modified);
        cr_expect_neq(evidence_parse_http_date(a.last_modified), (time_t)-1, "%s", a.last_modified);
        cr_expect_not_null(a.cache_control);

        char weak[64], list[128], older[40];
        snprintf(weak, sizeof weak, "W/%s", a.etag);
        snprintf(list, sizeof list, "\"abc\", %s ,\"def\"", a.etag);
        evidence_http_date(evidence_parse_http_date(a.last_modified) - 1, older, sizeof older);
        cond(paths[i], a.etag, NULL, 304, "same ETag");
        cond(paths[i], weak, NULL, 304, "weak comparison");
        cond(paths[i], list, NULL, 304, "ETag in a list");
        cond(paths[i], "*", NULL, 304, "any");
        cond(paths[i], "\"0000\"", NULL, 200, "other ETag");
        cond(paths[i], "\"0000\"", a.last_modified, 200, "If-None-Match decides over If-Modified-Since");
        cond(paths[i], NULL, a.last_modified, 304, "not modified since");
        cond(paths[i], NULL, "Sun, 06 Nov 2094 08:49:37 GMT", 304, "a later date");
        cond(paths[i], NULL, older, 200, "modified since");
        cond(paths[i], NULL, "yesterday", 200, "an invalid date is ignored");
        evidence_response_cleanup(&a);
        evidence_response_cleanup(&b);
    }
    /* New evidence: the old ETag no longer matches. */
    struct evidence_response a;
    evidence_http_get(ev, "/evidence/latest/day22-part1", NULL, NULL, &a);
    put("day22-part1", "2024-05-02", 1, 1.5, NULL, NULL);
    cond("/evidence/latest/day22-part1", a.etag, NULL, 200, "new evidence");
    cond("/evidence/latest", "\"0000\"", NULL, 200, "index");
    evidence_response_cleanup(&a);
}

Test(evidence, cache_control_suits_a_cdn, .init = setup, .fini = teardown) {
    char today[EVIDENCE_DATE_LEN], path[128];
    evidence_date_of(time(NULL), today);
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    put("day22-part1", today, 1, 1.0, NULL, NULL);
    struct evidence_response r;
    evidence_http_get(ev, "/evidence/2024-05-01/day22-part1", NULL, NULL, &r);
    cr_expect_str_eq(r.cache_control, EVIDENCE_CACHE_IMMUTABLE);
    evidence_response_cleanup(&r);
    snprintf(path, sizeof path, "/evidence/%s/day22-part1", today);
    evidence_http_get(ev, path, NULL, NULL, &r);
    cr_expect_str_eq(r.cache_control, EVIDENCE_CACHE_LATEST, "today's record can still change");
    evidence_response_cleanup(&r);
    evidence_http_get(ev, "/evidence/latest", NULL, NULL, &r);
    cr_expect_str_eq(r.cache_control, EVIDENCE_CACHE_LATEST);
    evidence_response_cleanup(&r);
}

Test(evidence, http_dates_round_trip) {
    char buf[40];
    evidence_http_date(784111777, buf, sizeof buf);
    cr_expect_str_eq(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
    cr_expect_eq(evidence_parse_http_date(buf), 784111777);
    cr_expect_eq(evidence_parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"), (time_t)-1);
    cr_expect_eq(evidence_parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), (time_t)-1);
    cr_expect_eq(evidence_parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"), (time_t)-1);
    cr_expect_eq(evidence_parse_http_date(""), (time_t)-1);
    cr_expect_eq(evidence_parse_http_date(NULL), (time_t)-1);
    cr_expect(evidence_valid_date("2024-02-29"));
    cr_expect_not(evidence_valid_date("2023-02-29"));
    cr_expect_not(evidence_valid_date("2024-1-01"));
    cr_expect_not(evidence_valid_date("2024-01-01x"));
    cr_expect_not(evidence_valid_date("../../etc"));
}

/* ---- names and dates: nothing outside the store ------------------------ */

Test(evidence, paths_outside_the_store_are_refused, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    char p[700];
    snprintf(p, sizeof p, "%s/2024-05-01/secret.json", dir);
    FILE *f = fopen(p, "w");
    fputs("{\"schema\": \"" EVIDENCE_SCHEMA "\", \"status\": \"ok\"}", f);
    fclose(f);
    struct {
        const char *path;
        int status;
    } cases[] = {
        {"/evidence/../../etc/passwd", 404},
        {"/evidence/2024-05-01/../../../etc/passwd", 404},
        {"/evidence/2024-05-01/secret", 404},
        {"/evidence/2024-05-01/secret.json", 404},
        {"/evidence/2024-05-01/day22-part1.exe", 404},
        {"/evidence/2024-05-01/.tmp-day22-part1.json.1.1", 404},
        {"/evidence/2024-05-01/day22-part1/", 404},
        {"/evidence/2024-05-01//day22-part1", 404},
        {"/evidence/..%2f/day22-part1", 400},
        {"/evidence/../day22-part1", 400},
        {"/evidence/2024-13-01/day22-part1", 400},
        {"/evidence/2024-02-30/day22-part1", 400},
        {"/evidence/24-05-01/day22-part1", 400},
        {"/evidence/2024-05-01/day22-part1.json.json", 404},
        {"/evidence/latest/../2024-05-01/day22-part1", 404},
        {"/evidence/latest/day22-Part1", 404},
        {"/evidence/latest/", 404},
        {"/evidence/history/..", 404},
        {"/evidence/history/day22-part1/x", 404},
        {"/evidence/", 404},
        {"/evidence", 404},
        {"/evidencelatest", 404},
        {"/evidence/latest/day22-part1.json\n", 404},
        {"/evidence/2024-05-02/day22-part1", 404}, /* valid, nothing filed that day */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct evidence_response r;
        int st = evidence_http_get(ev, cases[i].path, NULL, NULL, &r);
        cr_expect_eq(st, cases[i].status, "%s: %d %.*s", cases[i].path, st, (int)r.len, r.body);
        cr_expect_str_eq(r.content_type, "application/json");
        cr_expect(r.body && strstr(r.body, "\"error\""), "%s: no JSON error", cases[i].path);
        evidence_response_cleanup(&r);
    }
    json_decref(get_json("/evidence/2024-05-01/day22-part1.json", 200, NULL));
}
