/* test_evidence.c -- the evidence store: durable writes under SIGKILL, a
 * failure never replacing good evidence, history order and pages, reads that
 * answer bytes and reasons (no HTTP), GPU slugs, two GPU models kept apart,
 * the layout before GPU folders moved, the in-memory latest views (replaced
 * on a write, seen across processes, safe under concurrent reads) and the
 * per-GPU lock that orders writers sharing one directory. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "kernels/base/buildinfo.h"
#include "server/evidence/durable.h"
#include "server/evidence/evidence.h"
#include "server/evidence/names.h"
#include "server/evidence/history.h"
#include "tests/support/evidence_fixture.h"
#include "server/evidence/suites.h"
#include "tests/support/failing_alloc.h"

#define GPU "nvidia-h200"

FIXTURE_STORE()

static void put_on(struct evidence *store, const char *gpu, const char *name, const char *suite, const char *date,
                   int ok, double base_ms, const char *reason, const char *finished) {
    char err[ERR_LEN] = "";
    char *doc = ok ? fixture_document((size_t)suites_index(suite), base_ms, 0.001, 1, name) : NULL;
    if (ok) cr_assert_not_null(doc);
    struct evidence_record rec = {.suite = suite,
                                  .gpu = gpu,
                                  .gpu_name = name,
                                  .date = date,
                                  .ok = ok,
                                  .reason = reason,
                                  .request_json = "{\"part\": 1}",
                                  .queued_utc = "2024-01-01T00:00:00Z",
                                  .finished_utc = finished,
                                  .document_json = doc};
    cr_assert_eq(evidence_write(store, &rec, NULL, err), 0, "%s", err);
    free(doc);
}

static void put(const char *suite, const char *date, int ok, double base_ms, const char *reason, const char *finished) {
    put_on(ev, GPU, "NVIDIA H200", suite, date, ok, base_ms, reason, finished);
}

/* A read's blob as JSON (released); asserts it succeeded. */
static json_t *as_json(int rc, struct blob *b, const struct evidence_error *e) {
    cr_assert_eq(rc, 0, "read failed: %d %s", e->code, e->reason);
    cr_assert_eq(b->kind, EVIDENCE_JSON);
    cr_assert_eq(strlen(b->data), b->len, "the bytes are NUL-terminated at len");
    json_error_t je;
    json_t *j = json_loadb(b->data, b->len, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(j, "not JSON: %s", je.text);
    blob_release(b);
    return j;
}

static json_t *index_of(struct evidence *store, const char *own) {
    struct blob *b = NULL;
    struct evidence_error e;
    int rc = evidence_get_index(store, own, &b, &e);
    return as_json(rc, b, &e);
}

static json_t *latest_of(const char *gpu, const char *suite) {
    struct blob *b = NULL;
    struct evidence_error e;
    int rc = evidence_get_latest(ev, gpu, GPU, suite, EVIDENCE_JSON, &b, &e);
    return as_json(rc, b, &e);
}

static json_t *night_of(const char *date, const char *suite) {
    struct blob *b = NULL;
    struct evidence_error e;
    int rc = evidence_get_night(ev, GPU, NULL, date, suite, EVIDENCE_JSON, &b, &e);
    return as_json(rc, b, &e);
}

static json_t *history_of(const char *suite, unsigned limit, const char *cursor) {
    struct blob *b = NULL;
    struct evidence_error e;
    int rc = evidence_get_history(ev, NULL, GPU, suite, limit, cursor, &b, &e);
    return as_json(rc, b, &e);
}

static json_t *entry(json_t *idx, const char *suite) {
    return json_array_get(json_object_get(idx, "suites"), (size_t)suites_index(suite));
}

static const char *js(json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }

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
        struct evidence_record rec = {.suite = "day22-part1",
                                      .gpu = GPU,
                                      .date = DATE,
                                      .ok = 0,
                                      .reason = reason,
                                      .request_json = req,
                                      .transcript = text};
        if (evidence_write(w, &rec, NULL, err) != 0) _exit(4);
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
    while ((e = readdir(dd)) != NULL) n += strncmp(e->d_name, DURABLE_TMP_PREFIX, strlen(DURABLE_TMP_PREFIX)) == 0;
    closedir(dd);
    return n;
}

Test(evidence, killed_writer_leaves_old_or_new_file_whole, .init = setup, .fini = teardown, .timeout = 120) {
    char jpath[700], tpath[700], ddir[600], gdir[600];
    snprintf(gdir, sizeof gdir, "%s/" GPU, dir);
    snprintf(ddir, sizeof ddir, "%s/" GPU "/%s", dir, DATE);
    snprintf(jpath, sizeof jpath, "%s/day22-part1.json", ddir);
    snprintf(tpath, sizeof tpath, "%s/day22-part1.txt", ddir);
    unsigned seed = (unsigned)time(NULL);
    cr_log_info("seed %u", seed);
    int iterations = 150, seen = 0, tmp_seen = 0;
    long last = -1, tlast = -1;
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
            cr_assert_null(ttext, "iteration %d: a transcript without its record", it);
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
            /* The record goes first (it is what publishes the night), its
             * transcript file after it: the same version, or, when a writer
             * was killed between the two renames, the version before (none
             * at all before the first transcript was ever written), never
             * a later one and never a transcript without its record. */
            long tseq = ttext ? text_version(ttext) : -1;
            if (ttext) cr_assert_geq(tseq, 0, "iteration %d: torn transcript file", it);
            else cr_assert_lt(tlast, 0, "iteration %d: the transcript file disappeared", it);
            cr_assert_leq(tseq, seq, "iteration %d: txt v%ld beside json v%ld", it, tseq, seq);
            cr_assert_geq(tseq, tlast, "iteration %d: the transcript went back from v%ld to v%ld", it, tlast, tseq);
            tlast = tseq;
            json_decref(j);
        }
        free(jtext);
        free(ttext);
        tmp_seen += count_tmp(ddir) + count_tmp(gdir);
        char err[ERR_LEN];
        struct evidence *again = evidence_open(dir, err);
        cr_assert_not_null(again, "%s", err);
        cr_assert_eq(count_tmp(ddir), 0, "iteration %d: temp files left after open", it);
        cr_assert_eq(count_tmp(gdir), 0);
        evidence_close(again);
    }
    cr_assert(seen, "no write ever completed: the test measured nothing");
    cr_log_info("%d kills, last version %ld, %d temp files swept", iterations, last, tmp_seen);
}

