/* test_names.c -- the names the evidence store files under: dates checked
 * against the calendar, GPU slugs stable, safe as a folder name, and never
 * a word the routes use. */
#include <criterion/criterion.h>
#include <string.h>

#include "server/evidence/names.h"
#include "server/evidence/types.h"

Test(names, dates_are_checked_against_the_calendar) {
    cr_expect(names_valid_date("2024-02-29"));
    cr_expect_not(names_valid_date("2023-02-29"));
    cr_expect_not(names_valid_date("2024-1-01"));
    cr_expect_not(names_valid_date("2024-01-01x"));
    cr_expect_not(names_valid_date("../../etc"));
    cr_expect_not(names_valid_date(NULL));
}

Test(names, slugs_are_stable_and_safe) {
    struct {
        const char *name, *slug;
    } cases[] = {
        {"NVIDIA H200", "nvidia-h200"},
        {"Tesla T4", "tesla-t4"},
        {"  NVIDIA  GeForce RTX 4090 ", "nvidia-geforce-rtx-4090"},
        {"NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3"},
        {"NVIDIA A100-SXM4-40GB", "nvidia-a100-sxm4-40gb"},
        {"../../etc/passwd", "etc-passwd"},
    };
    char out[EVIDENCE_SLUG_LEN];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(names_slug(cases[i].name, out, sizeof out), 0, "%s", cases[i].name);
        cr_expect_str_eq(out, cases[i].slug);
        cr_expect(names_valid_slug(out), "%s", out);
    }
    cr_expect_eq(names_slug("", out, sizeof out), -1);
    cr_expect_eq(names_slug(" -- ", out, sizeof out), -1);
    cr_expect_eq(names_slug(NULL, out, sizeof out), -1);
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    longname[100] = ' ';
    cr_assert_eq(names_slug(longname, out, sizeof out), 0);
    cr_expect_eq(strlen(out), EVIDENCE_SLUG_LEN - 1);
    cr_expect(names_valid_slug(out));
    const char *bad[] = {"", "latest", "history", "refresh", "2024-05-01", "Nvidia", "a_b", "-a", "a-", "a--b", ".."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) cr_expect_not(names_valid_slug(bad[i]), "%s", bad[i]);
}

Test(names, a_date_is_the_utc_day_of_a_time) {
    char out[EVIDENCE_DATE_LEN];
    names_date_of((time_t)1764385199, out); /* 2025-11-29T02:59:59Z */
    cr_expect_str_eq(out, "2025-11-29");
    names_date_of((time_t)0, out);
    cr_expect_str_eq(out, "1970-01-01");
}
