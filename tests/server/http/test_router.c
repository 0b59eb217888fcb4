/* test_router.c -- the route table: exact patterns over prefixes, longer
 * prefixes over shorter ones, HEAD as GET, the Allow list of a path, the
 * tail after a prefix, and a full table refused. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/base/status.h"
#include "server/http/router.h"

static int a, b, c, d;

static struct router rt;

static void add(const char *method, const char *pattern, int prefix, void *ctx) {
    char err[ERR_LEN];
    cr_assert_eq(router_add(&rt, method, pattern, NULL, 0, prefix, NULL, ctx, err), 0, "%s", err);
}

static void setup(void) {
    memset(&rt, 0, sizeof rt);
    add("GET", "/jobs/", 1, &a);
    add("DELETE", "/jobs/", 1, &b);
    add("GET", "/jobs/special", 0, &c);
    add("GET", "/jobs/special/", 1, &d);
    add("POST", "/measure", 0, &a);
}

TestSuite(router, .init = setup);

Test(router, an_exact_pattern_wins_over_any_prefix) {
    int known;
    char allow[128];
    const struct route *r = router_match(&rt, "GET", "/jobs/special", &known, allow, sizeof allow);
    cr_assert_not_null(r);
    cr_expect_eq(r->ctx, &c);
    cr_expect_str_eq(router_tail(r, "/jobs/special"), "");
}

Test(router, the_longest_prefix_wins_and_gives_the_tail) {
    int known;
    char allow[128];
    const struct route *r = router_match(&rt, "GET", "/jobs/special/x", &known, allow, sizeof allow);
    cr_assert_not_null(r);
    cr_expect_eq(r->ctx, &d);
    cr_expect_str_eq(router_tail(r, "/jobs/special/x"), "x");
    r = router_match(&rt, "GET", "/jobs/abc", &known, allow, sizeof allow);
    cr_assert_not_null(r);
    cr_expect_eq(r->ctx, &a);
    cr_expect_str_eq(router_tail(r, "/jobs/abc"), "abc");
}

Test(router, head_is_get_and_the_allow_list_names_the_paths_methods) {
    int known;
    char allow[128];
    const struct route *r = router_match(&rt, "HEAD", "/jobs/abc", &known, allow, sizeof allow);
    cr_assert_not_null(r);
    cr_expect_eq(r->ctx, &a);
    cr_expect_str_eq(allow, "GET, HEAD, DELETE, OPTIONS");
    r = router_match(&rt, "PUT", "/measure", &known, allow, sizeof allow);
    cr_expect_null(r);
    cr_expect_eq(known, 1, "the path is known: a 405, not a 404");
    cr_expect_str_eq(allow, "POST, OPTIONS");
}

Test(router, an_unknown_path_matches_nothing) {
    int known = 1;
    char allow[128];
    cr_expect_null(router_match(&rt, "GET", "/job", &known, allow, sizeof allow));
    cr_expect_eq(known, 0);
    cr_expect_str_eq(allow, "");
}

Test(router, a_full_table_or_a_long_pattern_is_refused) {
    char err[ERR_LEN], longp[200];
    memset(longp, 'x', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    cr_expect_eq(router_add(&rt, "GET", longp, NULL, 0, 0, NULL, NULL, err), -1);
    while (rt.n < ROUTER_MAX_ROUTES) add("GET", "/fill", 0, NULL);
    cr_expect_eq(router_add(&rt, "GET", "/one-more", NULL, 0, 0, NULL, NULL, err), -1);
    cr_expect(strstr(err, "table full"), "%s", err);
}