Test(evidence, open_sweeps_only_temp_files, .init = setup, .fini = teardown) {
    put("day22-part1", DATE, 0, 0, "no GPU", NULL);
    char p[700];
    const char *plant[] = {".tmp-day22-part1.json.1.1", GPU "/.tmp-.stamp.3.3",
                           GPU "/" DATE "/.tmp-day22-part1.json.9.9", GPU "/" DATE "/notes.md"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, plant[i]);
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f, "%s", p);
        fputs("partial", f);
        fclose(f);
    }
    char err[ERR_LEN];
    cr_assert_eq(evidence_sweep(ev, err), 3, "%s", err);
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, plant[i]);
        cr_expect_neq(access(p, F_OK), 0, "%s survived", plant[i]);
    }
    snprintf(p, sizeof p, "%s/%s", dir, plant[3]);
    cr_expect_eq(access(p, F_OK), 0, "a file that is not a temp file was removed");
    snprintf(p, sizeof p, "%s/" GPU "/" DATE "/day22-part1.json", dir);
    cr_expect_eq(access(p, F_OK), 0);
    cr_assert_eq(evidence_sweep(ev, err), 0);
}

Test(evidence, write_rejects_bad_records, .init = setup, .fini = teardown) {
    char err[ERR_LEN] = "";
    struct evidence_record rec = {.suite = "nope", .gpu = GPU, .date = DATE, .ok = 0, .reason = "x"};
    cr_expect_eq(evidence_write(ev, &rec, NULL, err), -1);
    cr_expect(strstr(err, "unknown suite"), "%s", err);
    rec.suite = "../day22-part1";
    cr_expect_eq(evidence_write(ev, &rec, NULL, err), -1);
    rec.suite = "day22-part1";
    rec.date = "2024-02-30";
    cr_expect_eq(evidence_write(ev, &rec, NULL, err), -1);
    cr_expect(strstr(err, "bad date"), "%s", err);
    rec.date = DATE;
    const char *bad_gpus[] = {NULL, "", "../x", "NVIDIA H200", "latest", "2024-05-01", "-a", "a--b"};
    for (size_t i = 0; i < sizeof bad_gpus / sizeof bad_gpus[0]; i++) {
        rec.gpu = bad_gpus[i];
        cr_expect_eq(evidence_write(ev, &rec, NULL, err), -1, "gpu %s accepted", bad_gpus[i] ? bad_gpus[i] : "NULL");
        cr_expect(strstr(err, "gpu"), "%s", err);
    }
    rec.gpu = GPU;
    rec.ok = 1;
    cr_expect_eq(evidence_write(ev, &rec, NULL, err), -1, "a good record without a document");
    rec.ok = 0;
    rec.document_json = "{not json";
    cr_expect_eq(evidence_write(ev, &rec, NULL, err), -1);
    char p[700];
    snprintf(p, sizeof p, "%s/" GPU "/" DATE "/day22-part1.json", dir);
    cr_expect_neq(access(p, F_OK), 0, "a rejected record left a file");
}

/* ---- a failure never replaces good evidence --------------------------- */

Test(evidence, failed_suite_keeps_previous_latest, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, "2024-05-01T03:00:00Z");
    put("day22-part1", "2024-05-02", 0, 0, "runner: no CUDA device: CUDA driver version is insufficient",
        "2024-05-02T03:00:00Z");

    json_t *j = latest_of(NULL, "day22-part1");
    cr_expect_str_eq(js(j, "status"), "ok");
    cr_expect_str_eq(js(j, "date"), "2024-05-01");
    cr_expect_str_eq(js(j, "gpu"), GPU);
    cr_expect(json_is_object(json_object_get(j, "document")));
    cr_expect_str_eq(js(json_object_get(j, "provenance"), "server_version"), buildinfo_version());
    const char *transcript = js(j, "transcript");
    cr_assert_not_null(transcript);

    struct blob *b = NULL;
    struct evidence_error e;
    cr_assert_eq(evidence_get_latest(ev, NULL, GPU, "day22-part1", EVIDENCE_TEXT, &b, &e), 0, "%s", e.reason);
    cr_expect_eq(b->kind, EVIDENCE_TEXT);
    cr_expect_eq(b->len, strlen(transcript));
    cr_expect_eq(memcmp(b->data, transcript, b->len), 0);
    cr_expect(strstr(b->data, "threadIdx.x & 1"), "transcript: %s", b->data);
    blob_release(b);
    json_decref(j);

    /* The index says the last attempt failed, and where the good one is. */
    j = index_of(ev, GPU);
    json_t *en = entry(j, "day22-part1");
    cr_expect_str_eq(js(en, "suite"), "day22-part1");
    cr_expect_str_eq(js(en, "status"), "failed");
    cr_expect_str_eq(js(en, "date"), "2024-05-01");
    cr_expect_str_eq(js(en, "gpu"), "NVIDIA H200");
    cr_expect_str_eq(js(en, "href"), "/evidence/latest/day22-part1.json");
    cr_expect_str_eq(js(json_object_get(en, "last_attempt"), "date"), "2024-05-02");
    cr_expect(strstr(js(json_object_get(en, "last_attempt"), "reason"), "no CUDA device"));
    cr_expect(strstr(js(en, "reason"), "no CUDA device"));
    cr_expect_str_eq(js(en, "last_failure"), "2024-05-02");
    cr_expect(json_is_array(json_object_get(json_object_get(en, "summary"), "tables")));
    json_t *never = entry(j, "day22-part2");
    cr_expect_str_eq(js(never, "status"), "none");
    cr_expect(json_is_null(json_object_get(never, "date")));
    json_decref(j);

    /* The failure is on record for its own date. */
    j = night_of("2024-05-02", "day22-part1");
    cr_expect_str_eq(js(j, "status"), "failed");
    cr_expect(json_is_null(json_object_get(j, "document")));
    json_decref(j);
}

