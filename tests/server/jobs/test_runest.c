/* test_runest.c -- the run estimates per kind of job: the default before a
 * kind's first run, the moving average after it, kinds apart, a full table
 * making room by forgetting the kind updated least recently, and seeds (a
 * warm-up's run): the estimate until the first run, which replaces it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "server/jobs/runest.h"

Test(runest, a_kind_with_no_run_is_the_default) {
    struct runest e;
    runest_init(&e, 2.5);
    cr_expect_float_eq(runest_get(&e, "part1/2rows"), 2.5, 1e-12);
    cr_expect_float_eq(runest_get(&e, NULL), 2.5, 1e-12);
    cr_expect_eq(runest_runs(&e, "part1/2rows"), 0);
}

Test(runest, the_first_run_sets_it_and_later_ones_move_it_by_alpha) {
    struct runest e;
    runest_init(&e, 2.0);
    runest_add(&e, "k", 0.740); /* a cold first run */
    cr_expect_float_eq(runest_get(&e, "k"), 0.740, 1e-12);
    double want = 0.740;
    for (int i = 0; i < 10; i++) {
        runest_add(&e, "k", 0.012);
        want = RUNEST_ALPHA * 0.012 + (1 - RUNEST_ALPHA) * want;
    }
    cr_expect_float_eq(runest_get(&e, "k"), want, 1e-12);
    cr_expect_lt(runest_get(&e, "k"), 0.035, "ten warm runs bring it near them: %.4f", runest_get(&e, "k"));
    cr_expect_eq(runest_runs(&e, "k"), 11);
    runest_add(&e, "k", -1); /* no run: ignored */
    cr_expect_eq(runest_runs(&e, "k"), 11);
}

Test(runest, kinds_are_apart) {
    struct runest e;
    runest_init(&e, 2.0);
    runest_add(&e, "part1/2rows+witness+counters", 0.3);
    runest_add(&e, "part1/2rows", 0.01);
    cr_expect_float_eq(runest_get(&e, "part1/2rows+witness+counters"), 0.3, 1e-12);
    cr_expect_float_eq(runest_get(&e, "part1/2rows"), 0.01, 1e-12);
    cr_expect_float_eq(runest_get(&e, "part2/3rows"), 2.0, 1e-12);
}

Test(runest, a_full_table_forgets_the_kind_updated_least_recently) {
    struct runest e;
    runest_init(&e, 9.0);
    char name[32];
    for (int i = 0; i < RUNEST_KINDS; i++) {
        snprintf(name, sizeof name, "kind%d", i);
        runest_add(&e, name, 1.0 + i);
    }
    runest_add(&e, "kind0", 1.0); /* kind1 is now the oldest */
    runest_add(&e, "new", 0.5);
    cr_expect_float_eq(runest_get(&e, "new"), 0.5, 1e-12);
    cr_expect_float_eq(runest_get(&e, "kind1"), 9.0, 1e-12, "forgotten: the default");
    cr_expect_float_eq(runest_get(&e, "kind0"), 1.0, 1e-12);
    cr_expect_float_eq(runest_get(&e, "kind2"), 3.0, 1e-12);
}

Test(runest, a_seed_is_the_estimate_until_the_first_run_replaces_it) {
    struct runest e;
    runest_init(&e, 2.0);
    cr_expect_eq(runest_known(&e, "part1/2rows"), 0);
    cr_expect_eq(runest_seed(&e, "part1/2rows", 0.015), 1);
    cr_expect_float_eq(runest_get(&e, "part1/2rows"), 0.015, 1e-12);
    cr_expect(runest_known(&e, "part1/2rows"));
    cr_expect_eq(runest_runs(&e, "part1/2rows"), 0, "a seed is no run");
    cr_expect_float_eq(runest_get(&e, "part2/3rows"), 2.0, 1e-12, "another kind: the default");
    cr_expect_eq(runest_seed(&e, "part1/2rows", 0.020), 1, "a later seed (a restarted worker's) replaces it");
    cr_expect_float_eq(runest_get(&e, "part1/2rows"), 0.020, 1e-12);
    runest_add(&e, "part1/2rows", 0.300);
    cr_expect_float_eq(runest_get(&e, "part1/2rows"), 0.300, 1e-12, "the first run sets it, as with no seed");
    runest_add(&e, "part1/2rows", 0.100);
    cr_expect_float_eq(runest_get(&e, "part1/2rows"), RUNEST_ALPHA * 0.100 + (1 - RUNEST_ALPHA) * 0.300, 1e-12);
    cr_expect_eq(runest_seed(&e, "part1/2rows", 0.015), 0, "a kind that has run takes no seed");
    cr_expect_float_eq(runest_get(&e, "part1/2rows"), RUNEST_ALPHA * 0.100 + (1 - RUNEST_ALPHA) * 0.300, 1e-12);
    cr_expect_eq(runest_runs(&e, "part1/2rows"), 2);
}

Test(runest, a_seed_that_is_not_a_positive_number_changes_nothing) {
    struct runest e;
    runest_init(&e, 2.0);
    const double bad[] = {0, -1, NAN, INFINITY};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(runest_seed(&e, "k", bad[i]), 0, "seed %g", bad[i]);
        cr_expect_eq(runest_known(&e, "k"), 0);
        cr_expect_float_eq(runest_get(&e, "k"), 2.0, 1e-12);
    }
    cr_expect_eq(e.n, 0, "no entry made");
}
