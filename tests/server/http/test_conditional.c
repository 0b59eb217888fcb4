/* test_conditional.c -- the conditional-GET rule (server/http/conditional.h)
 * on the cases of tests/server/http/conditional/ (README there): each
 * HTTP-date read as the Unix time it names or refused, each request given
 * the status its validators and headers call for. The routes that use the
 * rule (evidence, static files) are checked end to end in test_http.c and
 * test_http_evidence.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/conditional.h"

#ifndef DV_TEST_SOURCE_DIR
#define DV_TEST_SOURCE_DIR "."
#endif

#define NOW ((time_t)1796083200) /* Tue, 01 Dec 2026 00:00:00 GMT */
#define MAX_FIELDS 6

/* Splits `line` at each " | " into at most MAX_FIELDS fields; "<empty>" is
 * "" and "-" NULL (an absent header). Returns how many. */
static int fields_of(char *line, const char **out) {
    int n = 0;
    char *p = line;
    while (n < MAX_FIELDS) {
        char *sep = strstr(p, " | ");
        if (sep) *sep = '\0';
        out[n++] = strcmp(p, "<empty>") == 0 ? "" : strcmp(p, "-") == 0 ? NULL : p;
        if (!sep) break;
        p = sep + 3;
    }
    return n;
}

/* Calls `fn` on every case line of file `name` (comments and blank lines
 * skipped); returns how many. */
static int each_case(const char *name, int want_fields, void (*fn)(const char **f, int lineno)) {
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/tests/server/http/conditional/%s", DV_TEST_SOURCE_DIR, name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    int cases = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (!line[0] || line[0] == '#') continue;
        const char *fields[MAX_FIELDS];
        cr_assert_eq(fields_of(line, fields), want_fields, "%s:%d: %d fields expected", name, lineno, want_fields);
        fn(fields, lineno);
        cases++;
    }
    fclose(f);
    return cases;
}

static void date_case(const char **f, int lineno) {
    time_t want = strcmp(f[1], "invalid") == 0 ? (time_t)-1 : (time_t)strtoll(f[1], NULL, 10);
    time_t got = conditional_parse_date(f[0], NOW);
    cr_expect_eq(got, want, "dates:%d: \"%s\" read as %lld, expected %s", lineno, f[0], (long long)got, f[1]);
}

static void request_case(const char **f, int lineno) {
    time_t lm = (time_t)strtoll(f[2], NULL, 10);
    int got = conditional_not_modified(f[1], lm, f[3], f[4], NOW) ? 304 : 200;
    cr_expect_eq(got, atoi(f[5]), "requests:%d (%s): %d, expected %s", lineno, f[0], got, f[5]);
}

Test(conditional, each_date_is_read_or_refused_as_its_case_says) {
    cr_expect_geq(each_case("dates", 2, date_case), 40);
}

Test(conditional, each_request_gets_the_status_its_case_says) {
    cr_expect_geq(each_case("requests", 6, request_case), 35);
}

Test(conditional, no_date_at_all) {
    cr_expect_eq(conditional_parse_date(NULL, NOW), (time_t)-1);
    cr_expect_not(conditional_etag_matches(NULL, "\"a\""));
    cr_expect_not(conditional_etag_matches("\"a\"", NULL));
    cr_expect_not(conditional_not_modified(NULL, 5, "*", NULL, NOW), "no ETag: nothing for * to match");
}

/* A two-digit year is the one within 50 years of the clock: 94 is 1994 in
 * 2026 and 2094 in 2060 (and then in the future, so ignored). */
Test(conditional, a_two_digit_year_is_read_against_the_clock) {
    cr_expect_eq(conditional_parse_date("Sunday, 06-Nov-94 08:49:37 GMT", NOW), 784111777);
    const time_t in_2060 = (time_t)2871763200; /* 2061-01-01 */
    cr_expect_eq(conditional_parse_date("Sunday, 06-Nov-94 08:49:37 GMT", in_2060), (time_t)-1,
                 "6 November 2094 is a Saturday: no such date");
    cr_expect_eq(conditional_parse_date("Saturday, 06-Nov-94 08:49:37 GMT", in_2060), (time_t)3939871777);
}