Test(evidence, failed_rerun_on_the_same_date_keeps_that_dates_good_record, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-03", 1, 1.0, NULL, "2024-05-03T03:00:00Z");
    put("day22-part1", "2024-05-03", 0, 0, "correctness gate failed", "2024-05-03T09:00:00Z");
    json_t *j = night_of("2024-05-03", "day22-part1");
    cr_expect_str_eq(js(j, "status"), "ok");
    json_decref(j);
    char p[700];
    snprintf(p, sizeof p, "%s/" GPU "/2024-05-03/day22-part1.failed.json", dir);
    cr_expect_eq(access(p, F_OK), 0, "the failure was not recorded");
    j = index_of(ev, GPU);
    json_t *en = entry(j, "day22-part1");
    cr_expect_str_eq(js(en, "status"), "failed");
    cr_expect_str_eq(js(en, "date"), "2024-05-03");
    cr_expect_str_eq(js(en, "last_failure"), "2024-05-03");
    json_decref(j);
    /* A good re-run replaces the day's record, and the index says ok. */
    put("day22-part1", "2024-05-03", 1, 2.0, NULL, "2024-05-03T12:00:00Z");
    j = index_of(ev, GPU);
    en = entry(j, "day22-part1");
    cr_expect_str_eq(js(en, "status"), "ok");
    cr_expect_str_eq(js(en, "last_failure"), "2024-05-03", "the day's failure is still on record");
    cr_expect_null(json_object_get(en, "reason"));
    json_decref(j);
    put("day22-part1", "2024-05-04", 1, 2.0, NULL, NULL);
    j = index_of(ev, GPU);
    en = entry(j, "day22-part1");
    cr_expect(json_is_null(json_object_get(en, "last_failure")), "no failure since the latest good night");
    json_decref(j);
}

