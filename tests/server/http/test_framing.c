/* test_framing.c -- the framing rules on their own (server/http/framing.h):
 * every case of tests/server/http/framing/ whose refusal is the rules' own
 * gets that verdict from them, and every case they must let through passes;
 * then the edges of each rule. The same folder runs end to end against a
 * server in test_hostile.c. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/framing.h"
#include "server/http/http.h"

#ifndef DV_TEST_SOURCE_DIR
#define DV_TEST_SOURCE_DIR "."
#endif

static char *read_case(const char *dir, const char *name, const char *file) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dir, name, file);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

/* The verdict the rules give on the first request of `raw`: the request
 * line's target and version, then each header line up to the blank one.
 * Returns -1 when a header line is one the HTTP library itself refuses
 * before the rules see it (no colon, blanks before the colon). */
static int verdict_of(char *raw, char *why, size_t wlen) {
    char *line = raw, *end = strstr(line, "\r\n");
    cr_assert_not_null(end, "no request line");
    *end = '\0';
    char *target = strchr(line, ' ');
    char *version = target ? strchr(target + 1, ' ') : NULL;
    cr_assert(target && version, "bad request line: %s", line);
    *version++ = '\0';
    target++;
    if (framing_target(target, HTTP_MAX_ARGS, why, wlen) != FRAMING_TARGET_OK) return 400;
    struct framing f;
    framing_init(&f);
    for (line = end + 2; (end = strstr(line, "\r\n")) != NULL && end != line; line = end + 2) {
        *end = '\0';
        char *colon = strchr(line, ':');
        if (!colon || colon == line || colon[-1] == ' ' || colon[-1] == '\t') return -1;
        *colon = '\0';
        char *value = colon + 1;
        while (*value == ' ' || *value == '\t') value++;
        framing_header(&f, line, value);
    }
    return framing_verdict(&f, strcmp(version, "HTTP/1.1") == 0, why, wlen);
}

Test(framing, the_folder_cases_get_the_rules_verdict) {
    const char *dir = DV_TEST_SOURCE_DIR "/tests/server/http/framing";
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
    struct dirent *e;
    unsigned judged = 0, passed = 0, library = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README") == 0) continue;
        char *raw = read_case(dir, e->d_name, "request"), *status = read_case(dir, e->d_name, "status");
        cr_assert(raw && status, "case %s is incomplete", e->d_name);
        int want = atoi(status);
        char why[160] = "";
        int got = verdict_of(raw, why, sizeof why);
        if (got < 0) { /* the library answers it: end to end only */
            cr_expect_eq(want, 400, "case %s", e->d_name);
            library++;
        } else if (want == 400 || want == 501) {
            cr_expect_eq(got, want, "case %s: the rules said %d (%s), the server must say %d", e->d_name, got, why,
                         want);
            cr_expect(why[0], "case %s: a refusal without a reason", e->d_name);
            judged++;
        } else {
            cr_expect_eq(got, 0, "case %s is well framed but the rules refused it: %d %s", e->d_name, got, why);
            passed++;
        }
        free(raw);
        free(status);
    }
    closedir(d);
    cr_assert_geq(judged, 15, "only %u refusals judged", judged);
    cr_assert_geq(passed, 6, "only %u well-framed cases", passed);
    cr_assert_leq(library, 2);
}

static int verdict(int http11, const char *const *headers) {
    struct framing f;
    char why[160];
    framing_init(&f);
    for (size_t i = 0; headers[i]; i += 2) framing_header(&f, headers[i], headers[i + 1]);
    return framing_verdict(&f, http11, why, sizeof why);
}

Test(framing, content_length_is_one_decimal_number) {
    cr_expect_eq(verdict(1, (const char *[]){"host", "x", "content-length", " 12 ", NULL}), 0);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Content-Length", "0", NULL}), 0);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Content-Length", "", NULL}), 400);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Content-Length", NULL, NULL}), 400);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Content-Length", "1 2", NULL}), 400);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Content-Length", "1e3", NULL}), 400);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Content-Length", "2", "CONTENT-LENGTH", "2", NULL}), 400);
}

Test(framing, only_chunked_and_only_in_http11) {
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Transfer-Encoding", "\tChunked ", NULL}), 0);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Transfer-Encoding", "chunked, chunked", NULL}), 501);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Transfer-Encoding", "", NULL}), 501);
    cr_expect_eq(verdict(0, (const char *[]){"Transfer-Encoding", "chunked", NULL}), 400);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "x", "Content-Length", "2", "Transfer-Encoding", "chunked", NULL}),
                 400, "Content-Length beside Transfer-Encoding, in either order");
}

Test(framing, one_host_in_http11_none_needed_in_http10) {
    cr_expect_eq(verdict(0, (const char *[]){NULL}), 0);
    cr_expect_eq(verdict(0, (const char *[]){"Host", "a", "Host", "b", NULL}), 0);
    cr_expect_eq(verdict(1, (const char *[]){NULL}), 400);
    cr_expect_eq(verdict(1, (const char *[]){"Host", "a", "host", "a", NULL}), 400);
}

Test(framing, the_target_has_no_encoded_nul_and_bounded_arguments) {
    char why[160], uri[1024];
    cr_expect_eq(framing_target("/static/a%00.png", 64, why, sizeof why), FRAMING_TARGET_NUL);
    cr_expect(strstr(why, "%00"), "%s", why);
    cr_expect_eq(framing_target("/jobs/x?q=%00", 64, why, sizeof why), FRAMING_TARGET_OK, "the query is not the path");
    cr_expect_eq(framing_target("/%0", 64, why, sizeof why), FRAMING_TARGET_OK);
    int n = snprintf(uri, sizeof uri, "/healthz?a=1");
    for (int i = 1; i < 64; i++) n += snprintf(uri + n, sizeof uri - (size_t)n, "&a=1");
    cr_expect_eq(framing_target(uri, 64, why, sizeof why), FRAMING_TARGET_OK, "64 arguments");
    snprintf(uri + n, sizeof uri - (size_t)n, "&");
    cr_expect_eq(framing_target(uri, 64, why, sizeof why), FRAMING_TARGET_ARGS, "65, the last one empty");
    cr_expect(strstr(why, "65 query arguments"), "%s", why);
}