/* Reads answer a code and a reason in plain words, not an HTTP body. */
Test(evidence, reads_fail_with_a_code_and_a_reason, .init = setup, .fini = teardown) {
    put("day22-part2", "2024-05-01", 0, 0, "worker crashed: signal 11", NULL);
    struct blob *b = (struct blob *)1;
    struct evidence_error e;
    memset(&e, 0, sizeof e);
    cr_expect_eq(evidence_get_latest(ev, NULL, GPU, "day22-part2", EVIDENCE_JSON, &b, &e), -1);
    cr_expect_null(b);
    cr_expect_eq(e.code, EVIDENCE_ENOENT);
    cr_expect_str_eq(e.reason, "no good evidence for day22-part2 yet; last attempt failed: worker crashed: signal 11");
    cr_expect_null(strchr(e.reason, '{'), "the reason is text, not JSON: %s", e.reason);
    cr_expect_eq(evidence_get_latest(ev, NULL, GPU, "day22-nope", EVIDENCE_JSON, &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_ENOENT);
    cr_expect_str_eq(e.reason, "unknown suite: day22-nope");
    cr_expect_eq(evidence_get_night(ev, NULL, GPU, "2024-02-30", "day22-part1", EVIDENCE_JSON, &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_EINVAL);
    cr_expect_str_eq(e.reason, "date: expected a calendar date YYYY-MM-DD, got 2024-02-30");
    cr_expect_eq(evidence_get_night(ev, NULL, GPU, "2024-05-02", "day22-part1", EVIDENCE_JSON, &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_ENOENT);
    cr_expect_str_eq(e.reason, "no evidence for day22-part1 on 2024-05-02");
    cr_expect_eq(evidence_get_latest(ev, "../etc", GPU, "day22-part1", EVIDENCE_JSON, &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_EINVAL);
    cr_expect_eq(evidence_get_latest(ev, "tesla-t4", GPU, "day22-part1", EVIDENCE_JSON, &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_ENOENT);
    cr_expect_str_eq(e.reason, "no evidence for GPU tesla-t4");
    cr_expect_eq(evidence_get_gpu_index(ev, "tesla-t4", &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_ENOENT);
    cr_expect_eq(evidence_get_history(ev, NULL, GPU, "day22-part1", 0, NULL, &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_EINVAL);
    cr_expect_eq(evidence_get_history(ev, NULL, GPU, "day22-part1", 5, "yesterday", &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_EINVAL);
    cr_expect(strstr(e.reason, "cursor"), "%s", e.reason);
    json_decref(night_of("2024-05-01", "day22-part2"));
}

/* ---- history ------------------------------------------------------------ */

Test(evidence, history_is_sorted_oldest_first, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-03-02", 1, 3.0, NULL, NULL);
    put("day22-part1", "2024-01-15", 1, 1.0, NULL, NULL);
    put("day22-part1", "2024-02-01", 0, 0, "noise over limit", NULL);
    put("day22-part1", "2024-02-10", 1, 2.0, NULL, NULL);
    put("day22-part2", "2024-01-20", 1, 1.0, NULL, NULL);
    char p[700];
    snprintf(p, sizeof p, "%s/" GPU "/notadate", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/" GPU "/2024-13-01", dir);
    mkdir(p, 0755);

    json_t *j = history_of("day22-part1", EVIDENCE_HISTORY_DEFAULT, NULL);
    json_t *pts = json_object_get(j, "nights");
    const char *dates[] = {"2024-01-15", "2024-02-01", "2024-02-10", "2024-03-02"};
    const double base[] = {1.0, 0, 2.0, 3.0};
    cr_assert_eq(json_array_size(pts), 4);
    cr_expect(json_is_null(json_object_get(j, "next_cursor")), "one page holds it all");
    cr_expect_str_eq(js(j, "gpu"), GPU);
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
    j = history_of("day22-part2", 10, NULL);
    cr_expect_eq(json_array_size(json_object_get(j, "nights")), 1);
    json_decref(j);
    j = history_of("day22-exercise", 10, NULL);
    cr_expect_eq(json_array_size(json_object_get(j, "nights")), 0);
    json_decref(j);
}

Test(evidence, history_pages_walk_back_in_time_without_gaps_or_repeats, .init = setup, .fini = teardown) {
    /* 25 nights over two months, with days missing in between. */
    char date[EVIDENCE_DATE_LEN];
    int filed = 0;
    for (int d = 1; d <= 60; d++) {
        if (d % 5 == 2 || d % 7 == 3) continue;
        if (filed == 25) break;
        snprintf(date, sizeof date, "2024-%02d-%02d", d <= 31 ? 3 : 4, d <= 31 ? d : d - 31);
        put("day22-part1", date, 1, 1.0 + d, NULL, NULL);
        filed++;
    }
    put("day22-part2", "2024-03-05", 1, 1.0, NULL, NULL); /* another suite: never on a page */
    const char *cursor = NULL;
    char seen[32][EVIDENCE_DATE_LEN], next[EVIDENCE_DATE_LEN];
    int n = 0, pages = 0;
    for (;;) {
        json_t *j = history_of("day22-part1", 7, cursor);
        json_t *pts = json_object_get(j, "nights");
        size_t k = json_array_size(pts);
        cr_assert_leq(k, 7, "a page over its limit");
        cr_expect_eq(json_integer_value(json_object_get(j, "limit")), 7);
        pages++;
        /* Each page oldest first, and older than the page before it. */
        for (size_t i = 0; i < k; i++) {
            const char *d = js(json_array_get(pts, i), "date");
            if (i > 0) cr_expect_gt(strcmp(d, js(json_array_get(pts, i - 1), "date")), 0);
            if (cursor) cr_expect_lt(strcmp(d, cursor), 0, "%s is not before the cursor %s", d, cursor);
            cr_assert_lt(n, 32);
            snprintf(seen[n++], EVIDENCE_DATE_LEN, "%s", d);
        }
        json_t *nc = json_object_get(j, "next_cursor");
        if (json_is_null(nc)) {
            json_decref(j);
            break;
        }
        cr_expect_str_eq(json_string_value(nc), js(json_array_get(pts, 0), "date"), "the cursor is the page's oldest");
        snprintf(next, sizeof next, "%s", json_string_value(nc));
        cursor = next;
        json_decref(j);
        cr_assert_lt(pages, 10, "the pages never end");
    }
    cr_expect_eq(n, 25, "every night once");
    cr_expect_eq(pages, 4);
    for (int i = 0; i < n; i++)
        for (int k = i + 1; k < n; k++) cr_expect_str_neq(seen[i], seen[k], "%s twice", seen[i]);
    json_t *last = history_of("day22-part1", EVIDENCE_HISTORY_MAX, "2024-03-01");
    cr_expect_eq(json_array_size(json_object_get(last, "nights")), 0, "nothing before the first night");
    json_decref(last);
}

/* ---- validator inputs --------------------------------------------------- */

Test(evidence, blobs_carry_stable_digests_and_mtimes, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    for (int kind = 0; kind < 2; kind++) {
        struct blob *a, *b;
        struct evidence_error e;
        cr_assert_eq(evidence_get_latest(ev, NULL, GPU, "day22-part1", (enum evidence_kind)kind, &a, &e), 0);
        cr_assert_eq(evidence_get_night(ev, NULL, GPU, "2024-05-01", "day22-part1", (enum evidence_kind)kind, &b, &e),
                     0);
        cr_expect_eq(a->len, b->len);
        cr_expect_eq(a->digest, b->digest, "the same bytes, the same digest");
        cr_expect_eq(a->mtime, b->mtime);
        cr_expect_neq(a->mtime, (time_t)-1);
        blob_release(a);
        blob_release(b);
    }
    struct blob *old, *now;
    struct evidence_error e;
    cr_assert_eq(evidence_get_latest(ev, NULL, GPU, "day22-part1", EVIDENCE_JSON, &old, &e), 0);
    put("day22-part1", "2024-05-02", 1, 1.5, NULL, NULL);
    cr_assert_eq(evidence_get_latest(ev, NULL, GPU, "day22-part1", EVIDENCE_JSON, &now, &e), 0);
    cr_expect_neq(old->digest, now->digest, "new evidence, a new digest");
    cr_expect(strstr(old->data, "2024-05-01"), "a held blob stays whole after it was replaced");
    blob_release(old);
    blob_release(now);
}

Test(evidence, only_nights_before_yesterday_are_final, .init = setup, .fini = teardown) {
    char today[EVIDENCE_DATE_LEN];
    names_date_of(time(NULL), today);
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    put("day22-part1", today, 1, 1.0, NULL, NULL);
    struct blob *b;
    struct evidence_error e;
    cr_assert_eq(evidence_get_night(ev, NULL, GPU, "2024-05-01", "day22-part1", EVIDENCE_JSON, &b, &e), 0);
    cr_expect_eq(b->fresh, EVIDENCE_FINAL);
    blob_release(b);
    cr_assert_eq(evidence_get_night(ev, NULL, GPU, today, "day22-part1", EVIDENCE_JSON, &b, &e), 0);
    cr_expect_eq(b->fresh, EVIDENCE_CHANGES, "today's record can still change");
    blob_release(b);
    cr_assert_eq(evidence_get_latest(ev, NULL, GPU, "day22-part1", EVIDENCE_JSON, &b, &e), 0);
    cr_expect_eq(b->fresh, EVIDENCE_CHANGES);
    blob_release(b);
    cr_assert_eq(evidence_get_index(ev, GPU, &b, &e), 0);
    cr_expect_eq(b->fresh, EVIDENCE_CHANGES);
    blob_release(b);
}

/* ---- GPU models --------------------------------------------------------- */

/* Recorded evidence of two models: the real H200 capture and a synthetic
 * second model derived from it (labelled so; see evidence_fixture.h). */
Test(evidence, two_gpu_models_are_kept_apart, .init = setup, .fini = teardown) {
    cr_assert_eq(fixture_copy_capture(dir, GPU, 0), 4);
    cr_assert_eq(fixture_copy_capture(dir, "synthetic-test-gpu", 1), 4);
    evidence_recheck(ev);
    json_t *idx = index_of(ev, GPU);
    json_t *gpus = json_object_get(idx, "gpus");
    cr_assert_eq(json_array_size(gpus), 2, "%s", json_dumps(idx, 0));
    cr_expect_str_eq(js(json_array_get(gpus, 0), "gpu"), GPU);
    cr_expect_str_eq(js(json_array_get(gpus, 0), "name"), "NVIDIA H200");
    cr_expect_str_eq(js(json_array_get(gpus, 1), "gpu"), "synthetic-test-gpu");
    cr_expect_str_eq(js(json_array_get(gpus, 1), "name"), FIXTURE_SYNTHETIC_GPU);
    cr_expect_str_eq(js(idx, "gpu"), GPU, "the single-GPU view is this server's GPU");
    cr_expect_str_eq(js(entry(idx, "day22-part1"), "gpu"), "NVIDIA H200");
    json_t *other = json_array_get(json_object_get(json_array_get(gpus, 1), "suites"), 0);
    cr_expect_str_eq(js(other, "gpu"), FIXTURE_SYNTHETIC_GPU);
    cr_expect_str_eq(js(other, "href"), "/evidence/synthetic-test-gpu/latest/day22-part1.json");
    json_decref(idx);

    json_t *h = latest_of(GPU, "day22-part1"), *s = latest_of("synthetic-test-gpu", "day22-part1");
    cr_expect_str_eq(js(json_object_get(h, "summary"), "gpu"), "NVIDIA H200");
    cr_expect_str_eq(js(json_object_get(s, "summary"), "gpu"), FIXTURE_SYNTHETIC_GPU);
    cr_expect_null(json_object_get(h, "synthetic"), "the real capture was relabelled");
    cr_expect(strstr(js(s, "transcript"), "SYNTHETIC TEST DATA"), "the synthetic record says what it is");
    json_decref(h);
    json_decref(s);

    /* The default follows the server's GPU; a server of a third model with
     * several here gets a reason naming them, not another GPU's figures. */
    idx = index_of(ev, "synthetic-test-gpu");
    cr_expect_str_eq(js(entry(idx, "day22-part1"), "gpu"), FIXTURE_SYNTHETIC_GPU);
    json_decref(idx);
    struct blob *b;
    struct evidence_error e;
    cr_expect_eq(evidence_get_latest(ev, NULL, "tesla-t4", "day22-part1", EVIDENCE_JSON, &b, &e), -1);
    cr_expect_eq(e.code, EVIDENCE_ENOENT);
    cr_expect(strstr(e.reason, "nvidia-h200, synthetic-test-gpu"), "%s", e.reason);
    char def[EVIDENCE_SLUG_LEN];
    cr_expect_eq(evidence_default_gpu(ev, "tesla-t4", def), 1);

    /* A write for one model leaves the other's views alone. */
    put("day22-part1", "2026-12-02", 0, 0, "worker crashed", NULL);
    json_t *i2 = index_of(ev, GPU);
    cr_expect_str_eq(js(entry(i2, "day22-part1"), "status"), "failed");
    json_t *o2 = json_array_get(json_object_get(json_array_get(json_object_get(i2, "gpus"), 1), "suites"), 0);
    cr_expect_str_eq(js(o2, "status"), "ok");
    json_decref(i2);
    json_t *hist = history_of("day22-part1", 10, NULL);
    cr_expect_eq(json_array_size(json_object_get(hist, "nights")), 2);
    json_decref(hist);
    char p[700];
    snprintf(p, sizeof p, "%s/synthetic-test-gpu/2026-12-02", dir);
    cr_expect_neq(access(p, F_OK), 0, "a write went into another GPU's folder");
}

Test(evidence, one_gpu_answers_for_a_server_without_evidence_of_its_own, .init = setup, .fini = teardown) {
    cr_assert_eq(fixture_copy_capture(dir, GPU, 0), 4);
    evidence_recheck(ev);
    char def[EVIDENCE_SLUG_LEN];
    cr_expect_eq(evidence_default_gpu(ev, "fake-gpu", def), 0);
    cr_expect_str_eq(def, GPU);
    cr_expect_eq(evidence_default_gpu(ev, NULL, def), 0);
    cr_expect_str_eq(def, GPU);
    struct blob *b;
    struct evidence_error e;
    cr_assert_eq(evidence_get_latest(ev, NULL, "fake-gpu", "day22-part1", EVIDENCE_JSON, &b, &e), 0, "%s", e.reason);
    blob_release(b);
}

Test(evidence, the_layout_before_gpu_folders_is_moved_whole, .init = setup, .fini = teardown) {
    evidence_close(ev);
    cr_assert_eq(fixture_copy_capture(dir, NULL, 0), 4);
    char p[700], err[ERR_LEN];
    snprintf(p, sizeof p, "%s/" FIXTURE_CAPTURE_DATE "/day22-part1.txt", dir);
    FILE *f = fopen(p, "w");
    fputs("transcript", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/" FIXTURE_CAPTURE_DATE "/.day22-part1" HISTORY_SIDECAR_SUFFIX, dir);
    f = fopen(p, "w");
    fputs("{}", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/" FIXTURE_CAPTURE_DATE "/.tmp-day22-part2.json.7.7", dir);
    f = fopen(p, "w");
    fputs("partial", f);
    fclose(f);
    ev = evidence_open(dir, err);
    cr_assert_not_null(ev, "%s", err);
    snprintf(p, sizeof p, "%s/" FIXTURE_CAPTURE_DATE, dir);
    cr_expect_neq(access(p, F_OK), 0, "the old date folder is still there");
    snprintf(p, sizeof p, "%s/" GPU "/" FIXTURE_CAPTURE_DATE "/day22-part1.txt", dir);
    cr_expect_eq(access(p, F_OK), 0, "a file was left behind");
    snprintf(p, sizeof p, "%s/" GPU "/" FIXTURE_CAPTURE_DATE "/.day22-part1" HISTORY_SIDECAR_SUFFIX, dir);
    cr_expect_eq(access(p, F_OK), 0, "the history's sidecar was left behind");
    json_t *j = latest_of(NULL, "day22-part1");
    cr_expect_str_eq(js(j, "date"), FIXTURE_CAPTURE_DATE);
    json_decref(j);
    json_t *idx = index_of(ev, NULL);
    cr_expect_eq(json_array_size(json_object_get(idx, "gpus")), 1);
    json_decref(idx);
}

/* ---- the latest views in memory ------------------------------------------ */

Test(evidence, latest_is_served_from_memory_and_replaced_by_a_write, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    char p[700];
    snprintf(p, sizeof p, "%s/" GPU "/2024-05-01/day22-part1.json", dir);
    cr_assert_eq(unlink(p), 0);
    json_t *j = latest_of(NULL, "day22-part1"); /* the file is gone: memory answered */
    cr_expect_str_eq(js(j, "date"), "2024-05-01");
    json_decref(j);
    put("day22-part1", "2024-05-02", 1, 2.0, NULL, NULL);
    j = latest_of(NULL, "day22-part1");
    cr_expect_str_eq(js(j, "date"), "2024-05-02", "the write did not replace the view");
    json_decref(j);
}

Test(evidence, another_servers_write_shows_after_a_recheck, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    char err[ERR_LEN];
    struct evidence *peer = evidence_open(dir, err); /* a replica sharing the directory */
    cr_assert_not_null(peer, "%s", err);
    put_on(peer, GPU, "NVIDIA H200", "day22-part1", "2024-05-02", 1, 2.0, NULL, NULL);
    put_on(peer, "tesla-t4", "Tesla T4", "day22-part2", "2024-05-02", 1, 2.0, NULL, NULL);
    evidence_recheck(ev);
    json_t *j = latest_of(NULL, "day22-part1");
    cr_expect_str_eq(js(j, "date"), "2024-05-02");
    json_decref(j);
    json_t *idx = index_of(ev, GPU);
    cr_expect_eq(json_array_size(json_object_get(idx, "gpus")), 2, "the other model's folder was not seen");
    json_decref(idx);
    evidence_close(peer);
}

struct reader_arg {
    int stop;
    long reads, bad;
};

static void *reader(void *p) {
    struct reader_arg *a = p;
    while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
        struct blob *b;
        struct evidence_error e;
        int rc = evidence_get_latest(ev, NULL, GPU, "day22-part1", EVIDENCE_JSON, &b, &e);
        if (rc == 0) {
            json_t *j = json_loadb(b->data, b->len, 0, NULL);
            if (!j || strcmp(json_string_value(json_object_get(j, "status")), "ok") != 0) a->bad++;
            json_decref(j);
            blob_release(b);
        }
        if (evidence_get_index(ev, GPU, &b, &e) == 0) {
            if (b->len != strlen(b->data)) a->bad++;
            blob_release(b);
        }
        a->reads++;
    }
    return NULL;
}

Test(evidence, readers_see_whole_views_while_a_writer_replaces_them, .init = setup, .fini = teardown, .timeout = 60) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    pthread_t t[4];
    struct reader_arg a[4];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 4; i++) cr_assert_eq(pthread_create(&t[i], NULL, reader, &a[i]), 0);
    for (int k = 0; k < 20; k++) {
        char date[EVIDENCE_DATE_LEN];
        snprintf(date, sizeof date, "2024-06-%02d", k + 1);
        put("day22-part1", date, 1, 1.0 + k, NULL, NULL);
        evidence_recheck(ev);
    }
    long reads = 0;
    for (int i = 0; i < 4; i++) {
        __atomic_store_n(&a[i].stop, 1, __ATOMIC_RELEASE);
        pthread_join(t[i], NULL);
        cr_expect_eq(a[i].bad, 0, "reader %d saw a torn view", i);
        reads += a[i].reads;
    }
    cr_expect_gt(reads, 0);
    json_t *j = latest_of(NULL, "day22-part1");
    cr_expect_str_eq(js(j, "date"), "2024-06-20");
    json_decref(j);
}

/* ---- the lock ------------------------------------------------------------ */

Test(evidence, a_writer_waits_for_the_gpus_lock, .init = setup, .fini = teardown, .timeout = 30) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    char p[700];
    snprintf(p, sizeof p, "%s/" GPU "/.lock", dir);
    int fd = open(p, O_RDWR);
    cr_assert_geq(fd, 0, "no lock file: %s", strerror(errno));
    cr_assert_eq(flock(fd, LOCK_EX), 0); /* another server holds the lock */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        put("day22-part1", "2024-05-02", 1, 2.0, NULL, NULL);
        _exit(0);
    }
    usleep(300000);
    char rec[700];
    snprintf(rec, sizeof rec, "%s/" GPU "/2024-05-02/day22-part1.json", dir);
    cr_expect_neq(access(rec, F_OK), 0, "the record was written while another held the lock");
    int status;
    cr_expect_eq(waitpid(pid, &status, WNOHANG), 0, "the writer did not wait");
    /* Another model's writer does not wait for this one. */
    put_on(ev, "tesla-t4", "Tesla T4", "day22-part1", "2024-05-02", 1, 2.0, NULL, NULL);
    flock(fd, LOCK_UN);
    close(fd);
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cr_expect_eq(access(rec, F_OK), 0, "the writer did not finish after the lock was released");
}

/* Two replicas of one model file the same suites the same night: every
 * record whole, good evidence never replaced by a failure, nothing twice. */
Test(evidence, two_replicas_writing_the_same_night_do_not_corrupt_or_duplicate, .init = setup, .fini = teardown,
     .timeout = 120) {
    pid_t pids[2];
    for (int w = 0; w < 2; w++) {
        pids[w] = fork();
        cr_assert_geq(pids[w], 0);
        if (pids[w] == 0) {
            char err[ERR_LEN];
            struct evidence *mine = evidence_open(dir, err);
            if (!mine) _exit(3);
            for (int k = 0; k < 15; k++) {
                const char *suite = k % 2 ? "day22-part1" : "day22-part2";
                int ok = (k + w) % 3 != 0;
                char *doc = ok ? fixture_document((size_t)suites_index(suite), 1.0 + w, 0.001, 1, "NVIDIA H200") : NULL;
                char why[32];
                snprintf(why, sizeof why, "replica %d run %d", w, k);
                struct evidence_record rec = {.suite = suite,
                                              .gpu = GPU,
                                              .gpu_name = "NVIDIA H200",
                                              .date = "2024-07-01",
                                              .ok = ok,
                                              .reason = ok ? NULL : why,
                                              .document_json = doc};
                if (evidence_write(mine, &rec, NULL, err) != 0) _exit(4);
                free(doc);
            }
            evidence_close(mine);
            _exit(0);
        }
    }
    for (int w = 0; w < 2; w++) {
        int status;
        cr_assert_eq(waitpid(pids[w], &status, 0), pids[w]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "replica %d: status %d", w, status);
    }
    char d[700];
    snprintf(d, sizeof d, "%s/" GPU "/2024-07-01", dir);
    DIR *dd = opendir(d);
    cr_assert_not_null(dd);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dd)) != NULL) {
        size_t len = strlen(e->d_name);
        const size_t slen = strlen(HISTORY_SIDECAR_SUFFIX);
        if (len > slen && strcmp(e->d_name + len - slen, HISTORY_SIDECAR_SUFFIX) == 0 &&
            strncmp(e->d_name, DURABLE_TMP_PREFIX, strlen(DURABLE_TMP_PREFIX)) != 0)
            continue; /* the history's cache (history.h), not a record */
        if (e->d_name[0] == '.') {
            cr_expect(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0, "left behind: %s", e->d_name);
            continue;
        }
        files++;
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            char p[1000];
            snprintf(p, sizeof p, "%s/%s", d, e->d_name);
            json_error_t je;
            json_t *j = json_load_file(p, JSON_REJECT_DUPLICATES, &je);
            cr_expect_not_null(j, "%s: torn: %s", e->d_name, je.text);
            if (j && !strstr(e->d_name, ".failed."))
                cr_expect_str_eq(js(j, "status"), "ok", "%s: a failure replaced good evidence", e->d_name);
            json_decref(j);
        }
    }
    closedir(dd);
    cr_expect_eq(files, 6, "expected json, txt and failed.json of two suites, found %d files", files);
    evidence_recheck(ev);
    json_t *j = latest_of(NULL, "day22-part1");
    cr_expect_str_eq(js(j, "date"), "2024-07-01");
    json_decref(j);
}

/* ---- allocation failures: a document is whole or not built ----------- */

/* A blob's bytes as a new string; NULL for a failed read (which must then
 * say it was the store's failure, not a missing record). */
static char *blob_text(int rc, struct blob *b, const struct evidence_error *e, long k) {
    if (rc != 0) {
        cr_assert_eq(e->code, EVIDENCE_EIO, "an allocation failed (%ld) and the read said %d: %s", k, e->code,
                     e->reason);
        return NULL;
    }
    char *s = strdup(b->data);
    blob_release(b);
    return s;
}

/* A good record with its document, filed with the k-th allocation failing:
 * evidence_write() returns -1 and files nothing, or files exactly the bytes
 * a normal write files; and the latest view then serves those bytes. */
Test(evidence, a_record_is_filed_whole_or_not_at_all_under_failing_allocations, .init = setup, .fini = teardown,
     .timeout = 600) {
    char *doc = fixture_document(0, 10.0, 0.001, 1, "NVIDIA H200");
    cr_assert_not_null(doc);
    struct evidence_record rec = {.suite = "day22-part1",
                                  .gpu = GPU,
                                  .gpu_name = "NVIDIA H200",
                                  .date = "2024-03-01",
                                  .ok = 1,
                                  .request_json = "{\"part\": 1, \"blocks\": 8}",
                                  .queued_utc = "2024-03-01T00:00:00Z",
                                  .started_utc = "2024-03-01T00:00:01Z",
                                  .finished_utc = "2024-03-01T00:00:09Z",
                                  .document_json = doc};
    char path[700], tpath[700], err[ERR_LEN];
    snprintf(path, sizeof path, "%s/" GPU "/2024-03-01/day22-part1.json", dir);
    snprintf(tpath, sizeof tpath, "%s/" GPU "/2024-03-01/day22-part1.txt", dir);
    cr_assert_eq(evidence_write(ev, &rec, NULL, err), 0, "%s", err);
    size_t wlen = 0, len = 0;
    char *want = slurp(path, &wlen);
    cr_assert_not_null(want);
    unsigned failed = 0;
    long k;
    for (k = 0; k < 200000; k++) {
        cr_assert_eq(unlink(path), 0);
        unlink(tpath);
        failing_alloc_at(k);
        int rc = evidence_write(ev, &rec, NULL, err);
        long made = failing_alloc_stop();
        char *got = slurp(path, &len);
        if (rc != 0) {
            failed++;
            cr_assert_null(got, "allocation %ld failed: -1 (%s), yet a record was filed", k, err);
            cr_assert_eq(evidence_write(ev, &rec, NULL, err), 0, "%s", err); /* for the next unlink */
            continue;
        }
        cr_assert_not_null(got, "allocation %ld failed: 0, and no record was filed", k);
        cr_assert_str_eq(got, want, "allocation %ld failed and a partial record was filed", k);
        free(got);
        struct blob *b = NULL;
        struct evidence_error e;
        int vrc = evidence_get_latest(ev, GPU, NULL, "day22-part1", EVIDENCE_JSON, &b, &e);
        char *view = blob_text(vrc, b, &e, k);
        cr_assert_not_null(view, "allocation %ld failed and the latest view lost the record", k);
        cr_assert_str_eq(view, want, "allocation %ld failed and the latest view is not the record", k);
        free(view);
        if (made <= k) break;
    }
    cr_assert_lt(k, 200000);
    cr_assert_geq(failed, 100, "only %u writes met a failure", failed);
    free(want);
    free(doc);
}

/* Every store document that is built (the index, one GPU's index) with
 * the k-th allocation failing: an EIO error or the very
 * bytes a normal build gives (the history's: test_history.c). A fresh handle each time, so nothing cached
 * answers for the build. */
enum built { BUILT_INDEX, BUILT_GPU_INDEX };

static char *build_doc(void *what) {
    struct blob *b = NULL;
    struct evidence_error e;
    int rc;
    if (*(enum built *)what == BUILT_INDEX) rc = evidence_get_index(ev, GPU, &b, &e);
    else rc = evidence_get_gpu_index(ev, GPU, &b, &e);
    return blob_text(rc, b, &e, -1);
}

static void reopen(void *what) {
    (void)what;
    char err[ERR_LEN];
    evidence_close(ev);
    ev = evidence_open(dir, err);
    cr_assert_not_null(ev, "%s", err);
}

static void check_built(enum built what) {
    put("day22-part1", "2024-04-01", 1, 10.0, NULL, "2024-04-01T01:00:00Z");
    put("day22-part1", "2024-04-02", 0, 0, "the worker \xff died", "2024-04-02T01:00:00Z");
    put("day22-part1", "2024-04-03", 1, 11.0, NULL, "2024-04-03T01:00:00Z");
    put("day22-part2", "2024-04-03", 1, 12.0, NULL, "2024-04-03T01:00:00Z");
    put_on(ev, "other-gpu", "Other GPU", "day22-part2", "2024-04-03", 1, 13.0, NULL, "2024-04-03T02:00:00Z");
    reopen(NULL);
    char *want = build_doc(&what);
    cr_assert_not_null(want);
    unsigned failed =
        failing_alloc_each(&(struct failing_case){.build = build_doc, .ctx = &what, .want = want, .prepare = reopen});
    cr_assert_geq(failed, 20, "document %d: only %u builds met a failure", what, failed);
    free(want);
}

Test(evidence, the_index_is_whole_or_absent_under_failing_allocations, .init = setup, .fini = teardown,
     .timeout = 300) {
    check_built(BUILT_INDEX);
}

Test(evidence, a_gpu_index_is_whole_or_absent_under_failing_allocations, .init = setup, .fini = teardown,
     .timeout = 300) {
    check_built(BUILT_GPU_INDEX);
}

/* A latest form of `suite` (released by the caller). */
static struct blob *latest_form(const char *suite, enum evidence_kind kind) {
    struct blob *b = NULL;
    struct evidence_error e;
    cr_assert_eq(evidence_get_latest(ev, NULL, GPU, suite, kind, &b, &e), 0, "%s: %d %s", suite, e.code, e.reason);
    return b;
}

/* A write of one suite redraws that suite alone: the other suites' forms
 * are the very blobs made before (the same record file), while a record
 * written again on the same night (a new file) gives new forms that show
 * its numbers; and what another server rewrote (a new file too) is read
 * again after a recheck. */
Test(evidence, a_write_redraws_its_own_suite_and_keeps_the_others, .init = setup, .fini = teardown) {
    put("day22-part1", "2024-05-01", 1, 1.0, NULL, NULL);
    put("day22-part2", "2024-05-01", 1, 1.0, NULL, NULL);
    struct blob *svg1 = latest_form("day22-part1", EVIDENCE_SVG), *csv1 = latest_form("day22-part1", EVIDENCE_CSV);
    struct blob *json1 = latest_form("day22-part1", EVIDENCE_JSON), *svg2 = latest_form("day22-part2", EVIDENCE_SVG);
    put("day22-part2", "2024-05-01", 1, 3.0, NULL, NULL); /* part 2 again, other numbers */
    struct blob *svg1b = latest_form("day22-part1", EVIDENCE_SVG), *csv1b = latest_form("day22-part1", EVIDENCE_CSV);
    struct blob *json1b = latest_form("day22-part1", EVIDENCE_JSON), *svg2b = latest_form("day22-part2", EVIDENCE_CSV);
    cr_expect(svg1b == svg1 && csv1b == csv1 && json1b == json1, "part 1's record did not change: its forms are kept");
    cr_expect(svg2b != svg2, "part 2's record is a new file: drawn again");
    cr_expect(svg2b->len != svg2->len || memcmp(svg2b->data, svg2->data, svg2->len) != 0,
              "part 2's new numbers show in its table");
    struct blob *all[] = {svg1, csv1, json1, svg2, svg1b, csv1b, json1b, svg2b};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) blob_release(all[i]);

    /* Another server files part 1 again on the same night: after a recheck,
     * this one's part 1 is the new record, drawn from it. */
    char err[ERR_LEN];
    struct evidence *peer = evidence_open(dir, err);
    cr_assert_not_null(peer, "%s", err);
    struct blob *before = latest_form("day22-part1", EVIDENCE_CSV);
    put_on(peer, GPU, "NVIDIA H200", "day22-part1", "2024-05-01", 1, 5.0, NULL, NULL);
    evidence_recheck(ev);
    struct blob *after = latest_form("day22-part1", EVIDENCE_CSV);
    cr_expect(after != before);
    cr_expect(after->len != before->len || memcmp(after->data, before->data, before->len) != 0,
              "the peer's numbers show in this server's drawing");
    blob_release(before);
    blob_release(after);
    evidence_close(peer);
}
